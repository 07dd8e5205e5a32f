/* SPDX-License-Identifier: MIT */
/* Unit tests for the token-bucket pacer, driven by a simulated clock. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "tx/rate.h"

#define NS 1000000000ULL
#define HOUR (3600 * NS)

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* Sends whatever is allowed at every step; returns frames sent between @t0 and @t1. */
static uint64_t simulate(struct lr_pacer *p, uint64_t pps, uint64_t burst, uint64_t want, uint64_t t0,
			 uint64_t t1, uint64_t step_min, uint64_t step_max, uint64_t seed)
{
	uint64_t now = t0, sent = 0, s = seed;
	/* the average bucket may hold up to LR_PACE_CATCHUP_NS of missed sending */
	uint64_t catchup = (uint64_t)((unsigned __int128)pps * LR_PACE_CATCHUP_NS / NS);
	uint64_t slack = burst > catchup ? burst : catchup;

	while (now < t1) {
		uint64_t step = step_min + (step_max > step_min ? rnd(&s) % (step_max - step_min + 1) : 0);
		uint64_t n, earned;

		now = now + step > t1 ? t1 : now + step;
		n = lr_pacer_allow(p, now, want);
		assert_true(n <= want);
		assert_true(n <= burst);
		lr_pacer_consume(p, n);
		sent += n;
		/* never ahead of the rate by more than the catch-up bucket, nor the peak rate plus a burst */
		earned = (uint64_t)((unsigned __int128)pps * (now - t0) / NS);
		if (sent > earned + slack || sent > earned + earned / LR_PACE_PEAK_DIV + (now - t0) / NS + 1 + burst)
			fail_msg("at +%llu ns sent %llu, rate allows %llu + %llu (burst %llu)",
				 (unsigned long long)(now - t0), (unsigned long long)sent,
				 (unsigned long long)earned, (unsigned long long)slack, (unsigned long long)burst);
	}
	return sent;
}

static void test_pacer_1000pps_random_steps(void **state)
{
	struct lr_pacer p;
	uint64_t t0 = 5 * NS, sent;

	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		lr_pacer_init(&p, 1000, 16, t0);
		/* steps from 1 us to 3 ms: never more than 3 frames' credit at once */
		sent = simulate(&p, 1000, 16, 64, t0, t0 + 10 * NS, 1000, 3000000, seed);
		if (sent + 16 < 10000 || sent > 10000 + 16)
			fail_msg("seed %llu: sent %llu in 10 s at 1000 pps", (unsigned long long)seed,
				 (unsigned long long)sent);
	}
}

static void test_pacer_one_at_a_time(void **state)
{
	struct lr_pacer p;
	uint64_t now = NS, end = 11 * NS, sent = 0;

	(void)state;
	/* a sender that asks for one frame and sleeps for lr_pacer_wait_ns() in between */
	lr_pacer_init(&p, 1000, 1, now);
	while (now < end) {
		uint64_t w = lr_pacer_wait_ns(&p, now);

		if (w) {
			assert_int_equal(lr_pacer_allow(&p, now, 1), 0);
			now += w;
			continue;
		}
		assert_int_equal(lr_pacer_allow(&p, now, 1), 1);
		lr_pacer_consume(&p, 1);
		sent++;
	}
	if (sent + 1 < 10000 || sent > 10001)
		fail_msg("sent %llu in 10 s at 1000 pps", (unsigned long long)sent);
}

static void test_pacer_burst_cap_after_idle(void **state)
{
	struct lr_pacer p;
	uint64_t now = 7 * NS, n, w;

	(void)state;
	lr_pacer_init(&p, 1000, 32, now);
	lr_pacer_consume(&p, lr_pacer_allow(&p, now, 1000));
	assert_int_equal(lr_pacer_allow(&p, now, 1000), 0);

	/* an hour idle fills the bucket, not more */
	now += HOUR;
	n = lr_pacer_allow(&p, now, 1000000);
	assert_int_equal(n, 32);
	assert_int_equal(lr_pacer_allow(&p, now, 5), 5);
	lr_pacer_consume(&p, n);
	assert_int_equal(lr_pacer_allow(&p, now, 1000), 0);

	/* empty bucket at 1000 pps: the next frame is 1 ms away, not sooner */
	w = lr_pacer_wait_ns(&p, now);
	assert_true(w > 0 && w <= 1000000);
	assert_int_equal(lr_pacer_allow(&p, now + w - 1, 1), 0);
	assert_int_equal(lr_pacer_allow(&p, now + w, 1), 1);
}

