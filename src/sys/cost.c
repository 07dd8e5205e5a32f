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
		 * Idle and iowait are kept exactly (tickless idle) but each is shown
		 * rounded down to a tick: their sum's difference is off by less
		 * than two; steal is sampled, so where it moved, one tick more.
		 */
		busy += off < wall ? wall - off : 0;
		err += 2 * tick + (steal ? tick : 0);
	}
	*err_ns = err;
	return busy;
}

/*
 * A time the kernel samples at each of its timer ticks (@ktick): k of N
 * ticks fell in it, so its error is binomial, sd = ktick * sqrt(N p (1 - p)).
 * Two sd, and the rounding of the two /proc/stat fields it sums (softirq and
 * irq) to its own tick (@tick).
 */
static uint64_t sampled_err(uint64_t t, uint64_t wall, uint64_t ktick, uint64_t tick)
{
	double p = wall ? (double)t / (double)wall : 0;

	if (p > 1)
		p = 1;
	return (uint64_t)(2 * sqrt((double)ktick * (double)t * (1 - p)) + 2 * (double)tick);
}

int lr_cost_irqtime(const struct lr_cost_cpus *c, int irqtime)
{
	unsigned int i, in = 0, decided = 0;

	for (i = 0; i < c->n; i++) {
		decided += c->by_data[i];
		in += c->by_data[i] && c->inside[i];
	}
	if (decided)
		return 2 * in >= decided ? 0 : 1;
	return irqtime < 0 ? 2 : irqtime;
}

void lr_cost_cpus_add(struct lr_cost_cpus *c, unsigned int cpu, uint64_t thread_ns)
{
	unsigned int k;

	for (k = 0; k < c->n && c->cpu[k] != cpu; k++)
		;
	if (k == c->n) {
		if (c->n == LR_MAX_CPUS)
			return;
		c->cpu[c->n++] = cpu;
	}
	c->thread_ns[k] += thread_ns;
}

uint64_t lr_cost_softirq_ns(const struct lr_cpu_times *a, const struct lr_cpu_times *b, struct lr_cost_cpus *c,
			    uint64_t *err_ns)
{
	uint64_t wall = delta(a->at_ns, b->at_ns), tick = b->tick_ns, sum = 0, err = 0;
	/* the kernel's tick where known, else /proc/stat's, the coarser: the error is then overstated */
	uint64_t ktick = c->sample_tick_ns ? c->sample_tick_ns : tick;
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		unsigned int cpu = c->cpu[i];
		uint64_t si, e, off, busy, ks = c->ksoftirqd_seen[i] ? c->ksoftirqd_ns[i] : 0;

		c->inside[i] = c->by_data[i] = false;
		if (cpu >= a->n || cpu >= b->n)
			continue;
		si = (delta(a->softirq[cpu], b->softirq[cpu]) + delta(a->irq[cpu], b->irq[cpu])) * tick;
		e = sampled_err(si, wall, ktick, tick);
		off = (delta(a->idle[cpu], b->idle[cpu]) + delta(a->steal[cpu], b->steal[cpu])) * tick;
		busy = off < wall ? wall - off : 0;
		c->by_data[i] = si > e;
		if (c->by_data[i])
			/* the threads' time with ksoftirqd's: nearer the busy time, or the busy time less it */
			c->inside[i] = (double)(c->thread_ns[i] + ks) >= (double)busy - (double)si / 2;
		else
			c->inside[i] = c->irqtime != 1;
		if (!c->inside[i])
			continue;
		err += e;
		/* ksoftirqd's share is its own thread's, not the workers' */
		si = si > ks ? si - ks : 0;
		if (si > c->thread_ns[i])
			si = c->thread_ns[i];
		sum += si;
	}
	*err_ns = err;
	return sum;
}

void lr_cost_sender_irq(struct lr_cost_cpus *cc, const struct lr_cpu_times *a, const struct lr_cpu_times *b,
			const uint64_t *ks0, const uint64_t *ks1, struct lr_tx_cpu *out)
{
	struct lr_kconfig kc;
	unsigned int i;

	lr_cost_cpus_ksoftirqd(cc, ks0, ks1);
	lr_kconfig_read(&kc);
	cc->irqtime = kc.irqtime;
	cc->sample_tick_ns = kc.hz ? 1000000000ULL / kc.hz : 0;
	out->softirq_ns = lr_cost_softirq_ns(a, b, cc, &out->softirq_err_ns);
	out->irqtime = lr_cost_irqtime(cc, kc.irqtime);
	out->kernel_hz = kc.hz;
	out->ksoftirqd_seen = true;
	for (i = 0; i < cc->n; i++)
		out->ksoftirqd_seen &= cc->ksoftirqd_seen[i];
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
	if (in->have_receiver && in->recv_stat_runs >= LR_PROG_MIN_RUNS && cal->valid) {
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

uint64_t lr_task_runtime_ns(pid_t pid)
{
	char path[64], buf[128];
	uint64_t v;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (lr_read_small(path, buf, sizeof(buf)) <= 0 || lr_schedstat_parse(buf, &v))
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
		if (lr_read_small(path, comm, sizeof(comm)) <= 0 || sscanf(comm, "ksoftirqd/%u", &cpu) != 1 || cpu >= max)
			continue;
		out[cpu] = (pid_t)pid;
	}
	closedir(d);
}

/* The line "NAME=" starts in @config, or NULL. */
static const char *config_line(const char *config, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = strstr(config, name); p; p = strstr(p + 1, name))
		if ((p == config || p[-1] == '\n') && p[n] == '=')
			return p + n + 1;
	return NULL;
}

void lr_kconfig_from(const char *config, const char *cmdline, struct lr_kconfig *out)
{
	const char *v;

	out->irqtime = -1;
	out->hz = 0;
	if (!config)
		return;
	/* "CONFIG_IRQ_TIME_ACCOUNTING=y" on a line of its own; "# ... is not set" otherwise */
	v = config_line(config, "CONFIG_IRQ_TIME_ACCOUNTING");
	out->irqtime = v && *v == 'y' && !(cmdline && strstr(cmdline, "tsc=noirqtime"));
	v = config_line(config, "CONFIG_HZ");
	if (v) {
		char *end;
		unsigned long hz = strtoul(v, &end, 10);

		if (end != v && (*end == '\n' || !*end) && hz >= 10 && hz <= 10000)
			out->hz = (unsigned int)hz;
	}
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

void lr_kconfig_read(struct lr_kconfig *out)
{
	char path[300], cmdline[4096] = "";
	struct utsname u;
	char *cfg = NULL;

	if (!uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		cfg = slurp(path, 1 << 20);
	}
	if (!cfg)
		cfg = slurp("/proc/config.gz", 1 << 20);
	lr_read_small("/proc/cmdline", cmdline, sizeof(cmdline));
	lr_kconfig_from(cfg, cmdline, out);
	free(cfg);
}

void lr_ksoftirqd_read(const pid_t *pids, uint64_t *ns, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		ns[i] = pids[i] ? lr_task_runtime_ns(pids[i]) : 0;
}

void lr_cost_cpus_ksoftirqd(struct lr_cost_cpus *c, const uint64_t *ns0, const uint64_t *ns1)
{
	unsigned int k;

	for (k = 0; k < c->n; k++) {
		unsigned int cpu = c->cpu[k];

		c->ksoftirqd_seen[k] = cpu < LR_MAX_CPUS && ns0[cpu] && ns1[cpu] >= ns0[cpu];
		c->ksoftirqd_ns[k] = c->ksoftirqd_seen[k] ? ns1[cpu] - ns0[cpu] : 0;
	}
}
