/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for per-flow sequence accounting (gaps, late, duplicates, 48-bit wrap), latency buckets,
 * and counting a frame's latency with and without a clock offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "linerate/flow.h"

#define WRAP (1ULL << 48)

static int feed(struct lr_flow_state *st, uint64_t seq)
{
	return lr_flow_update(st, seq, 100);
}

static void feed_range(struct lr_flow_state *st, uint64_t from, uint64_t to)
{
	for (uint64_t s = from; s <= to; s++)
		assert_int_equal(feed(st, s), LR_FLOW_IN_ORDER);
}

static void check_counts(const struct lr_flow_state *st, uint64_t gaps, uint64_t late, uint64_t dups)
{
	assert_true(st->gaps == gaps);
	assert_true(st->late == late);
	assert_true(st->dups == dups);
	assert_true(lr_flow_lost(st) == (int64_t)gaps - (int64_t)late);
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static void test_flow_in_order(void **state)
{
	struct lr_flow_state st;
	uint64_t bytes = 0;

	(void)state;
	memset(&st, 0, sizeof(st));
	for (uint64_t s = 0; s < 1000; s++) {
		assert_int_equal(lr_flow_update(&st, s, 60 + (uint32_t)s), LR_FLOW_IN_ORDER);
		bytes += 60 + s;
	}
	check_counts(&st, 0, 0, 0);
	assert_true(st.packets == 1000);
	assert_true(st.bytes == bytes);
	assert_true(st.next == 1000);
}

static void test_flow_first_frame_nonzero(void **state)
{
	struct lr_flow_state st;

	(void)state;
	memset(&st, 0, sizeof(st));
	assert_int_equal(feed(&st, 5), LR_FLOW_GAP);
	check_counts(&st, 5, 0, 0);
	assert_int_equal(feed(&st, 6), LR_FLOW_IN_ORDER);
	/* the frames before the first one may still come */
	for (uint64_t s = 0; s < 5; s++)
		assert_int_equal(feed(&st, s), LR_FLOW_LATE);
	check_counts(&st, 5, 5, 0);
	assert_int_equal(feed(&st, 2), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 5), LR_FLOW_DUP);
	check_counts(&st, 5, 5, 2);
	assert_true(st.packets == 9);
}

static void test_flow_gap_late_dup(void **state)
{
	struct lr_flow_state st;

	(void)state;
	memset(&st, 0, sizeof(st));
	feed_range(&st, 0, 2);
	assert_int_equal(feed(&st, 5), LR_FLOW_GAP);
	check_counts(&st, 2, 0, 0);
	assert_int_equal(feed(&st, 3), LR_FLOW_LATE);
	check_counts(&st, 2, 1, 0);
	assert_true(lr_flow_lost(&st) == 1);
	assert_int_equal(feed(&st, 3), LR_FLOW_DUP);
	check_counts(&st, 2, 1, 1);
	assert_int_equal(feed(&st, 4), LR_FLOW_LATE);
	check_counts(&st, 2, 2, 1);
	assert_true(lr_flow_lost(&st) == 0);
	assert_int_equal(feed(&st, 2), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 0), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 6), LR_FLOW_IN_ORDER);
	check_counts(&st, 2, 2, 3);
	assert_true(st.packets == 10);
	assert_true(st.bytes == 1000);
	assert_true(st.next == 7);
}

static void test_flow_dup_of_highest(void **state)
{
	struct lr_flow_state st;

	(void)state;
	memset(&st, 0, sizeof(st));
	assert_int_equal(feed(&st, 0), LR_FLOW_IN_ORDER);
	assert_int_equal(feed(&st, 0), LR_FLOW_DUP);
	feed_range(&st, 1, 2);
	assert_int_equal(feed(&st, 2), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 2), LR_FLOW_DUP);
	/* a duplicate must not move expected */
	assert_int_equal(feed(&st, 3), LR_FLOW_IN_ORDER);
	check_counts(&st, 0, 0, 3);
	assert_true(st.packets == 7);
}

