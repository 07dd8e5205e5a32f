/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the clocks: the time namespace's offset (/proc/self/timens_offsets, strictly), and
 * the offset estimator on synthetic exchanges whose true offset is known: symmetric and asymmetric
 * delay, jitter, drift, negative and huge values, refused exchanges; and the validity rule.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctl/clock.h"
#include "util/clock.h"

#define NS 1000000000LL

/* ---- the time namespace's offset ---- */

static int64_t parsed(const char *text)
{
	int64_t off = 12345;

	assert_int_equal(lr_timens_parse(text, &off), 0);
	return off;
}

static void refused_text(const char *text)
{
	int64_t off = 12345;

	if (lr_timens_parse(text, &off) != -EINVAL)
		fail_msg("accepted \"%s\"", text);
	assert_true(off == 12345);	/* untouched */
}

static void test_timens_parse(void **state)
{
	(void)state;
	/* as the kernel writes it ("%-10s %10lld %9ld") */
	assert_true(parsed("monotonic        1000         0\nboottime            0         0\n") == 1000 * NS);
	assert_true(parsed("boottime            7         0\nmonotonic          12 345678901\n") ==
		    12 * NS + 345678901);
	assert_true(parsed("monotonic 3 0") == 3 * NS);	/* no final newline */
	assert_true(parsed("monotonic\t3\t0 \n") == 3 * NS);
	assert_true(parsed("monotonic 0 999999999\n") == 999999999);
	/* no monotonic line: no offset */
	assert_true(parsed("") == 0);
	assert_true(parsed("boottime 5 0\n") == 0);
	assert_true(parsed("unknown 5 0\nboottime 1 0\n") == 0);
	assert_true(parsed("monotonicx 5 0\n") == 0);
	/* negative: the kernel keeps nsec in 0..1e9-1, so -1.5 s is "-2 500000000" */
	assert_true(parsed("monotonic          -5         0\n") == -5 * NS);
	assert_true(parsed("monotonic -2 500000000\n") == -1500000000LL);
	assert_true(parsed("monotonic -0 1\n") == 1);
	/* the ends of 64-bit nanoseconds */
	assert_true(parsed("monotonic 9223372036 854775807\n") == INT64_MAX);
	assert_true(parsed("monotonic -9223372037 145224192\n") == INT64_MIN);
}

