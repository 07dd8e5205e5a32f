/* SPDX-License-Identifier: MIT */
/*
 * CPU cost per packet: the readings taken around a window (per-CPU time, the senders' threads,
 * ksoftirqd, our XDP program's bpf_stats) and the split of the whole into sender, path and receiver.
 */
#ifndef LINERATE_SYS_COST_H
#define LINERATE_SYS_COST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "sys/counters.h"

/* The CPUs a send's workers ran on, and each one's CPU time over the window. */
struct lr_cost_cpus {
	unsigned int n;
	unsigned int cpu[LR_MAX_CPUS];
	uint64_t thread_ns[LR_MAX_CPUS];	/* the workers pinned there: CLOCK_THREAD_CPUTIME_ID deltas */
	uint64_t ksoftirqd_ns[LR_MAX_CPUS];	/* ksoftirqd/CPU's run time over the window (schedstat) */
	bool ksoftirqd_seen[LR_MAX_CPUS];	/* its run time could be read (not, in a PID namespace) */
};

/*
 * The interrupt work done inside the workers' own context, from the per-CPU
 * split: softirq and irq time on the workers' CPUs, less what ksoftirqd did
 * there, at most each CPU's thread time. @err_ns: how far it can be off
 * (sampling and the /proc/stat resolution, docs/cost.md). Returns it, ns.
 */
uint64_t lr_cost_softirq_ns(const struct lr_cpu_times *a, const struct lr_cpu_times *b, const struct lr_cost_cpus *c,
			    uint64_t *err_ns);

/* All CPUs' busy time between two readings (wall time less idle and steal), ns, and its error. */
uint64_t lr_cost_busy_ns(const struct lr_cpu_times *a, const struct lr_cpu_times *b, uint64_t *err_ns);

/*
 * What bpf_stats does to the figures, from a calibration on an empty
 * program (sys/bpfstats.h): @reported_ns is what it adds to each run's
 * reported run time (its clock reads), @added_ns what it adds to each run's
 * real cost; @added_known false when stats were on already (no "off" to
 * compare with), and then nothing is taken off the totals.
 */
struct lr_stats_cal {
	bool valid;
	double reported_ns, added_ns, err_ns;
	bool added_known;
};

/* Everything the split needs, as measured over one window. */
struct lr_cost_in {
	uint64_t packets;	/* received: the figures are per received packet */
	uint64_t busy_ns, busy_err_ns;	/* every CPU (lr_cost_busy_ns) */
	bool have_sender;
	uint64_t sender_thread_ns;	/* the workers' CPU time */
	uint64_t sender_softirq_ns, sender_softirq_err_ns;	/* of it, interrupt work (lr_cost_softirq_ns) */
	uint64_t sender_stat_runs;	/* runs of the sender's own BPF program while stats were on */
	bool have_receiver;
	uint64_t recv_run_ns, recv_stat_runs;	/* bpf_stats of our XDP program over the window */
	uint64_t recv_runs;	/* every frame the program saw in the window */
	struct lr_stats_cal cal;
};

/* ns per packet; a part not measured is NaN, and so is the path then. */
struct lr_cost {
	bool valid;	/* packets > 0 */
	double total, sender, path, receiver;
	double err_total, err_sender, err_path, err_receiver;
	double recv_ns_per_run;	/* the receiver program's own figure, calibrated; NaN when not measured */
};

/*
 * The split: total = busy / packets (less the stats' added cost of every
 * counted run); sender = the workers' time less interrupt work done inside
 * them (and the stats' added cost of the sender program's counted runs);
 * receiver = our program's calibrated ns per run x the frames it saw;
 * path = total - sender - receiver, not clamped: a negative part is
 * reported with its error. Errors add up linearly.
 */
void lr_cost_compute(const struct lr_cost_in *in, struct lr_cost *out);

/*
 * Whether the kernel keeps interrupt time apart (CONFIG_IRQ_TIME_ACCOUNTING, not turned off by
 * tsc=noirqtime): then a thread's CPU time holds no softirq work and there is nothing to take off
 * it. 1 yes, 0 no, -1 unknown (no kernel config to read: /boot/config-RELEASE, /proc/config.gz).
 */
int lr_irqtime_accounting(void);
/* The same from the text of a kernel config and a command line; for the unit tests. */
int lr_irqtime_from(const char *config, const char *cmdline);

/* The ksoftirqd/N threads of this PID namespace: out[N] = its pid, 0 where not found. */
void lr_ksoftirqd_find(pid_t *out, unsigned int max);
/* A task's run time from /proc/PID/schedstat, ns; 0 when it cannot be read. */
uint64_t lr_task_runtime_ns(pid_t pid);
/* The first field of a schedstat line, ns; -EINVAL when it is none. */
int lr_schedstat_parse(const char *text, uint64_t *out);

#endif
