/* SPDX-License-Identifier: MIT */
/* Token-bucket pacing in integer nanopackets, so no rate drifts from rounding. */
#include <time.h>
#include "linerate/rate.h"

#define NS 1000000000ULL

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

/*
 * Credit grows by dt * pps nanopackets, capped at the bucket depth. dt is
 * compared with the time to fill the bucket first, so the product is only
 * formed when it is below burst * 1e9 and cannot overflow, however long the
 * pacer sat idle.
 */
static uint64_t credit_at(const struct lr_pacer *p, uint64_t now_ns)
{
	uint64_t cap = p->burst * NS, dt, room;

	if (now_ns <= p->last_ns)
		return p->credit;
	dt = now_ns - p->last_ns;
	room = cap > p->credit ? cap - p->credit : 0;
	if (dt >= room / p->pps + 1)
		return cap;
	return p->credit + dt * p->pps;
}

static void refill(struct lr_pacer *p, uint64_t now_ns)
{
	p->credit = credit_at(p, now_ns);
	if (now_ns > p->last_ns)
		p->last_ns = now_ns;
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
	uint64_t credit;

	if (!p->pps)
		return 0;
	credit = credit_at(p, now_ns);
	if (credit >= NS)
		return 0;
	return (NS - credit + p->pps - 1) / p->pps;
}