static void test_flow_window_edge(void **state)
{
	struct lr_flow_state st;

	(void)state;
	/* all seen: 63 below the highest is still checked, 64 below is not */
	memset(&st, 0, sizeof(st));
	feed_range(&st, 0, 99);
	assert_int_equal(feed(&st, 99 - 63), LR_FLOW_DUP);
	check_counts(&st, 0, 0, 1);
	assert_int_equal(feed(&st, 99 - 64), LR_FLOW_LATE);	/* documented: too old to tell */
	check_counts(&st, 0, 1, 1);
	assert_true(lr_flow_lost(&st) == -1);

	/* a hole 59 below the highest: late once, then a duplicate */
	memset(&st, 0, sizeof(st));
	feed_range(&st, 0, 39);
	assert_int_equal(feed(&st, 41), LR_FLOW_GAP);
	feed_range(&st, 42, 99);
	assert_int_equal(feed(&st, 40), LR_FLOW_LATE);
	assert_int_equal(feed(&st, 40), LR_FLOW_DUP);
	check_counts(&st, 1, 1, 1);

	/* a hole exactly 63 below the highest */
	memset(&st, 0, sizeof(st));
	feed_range(&st, 0, 35);
	assert_int_equal(feed(&st, 37), LR_FLOW_GAP);
	feed_range(&st, 38, 99);
	assert_int_equal(feed(&st, 36), LR_FLOW_LATE);
	assert_int_equal(feed(&st, 36), LR_FLOW_DUP);
	check_counts(&st, 1, 1, 1);

	/* a hole 64 below: late both times, no duplicate check (documented) */
	memset(&st, 0, sizeof(st));
	feed_range(&st, 0, 34);
	assert_int_equal(feed(&st, 36), LR_FLOW_GAP);
	feed_range(&st, 37, 99);
	assert_int_equal(feed(&st, 35), LR_FLOW_LATE);
	assert_int_equal(feed(&st, 35), LR_FLOW_LATE);
	check_counts(&st, 1, 2, 0);
}

static void test_flow_jump_clears_window(void **state)
{
	struct lr_flow_state st;

	(void)state;
	memset(&st, 0, sizeof(st));
	feed_range(&st, 0, 9);
	assert_int_equal(feed(&st, 200), LR_FLOW_GAP);
	check_counts(&st, 190, 0, 0);
	/* skipped frames right below the new highest were never seen */
	for (uint64_t s = 199; s >= 137; s--)
		assert_int_equal(feed(&st, s), LR_FLOW_LATE);
	check_counts(&st, 190, 63, 0);
	assert_int_equal(feed(&st, 199), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 200), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 9), LR_FLOW_LATE);
	check_counts(&st, 190, 64, 2);
}

/* After 0..9, jump k ahead (to 10 + k) and probe the window around the old and new highest. */
static void test_flow_jump_sizes(void **state)
{
	(void)state;
	for (uint64_t k = 1; k <= 70; k++) {
		struct lr_flow_state st;
		uint64_t hi = 10 + k, late = 0, dups = 0;

		memset(&st, 0, sizeof(st));
		feed_range(&st, 0, 9);
		assert_int_equal(feed(&st, hi), LR_FLOW_GAP);
		/* seen before the jump: duplicate while within 63 of the new highest */
		for (uint64_t s = 0; s <= 9; s++) {
			int v = feed(&st, s);

			if (hi - s < LR_FLOW_WINDOW) {
				assert_int_equal(v, LR_FLOW_DUP);
				dups++;
			} else {
				assert_int_equal(v, LR_FLOW_LATE);
				late++;
			}
		}
		/* skipped by the jump: late, and late again only if outside the window */
		for (uint64_t s = 10; s < hi; s++) {
			assert_int_equal(feed(&st, s), LR_FLOW_LATE);
			late++;
			if (hi - s < LR_FLOW_WINDOW) {
				assert_int_equal(feed(&st, s), LR_FLOW_DUP);
				dups++;
			}
		}
		check_counts(&st, k, late, dups);
		assert_int_equal(feed(&st, hi + 1), LR_FLOW_IN_ORDER);
	}
}

