/* SPDX-License-Identifier: MIT */
/*
 * Counters both ends of a test read around a window: a device's packet and drop counters (sysfs
 * and the driver's ethtool drops), and each CPU's time split from /proc/stat.
 */
#ifndef LINERATE_SYS_COUNTERS_H
#define LINERATE_SYS_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A device's counters, the kernel's and the driver's drop counters summed. */
struct lr_dev_counters {
	uint64_t rx_packets, rx_dropped, tx_packets, tx_dropped;
	uint64_t drv_drops;	/* ethtool counters named *drops or *errors (veth: per-queue XDP drops, xmit errors) */
};

/* Reads @ifname's counters in this namespace; a counter that cannot be read stays 0. */
void lr_dev_counters_read(const char *ifname, struct lr_dev_counters *d);
/* @d = @b - @a, counter by counter. */
void lr_dev_counters_delta(struct lr_dev_counters *d, const struct lr_dev_counters *a, const struct lr_dev_counters *b);

#define LR_MAX_CPUS 64

/*
 * Cumulative CPU time per CPU, in the USER_HZ ticks of /proc/stat (idle
 * includes iowait), and when it was read. With a tickless idle the kernel
 * keeps idle time exactly and prints it rounded down to a tick; the busy
 * fields are sampled at each timer tick.
 */
struct lr_cpu_times {
	unsigned int n;
	uint64_t at_ns;	/* CLOCK_MONOTONIC at the reading */
	uint64_t tick_ns;	/* one USER_HZ tick */
	uint64_t user[LR_MAX_CPUS], sys[LR_MAX_CPUS], irq[LR_MAX_CPUS], softirq[LR_MAX_CPUS], idle[LR_MAX_CPUS],
		steal[LR_MAX_CPUS];
	bool truncated;	/* the host has CPUs numbered LR_MAX_CPUS and up, left out */
};

/* One CPU's time over a window, in percent. */
struct lr_cpu_split {
	double user, sys, softirq, irq, idle, steal;
};

/*
 * A small file of /proc or /sys whole, as far as @len - 1 bytes (such a file may come in several
 * reads), NUL-ended: its length, or -1 with errno set.
 */
ssize_t lr_read_small(const char *path, char *buf, size_t len);

/* All zero (n == 0) when /proc/stat cannot be read. */
void lr_cpu_times_read(struct lr_cpu_times *t);
/* The per-CPU lines of a /proc/stat text into @t (n == 0 when there are none); at_ns and tick_ns stay 0. */
void lr_cpu_times_parse(const char *text, struct lr_cpu_times *t);
/* The split of each CPU between two readings into @out (at most @max); returns the CPU count. */
unsigned int lr_cpu_split(const struct lr_cpu_times *a, const struct lr_cpu_times *b, struct lr_cpu_split *out,
			  unsigned int max);

#endif
