/* SPDX-License-Identifier: MIT */
/* CPU cost per packet: busy time, interrupt work inside the senders, and the sender/path/receiver split. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <zlib.h>
#include "sys/cost.h"

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

uint64_t lr_cost_busy_ns(const struct lr_cpu_times *a, const struct lr_cpu_times *b, uint64_t *err_ns)
{
	unsigned int c, n = a->n < b->n ? a->n : b->n;
	uint64_t wall = delta(a->at_ns, b->at_ns), tick = b->tick_ns, busy = 0, err = 0;

	for (c = 0; c < n; c++) {
		uint64_t steal = delta(a->steal[c], b->steal[c]) * tick;
		uint64_t off = delta(a->idle[c], b->idle[c]) * tick + steal;

		/*
		 * Idle time is kept exactly (tickless idle) but shown rounded down
		 * to a tick: each CPU's difference is off by less than one tick;
		 * steal is sampled, so where it moved, one tick more.
		 */
		busy += off < wall ? wall - off : 0;
		err += tick + (steal ? tick : 0);
	}
	*err_ns = err;
	return busy;
}

/*
 * A time the kernel samples at each timer tick: k of N ticks fell in it, so
 * its error is binomial, sd = tick * sqrt(N p (1 - p)). The tick is taken as
 * /proc/stat's (10 ms); the kernel's own (4 ms at 250 Hz, 1 ms at 1000 Hz)
 * is finer, so this overstates the error. Two sd, and the rounding to a tick.
 */
static uint64_t sampled_err(uint64_t t, uint64_t wall, uint64_t tick)
{
	double p = wall ? (double)t / (double)wall : 0;

	if (p > 1)
		p = 1;
	return (uint64_t)(2 * sqrt((double)tick * (double)t * (1 - p)) + (double)tick);
}

uint64_t lr_cost_softirq_ns(const struct lr_cpu_times *a, const struct lr_cpu_times *b, const struct lr_cost_cpus *c,
			    uint64_t *err_ns)
{
	uint64_t wall = delta(a->at_ns, b->at_ns), tick = b->tick_ns, sum = 0, err = 0;
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		unsigned int cpu = c->cpu[i];
		uint64_t si;

		if (cpu >= a->n || cpu >= b->n)
			continue;
		si = (delta(a->softirq[cpu], b->softirq[cpu]) + delta(a->irq[cpu], b->irq[cpu])) * tick;
		err += sampled_err(si, wall, tick);
		/* ksoftirqd's share is its own thread's, not the workers' */
		if (c->ksoftirqd_seen[i])
			si = si > c->ksoftirqd_ns[i] ? si - c->ksoftirqd_ns[i] : 0;
		if (si > c->thread_ns[i])
			si = c->thread_ns[i];
		sum += si;
	}
	*err_ns = err;
	return sum;
}

void lr_cost_compute(const struct lr_cost_in *in, struct lr_cost *out)
{
	const struct lr_stats_cal *cal = &in->cal;
	double n = (double)in->packets, added = 0, added_err = 0;
	double total, err_total, sender = NAN, err_sender = NAN, recv = NAN, err_recv = NAN;

	memset(out, 0, sizeof(*out));
	out->total = out->sender = out->path = out->receiver = NAN;
	out->err_total = out->err_sender = out->err_path = out->err_receiver = NAN;
	out->recv_ns_per_run = NAN;
	if (!in->packets)
		return;
	out->valid = true;
	/* what turning bpf_stats on for a while added to every run it counted */
	if (cal->valid && cal->added_known) {
		added = cal->added_ns;
		added_err = cal->err_ns;
	}
	total = (double)in->busy_ns - added * (double)(in->sender_stat_runs + in->recv_stat_runs);
	err_total = (double)in->busy_err_ns + added_err * (double)(in->sender_stat_runs + in->recv_stat_runs);
	if (in->have_sender) {
		sender = (double)in->sender_thread_ns - (double)in->sender_softirq_ns - added * (double)in->sender_stat_runs;
		err_sender = (double)in->sender_softirq_err_ns + added_err * (double)in->sender_stat_runs;
	}
	if (in->have_receiver && in->recv_stat_runs && cal->valid) {
		/* the mean over the runs stats counted, less the clock reads stats put inside each run's time */
		out->recv_ns_per_run = (double)in->recv_run_ns / (double)in->recv_stat_runs - cal->reported_ns;
		recv = out->recv_ns_per_run * (double)in->recv_runs;
		err_recv = cal->err_ns * (double)in->recv_runs;
	}
	out->total = total / n;
	out->err_total = err_total / n;
	out->sender = sender / n;
	out->err_sender = err_sender / n;
	out->receiver = recv / n;
	out->err_receiver = err_recv / n;
	/* the rest, as it comes out: a negative path within its error is reported, not clamped */
	out->path = out->total - out->sender - out->receiver;
	out->err_path = out->err_total + out->err_sender + out->err_receiver;
}

int lr_schedstat_parse(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!text || text[0] < '0' || text[0] > '9')
		return -EINVAL;
	v = strtoull(text, &end, 10);
	if (end == text || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Up to @len - 1 bytes of a small /proc file; its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

uint64_t lr_task_runtime_ns(pid_t pid)
{
	char path[64], buf[128];
	uint64_t v;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || lr_schedstat_parse(buf, &v))
		return 0;
	return v;
}

void lr_ksoftirqd_find(pid_t *out, unsigned int max)
{
	struct dirent *de;
	DIR *d;

	memset(out, 0, sizeof(*out) * max);
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[300], comm[64];
		unsigned int cpu;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		/* kernel threads are named ksoftirqd/N, one per CPU */
		if (read_small(path, comm, sizeof(comm)) <= 0 || sscanf(comm, "ksoftirqd/%u", &cpu) != 1 || cpu >= max)
			continue;
		out[cpu] = (pid_t)pid;
	}
	closedir(d);
}

int lr_irqtime_from(const char *config, const char *cmdline)
{
	const char *p;

	if (!config)
		return -1;
	/* "CONFIG_IRQ_TIME_ACCOUNTING=y" on a line of its own; "# ... is not set" otherwise */
	for (p = strstr(config, "CONFIG_IRQ_TIME_ACCOUNTING=y"); p; p = strstr(p + 1, "CONFIG_IRQ_TIME_ACCOUNTING=y"))
		if (p == config || p[-1] == '\n')
			return !(cmdline && strstr(cmdline, "tsc=noirqtime"));
	return 0;
}

/* A gzip'd or plain text file whole (gzread reads both), NUL-ended; NULL when it cannot be read. */
static char *slurp(const char *path, size_t max)
{
	gzFile f = gzopen(path, "rb");
	size_t n = 0;
	char *buf;
	int r;

	if (!f)
		return NULL;
	buf = malloc(max + 1);
	while (buf && n < max && (r = gzread(f, buf + n, (unsigned int)(max - n))) > 0)
		n += (size_t)r;
	gzclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

int lr_irqtime_accounting(void)
{
	char path[300], cmdline[4096] = "";
	struct utsname u;
	char *cfg = NULL;
	int ret;

	if (!uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		cfg = slurp(path, 1 << 20);
	}
	if (!cfg)
		cfg = slurp("/proc/config.gz", 1 << 20);
	read_small("/proc/cmdline", cmdline, sizeof(cmdline));
	ret = lr_irqtime_from(cfg, cmdline);
	free(cfg);
	return ret;
}