static void test_timens_garbage(void **state)
{
	(void)state;
	refused_text("\n");
	refused_text("monotonic 1000 0\n\n");
	refused_text("monotonic 1000\n");
	refused_text("monotonic\n");
	refused_text("monotonic 1000 0 7\n");
	refused_text("monotonic x 0\n");
	refused_text("monotonic 10 -1\n");
	refused_text("monotonic +10 0\n");
	refused_text("monotonic 10 0x1\n");
	refused_text("monotonic 1e3 0\n");
	refused_text("monotonic - 0\n");
	refused_text("monotonic 10 1000000000\n");
	refused_text("Monotonic 10 0\n");
	refused_text("1 10 0\n");
	refused_text(" monotonic 10 0\n");
	refused_text("monotonic 10 0\r\n");
	refused_text("monotonic 1 0\nmonotonic 1 0\n");	/* twice */
	refused_text("monotonic 9223372037 0\n");	/* beyond 64-bit ns */
	refused_text("monotonic 9223372036 854775808\n");
	refused_text("monotonic -9223372037 145224191\n");
	refused_text("monotonic 99999999999999999999 0\n");
	refused_text("boottime 1 0\ngarbage\n");	/* a bad line refuses the file, monotonic or not */
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_timens_read(void **state)
{
	char dir[] = "/tmp/lr-test-clock.XXXXXX", path[64], big[600];
	const char *text;
	int64_t off = 1;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/timens_offsets", dir);
	/* no file: a kernel without time namespaces */
	assert_int_equal(lr_timens_read(path, &off), 0);
	assert_true(off == 0);
	text = "monotonic      -1000         0\nboottime            0         0\n";
	write_file(path, text, strlen(text));
	assert_int_equal(lr_timens_read(path, &off), 0);
	assert_true(off == -1000 * NS);
	write_file(path, "monotonic 1 0\n\0boottime 0 0\n", 29);
	assert_int_equal(lr_timens_read(path, &off), -EINVAL);
	write_file(path, "monotonic one 0\n", 16);
	assert_int_equal(lr_timens_read(path, &off), -EINVAL);
	memset(big, ' ', sizeof(big));
	memcpy(big, "monotonic 1 0", 13);
	write_file(path, big, sizeof(big));
	assert_int_equal(lr_timens_read(path, &off), -EINVAL);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(lr_timens_read(dir, &off), -EISDIR);
	assert_int_equal(rmdir(dir), 0);
}

/* This process's offset is the file's, and the stamping clock is CLOCK_MONOTONIC less it. */
static void test_timens_self(void **state)
{
	int64_t off;
	uint64_t a, b, c;

	(void)state;
	assert_int_equal(lr_timens_read("/proc/self/timens_offsets", &off), 0);
	assert_true(lr_timens_offset_ns() == off);
	a = lr_now_ns();
	b = lr_now_bpf_ns() + (uint64_t)off;
	c = lr_now_ns();
	assert_true(a <= b && b <= c);
}

/* ---- the estimator ---- */

/*
 * An exchange with a true offset @off (endpoint minus controller), sent at controller time @t1,
 * taking @fwd ns there, @busy ns in the endpoint and @back ns back.
 */
static struct lr_clock_sample exchange(uint64_t t1, int64_t off, uint64_t fwd, uint64_t busy, uint64_t back)
{
	struct lr_clock_sample s;

	s.t1 = t1;
	s.t2 = t1 + fwd + (uint64_t)off;
	s.t3 = s.t2 + busy;
	s.t4 = s.t3 - (uint64_t)off + back;
	return s;
}

static void assert_within(int64_t got, int64_t want, uint64_t bound)
{
	int64_t d = got - want;

	if ((d < 0 ? 0 - (uint64_t)d : (uint64_t)d) > bound)
		fail_msg("%lld is %lld away from %lld, beyond the bound %llu", (long long)got, (long long)d,
			 (long long)want, (unsigned long long)bound);
}

static void test_est_symmetric(void **state)
{
	struct lr_clock_sample s = exchange(5 * NS, 123456789, 20000, 3000, 20000);
	struct lr_clock_est e;
	uint64_t delay;
	int64_t off;

	(void)state;
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), 0);
	assert_true(off == 123456789 && delay == 40000);
	assert_int_equal(lr_clock_estimate(&s, 1, &e), 0);
	assert_true(e.offset_ns == 123456789 && e.delay_ns == 40000);
	assert_true(e.bound_ns == 20000 + LR_CLOCK_READ_NS);
	assert_true(e.at_ns == 5 * NS + 21500 && e.samples == 1 && e.refused == 0);
	/* an odd delay: the bound rounds up */
	s = exchange(5 * NS, 0, 1, 0, 0);
	assert_int_equal(lr_clock_estimate(&s, 1, &e), 0);
	assert_true(e.delay_ns == 1 && e.bound_ns == 1 + LR_CLOCK_READ_NS);
}

/* All the way one way or the other: the estimate is off by half the delay, and the bound says so. */
static void test_est_asymmetric(void **state)
{
	const int64_t off = -987654321;
	struct lr_clock_sample s[3] = {
		exchange(NS, off, 1000, 500, 9000),
		exchange(NS, off, 9000, 500, 1000),
		exchange(NS, off, 10000, 500, 0),
	};
	struct lr_clock_est e;
	unsigned int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(lr_clock_estimate(&s[i], 1, &e), 0);
		assert_within(e.offset_ns, off, e.bound_ns);
		assert_within(e.offset_ns, off, e.delay_ns / 2);
	}
	assert_true(e.offset_ns == off + 5000);	/* the last one: 10 us one way, 0 back */
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* Many exchanges, most delayed by queueing: the fastest wins, and every estimate holds its bound. */
static void test_est_jitter(void **state)
{
	struct lr_clock_sample s[LR_CLOCK_EXCHANGES];
	uint64_t r = 42, t = 1ULL << 60;	/* far enough from 0 and 2^64 for any offset below */
	struct lr_clock_est e;
	unsigned int i, k;

	(void)state;
	for (k = 0; k < 2000; k++) {
		int64_t off = (int64_t)(rnd(&r) << 25) - (int64_t)(rnd(&r) << 25);
		unsigned int good = (unsigned int)(rnd(&r) % LR_CLOCK_EXCHANGES);

		for (i = 0; i < LR_CLOCK_EXCHANGES; i++) {
			/* 30..60 us of path each way, up to 2 ms of queueing on either; one quiet exchange */
			uint64_t fwd = 30000 + rnd(&r) % 30000, back = 30000 + rnd(&r) % 30000;

			if (i != good) {
				fwd += rnd(&r) % 2000000;
				back += rnd(&r) % 2000000;
			}
			s[i] = exchange(t, off, fwd, 2000 + rnd(&r) % 5000, back);
			t = s[i].t4 + 1000;
		}
		assert_int_equal(lr_clock_estimate(s, LR_CLOCK_EXCHANGES, &e), 0);
		assert_true(e.samples == LR_CLOCK_EXCHANGES);
		assert_true(e.delay_ns < 120000);	/* the quiet one (or one as quiet) */
		assert_within(e.offset_ns, off, e.bound_ns);
		assert_true(e.bound_ns <= 60000 + LR_CLOCK_READ_NS);
	}
}