static void test_flow_wrap(void **state)
{
	struct lr_flow_state st;
	uint64_t g;

	(void)state;
	/* walk up to the top of the 48-bit space in jumps shorter than half of it */
	memset(&st, 0, sizeof(st));
	assert_int_equal(feed(&st, 0), LR_FLOW_IN_ORDER);
	assert_int_equal(feed(&st, (1ULL << 47) - 1), LR_FLOW_GAP);
	assert_int_equal(feed(&st, WRAP - 3), LR_FLOW_GAP);
	g = st.gaps;
	assert_true(g == (WRAP - 3) - 2);	/* all below WRAP-3 except 0 and 2^47-1 */
	assert_int_equal(feed(&st, WRAP - 2), LR_FLOW_IN_ORDER);
	assert_int_equal(feed(&st, WRAP - 1), LR_FLOW_IN_ORDER);
	assert_true(st.next == 0);
	assert_int_equal(feed(&st, 0), LR_FLOW_IN_ORDER);
	assert_int_equal(feed(&st, 1), LR_FLOW_IN_ORDER);
	assert_int_equal(feed(&st, 2), LR_FLOW_IN_ORDER);
	check_counts(&st, g, 0, 0);
	assert_true(st.next == 3);
	/* seen before the wrap, still within the window */
	assert_int_equal(feed(&st, WRAP - 1), LR_FLOW_DUP);
	assert_int_equal(feed(&st, WRAP - 3), LR_FLOW_DUP);
	/* bits above 48 are ignored */
	assert_int_equal(feed(&st, WRAP + 3), LR_FLOW_IN_ORDER);
	assert_int_equal(feed(&st, 3), LR_FLOW_DUP);
	check_counts(&st, g, 0, 3);
}

static void test_flow_reorder_across_wrap(void **state)
{
	struct lr_flow_state st;
	uint64_t g;

	(void)state;
	/* the first frame near the top counts everything below it as a gap */
	memset(&st, 0, sizeof(st));
	assert_int_equal(feed(&st, WRAP - 3), LR_FLOW_GAP);
	g = st.gaps;
	assert_true(g == WRAP - 3);
	assert_int_equal(feed(&st, WRAP - 2), LR_FLOW_IN_ORDER);
	/* WRAP-1 is overtaken by 0 and 1 */
	assert_int_equal(feed(&st, 1), LR_FLOW_GAP);
	check_counts(&st, g + 2, 0, 0);
	assert_int_equal(feed(&st, WRAP - 1), LR_FLOW_LATE);
	assert_int_equal(feed(&st, 0), LR_FLOW_LATE);
	check_counts(&st, g + 2, 2, 0);
	assert_int_equal(feed(&st, WRAP - 1), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 0), LR_FLOW_DUP);
	assert_int_equal(feed(&st, WRAP - 2), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 1), LR_FLOW_DUP);
	assert_int_equal(feed(&st, 2), LR_FLOW_IN_ORDER);
	check_counts(&st, g + 2, 2, 4);
	assert_true(st.packets == 10);
}

/*
 * Model of the documented rule, with an exact "seen" set: expected =
 * highest + 1; ahead is a gap; behind and seen within LR_FLOW_WINDOW of the
 * highest is a duplicate, otherwise late. Random streams with loss,
 * reordering, duplication and jumps are replayed through both, optionally
 * shifted so they cross the 48-bit wrap.
 */
#define MODEL_N 20000

static void replay_random(uint64_t base, uint64_t seed)
{
	static uint64_t stream[4 * MODEL_N];
	static uint8_t seen[MODEL_N + 1000];
	struct lr_flow_state st;
	uint64_t n = 0, hi = 0, gaps = 0, late = 0, dups = 0, bytes = 0;
	uint64_t s = seed;
	int have = 0;

	/* loss, local shuffles up to 80 apart, duplicates, occasional jumps */
	for (uint64_t i = 0; i < MODEL_N; i++) {
		uint64_t r = rnd(&s) % 100;

		if (r < 5)
			continue;
		if (r == 5 && i + 100 < MODEL_N)
			i += 30 + rnd(&s) % 60;
		stream[n++] = i;
		if (r >= 95 && n > 1) {
			uint64_t back = 1 + rnd(&s) % (n - 1 < 70 ? n - 1 : 70);
			uint64_t dup = stream[n - back];

			stream[n++] = dup;
		}
	}
	for (uint64_t i = 0; i + 1 < n; i++) {
		uint64_t j = i + rnd(&s) % 80;

		if (j < n && rnd(&s) % 4 == 0) {
			uint64_t t = stream[i];

			stream[i] = stream[j];
			stream[j] = t;
		}
	}

	memset(seen, 0, sizeof(seen));
	memset(&st, 0, sizeof(st));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t q = stream[i];
		uint32_t len = 60 + (uint32_t)(q % 1400);
		int want, got;

		if (!have) {
			gaps += (base + q) & LR_SEQ_MASK;
			hi = q;
			have = 1;
			want = gaps ? LR_FLOW_GAP : LR_FLOW_IN_ORDER;
		} else if (q > hi) {
			gaps += q - hi - 1;
			want = q - hi - 1 ? LR_FLOW_GAP : LR_FLOW_IN_ORDER;
			hi = q;
		} else if (hi - q < LR_FLOW_WINDOW && seen[q]) {
			dups++;
			want = LR_FLOW_DUP;
		} else {
			late++;
			want = LR_FLOW_LATE;
		}
		seen[q] = 1;
		bytes += len;
		got = lr_flow_update(&st, (base + q) & LR_SEQ_MASK, len);
		if (got != want)
			fail_msg("frame %llu (seq %llu): verdict %d, expected %d", (unsigned long long)i,
				 (unsigned long long)q, got, want);
	}
	check_counts(&st, gaps, late, dups);
	assert_true(st.packets == n);
	assert_true(st.bytes == bytes);
	assert_true(st.next == ((base + hi + 1) & LR_SEQ_MASK));
}

