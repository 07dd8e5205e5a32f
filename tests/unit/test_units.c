/* SPDX-License-Identifier: MIT */
/* Unit tests for numbers with unit suffixes: counts, durations, rates, lists. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "util/units.h"

#define NS 1000000000ULL

static void count_ok(const char *s, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	int err = lr_parse_count(s, 0, UINT64_MAX, &v);

	if (err || v != want)
		fail_msg("lr_parse_count(\"%s\") = %d, %llu; want 0, %llu", s, err, (unsigned long long)v,
			 (unsigned long long)want);
}

static void count_bad(const char *s, uint64_t min, uint64_t max, int want_err)
{
	uint64_t v = 0;
	int err = lr_parse_count(s, min, max, &v);

	if (want_err ? err != want_err : err >= 0)
		fail_msg("lr_parse_count(\"%s\", %llu, %llu) = %d (value %llu), want %s", s,
			 (unsigned long long)min, (unsigned long long)max, err, (unsigned long long)v,
			 want_err == -ERANGE ? "-ERANGE" : "-errno");
	assert_true(err == -EINVAL || err == -ERANGE);
}

static void test_count(void **state)
{
	(void)state;
	count_ok("0", 0);
	count_ok("1500", 1500);
	count_ok("64k", 64000);
	count_ok("2.5M", 2500000);
	count_ok("1G", 1000000000);
	count_ok("20G", 20000000000ULL);
	count_ok("2.5k", 2500);
	/* decimal fractions that binary floating point cannot hold exactly */
	count_ok("4.1k", 4100);
	count_ok("1.001M", 1001000);
	count_ok("0.3k", 300);
	/* beyond 2^53 a count must still be exact */
	count_ok("9007199254740993", 9007199254740993ULL);
	count_ok("18446744073709551615", UINT64_MAX);
}

static void test_count_range(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(lr_parse_count("20", 20, 100, &v), 0);
	assert_true(v == 20);
	assert_int_equal(lr_parse_count("100", 20, 100, &v), 0);
	assert_true(v == 100);
	count_bad("19", 20, 100, -ERANGE);
	count_bad("101", 20, 100, -ERANGE);
	count_bad("64k", 1, 1000, -ERANGE);
	count_bad("0", 1, 10, -ERANGE);
	count_bad("1G", 0, 999999999, -ERANGE);
}

