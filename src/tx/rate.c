/* SPDX-License-Identifier: MIT */
/* Dual token-bucket pacing in integer nanopackets, so no rate drifts from rounding. */
#include "tx/rate.h"
#include "linerate/flow.h"

#define NS 1000000000ULL

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

/* Until @need packets of credit (need <= depth). */
static uint64_t wait_ns(const struct lr_bucket *b, uint64_t now_ns, uint64_t need)
{
	uint64_t credit = credit_at(b, now_ns);

	if (credit >= need * NS)
		return 0;
	return (need * NS - credit + b->rate - 1) / b->rate;
}

void lr_pacer_init(struct lr_pacer *p, uint64_t pps, uint64_t burst, uint64_t now_ns)
{
	uint64_t catchup;

	/*
	 * Credit is kept in nanopackets: a bucket LR_PACE_CATCHUP_NS deep at
	 * @pps holds pps * 1e7 of them, which fits 64 bits up to 1.8e12 pps.
	 * The CLI allows 1.5 Gpps at most (1 Tbit/s of 64-byte frames); a
	 * library caller asking for more is held to LR_PACE_MAX_PPS rather
	 * than wrapping into a pacer that never sends.
	 */
	if (pps > LR_PACE_MAX_PPS)
		pps = LR_PACE_MAX_PPS;
	if (burst > LR_PACE_MAX_PPS)
		burst = LR_PACE_MAX_PPS;
	catchup = pps * (LR_PACE_CATCHUP_NS / 1000) / 1000000;

	p->pps = pps;
	p->burst = burst ? burst : 1;
	p->costly = false;
	p->late_ns = 0;
	p->late_depth = 0;
	if (!pps)
		return;
	bucket_init(&p->avg, pps, catchup > p->burst ? catchup : p->burst, now_ns);
	bucket_init(&p->peak, pps + pps / LR_PACE_PEAK_DIV + 1, p->burst, now_ns);
}

/* The peak bucket's depth: the burst, or what one late wake-up lets accrue while they come late. */
static void set_peak_depth(struct lr_pacer *p)
{
	uint64_t d = p->late_depth > p->burst ? p->late_depth : p->burst;

	p->peak.depth = d;
	if (p->peak.credit > d * NS)
		p->peak.credit = d * NS;
}

static void set_burst(struct lr_pacer *p, uint64_t burst)
{
	uint64_t catchup = p->pps * (LR_PACE_CATCHUP_NS / 1000) / 1000000;

	p->burst = burst ? burst : 1;
	if (!p->pps)
		return;
	p->avg.depth = catchup > p->burst ? catchup : p->burst;
	set_peak_depth(p);
	if (p->avg.credit > p->avg.depth * NS)
		p->avg.credit = p->avg.depth * NS;
}

uint64_t lr_pace_burst_for_call(uint64_t pps, uint64_t call_ns, uint64_t min_burst, uint64_t max_burst)
{
	/* 5/4 of what accrues while one call runs; 10 ms of the rate at most */
	uint64_t b = (uint64_t)((unsigned __int128)pps * call_ns * 5 / 4 / NS);
	uint64_t cap = (uint64_t)((unsigned __int128)pps * LR_PACE_CALL_CAP_NS / NS);

	if (cap < min_burst)
		cap = min_burst;
	if (cap > max_burst)
		cap = max_burst;
	if (b < min_burst)
		b = min_burst;
	return b < cap ? b : cap;
}

void lr_pacer_costly(struct lr_pacer *p, uint64_t max_burst)
{
	p->costly = true;
	p->min_burst = p->burst;
	p->max_burst = max_burst > p->burst ? max_burst : p->burst;
	p->call_ns = 0;
}

void lr_pacer_call(struct lr_pacer *p, uint64_t call_ns)
{
	uint64_t b;

	if (!p->costly || !p->pps)
		return;
	/* the average of the last ~8 calls */
	p->call_ns = p->call_ns ? (7 * p->call_ns + call_ns) / 8 : call_ns;
	b = lr_pace_burst_for_call(p->pps, p->call_ns, p->min_burst, p->max_burst);
	/* only a change of more than 1/8, so the depth does not flutter */
	if (b > p->burst + p->burst / 8 || b + b / 8 < p->burst)
		set_burst(p, b);
}

void lr_pacer_late(struct lr_pacer *p, uint64_t late_ns)
{
	uint64_t d;

	if (!p->pps)
		return;
	/* the mean of the last ~8 wake-ups: one stall now and then is still spread out at 1/16 */
	if (late_ns > LR_PACE_CATCHUP_NS)
		late_ns = LR_PACE_CATCHUP_NS;
	p->late_ns = (7 * p->late_ns + late_ns) / 8;
	d = lr_pace_burst_for_call(p->pps, p->late_ns, 1, UINT64_MAX);
	if (d <= p->burst)
		d = 0;
	/* only a change of more than 1/8, so the depth does not flutter */
	if (d > p->late_depth + p->late_depth / 8 || d + d / 8 < p->late_depth) {
		p->late_depth = d;
		set_peak_depth(p);
	}
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
	/* a costly call goes only with a whole burst, or with all that is wanted */
	if (p->costly && a < p->burst && a < want)
		return 0;
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
	/* costly calls wait for a whole burst (the last frames of a count may go sooner: see allow) */
	a = wait_ns(&p->avg, now_ns, p->costly ? p->burst : 1);
	b = wait_ns(&p->peak, now_ns, p->costly ? p->burst : 1);
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

uint32_t lr_latency_every(uint32_t given, uint64_t pps)
{
	uint32_t n = 1;

	if (given)
		return given;
	if (!pps)
		return LR_LAT_EVERY_MAXRATE;
	while (n < LR_LAT_EVERY_MAXRATE && pps / (2ULL * n) >= LR_LAT_SAMPLES_MIN)
		n *= 2;
	return n;
}
