/* SPDX-License-Identifier: MIT */
/* Clock offset estimation from NTP-style exchanges (minimum-delay filtering), drift, and the validity rule. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include "ctl/clock.h"
#include "util/units.h"

/* |@v| as unsigned, INT64_MIN included. */
static uint64_t magnitude(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

/* @a - @b for unsigned readings, as signed: -ERANGE when it does not fit. */
static int difference(uint64_t a, uint64_t b, int64_t *out)
{
	uint64_t d;

	if (a >= b) {
		d = a - b;
		if (d > INT64_MAX)
			return -ERANGE;
		*out = (int64_t)d;
		return 0;
	}
	d = b - a;
	if (d > (uint64_t)INT64_MAX + 1)
		return -ERANGE;
	/* d in 1..2^63: -(d - 1) - 1 reaches INT64_MIN without a signed overflow */
	*out = -(int64_t)(d - 1) - 1;
	return 0;
}

int lr_clock_sample_eval(const struct lr_clock_sample *s, int64_t *offset_ns, uint64_t *delay_ns)
{
	uint64_t rtt, busy;
	int err;

	if (s->t4 < s->t1 || s->t3 < s->t2)
		return -EINVAL;
	rtt = s->t4 - s->t1;
	busy = s->t3 - s->t2;
	if (busy > rtt)
		return -EINVAL;
	/*
	 * ((t2 - t1) + (t3 - t4)) / 2 is the endpoint's midpoint (t2 + t3) / 2 less the controller's
	 * (t1 + t4) / 2. Each midpoint is taken as its first reading plus half its span, which cannot
	 * overflow; only the half nanosecond each span's halving drops is lost.
	 */
	err = difference(s->t2 + busy / 2, s->t1 + rtt / 2, offset_ns);
	if (err)
		return err;
	*delay_ns = rtt - busy;
	return 0;
}

int lr_clock_est_add(struct lr_clock_est *e, const struct lr_clock_sample *s)
{
	uint64_t delay;
	int64_t offset;
	int err;

	err = lr_clock_sample_eval(s, &offset, &delay);
	if (err) {
		e->refused++;
		return err;
	}
	/*
	 * With the true offset T, t2 - T lies between t1 and t4 - (t3 - t2): the request's and the
	 * reply's transit times are both >= 0 and sum to the delay. However they split, the estimate
	 * is off by half their difference, at most half the delay; the fastest exchange is the tightest.
	 */
	if (!e->samples || delay < e->delay_ns) {
		e->offset_ns = offset;
		e->delay_ns = delay;
		e->bound_ns = delay / 2 + (delay & 1) + LR_CLOCK_READ_NS;
		e->at_ns = s->t1 + (s->t4 - s->t1) / 2;
	}
	e->samples++;
	return 0;
}

int lr_clock_estimate(const struct lr_clock_sample *s, unsigned int n, struct lr_clock_est *e)
{
	unsigned int i;

	*e = (struct lr_clock_est){ 0 };
	for (i = 0; i < n; i++)
		lr_clock_est_add(e, &s[i]);
	return e->samples ? 0 : -ENODATA;
}

int lr_clock_report_make(const struct lr_clock_est *before, const struct lr_clock_est *after,
			 struct lr_clock_report *r)
{
	uint64_t widest, moved, bound;
	int64_t delta;
	double drift;

	if (!before->samples || !after->samples)
		return -ENODATA;
	if (after->at_ns <= before->at_ns)
		return -EINVAL;
	if (__builtin_sub_overflow(after->offset_ns, before->offset_ns, &delta))
		return -ERANGE;
	moved = magnitude(delta);
	/*
	 * With a steady drift the true offset moves along a line between the two estimates' moments,
	 * and the one loaded (before's) is then off by at most max(before's bound, after's bound +
	 * the move) anywhere on it. The wider bound plus the move covers that with room for the
	 * frequency to change a little during the test (NTP slewing either clock).
	 */
	widest = before->bound_ns > after->bound_ns ? before->bound_ns : after->bound_ns;
	if (__builtin_add_overflow(widest, moved, &bound))
		return -ERANGE;
	drift = (double)delta * 1e9 / (double)(after->at_ns - before->at_ns);
	if (!(fabs(drift) < 9e18))
		return -ERANGE;
	r->offset_ns = before->offset_ns;
	r->error_bound_ns = bound;
	r->drift_ppb = llround(drift);
	return 0;
}

int lr_clock_report_between(const struct lr_clock_report *rx, const struct lr_clock_report *tx,
			    struct lr_clock_report *r)
{
	struct lr_clock_report out;

	/* (rx - ctl) - (tx - ctl) = rx - tx; the two estimates' errors can add up */
	if (__builtin_sub_overflow(rx->offset_ns, tx->offset_ns, &out.offset_ns) ||
	    __builtin_add_overflow(rx->error_bound_ns, tx->error_bound_ns, &out.error_bound_ns) ||
	    __builtin_sub_overflow(rx->drift_ppb, tx->drift_ppb, &out.drift_ppb))
		return -ERANGE;
	*r = out;
	return 0;
}

bool lr_clock_latency_valid(const struct lr_rx_result *r, uint64_t error_bound_ns)
{
	/*
	 * Every sample is off by at most the bound, so every order statistic and the mean are too.
	 * The smallest figure printed is min: a bound within a quarter of it is within a quarter of
	 * each. A frame "from the future" had a true latency below the offset's error: its figure
	 * is not in min, so min says nothing about it.
	 */
	return r->lat_count && !r->lat_future && error_bound_ns <= r->lat_min / LR_CLOCK_VALID_DIV;
}

void lr_clock_apply(struct lr_rx_result *r, const struct lr_clock_report *c)
{
	if (!c) {
		r->lat_clock = LR_LAT_CLOCK_NONE;
		r->lat_offset_ns = 0;
		r->lat_error_bound_ns = 0;
		r->lat_drift_ppb = 0;
		r->lat_valid = false;
		return;
	}
	r->lat_clock = LR_LAT_CLOCK_ESTIMATED;
	r->lat_offset_ns = c->offset_ns;
	r->lat_error_bound_ns = c->error_bound_ns;
	r->lat_drift_ppb = c->drift_ppb;
	r->lat_valid = lr_clock_latency_valid(r, c->error_bound_ns);
}

const char *lr_clock_describe(const struct lr_rx_result *r, char *buf, size_t len)
{
	const unsigned long long bound = r->lat_error_bound_ns;

	if (r->lat_clock == LR_LAT_CLOCK_SAME_HOST)
		snprintf(buf, len, "%s", "");
	else if (r->lat_clock == LR_LAT_CLOCK_NONE)
		snprintf(buf, len, "not valid: no estimate of the offset between the two hosts' clocks");
	else if (r->lat_valid)
		snprintf(buf, len, "across hosts: clock offset %lld ns estimated to within %llu ns, drift %lld ppb",
			 (long long)r->lat_offset_ns, bound, (long long)r->lat_drift_ppb);
	else if (!r->lat_count)
		snprintf(buf, len, "not valid: no frame with a latency sample (clock offset known to %llu ns)", bound);
	else if (r->lat_future)
		snprintf(buf, len, "not valid: %llu frame%s arrived before they were sent by the estimated clocks "
			 "(offset %lld ns, known to %llu ns)", (unsigned long long)r->lat_future, lr_s(r->lat_future),
			 (long long)r->lat_offset_ns, bound);
	else
		snprintf(buf, len, "not valid: the clock offset is known to %llu ns, more than a quarter of the "
			 "smallest latency measured (%llu ns)", bound, (unsigned long long)r->lat_min);
	return buf;
}
