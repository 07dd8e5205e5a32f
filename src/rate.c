/* SPDX-License-Identifier: MIT */
/* Dual token-bucket pacing in integer nanopackets, so no rate drifts from rounding. */
#include <time.h>
#include "linerate/rate.h"

#define NS 1000000000ULL

uint64_t lr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static void bucket_init(struct lr_bucket *b, uint64_t rate, uint64_t depth, uint64_t now_ns)
{
	b->rate = rate;
	b->depth = depth ? depth : 1;
	b->credit = 0;
	b->last_ns = now_ns;
}

/*
 * Credit grows by dt * rate nanopackets, capped at the depth. dt is compared
 * with the time to fill the bucket first, so the product is only formed when
 * it is below depth * 1e9 and cannot overflow, however long the bucket sat idle.
 */
static uint64_t credit_at(const struct lr_bucket *b, uint64_t now_ns)
{
	uint64_t cap = b->depth * NS, dt, room;

	if (now_ns <= b->last_ns)
		return b->credit;
	dt = now_ns - b->last_ns;
	room = cap > b->credit ? cap - b->credit : 0;
	if (dt >= room / b->rate + 1)
		return cap;
	return b->credit + dt * b->rate;
}

static void refill(struct lr_bucket *b, uint64_t now_ns)
{
	b->credit = credit_at(b, now_ns);
	if (now_ns > b->last_ns)
		b->last_ns = now_ns;
}

static void take(struct lr_bucket *b, uint64_t n)
{
	b->credit = n * NS > b->credit ? 0 : b->credit - n * NS;
}

static uint64_t wait_ns(const struct lr_bucket *b, uint64_t now_ns)
{
	uint64_t credit = credit_at(b, now_ns);

	if (credit >= NS)
		return 0;
	return (NS - credit + b->rate - 1) / b->rate;
}

void lr_pacer_init(struct lr_pacer *p, uint64_t pps, uint64_t burst, uint64_t now_ns)
{
	uint64_t catchup = pps * (LR_PACE_CATCHUP_NS / 1000) / 1000000;

	p->pps = pps;
	p->burst = burst ? burst : 1;
	if (!pps)
		return;
	bucket_init(&p->avg, pps, catchup > p->burst ? catchup : p->burst, now_ns);
	bucket_init(&p->peak, pps + pps / LR_PACE_PEAK_DIV + 1, p->burst, now_ns);
}

uint64_t lr_pacer_allow(struct lr_pacer *p, uint64_t now_ns, uint64_t want)
{
	uint64_t a, b;

	if (!p->pps)
		return want;
	refill(&p->avg, now_ns);
	refill(&p->peak, now_ns);
	a = p->avg.credit / NS;
	b = p->peak.credit / NS;
	if (b < a)
		a = b;
	return a < want ? a : want;
}

void lr_pacer_consume(struct lr_pacer *p, uint64_t n)
{
	if (!p->pps)
		return;
	take(&p->avg, n);
	take(&p->peak, n);
}

uint64_t lr_pacer_wait_ns(const struct lr_pacer *p, uint64_t now_ns)
{
	uint64_t a, b;

	if (!p->pps)
		return 0;
	a = wait_ns(&p->avg, now_ns);
	b = wait_ns(&p->peak, now_ns);
	return a > b ? a : b;
}

uint64_t lr_pace_burst(uint64_t pps, uint64_t batch, uint64_t slice_ns)
{
	uint64_t b = pps / 20000, slice;

	if (b < 2)
		b = 2;
	if (b > batch)
		b = batch;
	if (slice_ns) {
		/* pps * slice_ns / 1e9 without overflow for any pps up to 2^64 / 1e9 and slices below 1 s */
		slice = pps / NS * slice_ns + pps % NS * slice_ns / NS;
		if (slice > b)
			b = slice < batch ? slice : batch;
	}
	return b;
}

uint64_t lr_run_fit(uint64_t budget, uint64_t left_ns, uint64_t ns_per_frame)
{
	uint64_t fit;

	if (!ns_per_frame)
		return budget;
	fit = left_ns / ns_per_frame + 1;
	return fit < budget ? fit : budget;
}