/*
 * The endpoint's clock runs @ppb faster: at controller time c it reads off0 + c + c * ppb / 1e9.
 * An exchange at @t1 then sees the offset of its own moment.
 */
static struct lr_clock_sample drifting(uint64_t t1, int64_t off0, int64_t ppb, uint64_t fwd, uint64_t back)
{
	struct lr_clock_sample s;
	uint64_t c2 = t1 + fwd, c3 = c2 + 2000;

	s.t1 = t1;
	s.t2 = c2 + (uint64_t)(off0 + (int64_t)((double)c2 * (double)ppb / 1e9));
	s.t3 = c3 + (uint64_t)(off0 + (int64_t)((double)c3 * (double)ppb / 1e9));
	s.t4 = c3 + back;
	return s;
}

static void test_est_drift(void **state)
{
	const int64_t ppbs[] = { 20000, -35000, 0, 500000 };
	const int64_t off0 = -42 * NS;
	unsigned int i, k;

	(void)state;
	for (k = 0; k < sizeof(ppbs) / sizeof(ppbs[0]); k++) {
		struct lr_clock_est before = { 0 }, after = { 0 };
		struct lr_clock_sample s;
		struct lr_clock_report r;
		uint64_t r_state = 9 + k, t;

		for (i = 0; i < 2 * LR_CLOCK_EXCHANGES; i++) {
			/* half 100 s into the controller's clock, half a minute later; 40..140 us each way */
			uint64_t fwd = 40000 + rnd(&r_state) % 100000, back = 40000 + rnd(&r_state) % 100000;
			bool first = i < LR_CLOCK_EXCHANGES;

			t = (first ? 100 * NS : 160 * NS) + (i % LR_CLOCK_EXCHANGES) * 200000;
			s = drifting(t, off0, ppbs[k], fwd, back);
			assert_int_equal(lr_clock_est_add(first ? &before : &after, &s), 0);
		}
		assert_int_equal(lr_clock_report_make(&before, &after, &r), 0);
		assert_true(r.offset_ns == before.offset_ns);
		/* over 60 s the two bounds (~70 us each) allow about 2300 ppb of error */
		assert_within(r.drift_ppb, ppbs[k], 2500);
		/* the offset loaded holds, within the report's bound, all through the test */
		for (t = 100 * NS; t <= 160 * NS; t += NS / 2) {
			int64_t truth = off0 + (int64_t)((double)t * (double)ppbs[k] / 1e9);

			assert_within(r.offset_ns, truth, r.error_bound_ns);
		}
		assert_true(r.error_bound_ns >=
			    (uint64_t)llabs(after.offset_ns - before.offset_ns) + before.bound_ns);
	}
}

static void test_est_negative(void **state)
{
	const int64_t offs[] = { -1, -5000 * NS, -(int64_t)(1ULL << 62), 5000 * NS };
	struct lr_clock_est e;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		/* the controller's clock well past the endpoint's, or short of it */
		struct lr_clock_sample s = exchange((1ULL << 62) + 100000, offs[i], 7000, 1000, 9000);

		assert_int_equal(lr_clock_estimate(&s, 1, &e), 0);
		assert_within(e.offset_ns, offs[i], e.bound_ns);
		assert_true(e.offset_ns == offs[i] - 1000);
	}
}