static void test_flow_random_vs_model(void **state)
{
	(void)state;
	replay_random(0, 1);
	replay_random(0, 2);
	replay_random(WRAP - MODEL_N / 2, 3);
	replay_random(WRAP - 1, 4);
	replay_random(WRAP - MODEL_N / 3, 5);
}

static void test_lat_bucket_bounds(void **state)
{
	uint64_t vals[4096];
	size_t n = 0;
	uint32_t maxb = lr_lat_bucket(UINT64_MAX), prevb = 0;
	uint64_t s = 42, prev = 0;

	(void)state;
	assert_true(maxb < LR_LAT_BUCKETS);
	for (uint64_t v = 0; v < 2048; v++)
		vals[n++] = v;
	for (int e = 11; e < 64; e++) {
		uint64_t p = 1ULL << e;

		vals[n++] = p - 1;
		vals[n++] = p;
		vals[n++] = p + 1;
		vals[n++] = p + (p >> 5);
		vals[n++] = p + (p >> 4) - 1;
		vals[n++] = p + (p >> 1) + (rnd(&s) & (p - 1) >> 2);
	}
	vals[n++] = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = vals[i];
		uint32_t b = lr_lat_bucket(v);

		assert_true(v >= prev);
		prev = v;
		assert_true(b < LR_LAT_BUCKETS);
		assert_true(b <= maxb);
		/* monotonic over an increasing sweep */
		assert_true(b >= prevb);
		prevb = b;
		/* v lies inside its bucket */
		assert_true(lr_lat_bucket_low(b) <= v);
		if (b < maxb)
			assert_true(v < lr_lat_bucket_low(b + 1));
		if (v < 16)
			assert_int_equal(b, v);
	}
}

static void test_lat_bucket_contiguous(void **state)
{
	uint32_t maxb = lr_lat_bucket(UINT64_MAX);

	(void)state;
	/* every bucket up to the last is reachable and starts where the previous ends */
	for (uint32_t b = 0; b <= maxb; b++) {
		uint64_t lo = lr_lat_bucket_low(b);

		assert_int_equal(lr_lat_bucket(lo), b);
		if (b > 0)
			assert_int_equal(lr_lat_bucket(lo - 1), b - 1);
		if (b < maxb) {
			uint64_t hi = lr_lat_bucket_low(b + 1);

			assert_true(hi > lo);
			assert_int_equal(lr_lat_bucket(hi - 1), b);
			/* relative width at most 1/16 above 16 ns */
			if (lo >= 16)
				assert_true((hi - lo) * 16 <= lo);
			else
				assert_true(hi - lo == 1);
		}
	}
}

static void test_lat_bucket_random(void **state)
{
	uint64_t s = 7;
	uint32_t maxb = lr_lat_bucket(UINT64_MAX);

	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t a = (rnd(&s) << 33 ^ rnd(&s) << 2 ^ rnd(&s)) >> (rnd(&s) % 64);
		uint64_t c = a + rnd(&s) % 1000;
		uint32_t b = lr_lat_bucket(a);

		if (c < a)
			continue;
		assert_true(lr_lat_bucket(c) >= b);
		assert_true(lr_lat_bucket_low(b) <= a);
		if (b < maxb)
			assert_true(a < lr_lat_bucket_low(b + 1));
	}
}

/* One data frame stamped @tail, received at @now (receiver's clock) with @offset applied. */
static void count_one(struct lr_rx_counters *c, struct lr_flow_state *st, uint64_t tail, uint64_t now, int64_t offset)
{
	struct lr_pkt pkt = { .seq = st->packets, .tail = tail, .len = 60 };

	lr_rx_count_data(c, st, &pkt, pkt.len, 0, now, offset);
}