static void test_count_garbage(void **state)
{
	static const char *const bad[] = {
		"", "12x", "-1", "k", "1.2.3", "99999999999999999999", "18446744073709551616",
		"20000000000G", "1kk", "1 k", "1e6", "+", ".", "k1", "1,5",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		count_bad(bad[i], 0, UINT64_MAX, 0);
}

static void duration_ok(const char *s, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	int err = lr_parse_duration(s, &v);

	if (err || v != want)
		fail_msg("lr_parse_duration(\"%s\") = %d, %llu; want 0, %llu", s, err, (unsigned long long)v,
			 (unsigned long long)want);
}

static void test_duration(void **state)
{
	static const char *const bad[] = {
		"", "10x", "-1s", "s", "ms", "1.2.3s", "10 s", "10ss", "99999999999h", "1e3s",
	};

	(void)state;
	duration_ok("10s", 10 * NS);
	duration_ok("500ms", 500000000);
	duration_ok("250us", 250000);
	duration_ok("2m", 120 * NS);
	duration_ok("1h", 3600 * NS);
	duration_ok("1.5s", 1500000000);
	duration_ok("3", 3 * NS);
	duration_ok("0.25", 250000000);
	duration_ok("2.5m", 150 * NS);
	/* a year is the limit; beyond is -ERANGE, however the number would wrap */
	duration_ok("8784h", LR_DURATION_MAX_NS);
	duration_ok("31622400", LR_DURATION_MAX_NS);
	assert_int_equal(lr_parse_duration("8785h", &(uint64_t){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_duration("31622400.000000001", &(uint64_t){ 0 }), -ERANGE);
	/* 4159006706811470109 h is 2^64 * 811 ns and once wrapped to 11.5 s */
	assert_int_equal(lr_parse_duration("4159006706811470109h", &(uint64_t){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_duration("18446744073709551615h", &(uint64_t){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_duration("18446744073709551615", &(uint64_t){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_duration("18446744073709551615ns", &(uint64_t){ 0 }), -ERANGE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 0;
		int err = lr_parse_duration(bad[i], &v);

		if (err >= 0)
			fail_msg("lr_parse_duration(\"%s\") = %d (%llu ns), want -errno", bad[i], err,
				 (unsigned long long)v);
	}
}

static void rate_ok(const char *s, enum lr_rate_kind kind, uint64_t value)
{
	struct lr_rate r = { LR_RATE_PPS, 12345 };
	int err = lr_parse_rate(s, &r);

	if (err || r.kind != kind || (kind != LR_RATE_MAX && r.value != value))
		fail_msg("lr_parse_rate(\"%s\") = %d, kind %d value %llu; want kind %d value %llu", s, err,
			 r.kind, (unsigned long long)r.value, kind, (unsigned long long)value);
}

static void test_rate_parse(void **state)
{
	static const char *const bad[] = {
		"", "fast", "10Gb/s", "0", "0pps", "0Mbit", "-5", "5 parsecs", "pps", "Mbit", "10xpps",
		"1.2.3Mpps", "maximum", "10Gbitx",
	};

	(void)state;
	rate_ok("max", LR_RATE_MAX, 0);
	rate_ok("10000", LR_RATE_PPS, 10000);
	rate_ok("10kpps", LR_RATE_PPS, 10000);
	rate_ok("10k", LR_RATE_PPS, 10000);
	rate_ok("100kpps", LR_RATE_PPS, 100000);
	rate_ok("1Mpps", LR_RATE_PPS, 1000000);
	rate_ok("1.5Mpps", LR_RATE_PPS, 1500000);
	rate_ok("2.5Gbit", LR_RATE_BPS, 2500000000ULL);
	rate_ok("2500Mbit", LR_RATE_BPS, 2500000000ULL);
	rate_ok("100Mbps", LR_RATE_BPS, 100000000);
	rate_ok("800Mbps", LR_RATE_BPS, 800000000);
	rate_ok("10Gbit", LR_RATE_BPS, 10000000000ULL);
	rate_ok("400Gbit", LR_RATE_BPS, 400000000000ULL);
	rate_ok("64kbit", LR_RATE_BPS, 64000);
	/* the bounds: 1 Gpps, 1 Tbit/s; beyond is -ERANGE (1844674407400 once stalled the pacer) */
	rate_ok("1G", LR_RATE_PPS, LR_RATE_MAX_PPS);
	rate_ok("1000Gbit", LR_RATE_BPS, LR_RATE_MAX_BPS);
	assert_int_equal(lr_parse_rate("1000000001", &(struct lr_rate){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_rate("1844674407400", &(struct lr_rate){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_rate("1000000000001bit", &(struct lr_rate){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_rate("18446744073709551615Gbit", &(struct lr_rate){ 0 }), -ERANGE);
	assert_int_equal(lr_parse_rate("18446744073709551615.5Gbit", &(struct lr_rate){ 0 }), -ERANGE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lr_rate r = { LR_RATE_PPS, 0 };
		int err = lr_parse_rate(bad[i], &r);

		if (err >= 0)
			fail_msg("lr_parse_rate(\"%s\") = %d (kind %d value %llu), want -errno", bad[i], err,
				 r.kind, (unsigned long long)r.value);
	}
}

static void test_rate_pps(void **state)
{
	struct lr_rate r;

	(void)state;
	/* bit rates are line rates: 20 bytes of preamble and gap per frame on top */
	r = (struct lr_rate){ LR_RATE_BPS, 10000000000ULL };
	assert_true(lr_rate_pps(&r, 64) == 14880952);
	assert_true(lr_rate_pps(&r, 1518) == 812743);
	assert_true(lr_rate_pps(&r, 9018) == 138304);
	r = (struct lr_rate){ LR_RATE_BPS, 1000000000ULL };
	assert_true(lr_rate_pps(&r, 64) == 1488095);
	assert_true(lr_rate_pps(&r, 128) == 844594);
	r = (struct lr_rate){ LR_RATE_BPS, 400000000000ULL };
	assert_true(lr_rate_pps(&r, 64) == 595238095);
	r = (struct lr_rate){ LR_RATE_PPS, 5000 };
	assert_true(lr_rate_pps(&r, 64) == 5000);
	assert_true(lr_rate_pps(&r, 1518) == 5000);
	r = (struct lr_rate){ LR_RATE_MAX, 0 };
	assert_true(lr_rate_pps(&r, 64) == 0);
	assert_true(lr_rate_pps(&r, 1518) == 0);
}

/* A positive bit rate below one frame per second must not turn into 0, which means unlimited. */
static void test_rate_pps_tiny_not_unlimited(void **state)
{
	struct lr_rate r = { LR_RATE_BPS, 1000 };

	(void)state;
	assert_true(lr_rate_pps(&r, 1518) >= 1);
	r.value = 1;
	assert_true(lr_rate_pps(&r, 64) >= 1);
}

static void list_ok(const char *s, unsigned int limit, const unsigned int *want, int n)
{
	unsigned int out[64];
	int got;

	memset(out, 0xff, sizeof(out));
	got = lr_parse_list(s, limit, out, 64);
	if (got != n)
		fail_msg("lr_parse_list(\"%s\") = %d, want %d", s, got, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(out[i], want[i]);
}

static void test_list(void **state)
{
	static const unsigned int a[] = { 0, 1, 2, 3 };
	static const unsigned int b[] = { 0, 2, 5, 6 };
	static const unsigned int c[] = { 7 };
	static const unsigned int d[] = { 3, 10, 11, 12, 1 };
	unsigned int all[64], out[8];

	(void)state;
	list_ok("0-3", 64, a, 4);
	list_ok("0,2,5-6", 64, b, 4);
	list_ok("7", 8, c, 1);
	list_ok("3,10-12,1", 16, d, 5);
	list_ok("2-2", 8, b + 1, 1);
	for (unsigned int i = 0; i < 64; i++)
		all[i] = i;
	list_ok("0-63", 64, all, 64);
	/* exactly @max entries fit */
	assert_int_equal(lr_parse_list("0-3", 16, out, 4), 4);
}

static void test_list_errors(void **state)
{
	static const char *const bad[] = {
		"3-1", "a", "", ",", "1,", ",1", "1,,2", "1-", "-1", "1-2-3", "1 2",
	};
	unsigned int out[8];
	int err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = lr_parse_list(bad[i], 64, out, 8);
		if (err >= 0)
			fail_msg("lr_parse_list(\"%s\") = %d, want -errno", bad[i], err);
	}
	/* values at or above the limit */
	assert_int_equal(lr_parse_list("4", 4, out, 8), -ERANGE);
	assert_int_equal(lr_parse_list("0-4", 4, out, 8), -ERANGE);
	assert_int_equal(lr_parse_list("1,99", 64, out, 8), -ERANGE);
	assert_int_equal(lr_parse_list("3", 4, out, 8), 1);
	/* more entries than room: an error, not a silent cut */
	assert_true(lr_parse_list("0-8", 64, out, 8) < 0);
	assert_true(lr_parse_list("0,1,2,3,4,5,6,7,8", 64, out, 8) < 0);
	assert_true(lr_parse_list("0-3", 64, out, 3) < 0);
	assert_true(lr_parse_list("0-4294967295", UINT32_MAX, out, 8) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_count_range),
		cmocka_unit_test(test_count_garbage),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_rate_parse),
		cmocka_unit_test(test_rate_pps),
		cmocka_unit_test(test_rate_pps_tiny_not_unlimited),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_list_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
