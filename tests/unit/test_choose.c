/* SPDX-License-Identifier: MIT */
/* Engine choice: order of preference, fallback reasons, the test-only disable switch. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "util/choose.h"

/* A fake engine: data points at the error it returns and the reason it gives. */
struct fake {
	int err;
	const char *why;
	int calls;
};

static int fake_open(void *ctx, const struct lr_cand *self, char *why, size_t len)
{
	struct fake *f = (struct fake *)self->data;
	int *calls = ctx;

	f->calls++;
	(*calls)++;
	if (f->why)
		snprintf(why, len, "%s", f->why);
	return f->err;
}

static void test_first_usable_wins(void **state)
{
	struct fake zc = { -EOPNOTSUPP, "zero-copy unsupported by veth", 0 };
	struct fake copy = { 0, NULL, 0 };
	struct fake pkt = { 0, NULL, 0 };
	const struct lr_cand c[] = {
		{ "afxdp-zc", fake_open, &zc }, { "afxdp", fake_open, &copy }, { "packet", fake_open, &pkt },
	};
	struct lr_choice ch;
	char line[512];
	int calls = 0;

	(void)state;
	assert_int_equal(lr_choose(c, 3, &calls, &ch), 0);
	assert_int_equal(ch.chosen, 1);
	assert_int_equal(ch.ntried, 2);
	assert_int_equal(pkt.calls, 0);	/* never tried once a better one opened */
	assert_int_equal(ch.tried[0].err, -EOPNOTSUPP);
	lr_choice_why(&ch, line, sizeof(line));
	assert_string_equal(line, "; afxdp-zc not usable (zero-copy unsupported by veth)");
}

static void test_falls_back_to_last(void **state)
{
	struct fake a = { -EPERM, "disabled by LINERATE_TEST_DISABLE", 0 };
	struct fake b = { 0, NULL, 0 };
	const struct lr_cand c[] = { { "afxdp", fake_open, &a }, { "packet", fake_open, &b } };
	struct lr_choice ch;
	char line[512];
	int calls = 0;

	(void)state;
	assert_int_equal(lr_choose(c, 2, &calls, &ch), 0);
	assert_int_equal(ch.chosen, 1);
	lr_choice_why(&ch, line, sizeof(line));
	assert_non_null(strstr(line, "afxdp not usable (disabled by LINERATE_TEST_DISABLE)"));
	assert_null(strstr(line, "packet"));
}

static void test_none_usable(void **state)
{
	struct fake a = { -EAFNOSUPPORT, NULL, 0 };	/* no reason given: strerror fills in */
	struct fake b = { -EPERM, "packet: opening an AF_PACKET socket needs root (CAP_NET_RAW)", 0 };
	const struct lr_cand c[] = { { "afxdp", fake_open, &a }, { "packet", fake_open, &b } };
	struct lr_choice ch;
	char line[512];
	int calls = 0;

	(void)state;
	assert_int_equal(lr_choose(c, 2, &calls, &ch), -EPERM);
	assert_int_equal(ch.chosen, -1);
	assert_int_equal(ch.ntried, 2);
	assert_non_null(strstr(ch.tried[0].why, "afxdp: "));
	assert_non_null(strstr(ch.tried[0].why, strerror(EAFNOSUPPORT)));
	lr_choice_why(&ch, line, sizeof(line));
	assert_non_null(strstr(line, "afxdp not usable"));
	assert_non_null(strstr(line, "packet not usable (packet: opening an AF_PACKET socket needs root"));
}

static void test_single_candidate(void **state)
{
	struct fake a = { -ENODEV, "gone", 0 };
	const struct lr_cand c[] = { { "xdp", fake_open, &a } };
	struct lr_choice ch;
	int calls = 0;

	(void)state;
	assert_int_equal(lr_choose(c, 1, &calls, &ch), -ENODEV);
	assert_int_equal(a.calls, 1);
	assert_string_equal(ch.tried[0].why, "gone");
}

static void test_reason_truncated_safely(void **state)
{
	static char longwhy[1000];
	struct fake a = { -EIO, longwhy, 0 };
	struct fake b = { 0, NULL, 0 };
	const struct lr_cand c[] = { { "afxdp", fake_open, &a }, { "packet", fake_open, &b } };
	struct lr_choice ch;
	char line[64];
	int calls = 0;

	(void)state;
	memset(longwhy, 'x', sizeof(longwhy) - 1);
	assert_int_equal(lr_choose(c, 2, &calls, &ch), 0);
	assert_true(strlen(ch.tried[0].why) < sizeof(ch.tried[0].why));
	lr_choice_why(&ch, line, sizeof(line));
	assert_true(strlen(line) < sizeof(line));
}

/* The longest reason a candidate may give comes through whole, and so does the list of three. */
static void test_reasons_whole(void **state)
{
	static char longwhy[LR_WHY_MAX];
	struct fake a = { -EIO, longwhy, 0 }, b = { -EIO, longwhy, 0 }, d = { 0, NULL, 0 };
	const struct lr_cand c[] = { { "live", fake_open, &a }, { "afxdp", fake_open, &b }, { "packet", fake_open, &d } };
	struct lr_choice ch;
	char line[LR_CHOICE_WHY_MAX(3)];
	int calls = 0;

	(void)state;
	memset(longwhy, 'x', sizeof(longwhy) - 1);
	assert_int_equal(lr_choose(c, 3, &calls, &ch), 0);
	assert_string_equal(ch.tried[0].why, longwhy);
	lr_choice_why(&ch, line, sizeof(line));
	assert_int_equal(strlen(line), 2 * (strlen("; live not usable ()") + sizeof(longwhy) - 1) + 1);
	assert_string_equal(line + strlen(line) - 2, "x)");
}

static void test_disable_switch(void **state)
{
	(void)state;
	unsetenv("LINERATE_TEST_DISABLE");
	assert_false(lr_test_disabled("afxdp"));
	setenv("LINERATE_TEST_DISABLE", "afxdp", 1);
	assert_true(lr_test_disabled("afxdp"));
	assert_false(lr_test_disabled("xdp"));	/* a suffix is not a match */
	setenv("LINERATE_TEST_DISABLE", "xdp,packet", 1);
	assert_true(lr_test_disabled("xdp"));
	assert_true(lr_test_disabled("packet"));
	assert_false(lr_test_disabled("afxdp"));
	setenv("LINERATE_TEST_DISABLE", "afxdpx", 1);
	assert_false(lr_test_disabled("afxdp"));	/* a prefix is not a match either */
	unsetenv("LINERATE_TEST_DISABLE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_usable_wins),
		cmocka_unit_test(test_falls_back_to_last),
		cmocka_unit_test(test_none_usable),
		cmocka_unit_test(test_single_candidate),
		cmocka_unit_test(test_reason_truncated_safely),
		cmocka_unit_test(test_reasons_whole),
		cmocka_unit_test(test_disable_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
