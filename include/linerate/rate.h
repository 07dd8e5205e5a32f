/* SPDX-License-Identifier: MIT */
/* Pacing: a dual token bucket on CLOCK_MONOTONIC, integer arithmetic only. */
#ifndef LINERATE_RATE_H
#define LINERATE_RATE_H

#include <stdint.h>

/* One bucket: @rate packets a second, at most @depth packets of credit (kept as packets * 1e9). */
struct lr_bucket {
	uint64_t rate;
	uint64_t depth;
	uint64_t credit;
	uint64_t last_ns;
};

/*
 * The average bucket holds the long-term rate and remembers up to
 * LR_PACE_CATCHUP_NS of missed sending (a preempted thread, a late wake-up),
 * so the rate over a test is kept. The peak bucket, 1/16 above the rate and
 * only @burst deep, spreads that catch-up out: no burst is ever longer than
 * @burst frames, and the rate never runs more than 6.25 % above the target,
 * so a policer just above the offered rate never sees the catch-up.
 */
#define LR_PACE_CATCHUP_NS 10000000ULL	/* 10 ms */
#define LR_PACE_PEAK_DIV 16

struct lr_pacer {
	uint64_t pps;	/* 0 = unlimited */
	uint64_t burst;
	struct lr_bucket avg, peak;
};

void lr_pacer_init(struct lr_pacer *p, uint64_t pps, uint64_t burst, uint64_t now_ns);
/* Packets that may be sent now, at most @want; does not consume them. */
uint64_t lr_pacer_allow(struct lr_pacer *p, uint64_t now_ns, uint64_t want);
void lr_pacer_consume(struct lr_pacer *p, uint64_t n);
/* Nanoseconds until one more packet is allowed (0 if one is allowed now). */
uint64_t lr_pacer_wait_ns(const struct lr_pacer *p, uint64_t now_ns);

/*
 * Bucket depth for @pps with an engine that sends up to @batch frames a
 * call: about 50 us of traffic, at least 2 frames and at most a batch. An
 * engine whose every call costs a fixed set-up (@slice_ns > 0, the live
 * engine) instead sends a whole slice of the rate per call, @pps * @slice_ns,
 * still at most a batch.
 */
uint64_t lr_pace_burst(uint64_t pps, uint64_t batch, uint64_t slice_ns);

/*
 * Frames of an unbroken run that fit before a deadline @left_ns away at
 * @ns_per_frame (0: not known yet, run @budget): one more than fits, so a
 * run always makes progress, and never more than @budget.
 */
uint64_t lr_run_fit(uint64_t budget, uint64_t left_ns, uint64_t ns_per_frame);

uint64_t lr_now_ns(void);

#endif