static void test_pacer_wait_ns(void **state)
{
	struct lr_pacer p;
	uint64_t now = 3 * NS, w, w2;

	(void)state;
	/* 3 pps: 333333333.3 ns per frame, so the wait has to round up */
	lr_pacer_init(&p, 3, 1, now);
	lr_pacer_consume(&p, lr_pacer_allow(&p, now, 1));
	assert_int_equal(lr_pacer_allow(&p, now, 1), 0);
	w = lr_pacer_wait_ns(&p, now);
	assert_true(w > 0 && w <= 333333334);
	/* waiting part of the time leaves the rest to wait; asking does not consume */
	w2 = lr_pacer_wait_ns(&p, now + w / 2);
	assert_true(w2 + 1 >= w - w / 2 && w2 <= w - w / 2 + 1);
	assert_true(lr_pacer_wait_ns(&p, now + w / 2) == w2);
	assert_int_equal(lr_pacer_allow(&p, now + w - 1, 1), 0);
	assert_int_equal(lr_pacer_allow(&p, now + w, 1), 1);
	assert_true(lr_pacer_wait_ns(&p, now + w) == 0);
	lr_pacer_consume(&p, 1);
	assert_true(lr_pacer_wait_ns(&p, now + w) > 0);
}

static void test_pacer_unlimited(void **state)
{
	struct lr_pacer p;
	uint64_t now = NS;

	(void)state;
	lr_pacer_init(&p, 0, 32, now);
	for (int i = 0; i < 1000; i++) {
		uint64_t want = 1 + (uint64_t)i * 997;

		assert_true(lr_pacer_allow(&p, now, want) == want);
		lr_pacer_consume(&p, want);
		assert_true(lr_pacer_wait_ns(&p, now) == 0);
	}
	assert_true(lr_pacer_allow(&p, now, 1000000000) == 1000000000);
	assert_true(lr_pacer_allow(&p, now + HOUR, 1ULL << 40) == 1ULL << 40);
}

static void check_rate(uint64_t pps, uint64_t burst, uint64_t span, uint64_t step)
{
	struct lr_pacer p;
	uint64_t t0 = 2 * NS, sent, want;

	want = (uint64_t)((unsigned __int128)pps * span / NS);
	lr_pacer_init(&p, pps, burst, t0);
	sent = simulate(&p, pps, burst, burst, t0, t0 + span, step, step, 1);
	/* within 0.1 % */
	if ((sent > want ? sent - want : want - sent) * 1000 > want)
		fail_msg("%llu pps, %llu ns steps: sent %llu in %llu ns, want %llu +- 0.1%%",
			 (unsigned long long)pps, (unsigned long long)step, (unsigned long long)sent,
			 (unsigned long long)span, (unsigned long long)want);
}

static void test_pacer_high_rates(void **state)
{
	(void)state;
	check_rate(1000000, 64, NS, 1000);
	check_rate(100000000, 256, NS / 10, 1000);
	/* 10GbE line rate at 64 B: 14.88 frames per step, the fraction must carry over */
	check_rate(14880952, 64, NS / 10, 1000);
	check_rate(14880952, 64, NS / 10, 333);
	check_rate(3000000, 64, NS / 10, 7);
	/* slow and fractional (a bucket deeper than one step's credit, so capping loses nothing) */
	check_rate(3, 4, 1000 * NS, 1000000);
	check_rate(7, 8, 1000 * NS, 999999937);
}