static void test_rx_count_same_clock(void **state)
{
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	struct lr_flow_state st = { 0 };

	(void)state;
	count_one(c, &st, 1000, 1500, 0);
	count_one(c, &st, 2000, 2000, 0);	/* no time at all: 0, a sample */
	count_one(c, &st, 3001, 3000, 0);	/* stamped after it arrived */
	count_one(c, &st, 0, 4000, 0);	/* no stamp: no sample */
	assert_true(c->packets == 4 && st.packets == 4 && c->queue_packets[0] == 4);
	assert_true(c->lat_count == 2 && c->lat_min == 0 && c->lat_max == 500 && c->lat_sum == 500);
	assert_true(c->lat_future == 1);
	assert_true(c->lat_hist[lr_lat_bucket(500)] == 1 && c->lat_hist[0] == 1);
	assert_true(c->first_ns == 1500 && c->last_ns == 4000);
	free(c);
}

/*
 * The XDP receiver reads its clock for stamped frames and one in LR_RX_CLOCK_EVERY of the others
 * (now == 0 for the rest): the span ends at the last frame it was read for, and span_packets says
 * how many frames had arrived by then, so the rate stays frames over the time they took.
 */
static void test_rx_count_clock_subset(void **state)
{
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	struct lr_flow_state st = { 0 };
	uint64_t reads = 0, i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		/* sender side: one frame in 8 stamped (--latency-every 8) */
		struct lr_pkt pkt = { .seq = i, .tail = i % 8 ? 0 : 1000 + 10 * i, .len = 60 };
		uint64_t now = lr_rx_wants_clock(c, &pkt) ? 1500 + 10 * i : 0;

		reads += now != 0;
		lr_rx_count_data(c, &st, &pkt, pkt.len, 0, now, 0);
		/* the first frame always reads the clock; the span never runs ahead of the frames */
		assert_true(c->first_ns == 1500);
		assert_true(c->span_packets <= c->packets && c->packets - c->span_packets < LR_RX_CLOCK_EVERY);
		if (now)
			assert_true(c->last_ns == now && c->span_packets == c->packets);
	}
	/* stamped frames: 0, 8, ..., 992 (125); and every one of the first 64 (56 more) */
	assert_true(c->lat_count == 125 && c->lat_min == 500 && c->lat_max == 500);
	assert_true(reads == 125 + 56);
	assert_true(c->packets == 1000 && c->last_ns == 1500 + 10 * 992 && c->span_packets == 993);
	/* unstamped frames alone: the first 64, then the clock once in LR_RX_CLOCK_EVERY */
	memset(c, 0, sizeof(*c));
	memset(&st, 0, sizeof(st));
	reads = 0;
	for (i = 0; i < 64 * 10 + 5; i++) {
		struct lr_pkt pkt = { .seq = i, .tail = 0, .len = 60 };
		uint64_t now = lr_rx_wants_clock(c, &pkt) ? 100 + i : 0;

		reads += now != 0;
		lr_rx_count_data(c, &st, &pkt, pkt.len, 0, now, 0);
	}
	assert_true(reads == 64 + 10 && c->first_ns == 100 && c->last_ns == 100 + 640 && c->span_packets == 641);
	assert_true(c->lat_count == 0 && c->packets == 645);
	free(c);
}

/* The receiver's clock minus the sender's, subtracted: the latency the sender's clock would show. */
static void test_rx_count_offset(void **state)
{
	const int64_t ahead = 5000000000000LL, behind = -3000000000000LL;	/* +5000 s, -3000 s */
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	struct lr_flow_state st = { 0 };
	const uint64_t t = 7000000000000ULL;

	(void)state;
	count_one(c, &st, t, t + ahead + 700, ahead);
	count_one(c, &st, t, t + behind + 900, behind);
	assert_true(c->lat_count == 2 && c->lat_min == 700 && c->lat_max == 900 && c->lat_future == 0);
	/* the window stays on the receiver's own clock: the offset is no part of active_s */
	assert_true(c->first_ns == t + ahead + 700 && c->last_ns == t + behind + 900);
	/* an offset estimated 1 us too high makes a 700 ns latency negative: counted as future */
	count_one(c, &st, t, t + ahead + 700, ahead + 1000);
	assert_true(c->lat_count == 2 && c->lat_future == 1);
	/* an offset beyond the receiver's clock puts the arrival before the sender's 0: future, no wrap */
	count_one(c, &st, 50, 100, ahead);
	assert_true(c->lat_count == 2 && c->lat_future == 2 && c->lat_max == 900);
	free(c);
}