static void test_est_huge(void **state)
{
	struct lr_clock_sample s;
	uint64_t delay;
	int64_t off;

	(void)state;
	/* readings next to 2^64 on both sides: nothing overflows */
	s = (struct lr_clock_sample){ UINT64_MAX - 30000, UINT64_MAX - 20000, UINT64_MAX - 10000, UINT64_MAX };
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), 0);
	assert_true(off == 0 && delay == 20000);
	/* the largest offsets either way, and one past each */
	s = (struct lr_clock_sample){ 0, INT64_MAX, INT64_MAX, 0 };
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), 0);
	assert_true(off == INT64_MAX && delay == 0);
	s = (struct lr_clock_sample){ 0, (uint64_t)INT64_MAX + 1, (uint64_t)INT64_MAX + 1, 0 };
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), -ERANGE);
	s = (struct lr_clock_sample){ 1ULL << 63, 0, 0, 1ULL << 63 };
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), 0);
	assert_true(off == INT64_MIN);
	s = (struct lr_clock_sample){ (1ULL << 63) + 2, 0, 0, (1ULL << 63) + 2 };
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), -ERANGE);
	s = (struct lr_clock_sample){ 0, UINT64_MAX - 1, UINT64_MAX, 2 };
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), -ERANGE);
	/* the longest exchange there can be */
	s = (struct lr_clock_sample){ 0, 1ULL << 62, 1ULL << 62, UINT64_MAX };
	assert_int_equal(lr_clock_sample_eval(&s, &off, &delay), 0);
	assert_true(delay == UINT64_MAX);
	assert_true(off == (int64_t)(1ULL << 62) - (int64_t)(UINT64_MAX / 2));
}

static void test_est_refused(void **state)
{
	struct lr_clock_sample s[4] = {
		{ 1000, 5000, 6000, 999 },	/* reply before the request */
		{ 1000, 6000, 5000, 9000 },	/* the endpoint replied before it received */
		{ 1000, 5000, 9000, 3000 },	/* the endpoint took longer than the round trip */
		{ 1000, 5000, 5500, 2000 },	/* fine: delay 500 */
	};
	struct lr_clock_est e = { 0 };
	uint64_t delay;
	int64_t off;
	unsigned int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(lr_clock_sample_eval(&s[i], &off, &delay), -EINVAL);
		assert_int_equal(lr_clock_est_add(&e, &s[i]), -EINVAL);
	}
	assert_true(e.samples == 0 && e.refused == 3);
	assert_int_equal(lr_clock_estimate(s, 3, &e), -ENODATA);
	assert_int_equal(lr_clock_estimate(s, 4, &e), 0);
	assert_true(e.samples == 1 && e.refused == 3 && e.delay_ns == 500 && e.offset_ns == 3750);
}

static void test_report_errors(void **state)
{
	struct lr_clock_est a = { 0 }, b = { 0 };
	struct lr_clock_report r = { 7, 7, 7 }, zero = { 0 }, x;
	struct lr_clock_sample s = exchange(10 * NS, 5, 1000, 0, 1000);

	(void)state;
	assert_int_equal(lr_clock_report_make(&a, &b, &r), -ENODATA);
	assert_int_equal(lr_clock_est_add(&a, &s), 0);
	assert_int_equal(lr_clock_report_make(&a, &b, &r), -ENODATA);
	assert_int_equal(lr_clock_est_add(&b, &s), 0);
	assert_int_equal(lr_clock_report_make(&a, &b, &r), -EINVAL);	/* no time between */
	assert_int_equal(lr_clock_report_make(&b, &a, &r), -EINVAL);
	assert_true(r.offset_ns == 7 && r.error_bound_ns == 7 && r.drift_ppb == 7);	/* untouched */
	a.offset_ns = INT64_MIN;
	b.offset_ns = 1;
	b.at_ns = a.at_ns + NS;
	assert_int_equal(lr_clock_report_make(&a, &b, &r), -ERANGE);
	/* two remote ends: the receiver's clock less the sender's, both bounds */
	r = (struct lr_clock_report){ 5000, 300, 20 };
	x = (struct lr_clock_report){ -7000, 400, -15 };
	assert_int_equal(lr_clock_report_between(&r, &x, &x), 0);
	assert_true(x.offset_ns == 12000 && x.error_bound_ns == 700 && x.drift_ppb == 35);
	/* one end is the controller itself: the other's report as is, or turned around */
	assert_int_equal(lr_clock_report_between(&r, &zero, &x), 0);
	assert_true(x.offset_ns == 5000 && x.error_bound_ns == 300 && x.drift_ppb == 20);
	assert_int_equal(lr_clock_report_between(&zero, &r, &x), 0);
	assert_true(x.offset_ns == -5000 && x.error_bound_ns == 300 && x.drift_ppb == -20);
	r.offset_ns = INT64_MIN;
	assert_int_equal(lr_clock_report_between(&zero, &r, &x), -ERANGE);
	r = (struct lr_clock_report){ 0, UINT64_MAX, 0 };
	assert_int_equal(lr_clock_report_between(&r, &r, &x), -ERANGE);
}