static void test_pacer_no_overflow(void **state)
{
	static const uint64_t rates[] = { 1, 1000, 1000000, 14880952, 100000000, 1000000000 };
	static const uint64_t idles[] = { HOUR, 10 * HOUR, 1000 * HOUR, 1ULL << 62 };

	(void)state;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		for (size_t k = 0; k < sizeof(idles) / sizeof(idles[0]); k++) {
			struct lr_pacer p;
			uint64_t now = NS, pps = rates[i], n, sent, want, span, step;

			lr_pacer_init(&p, pps, 64, now);
			lr_pacer_consume(&p, lr_pacer_allow(&p, now, 64));
			now += idles[k];
			/* no wrapped product: some credit, never more than the bucket */
			n = lr_pacer_allow(&p, now, 1000);
			if (n < 1 || n > 64)
				fail_msg("%llu pps after %llu ns idle: allow %llu, want 1..64",
					 (unsigned long long)pps, (unsigned long long)idles[k],
					 (unsigned long long)n);
			lr_pacer_consume(&p, n);
			assert_true(lr_pacer_wait_ns(&p, now) <= NS / pps + 1);
			/* and it paces normally afterwards: half a bucket per step, about 1e6 frames */
			step = 32 * NS / pps;
			span = pps > 500000 ? 1000000 * NS / pps : 2 * NS;
			sent = simulate(&p, pps, 64, 64, now, now + span, step, step, 1);
			want = pps * span / NS;
			/*
			 * What the idle left in the catch-up bucket comes on top, as
			 * fast as the peak bucket (1/16 above the rate) lets it.
			 */
			{
				uint64_t depth = (uint64_t)((unsigned __int128)pps * LR_PACE_CATCHUP_NS / NS);
				uint64_t extra = want / LR_PACE_PEAK_DIV;

				if (depth < 64)
					depth = 64;
				want += depth < extra ? depth : extra;
			}
			if (sent > want + 64 || sent + 64 < want)
				fail_msg("%llu pps after %llu ns idle: %llu in %llu ns, want %llu",
					 (unsigned long long)pps, (unsigned long long)idles[k],
					 (unsigned long long)sent, (unsigned long long)span,
					 (unsigned long long)want);
		}
	}
}

/*
 * A library caller's absurd rate (the CLI stops at 1.5 Gpps) must not wrap the nanopacket
 * arithmetic into a pacer that never sends: it is held to LR_PACE_MAX_PPS and sends.
 */
static void test_pacer_absurd_rates(void **state)
{
	static const uint64_t rates[] = { 1844674407400ULL, 1ULL << 60, UINT64_MAX };

	(void)state;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct lr_pacer p;
		uint64_t now = NS, n;

		lr_pacer_init(&p, rates[i], 64, now);
		n = lr_pacer_allow(&p, now + 1000, 64);
		if (n != 64)
			fail_msg("%llu pps: allow after 1 us = %llu, want 64", (unsigned long long)rates[i],
				 (unsigned long long)n);
		lr_pacer_consume(&p, n);
		assert_true(lr_pacer_wait_ns(&p, now + 1000) <= 1000);
		assert_true(simulate(&p, LR_PACE_MAX_PPS, 64, 64, now + 1000, now + 1000 + NS / 1000, 100, 100, 1) > 0);
	}
}

/* A token bucket is full once it has been idle for burst / pps seconds, however slow the rate. */
static void test_pacer_refills_to_burst(void **state)
{
	static const struct {
		uint64_t pps, burst, idle;
	} cases[] = {
		{ 1000, 64, HOUR }, { 5, 64, 13 * NS }, { 1, 64, 65 * NS }, { 1, 64, HOUR },
		{ 2, 100, 10 * HOUR },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lr_pacer p;
		uint64_t now = NS, n;

		lr_pacer_init(&p, cases[i].pps, cases[i].burst, now);
		lr_pacer_consume(&p, lr_pacer_allow(&p, now, cases[i].burst));
		now += cases[i].idle;
		n = lr_pacer_allow(&p, now, 100000);
		if (n != cases[i].burst)
			fail_msg("%llu pps, burst %llu, idle %llu ns: allow %llu, want the full bucket",
				 (unsigned long long)cases[i].pps, (unsigned long long)cases[i].burst,
				 (unsigned long long)cases[i].idle, (unsigned long long)n);
	}
}

static void test_now_monotonic(void **state)
{
	struct timespec a, c;
	uint64_t b, ta, tc, prev = 0;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &a);
	b = lr_now_ns();
	clock_gettime(CLOCK_MONOTONIC, &c);
	ta = (uint64_t)a.tv_sec * NS + (uint64_t)a.tv_nsec;
	tc = (uint64_t)c.tv_sec * NS + (uint64_t)c.tv_nsec;
	assert_true(ta <= b && b <= tc);
	for (int i = 0; i < 10000; i++) {
		uint64_t t = lr_now_ns();

		assert_true(t >= prev);
		prev = t;
	}
}

