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
#include "util/result.h"

/* The CPUs a send's workers ran on, and each one's CPU time over the window. */
struct lr_cost_cpus {
	unsigned int n;
	unsigned int cpu[LR_MAX_CPUS];
	uint64_t thread_ns[LR_MAX_CPUS];	/* the workers pinned there: CLOCK_THREAD_CPUTIME_ID deltas */
	uint64_t ksoftirqd_ns[LR_MAX_CPUS];	/* ksoftirqd/CPU's run time over the window (schedstat) */
	bool ksoftirqd_seen[LR_MAX_CPUS];	/* its run time could be read (not, in a PID namespace) */
	uint64_t sample_tick_ns;	/* the kernel's timer tick, at which busy time is sampled; 0: /proc/stat's */
	int irqtime;	/* the kernel's config: 1 keeps interrupt time apart, 0 does not, -1 unknown */
	/* out: per CPU, whether interrupt work was taken to be inside the threads' time, and whether the data said so */
	bool inside[LR_MAX_CPUS], by_data[LR_MAX_CPUS];
};

/*
 * What tx.cpu.irq_time_accounting reports after lr_cost_softirq_ns(): where the data decided on
 * some CPU, 0 when the threads' time held interrupt work there (most of them), else 1; where it
 * decided on none, the config's @irqtime (2 when that is unknown).
 */
int lr_cost_irqtime(const struct lr_cost_cpus *c, int irqtime);
/*
 * The senders' interrupt work over a window, for workers already in @cc (thread time by CPU):
 * ksoftirqd's time from the readings @ks0 and @ks1 (by CPU), the kernel's config, then
 * lr_cost_softirq_ns() over the per-CPU readings @a and @b. Fills @out's softirq_ns,
 * softirq_err_ns, irqtime, kernel_hz and ksoftirqd_seen.
 */
void lr_cost_sender_irq(struct lr_cost_cpus *cc, const struct lr_cpu_times *a, const struct lr_cpu_times *b,
			const uint64_t *ks0, const uint64_t *ks1, struct lr_tx_cpu *out);
/* Adds @thread_ns of a worker on @cpu to @c (one entry per CPU). */
void lr_cost_cpus_add(struct lr_cost_cpus *c, unsigned int cpu, uint64_t thread_ns);

/*
 * The interrupt work done inside the workers' own context, from the per-CPU
 * split: softirq and irq time on the workers' CPUs, less what ksoftirqd did
 * there, at most each CPU's thread time; none on a CPU whose threads' time
 * holds none. Whether it does is read off the data where the interrupt time
 * is clear of its error: without interrupt-time accounting the threads and
 * ksoftirqd fill the CPU's busy time, with it they fall short of it by the
 * interrupt time (the kernel may turn the accounting off at boot, so its
 * config alone cannot tell); else the config decides (unknown: inside).
 * @err_ns: how far it can be off (sampling and the /proc/stat resolution,
 * docs/cost.md). Returns it, ns; c->inside says what was decided.
 */
uint64_t lr_cost_softirq_ns(const struct lr_cpu_times *a, const struct lr_cpu_times *b, struct lr_cost_cpus *c,
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
	bool already_on;	/* on before we turned them on: no sampling needed, every run counted */
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
 * What the kernel's config says about its CPU accounting, where the config can be read
 * (/boot/config-RELEASE, /proc/config.gz): @irqtime, whether it keeps interrupt time apart
 * (CONFIG_IRQ_TIME_ACCOUNTING, not turned off by tsc=noirqtime), so that a thread's CPU time
 * holds no softirq work: 1 yes, 0 no, -1 unknown; @hz, its timer tick rate (CONFIG_HZ), the
 * rate at which busy time is sampled: 0 unknown.
 */
struct lr_kconfig {
	int irqtime;
	unsigned int hz;
};

void lr_kconfig_read(struct lr_kconfig *out);
/* The same from the text of a kernel config (NULL: none) and a command line; for the unit tests. */
void lr_kconfig_from(const char *config, const char *cmdline, struct lr_kconfig *out);

/* The ksoftirqd/N threads of this PID namespace: out[N] = its pid, 0 where not found. */
void lr_ksoftirqd_find(pid_t *out, unsigned int max);
/* The run time of each ksoftirqd lr_ksoftirqd_find() found into @ns[N] (0 where none or unreadable). */
void lr_ksoftirqd_read(const pid_t *pids, uint64_t *ns, unsigned int n);
/*
 * Fills @c's ksoftirqd_ns and ksoftirqd_seen from two such readings: seen where both ends were read
 * and the time did not go back.
 */
void lr_cost_cpus_ksoftirqd(struct lr_cost_cpus *c, const uint64_t *ns0, const uint64_t *ns1);
/* A task's run time from /proc/PID/schedstat, ns; 0 when it cannot be read. */
uint64_t lr_task_runtime_ns(pid_t pid);
/* The first field of a schedstat line, ns; -EINVAL when it is none. */
int lr_schedstat_parse(const char *text, uint64_t *out);

#endif
