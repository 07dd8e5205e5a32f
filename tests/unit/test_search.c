/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the RFC 2544 throughput search (run/search.c): scripted trials in, the rates it
 * asks for and its verdict out. Cases: the upper bound passing at once; resolution in pps and
 * relative; max_trials; a sender short of the offered rate (at the bound, mid-search, below the
 * best so far, failing); a lossy trial above a clean one; "max" as the first upper bound.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "run/search.h"

/* One scripted trial: what the sender reached (0: the offered rate) and whether it passed. */
struct answer {
	double tx_pps;
	bool pass;
};

/*
 * Runs the search on @cfg, answering trial i with @ans[i] (or, past @nans, with @pass_at_or_below:
 * a path that passes any rate up to it, the sender reaching every rate). The offered rates go
 * into @rates; returns how many trials ran.
 */
static unsigned int run(const struct lr_search_cfg *cfg, const struct answer *ans, unsigned int nans,
			uint64_t pass_at_or_below, uint64_t *rates, unsigned int max, struct lr_search *s)
{
	unsigned int n = 0;
	uint64_t rate;

	lr_search_init(s, cfg);
	while (lr_search_next(s, &rate)) {
		double tx;
		bool pass;

		assert_true(n < max);
		rates[n] = rate;
		if (n < nans) {
			tx = ans[n].tx_pps ? ans[n].tx_pps : (double)rate;
			pass = ans[n].pass;
		} else {
			tx = (double)rate;
			pass = rate <= pass_at_or_below;
		}
		lr_search_feed(s, tx, pass);
		n++;
	}
	assert_int_equal(s->ntrials, n);
	return n;
}

static void assert_rates(const uint64_t *got, unsigned int n, const uint64_t *want, unsigned int nwant)
{
	unsigned int i;

	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

static void test_predicates(void **state)
{
	(void)state;
	assert_false(lr_search_short(0, 1.0));
	assert_true(lr_search_short(100000, 97999.0));
	assert_false(lr_search_short(100000, 98000.0));
	assert_false(lr_search_short(100000, 101000.0));
	assert_int_equal(lr_search_tested_pps(0, 123456.9), 123456);
	assert_int_equal(lr_search_tested_pps(100000, 90000.5), 90000);
	assert_int_equal(lr_search_tested_pps(100000, 99000.0), 100000);
}

/*
 * On a path that passes every rate up to @limit, the search on @c asks for the rates @want and
 * finds trial @best at @best_pps (@best -1: finds none).
 */
#define EXPECT(c, limit, s, best, best_pps, ...)                                                          \
	expect(c, limit, (const uint64_t[]){ __VA_ARGS__ }, sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t), \
	       best, best_pps, s)

static void expect(const struct lr_search_cfg *c, uint64_t limit, const uint64_t *want, unsigned int nwant, int best,
		   uint64_t best_pps, struct lr_search *s)
{
	uint64_t rates[32];
	unsigned int n = run(c, NULL, 0, limit, rates, 32, s);

	assert_rates(rates, n, want, nwant);
	assert_true(s->done);
	assert_int_equal(s->found, best >= 0);
	if (best >= 0) {
		assert_int_equal(s->best, best);
		assert_int_equal(s->best_pps, best_pps);
	}
}

static void test_upper_passes(void **state)
{
	struct lr_search_cfg c = { .upper_pps = 100000, .resolution = 0.01, .max_trials = 16 };
	struct lr_search s;
	uint64_t rate;

	(void)state;
	EXPECT(&c, 1000000, &s, 0, 100000, 100000);
	/* the upper bound passed: the throughput is at least that, and the search says so */
	assert_true(s.capped);
	assert_false(lr_search_next(&s, &rate));
	/* fed after it is done: nothing changes */
	lr_search_feed(&s, 5, false);
	assert_int_equal(s.ntrials, 1);
}

static void test_resolution_pps(void **state)
{
	struct lr_search_cfg c = { .upper_pps = 200000, .resolution_pps = 5000, .resolution = 0.5, .max_trials = 16 };
	struct lr_search s;

	(void)state;
	/* 46875 passed, 50000 failed: 3125 <= 5000 (the relative 0.5 is not used when pps is set) */
	EXPECT(&c, 47000, &s, 6, 46875, 200000, 100000, 50000, 25000, 37500, 43750, 46875);
	assert_false(s.capped);
	assert_int_equal(s.lo, 46875);
	assert_int_equal(s.hi, 50000);
}

static void test_resolution_relative(void **state)
{
	struct lr_search_cfg c = { .upper_pps = 200000, .resolution = 0.2, .max_trials = 16 };
	struct lr_search s;

	(void)state;
	/* 43750 passed, 50000 failed: 6250 <= 0.2 x 50000 */
	EXPECT(&c, 47000, &s, 5, 43750, 200000, 100000, 50000, 25000, 37500, 43750);
	/* a finer resolution takes one trial more */
	c.resolution = 0.1;
	EXPECT(&c, 47000, &s, 6, 46875, 200000, 100000, 50000, 25000, 37500, 43750, 46875);
}

