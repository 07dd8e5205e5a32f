/* SPDX-License-Identifier: MIT */
/* Pacing: a token bucket on CLOCK_MONOTONIC, integer arithmetic only. */
#ifndef LINERATE_RATE_H
#define LINERATE_RATE_H

#include <stdint.h>

struct lr_pacer {
	uint64_t pps;	/* 0 = unlimited */
	uint64_t burst;	/* bucket depth in packets */
	uint64_t last_ns;
	uint64_t credit;	/* packets * 1e9 */
};

void lr_pacer_init(struct lr_pacer *p, uint64_t pps, uint64_t burst, uint64_t now_ns);
/* Packets that may be sent now, at most @want; does not consume them. */
uint64_t lr_pacer_allow(struct lr_pacer *p, uint64_t now_ns, uint64_t want);
void lr_pacer_consume(struct lr_pacer *p, uint64_t n);
/* Nanoseconds until one more packet is allowed (0 if one is allowed now). */
uint64_t lr_pacer_wait_ns(const struct lr_pacer *p, uint64_t now_ns);

uint64_t lr_now_ns(void);

#endif