/* Any offset gives the counts that 0 gives with the receive time moved by it (within 2^63 ns). */
static void test_rx_count_offset_random(void **state)
{
	struct lr_rx_counters *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lr_flow_state sa = { 0 }, sb = { 0 };
	uint64_t s = 11;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		uint64_t tail = (rnd(&s) << 30 ^ rnd(&s)) + 1, lat = rnd(&s) % 2000000;
		int64_t off = (int64_t)(rnd(&s) << 20) - (int64_t)(rnd(&s) << 20);
		uint64_t now = tail + lat - (rnd(&s) % 64 == 0 ? 3000000 : 0);

		count_one(a, &sa, tail, now + (uint64_t)off, off);
		count_one(b, &sb, tail, now, 0);
	}
	assert_true(a->lat_count == b->lat_count && a->lat_future == b->lat_future && b->lat_future > 0);
	assert_true(a->lat_sum == b->lat_sum && a->lat_min == b->lat_min && a->lat_max == b->lat_max);
	assert_memory_equal(a->lat_hist, b->lat_hist, sizeof(a->lat_hist));
	free(a);
	free(b);
}

/* A marker announces its test's flow count in 16 bits: 65536 flows are written as 0, and read back. */
static void test_rx_count_eot_flows(void **state)
{
	static const __u32 counts[] = { 1, 2048, 2049, 65535, 65536 };
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	unsigned int i;

	(void)state;
	assert_non_null(c);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		struct lr_flow_state st = { 0 };
		struct lr_pkt pkt = { .seq = 7, .tail = (__u64)(counts[i] & 0xffff) << 48 };

		lr_rx_count_eot(c, &st, &pkt);
		assert_int_equal(st.eot_flows, counts[i]);
		assert_int_equal(st.eot_seen, 1);
		assert_true(st.eot_sent == 7);
	}
	free(c);
}

/* Markers of one flow with two run ids: the first kept, the other noted; id 0 (an older sender) neither. */
static void test_rx_count_eot_run_ids(void **state)
{
	struct lr_rx_counters *c = calloc(1, sizeof(*c));
	struct lr_flow_state st = { 0 };
	struct lr_pkt pkt = { .seq = 7, .tail = (__u64)4 << 48 };

	(void)state;
	assert_non_null(c);
	lr_rx_count_eot(c, &st, &pkt);
	assert_int_equal(st.test_id, 0);
	pkt.tid = 0x11111111;
	lr_rx_count_eot(c, &st, &pkt);
	lr_rx_count_eot(c, &st, &pkt);	/* a repeat */
	assert_int_equal(st.test_id, 0x11111111);
	assert_int_equal(st.other_id, 0);
	pkt.tid = 0;
	lr_rx_count_eot(c, &st, &pkt);
	assert_int_equal(st.other_id, 0);
	pkt.tid = 0x22222222;
	lr_rx_count_eot(c, &st, &pkt);
	assert_int_equal(st.test_id, 0x11111111);
	assert_int_equal(st.other_id, 0x22222222);
	assert_int_equal(st.eot_seen, 5);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flow_in_order),
		cmocka_unit_test(test_flow_first_frame_nonzero),
		cmocka_unit_test(test_flow_gap_late_dup),
		cmocka_unit_test(test_flow_dup_of_highest),
		cmocka_unit_test(test_flow_window_edge),
		cmocka_unit_test(test_flow_jump_clears_window),
		cmocka_unit_test(test_flow_jump_sizes),
		cmocka_unit_test(test_flow_wrap),
		cmocka_unit_test(test_flow_reorder_across_wrap),
		cmocka_unit_test(test_flow_random_vs_model),
		cmocka_unit_test(test_lat_bucket_bounds),
		cmocka_unit_test(test_lat_bucket_contiguous),
		cmocka_unit_test(test_lat_bucket_random),
		cmocka_unit_test(test_rx_count_same_clock),
		cmocka_unit_test(test_rx_count_offset),
		cmocka_unit_test(test_rx_count_offset_random),
		cmocka_unit_test(test_rx_count_clock_subset),
		cmocka_unit_test(test_rx_count_eot_flows),
		cmocka_unit_test(test_rx_count_eot_run_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