/* A sender held off for 5 ms gets the frames back, no faster than 1/16 above the rate, never in a big burst. */
static void test_pacer_catches_up_after_stall(void **state)
{
	const uint64_t pps = 20000, burst = 4, t0 = NS;
	uint64_t now = t0, sent = 0, n, before, stall_end;
	struct lr_pacer p;

	(void)state;
	lr_pacer_init(&p, pps, burst, t0);
	/* 100 ms of steady 1 us polling */
	for (; now < t0 + 100 * 1000000ULL; now += 1000) {
		n = lr_pacer_allow(&p, now, 64);
		assert_true(n <= burst);
		lr_pacer_consume(&p, n);
		sent += n;
	}
	before = sent;
	/* a 5 ms stall: 100 frames missed */
	now += 5 * 1000000ULL;
	stall_end = now;
	for (; now < stall_end + 100 * 1000000ULL; now += 1000) {
		n = lr_pacer_allow(&p, now, 64);
		assert_true(n <= burst);
		lr_pacer_consume(&p, n);
		sent += n;
		/* peak: in every millisecond, at most 21.25 frames (20 + 1/16) plus the small bucket */
		if (!((now - stall_end) % 1000000ULL)) {
			if (sent - before > pps / 1000 + pps / 1000 / LR_PACE_PEAK_DIV + 1 + burst)
				fail_msg("%llu frames in the millisecond before +%llu ns", (unsigned long long)(sent - before),
					 (unsigned long long)(now - stall_end));
			before = sent;
		}
	}
	/* 205 ms at 20 kpps is 4100 frames: the stall cost nothing (recovered in ~80 ms) */
	if (sent + 2 < 4100 || sent > 4100 + burst)
		fail_msg("sent %llu in 205 ms at 20 kpps with a 5 ms stall, want 4100", (unsigned long long)sent);
}

/*
 * A CPU shared with busy threads: every wait comes back a 4 ms slice late. With late wake-ups
 * reported, the rate holds (within 2 %, over a second at 20 kpps); unreported, the burst of 2 a
 * wake-up holds it to a few hundred. On time again, the peak bucket shrinks back to the burst.
 */
static uint64_t sent_with_late_wakeups(bool report)
{
	const uint64_t pps = 20000, burst = 2, t0 = NS, slice = 4000000ULL;
	uint64_t now = t0, sent = 0, n;
	struct lr_pacer p;

	lr_pacer_init(&p, pps, burst, t0);
	while (now < t0 + NS) {
		n = lr_pacer_allow(&p, now, 64);
		if (n) {
			lr_pacer_consume(&p, n);
			sent += n;
			now += 1000;	/* the send itself */
			continue;
		}
		/* the wait the pacer asks for, and a slice more */
		now += lr_pacer_wait_ns(&p, now) + slice;
		if (report)
			lr_pacer_late(&p, slice);
	}
	return sent;
}

static void test_pacer_late_wakeups(void **state)
{
	struct lr_pacer p;
	uint64_t sent;
	int i;

	(void)state;
	sent = sent_with_late_wakeups(true);
	if (sent < 19600 || sent > 20000 + 200)
		fail_msg("sent %llu in 1 s at 20 kpps with every wake-up 4 ms late, want 20000 (-2 %%)",
			 (unsigned long long)sent);
	sent = sent_with_late_wakeups(false);
	if (sent > 2000)
		fail_msg("unreported late wake-ups: sent %llu, expected the burst to hold it far below the rate",
			 (unsigned long long)sent);

	/* deepened by late wake-ups, back to the burst once they come on time */
	lr_pacer_init(&p, 20000, 2, NS);
	for (i = 0; i < 16; i++)
		lr_pacer_late(&p, 4000000ULL);
	assert_true(p.peak.depth > 50 && p.peak.depth <= 200);
	for (i = 0; i < 64; i++)
		lr_pacer_late(&p, 1000);
	assert_int_equal(p.peak.depth, 2);
	/* never deeper than LR_PACE_CATCHUP_NS of the rate (200 frames at 20 kpps) */
	for (i = 0; i < 64; i++)
		lr_pacer_late(&p, 50 * NS);
	assert_true(p.peak.depth <= 200);
	/* unpaced: nothing to do */
	lr_pacer_init(&p, 0, 2, NS);
	lr_pacer_late(&p, 4000000ULL);
	assert_int_equal(lr_pacer_allow(&p, NS, 64), 64);
}

