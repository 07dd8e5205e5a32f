/* SPDX-License-Identifier: MIT */
/*
 * bpf_stats, each BPF program's run time and run count: what they add to a run (a calibration on an
 * empty program) and a sampler that turns them on for a small share of the time only.
 */
#ifndef LINERATE_SYS_BPFSTATS_H
#define LINERATE_SYS_BPFSTATS_H

#include <stddef.h>
#include <stdint.h>
#include "sys/cost.h"

/*
 * The sampler's duty: stats on for LR_STATS_WINDOW_NS in every LR_STATS_PERIOD_NS. With them on, every
 * program run pays two clock reads (tens of ns on a VM): on for 1/32 of the time, the rates measured
 * meanwhile hardly move, and a window still counts thousands of runs at any rate worth a figure.
 */
#define LR_STATS_PERIOD_NS	320000000ULL
#define LR_STATS_WINDOW_NS	10000000ULL

/*
 * Runs an empty XDP program with BPF_PROG_RUN, stats off and on, five times
 * each: what stats add to a run and what they put into its reported time.
 * Stats that are on already (the sysctl, or another tool's BPF_ENABLE_STATS,
 * seen as runs counted while ours are off) leave "off" unknown: @out says so.
 * 0, or -errno with the reason in @why (BPF_ENABLE_STATS needs CAP_SYS_ADMIN).
 */
int lr_bpf_stats_calibrate(struct lr_stats_cal *out, char *why, size_t len);

/* A program's cumulative run time (ns) and run count: they grow only while stats are on. 0 or -errno. */
int lr_bpf_prog_stats(int prog_fd, uint64_t *run_ns, uint64_t *runs);

struct lr_bpf_sampler;

/* Starts the sampling thread (signals blocked in it). 0, or -errno with @why. */
int lr_bpf_sampler_start(struct lr_bpf_sampler **out, char *why, size_t len);
/* Opens a window now (a test's window has just begun), unless one is open; NULL is fine. */
void lr_bpf_sampler_kick(struct lr_bpf_sampler *s);
/* Stops it, stats off (unless someone else holds them on). NULL is fine. */
void lr_bpf_sampler_stop(struct lr_bpf_sampler *s);

#endif
