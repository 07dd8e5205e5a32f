/* SPDX-License-Identifier: MIT */
/* Device counters (sysfs, ethtool) and per-CPU time from /proc/stat, read around a test window. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sys/netdev.h"
#include "sys/counters.h"
#include "util/clock.h"

void lr_dev_counters_read(const char *ifname, struct lr_dev_counters *d)
{
	struct lr_ethtool_stats st;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	lr_if_stat(ifname, "rx_packets", &d->rx_packets);
	lr_if_stat(ifname, "rx_dropped", &d->rx_dropped);
	lr_if_stat(ifname, "tx_packets", &d->tx_packets);
	lr_if_stat(ifname, "tx_dropped", &d->tx_dropped);
	if (lr_if_ethtool_stats(ifname, &st))
		return;
	for (i = 0; i < st.n; i++) {
		size_t l = strlen(st.names[i]);

		/* an XDP program's own XDP_DROP verdicts (veth: *_xdp_drops) are counting, not loss */
		if (l > 9 && !strcmp(st.names[i] + l - 9, "xdp_drops"))
			continue;
		if ((l > 5 && !strcmp(st.names[i] + l - 5, "drops")) ||
		    (l > 6 && !strcmp(st.names[i] + l - 6, "errors")))
			d->drv_drops += st.values[i];
	}
	lr_ethtool_stats_free(&st);
}

void lr_dev_counters_delta(struct lr_dev_counters *d, const struct lr_dev_counters *a, const struct lr_dev_counters *b)
{
	d->rx_packets = b->rx_packets - a->rx_packets;
	d->rx_dropped = b->rx_dropped - a->rx_dropped;
	d->tx_packets = b->tx_packets - a->tx_packets;
	d->tx_dropped = b->tx_dropped - a->tx_dropped;
	d->drv_drops = b->drv_drops - a->drv_drops;
}

void lr_cpu_times_parse(const char *text, struct lr_cpu_times *t)
{
	const char *line = text;

	memset(t, 0, sizeof(*t));
	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long long us, ni, sy, id, io, irq, sirq, st;
		unsigned int cpu;

		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &us, &ni, &sy, &id, &io, &irq,
			   &sirq, &st) != 9)
			continue;
		if (cpu >= LR_MAX_CPUS) {
			t->truncated = true;
			continue;
		}
		t->user[cpu] = us + ni;
		t->sys[cpu] = sy;
		t->irq[cpu] = irq;
		t->softirq[cpu] = sirq;
		t->idle[cpu] = id + io;
		t->steal[cpu] = st;
		if (cpu + 1 > t->n)
			t->n = cpu + 1;
	}
}

ssize_t lr_read_small(const char *path, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !len)
		return -1;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

void lr_cpu_times_read(struct lr_cpu_times *t)
{
	/* a line per CPU of at most ~130 bytes: room for LR_MAX_CPUS of them and the rest of the file */
	char buf[32768];
	long hz = sysconf(_SC_CLK_TCK);

	memset(t, 0, sizeof(*t));
	if (lr_read_small("/proc/stat", buf, sizeof(buf)) < 0)
		return;
	lr_cpu_times_parse(buf, t);
	t->at_ns = lr_now_ns();
	t->tick_ns = 1000000000ULL / (uint64_t)(hz > 0 ? hz : 100);
}

unsigned int lr_cpu_split(const struct lr_cpu_times *a, const struct lr_cpu_times *b, struct lr_cpu_split *out,
			  unsigned int max)
{
	unsigned int c, n = b->n < max ? b->n : max;

	for (c = 0; c < n; c++) {
		double u = (double)(b->user[c] - a->user[c]), sy = (double)(b->sys[c] - a->sys[c]);
		double irq = (double)(b->irq[c] - a->irq[c]), si = (double)(b->softirq[c] - a->softirq[c]);
		double id = (double)(b->idle[c] - a->idle[c]), st = (double)(b->steal[c] - a->steal[c]);
		double tot = u + sy + irq + si + id + st;

		memset(&out[c], 0, sizeof(out[c]));
		if (tot <= 0)
			continue;
		out[c] = (struct lr_cpu_split){ 100 * u / tot, 100 * sy / tot, 100 * si / tot, 100 * irq / tot,
						100 * id / tot, 100 * st / tot };
	}
	return n;
}
