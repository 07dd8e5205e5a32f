/* SPDX-License-Identifier: MIT */
/* The idle limit of recv --once and reflect --once: the default's two limits, a given one, none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "util/idle.h"

#define S 1000000000ULL
#define T0 (1000 * S)	/* any start: the rule works on differences */

/* Not given: 60 s for the first frame or marker, then 10 s after the last. */
static void test_default(void **state)
{
	struct lr_idle w;
	char why[512];

	(void)state;
	lr_idle_init(&w, 0, false, T0);
	assert_false(lr_idle_expired(&w, 0, T0 + 10 * S));
	assert_false(lr_idle_expired(&w, 0, T0 + 60 * S - 1));
	assert_true(lr_idle_expired(&w, 0, T0 + 60 * S));
	lr_idle_why(&w, why, sizeof(why));
	assert_non_null(strstr(why, "in the 60.0 s since the start"));

	lr_idle_init(&w, 0, false, T0);
	/* frames at 59 s: from then on 10 s is the limit */
	assert_false(lr_idle_expired(&w, 5, T0 + 59 * S));
	assert_false(lr_idle_expired(&w, 5, T0 + 69 * S - 1));
	assert_true(lr_idle_expired(&w, 5, T0 + 69 * S));
	lr_idle_why(&w, why, sizeof(why));
	assert_non_null(strstr(why, "for 10.0 s after the last one"));
}

/* Each new frame or marker starts the wait over. */
static void test_activity_restarts(void **state)
{
	struct lr_idle w;
	uint64_t t;

	(void)state;
	lr_idle_init(&w, 0, false, T0);
	for (t = 1; t <= 100; t++)
		assert_false(lr_idle_expired(&w, t, T0 + t * 9 * S));
	assert_false(lr_idle_expired(&w, 100, T0 + 900 * S + 10 * S - 1));
	assert_true(lr_idle_expired(&w, 100, T0 + 900 * S + 10 * S));
}

/* Given: one limit before and after; 0: never. */
static void test_given(void **state)
{
	struct lr_idle w;

	(void)state;
	lr_idle_init(&w, 3 * S, true, T0);
	assert_false(lr_idle_expired(&w, 0, T0 + 3 * S - 1));
	assert_true(lr_idle_expired(&w, 0, T0 + 3 * S));
	lr_idle_init(&w, 3 * S, true, T0);
	assert_false(lr_idle_expired(&w, 1, T0 + 2 * S));
	assert_false(lr_idle_expired(&w, 1, T0 + 5 * S - 1));
	assert_true(lr_idle_expired(&w, 1, T0 + 5 * S));
	lr_idle_init(&w, 0, true, T0);
	assert_false(lr_idle_expired(&w, 0, T0 + 1000000 * S));
	assert_false(lr_idle_expired(&w, 1, T0 + 1000001 * S));
	assert_false(lr_idle_expired(&w, 1, T0 + 9000000 * S));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_activity_restarts),
		cmocka_unit_test(test_given),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
