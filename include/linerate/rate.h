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

uint64_t lr_now_ns(void);

#endif
