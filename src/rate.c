/* SPDX-License-Identifier: MIT */
/* Token-bucket pacing in integer nanopackets, so no rate drifts from rounding. */
#include <time.h>
#include "linerate/rate.h"

#define NS 1000000000ULL
/* Elapsed time credited in one step is capped so elapsed * pps never overflows. */
#define MAX_STEP_NS (10 * NS)

uint64_t lr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

void lr_pacer_init(struct lr_pacer *p, uint64_t pps, uint64_t burst, uint64_t now_ns)
{
	p->pps = pps;
	p->burst = burst ? burst : 1;
	p->last_ns = now_ns;
	p->credit = 0;
}

static void refill(struct lr_pacer *p, uint64_t now_ns)
{
	uint64_t dt, cap;

	if (now_ns <= p->last_ns)
		return;
	dt = now_ns - p->last_ns;
	p->last_ns = now_ns;
	if (dt > MAX_STEP_NS)
		dt = MAX_STEP_NS;
	cap = p->burst * NS;
	/* both factors are bounded: dt <= 1e10, pps <= 1e9 would overflow, so clamp */
	if (p->pps > UINT64_MAX / dt || p->credit + dt * p->pps > cap)
		p->credit = cap;
	else
		p->credit += dt * p->pps;
}

uint64_t lr_pacer_allow(struct lr_pacer *p, uint64_t now_ns, uint64_t want)
{
	uint64_t n;

	if (!p->pps)
		return want;
	refill(p, now_ns);
	n = p->credit / NS;
	return n < want ? n : want;
}

void lr_pacer_consume(struct lr_pacer *p, uint64_t n)
{
	if (!p->pps)
		return;
	p->credit = n * NS > p->credit ? 0 : p->credit - n * NS;
}

uint64_t lr_pacer_wait_ns(const struct lr_pacer *p, uint64_t now_ns)
{
	uint64_t credit = p->credit, need;

	if (!p->pps)
		return 0;
	if (now_ns > p->last_ns) {
		uint64_t dt = now_ns - p->last_ns;

		if (dt > MAX_STEP_NS || p->pps > (UINT64_MAX - credit) / dt)
			return 0;
		credit += dt * p->pps;
	}
	if (credit >= NS)
		return 0;
	need = NS - credit;
	return (need + p->pps - 1) / p->pps;
}