static void test_pace_burst(void **state)
{
	const uint64_t slice = 50000000ULL;	/* the live engine's 50 ms */

	(void)state;
	/* no slice: ~50 us of traffic, at least 2, at most a batch */
	assert_int_equal(lr_pace_burst(1000, 64, 0), 2);
	assert_int_equal(lr_pace_burst(40000, 64, 0), 2);
	assert_int_equal(lr_pace_burst(100000, 64, 0), 5);
	assert_int_equal(lr_pace_burst(1000000, 64, 0), 50);
	assert_int_equal(lr_pace_burst(10000000, 64, 0), 64);
	assert_int_equal(lr_pace_burst(10000000, 1, 0), 1);
	/* a slice per call: pps * 50 ms, at most a batch, never below the small burst */
	assert_int_equal(lr_pace_burst(10000, 1 << 20, slice), 500);
	assert_int_equal(lr_pace_burst(20000, 1 << 20, slice), 1000);
	assert_int_equal(lr_pace_burst(1000000, 1 << 20, slice), 50000);
	assert_int_equal(lr_pace_burst(100000000, 1 << 20, slice), 1 << 20);
	assert_int_equal(lr_pace_burst(10, 1 << 20, slice), 2);
	assert_int_equal(lr_pace_burst(33, 1 << 20, 100000000ULL), 3);
	/* no overflow at absurd rates: clamped to the batch */
	assert_int_equal(lr_pace_burst(UINT64_MAX, 1 << 20, slice), 1 << 20);
	assert_int_equal(lr_pace_burst(UINT64_MAX / 2, 1 << 20, 999999999ULL), 1 << 20);
}

static void test_run_fit(void **state)
{
	(void)state;
	/* speed not known yet: the whole budget */
	assert_int_equal(lr_run_fit(1 << 20, 1000, 0), 1 << 20);
	/* 100 ms left at 400 ns a frame: 250000 fit, one more to make progress */
	assert_int_equal(lr_run_fit(1 << 20, 100000000ULL, 400), 250001);
	/* never above the budget */
	assert_int_equal(lr_run_fit(1000, 100000000ULL, 400), 1000);
	/* the deadline passed: one frame, never zero (the caller checks the deadline itself) */
	assert_int_equal(lr_run_fit(1 << 20, 0, 400), 1);
	assert_int_equal(lr_run_fit(0, 100000000ULL, 400), 0);
}

/*
 * The live engine paced, as the worker drives it: every call costs a fixed
 * set-up plus a per-frame time, on a simulated clock. While the calls can
 * keep up, the achieved rate is the offered one within 2 % over 3 s; no
 * call carries more than @max_ok frames; past that, the engine falls short
 * but never overshoots.
 */
static uint64_t live_sim(uint64_t pps, uint64_t slice, uint64_t setup_ns, uint64_t frame_ns, uint64_t *max_call)
{
	const uint64_t batch = 1 << 16, t0 = NS, t1 = t0 + 3 * NS;
	uint64_t now = t0, sent = 0, n, start;
	struct lr_pacer p;

	*max_call = 0;
	lr_pacer_init(&p, pps, lr_pace_burst(pps, batch, slice), now);
	lr_pacer_costly(&p, batch);
	while (now < t1) {
		n = lr_pacer_allow(&p, now, batch);
		if (!n) {
			uint64_t w = lr_pacer_wait_ns(&p, now);

			assert_true(w > 0);
			now += w;
			continue;
		}
		/* a whole burst or nothing */
		assert_true(n >= p.burst);
		if (n > *max_call)
			*max_call = n;
		start = now;
		now += setup_ns + n * frame_ns;
		lr_pacer_consume(&p, n);
		lr_pacer_call(&p, now - start);
		sent += n;
	}
	return (uint64_t)((unsigned __int128)sent * NS / (now - t0));
}

static void live_expect(uint64_t pps, uint64_t slice, uint64_t setup_ns, uint64_t max_ok)
{
	uint64_t got, max_call;

	/* 350 ns a frame, as measured on the 2-core VM */
	got = live_sim(pps, slice, setup_ns, 350, &max_call);
	if (got < pps - pps / 50 || got > pps + pps / 50)
		fail_msg("offered %llu pps (slice %llu ns, set-up %llu ns), achieved %llu", (unsigned long long)pps,
			 (unsigned long long)slice, (unsigned long long)setup_ns, (unsigned long long)got);
	if (max_call > max_ok)
		fail_msg("offered %llu pps (set-up %llu ns): a call of %llu frames, want <= %llu",
			 (unsigned long long)pps, (unsigned long long)setup_ns, (unsigned long long)max_call,
			 (unsigned long long)max_ok);
}