static void test_max_trials(void **state)
{
	struct lr_search_cfg c = { .upper_pps = 200000, .resolution_pps = 1, .max_trials = 4 };
	struct lr_search s;

	(void)state;
	EXPECT(&c, 47000, &s, 3, 25000, 200000, 100000, 50000, 25000);
	/* nothing passes: every trial is used, and nothing is found */
	c.resolution_pps = 0;
	c.resolution = 0.001;
	EXPECT(&c, 10000, &s, -1, 0, 200000, 100000, 50000, 25000);
	/* nothing passes, and the bound falls within a resolution in pps of zero: done before max_trials */
	c.upper_pps = 8000;
	c.resolution_pps = 5000;
	c.max_trials = 16;
	EXPECT(&c, 0, &s, -1, 0, 8000, 4000);
	/* halving down to nothing */
	c.upper_pps = 3;
	c.resolution_pps = 0;
	EXPECT(&c, 0, &s, -1, 0, 3, 1);
}

/* A sender that cannot reach the offered rate: a passing trial counts at the rate really sent. */
static void test_sender_short(void **state)
{
	struct lr_search_cfg c = { .upper_pps = 100000000, .resolution = 0.01, .max_trials = 16 };
	struct answer at_bound[] = { { 1234567.8, true } };
	struct answer mid[] = { { 0, false }, { 0, true }, { 120000, true } };
	struct answer below_best[] = { { 0, false }, { 0, true }, { 90000, true } };
	struct answer failing[] = { { 0, false }, { 0, true }, { 120000, false } };
	struct answer near[] = { { 0, false }, { 0, true }, { 147500, true } };
	uint64_t rates[32];
	struct lr_search s;
	unsigned int n;

	(void)state;
	/* at the upper bound: one trial, found at what was sent */
	n = run(&c, at_bound, 1, 0, rates, 32, &s);
	assert_int_equal(n, 1);
	assert_true(s.found);
	assert_true(s.capped);
	assert_int_equal(s.best_pps, 1234567);

	/* mid-search: 150k offered, 120k sent, no loss: found at 120k, and no higher offer is tried */
	c.upper_pps = 200000;
	n = run(&c, mid, 3, 0, rates, 32, &s);
	assert_int_equal(n, 3);
	assert_int_equal(rates[2], 150000);
	/* it stopped on a short sender, not on the upper bound passing */
	assert_false(s.capped);
	assert_int_equal(s.best, 2);
	assert_int_equal(s.best_pps, 120000);

	/* short of even the best rate so far: the best stays the clean 100k trial */
	n = run(&c, below_best, 3, 0, rates, 32, &s);
	assert_int_equal(n, 3);
	assert_int_equal(s.best, 1);
	assert_int_equal(s.best_pps, 100000);

	/* short and lossy: the offered rate is the new upper bound, and the search goes on */
	n = run(&c, failing, 3, 0, rates, 32, &s);
	assert_true(n > 3);
	assert_int_equal(rates[3], 125000);
	assert_int_equal(s.best_pps, 100000);

	/* within 2 % of the offer: the offered rate counts */
	n = run(&c, near, 3, 150000, rates, 32, &s);
	assert_int_equal(s.best_pps, 150000);
	assert_true(s.found);
}

/* A lossy trial above a clean one bounds the search from above; the clean one stays the best. */
static void test_lossy_above_clean(void **state)
{
	struct lr_search_cfg c = { .upper_pps = 200000, .resolution_pps = 10000, .max_trials = 16 };
	struct answer ans[] = { { 0, false }, { 0, true }, { 0, false }, { 0, true }, { 0, false } };
	uint64_t rates[32], want[] = { 200000, 100000, 150000, 125000, 137500 };
	struct lr_search s;
	unsigned int n;

	(void)state;
	n = run(&c, ans, 5, 0, rates, 32, &s);
	/* 125k passed, 137.5k failed: 12.5k > 10k, so one more at 131.25k, which fails */
	assert_int_equal(n, 6);
	assert_rates(rates, 5, want, 5);
	assert_int_equal(rates[5], 131250);
	assert_int_equal(s.best, 3);
	assert_int_equal(s.best_pps, 125000);
	assert_int_equal(s.hi, 131250);
}

/* "max" as the upper bound: the first trial offers no rate, and what the sender reached bounds the rest. */
static void test_max_first(void **state)
{
	struct lr_search_cfg c = { .upper_pps = 0, .resolution = 0.01, .max_trials = 3 };
	struct answer pass[] = { { 987654.3, true } };
	struct answer fail[] = { { 1000000.9, false } };
	struct answer none[] = { { 0.5, false } };
	uint64_t rates[32], want[] = { 0, 500000, 750000 };
	struct lr_search s;
	unsigned int n;

	(void)state;
	n = run(&c, pass, 1, 0, rates, 32, &s);
	assert_int_equal(n, 1);
	assert_int_equal(rates[0], 0);
	assert_true(s.found);
	assert_int_equal(s.best_pps, 987654);

	n = run(&c, fail, 1, 600000, rates, 32, &s);
	assert_rates(rates, n, want, 3);
	assert_int_equal(s.hi, 750000);
	assert_int_equal(s.best, 1);
	assert_int_equal(s.best_pps, 500000);

	/* a sender that sent nothing: no bound to search under */
	n = run(&c, none, 1, 0, rates, 32, &s);
	assert_int_equal(n, 1);
	assert_false(s.found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predicates),	    cmocka_unit_test(test_upper_passes),
		cmocka_unit_test(test_resolution_pps),	    cmocka_unit_test(test_resolution_relative),
		cmocka_unit_test(test_max_trials),	    cmocka_unit_test(test_sender_short),
		cmocka_unit_test(test_lossy_above_clean), cmocka_unit_test(test_max_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