/* ---- the validity rule ---- */

static void test_valid_rule(void **state)
{
	struct lr_rx_result *r = calloc(1, sizeof(*r));
	struct lr_clock_report c = { -5000, 1000, 12 };

	(void)state;
	r->lat_count = 100;
	r->lat_min = 4000;
	r->lat_p50 = 9000;
	assert_true(lr_clock_latency_valid(r, 1000));
	assert_false(lr_clock_latency_valid(r, 1001));	/* more than a quarter of min */
	assert_true(lr_clock_latency_valid(r, 0));
	r->lat_future = 1;	/* a frame's latency was below the error: min does not show it */
	assert_false(lr_clock_latency_valid(r, 0));
	r->lat_future = 0;
	r->lat_count = 0;	/* nothing measured, nothing to vouch for */
	assert_false(lr_clock_latency_valid(r, 0));
	r->lat_count = 100;
	r->lat_min = 3;
	assert_false(lr_clock_latency_valid(r, 1));
	assert_true(lr_clock_latency_valid(r, 0));

	r->lat_min = 4000;
	lr_clock_apply(r, &c);
	assert_true(r->lat_clock == LR_LAT_CLOCK_ESTIMATED && r->lat_offset_ns == -5000);
	assert_true(r->lat_error_bound_ns == 1000 && r->lat_drift_ppb == 12 && r->lat_valid);
	c.error_bound_ns = 1001;
	lr_clock_apply(r, &c);
	assert_false(r->lat_valid);
	lr_clock_apply(r, NULL);
	assert_true(r->lat_clock == LR_LAT_CLOCK_NONE && !r->lat_valid && r->lat_offset_ns == 0);
	assert_true(r->lat_error_bound_ns == 0 && r->lat_drift_ppb == 0);
	free(r);
}

/* The summary's line: nothing for one host; the estimate; or why there are no figures. */
static void test_describe(void **state)
{
	struct lr_rx_result *r = calloc(1, sizeof(*r));
	struct lr_clock_report c = { -5000, 1000, 12 };
	char buf[256];

	(void)state;
	r->lat_count = 100;
	r->lat_min = 4000;
	r->lat_valid = true;
	assert_string_equal(lr_clock_describe(r, buf, sizeof(buf)), "");
	lr_clock_apply(r, &c);
	assert_string_equal(lr_clock_describe(r, buf, sizeof(buf)),
			    "across hosts: clock offset -5000 ns estimated to within 1000 ns, drift 12 ppb");
	c.error_bound_ns = 2000;
	lr_clock_apply(r, &c);
	assert_string_equal(lr_clock_describe(r, buf, sizeof(buf)),
			    "not valid: the clock offset is known to 2000 ns, more than a quarter of the smallest "
			    "latency measured (4000 ns)");
	r->lat_future = 3;
	lr_clock_apply(r, &c);
	assert_non_null(strstr(lr_clock_describe(r, buf, sizeof(buf)), "not valid: 3 frames arrived before"));
	r->lat_count = 0;
	lr_clock_apply(r, &c);
	assert_non_null(strstr(lr_clock_describe(r, buf, sizeof(buf)), "not valid: no frame with a latency"));
	lr_clock_apply(r, NULL);
	assert_non_null(strstr(lr_clock_describe(r, buf, sizeof(buf)), "not valid: no estimate"));
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timens_parse),   cmocka_unit_test(test_timens_garbage),
		cmocka_unit_test(test_timens_read),    cmocka_unit_test(test_timens_self),
		cmocka_unit_test(test_est_symmetric),  cmocka_unit_test(test_est_asymmetric),
		cmocka_unit_test(test_est_jitter),     cmocka_unit_test(test_est_drift),
		cmocka_unit_test(test_est_negative),   cmocka_unit_test(test_est_huge),
		cmocka_unit_test(test_est_refused),    cmocka_unit_test(test_report_errors),
		cmocka_unit_test(test_valid_rule),     cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