static void test_live_pacing(void **state)
{
	uint64_t got, max_call;

	(void)state;
	/* held in the dispatcher: 20 us a call, 500 us slices */
	live_expect(10000, 500000, 20000, 5);
	live_expect(20000, 500000, 20000, 10);
	live_expect(200000, 500000, 20000, 100);
	live_expect(1000000, 500000, 20000, 500);
	live_expect(2000000, 500000, 20000, 1000);
	/* calls slowed to 1 ms (a receiver on another CPU): bursts grow to 5/4 of a call's worth */
	live_expect(20000, 500000, 1000000, 30);
	live_expect(200000, 500000, 1000000, 300);
	live_expect(1000000, 500000, 1000000, 2400);
	/* not held: 25 ms a call, 50 ms slices */
	live_expect(10000, 50000000, 25000000, 510);
	live_expect(100000, 50000000, 25000000, 5100);
	live_expect(1000000, 50000000, 25000000, 105000);
	/* 3 Mpps with 25 ms calls: cannot keep up, falls short, never above the rate */
	got = live_sim(3000000, 50000000, 25000000, 350, &max_call);
	assert_true(got < 3000000 - 3000000 / 50);
	assert_true(got > 1000000);
	assert_true(max_call <= 1 << 16);
}

static void test_pacer_costly_shrinks_back(void **state)
{
	struct lr_pacer p;

	(void)state;
	lr_pacer_init(&p, 100000, 50, NS);
	lr_pacer_costly(&p, 1 << 16);
	/* slow calls: 2 ms at 100 kpps is 200 frames a call, 5/4 of that for the burst */
	for (int i = 0; i < 64; i++)
		lr_pacer_call(&p, 2000000);
	assert_true(p.burst >= 225 && p.burst <= 250);
	/* fast again: back to the slice (within the 1/8 that keeps it from fluttering), never below it */
	for (int i = 0; i < 64; i++)
		lr_pacer_call(&p, 1000);
	assert_true(p.burst >= 50 && p.burst <= 56);
	/* never above 10 ms of the rate */
	for (int i = 0; i < 64; i++)
		lr_pacer_call(&p, 10 * NS);
	assert_int_equal(p.burst, 1000);
	/* nor above the batch */
	lr_pacer_init(&p, 100000000, 50, NS);
	lr_pacer_costly(&p, 4096);
	for (int i = 0; i < 64; i++)
		lr_pacer_call(&p, 10 * NS);
	assert_int_equal(p.burst, 4096);
}

/* --latency-every: as given, else 64 unpaced, else the largest power of two leaving >= 16384 stamps a second */
static void test_latency_every(void **state)
{
	(void)state;
	assert_int_equal(lr_latency_every(0, 0), 64);
	assert_int_equal(lr_latency_every(1, 0), 1);
	assert_int_equal(lr_latency_every(4096, 1000), 4096);
	assert_int_equal(lr_latency_every(0, 1), 1);
	assert_int_equal(lr_latency_every(0, 32767), 1);
	assert_int_equal(lr_latency_every(0, 32768), 2);
	assert_int_equal(lr_latency_every(0, 50000), 2);
	assert_int_equal(lr_latency_every(0, 65536), 4);
	assert_int_equal(lr_latency_every(0, 1000000), 32);
	assert_int_equal(lr_latency_every(0, 1048576), 64);
	assert_int_equal(lr_latency_every(0, 1000000000), 64);
	/* whatever the rate, the default leaves at least 16384 stamps a second (or stamps every frame) */
	for (uint64_t pps = 1; pps < 4000000; pps = pps * 3 / 2 + 1) {
		uint32_t n = lr_latency_every(0, pps);

		assert_true(n >= 1 && n <= 64 && !(n & (n - 1)));
		assert_true(n == 1 || pps / n >= 16384);
		assert_true(n == 64 || pps / (2 * n) < 16384);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pacer_1000pps_random_steps),
		cmocka_unit_test(test_pacer_one_at_a_time),
		cmocka_unit_test(test_pacer_burst_cap_after_idle),
		cmocka_unit_test(test_pacer_wait_ns),
		cmocka_unit_test(test_pacer_unlimited),
		cmocka_unit_test(test_pacer_high_rates),
		cmocka_unit_test(test_pacer_no_overflow),
		cmocka_unit_test(test_pacer_refills_to_burst),
		cmocka_unit_test(test_pacer_absurd_rates),
		cmocka_unit_test(test_pacer_catches_up_after_stall),
		cmocka_unit_test(test_pacer_late_wakeups),
		cmocka_unit_test(test_now_monotonic),
		cmocka_unit_test(test_pace_burst),
		cmocka_unit_test(test_run_fit),
		cmocka_unit_test(test_live_pacing),
		cmocka_unit_test(test_pacer_costly_shrinks_back),
		cmocka_unit_test(test_latency_every),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
