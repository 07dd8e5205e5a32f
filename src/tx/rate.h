/* SPDX-License-Identifier: MIT */
/* Pacing: a dual token bucket on CLOCK_MONOTONIC, integer arithmetic only. */
#ifndef LINERATE_RATE_H
#define LINERATE_RATE_H

#include <stdbool.h>
#include <stdint.h>
#include "util/clock.h"

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
 * only @burst deep, spreads that catch-up out: after a stall now and then,
 * no burst is longer than @burst frames, and the rate never runs more than
 * 6.25 % above the target, so a policer just above the offered rate never
 * sees the catch-up. On a CPU shared with busy threads every wake-up comes
 * late, by a scheduler slice (milliseconds): a burst of 2 per wake-up would
 * hold 20 kpps to a few hundred. The sender reports each wake-up's lateness
 * (lr_pacer_late) and, while they stay late, the peak bucket is as deep as
 * what accrues during one (5/4 of it, at most LR_PACE_CATCHUP_NS of the rate):
 * the rate is kept, in bursts that the CPU forces anyway.
 */
#define LR_PACE_CATCHUP_NS 10000000ULL	/* 10 ms */
#define LR_PACE_MAX_PPS 100000000000ULL	/* 1e11: far above any allowed rate, far below overflow */
#define LR_PACE_PEAK_DIV 16

struct lr_pacer {
	uint64_t pps;	/* 0 = unlimited */
	uint64_t burst;
	struct lr_bucket avg, peak;
	/* costly calls (lr_pacer_costly): bursts between these, sized from call times */
	bool costly;
	uint64_t min_burst, max_burst, call_ns;
	/* late wake-ups (lr_pacer_late): their running mean, and the peak depth it asks for (0: none) */
	uint64_t late_ns, late_depth;
};

/* --latency-every: @given when set (non-zero), else the default for @pps (0: unpaced; see linerate/flow.h). */
uint32_t lr_latency_every(uint32_t given, uint64_t pps);

void lr_pacer_init(struct lr_pacer *p, uint64_t pps, uint64_t burst, uint64_t now_ns);
/*
 * For an engine whose every call has a set-up cost (the live engine): from
 * now on lr_pacer_allow() grants a whole burst or nothing (except for the
 * last frames wanted), and lr_pacer_call() reports how long each call took,
 * so the burst grows, up to @max_burst, when calls get slow
 * (lr_pace_burst_for_call), and shrinks back, never below the burst given
 * to lr_pacer_init().
 */
void lr_pacer_costly(struct lr_pacer *p, uint64_t max_burst);
void lr_pacer_call(struct lr_pacer *p, uint64_t call_ns);
/*
 * A wait for the next packet ended @late_ns after it should have (a sleep
 * overslept, a yield came back a slice later). Late wake-ups in a row deepen
 * the peak bucket to what accrues during one; on time, it shrinks back.
 */
void lr_pacer_late(struct lr_pacer *p, uint64_t late_ns);
/* Packets that may be sent now, at most @want; does not consume them. */
uint64_t lr_pacer_allow(struct lr_pacer *p, uint64_t now_ns, uint64_t want);
void lr_pacer_consume(struct lr_pacer *p, uint64_t n);
/* Nanoseconds until one more packet is allowed (a whole burst if costly; 0 if allowed now). */
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
 * An engine whose every call has a cost that depends on the system (the
 * live engine: 20 us, or a millisecond when the receiver runs on another
 * CPU) must carry more frames per call when calls get slow, or pacing falls
 * behind: 5/4 of the frames that accrue at @pps during one call of
 * @call_ns, at least @min_burst, at most @max_burst and 10 ms of the rate.
 * The margin is small on purpose: calls grow with their frames, and with a
 * margin m the burst only converges while pps * (time per frame) < 1/m;
 * beyond that (sending 80 % of the time anyway) the 10 ms cap holds it.
 */
#define LR_PACE_CALL_CAP_NS 10000000ULL
uint64_t lr_pace_burst_for_call(uint64_t pps, uint64_t call_ns, uint64_t min_burst, uint64_t max_burst);

/*
 * Frames of an unbroken run that fit before a deadline @left_ns away at
 * @ns_per_frame (0: not known yet, run @budget): one more than fits, so a
 * run always makes progress, and never more than @budget.
 */
uint64_t lr_run_fit(uint64_t budget, uint64_t left_ns, uint64_t ns_per_frame);


#endif
