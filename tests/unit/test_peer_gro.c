/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for --prepare-peer's pure parts: the state file a peer's holders share and when a dead
 * run's is still trusted, the count of holders read from /proc/locks, and the lines that say what
 * was done and how it ended.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sys/peer_gro.h"

static void test_state_round_trip(void **state)
{
	struct lr_peer_gro_state a = { .device = "vc1", .netns_cookie = 4097, .gro = false }, b;
	char buf[256];
	int n;

	(void)state;
	n = lr_peer_gro_state_format(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_string_equal(buf, "linerate-peer-gro 1\ndevice vc1\nnetns_cookie 4097\ngro off\n");
	assert_int_equal(lr_peer_gro_state_parse(buf, (size_t)n, &b), 0);
	assert_string_equal(b.device, "vc1");
	assert_int_equal(b.netns_cookie, 4097);
	assert_false(b.gro);
	a.gro = true;
	a.netns_cookie = UINT64_MAX;
	strcpy(a.device, "abcdefghijklmno");	/* 15 characters: the longest interface name */
	n = lr_peer_gro_state_format(&a, buf, sizeof(buf));
	assert_int_equal(lr_peer_gro_state_parse(buf, (size_t)n, &b), 0);
	assert_string_equal(b.device, "abcdefghijklmno");
	assert_true(b.netns_cookie == UINT64_MAX);
	assert_true(b.gro);
	/* too small a buffer is said, not cut */
	assert_int_equal(lr_peer_gro_state_format(&a, buf, 20), -ENOSPC);
}

static void test_state_refused(void **state)
{
	static const char *const bad[] = {
		"linerate-peer-gro 2\ndevice vc1\nnetns_cookie 1\ngro off\n",	/* another version */
		"device vc1\nnetns_cookie 1\ngro off\n",	/* no header */
		"linerate-peer-gro 1\ndevice vc1\nnetns_cookie 1\ngro maybe\n",
		"linerate-peer-gro 1\ndevice vc1\nnetns_cookie 1\n",	/* cut short: a writer died mid-write */
		"linerate-peer-gro 1\ndevice vc1\ngro off\n",	/* no cookie */
		"linerate-peer-gro 1\ndevice vc1\nnetns_cookie x\ngro off\n",
		"linerate-peer-gro 1\ndevice vc1\nnetns_cookie 1\ngro off\nextra\n",
		"linerate-peer-gro 1\ndevice abcdefghijklmnop\nnetns_cookie 1\ngro off\n",	/* 16 characters */
		"linerate-peer-gro 1\n",
		NULL,
	};
	static const char nul[] = "linerate-peer-gro 1\ndevice v\0c1\nnetns_cookie 1\ngro off\n";
	struct lr_peer_gro_state st;
	unsigned int i;

	(void)state;
	/* empty: no run holds the peer */
	assert_int_equal(lr_peer_gro_state_parse("", 0, &st), -ENODATA);
	for (i = 0; bad[i]; i++) {
		if (lr_peer_gro_state_parse(bad[i], strlen(bad[i]), &st) != -EBADMSG)
			fail_msg("taken: '%s'", bad[i]);
	}
	/* a NUL inside is no text */
	assert_int_equal(lr_peer_gro_state_parse(nul, sizeof(nul) - 1, &st), -EBADMSG);
}

static void test_state_fits(void **state)
{
	struct lr_peer_gro_state st = { .device = "vc1", .netns_cookie = 4097, .gro = false };

	(void)state;
	/* as a run that died left it: GRO on, no XDP, the same name in the same namespace */
	assert_true(lr_peer_gro_state_fits(&st, 4097, "vc1", true, false));
	/* a cookie not known on either side is not compared */
	assert_true(lr_peer_gro_state_fits(&st, 0, "vc1", true, false));
	st.netns_cookie = 0;
	assert_true(lr_peer_gro_state_fits(&st, 4097, "vc1", true, false));
	/* another namespace now has the inode */
	st.netns_cookie = 4097;
	assert_false(lr_peer_gro_state_fits(&st, 4098, "vc1", true, false));
	/* another device has the ifindex, or this one another name */
	assert_false(lr_peer_gro_state_fits(&st, 4097, "vc2", true, false));
	assert_false(lr_peer_gro_state_fits(&st, 4097, "vc", true, false));
	/* its user set it since: GRO off again, or an XDP program of theirs */
	assert_false(lr_peer_gro_state_fits(&st, 4097, "vc1", false, false));
	assert_false(lr_peer_gro_state_fits(&st, 4097, "vc1", true, true));
}

static void test_count_holders(void **state)
{
	static const char locks[] =
		"1: FLOCK  ADVISORY  READ  1234 00:1a:5678 0 EOF\n"
		"2: FLOCK  ADVISORY  READ  1235 00:1a:5678 0 EOF\n"
		"2: -> FLOCK  ADVISORY  WRITE 1236 00:1a:5678 0 EOF\n"	/* a waiter */
		"3: FLOCK  ADVISORY  WRITE 1237 00:1a:5679 0 EOF\n"	/* another file */
		"4: POSIX  ADVISORY  READ  1238 00:1a:5678 0 EOF\n"	/* not a flock */
		"5: FLOCK  ADVISORY  READ  1239 08:01:5678 0 EOF\n"	/* another device */
		"6: OFDLCK ADVISORY  READ  -1 00:1a:5678 0 EOF\n"
		"7: FLOCK  ADVISORY  READ  1240 00:1a:5678 0 EOF";	/* no newline at the end */

	(void)state;
	assert_int_equal(lr_peer_gro_count_holders(locks, 0, 0x1a, 5678), 3);
	assert_int_equal(lr_peer_gro_count_holders(locks, 8, 1, 5678), 1);
	assert_int_equal(lr_peer_gro_count_holders(locks, 0, 0x1a, 5679), 0);
	assert_int_equal(lr_peer_gro_count_holders("", 0, 0x1a, 5678), 0);
}

static void test_lines(void **state)
{
	struct lr_prep_result r = { .asked = true, .action = LR_PREP_SWITCHED, .device = "vc1",
				    .netns = "lrlab-bridge-host", .switched_on = true };
	char line[512];

	(void)state;
	lr_peer_gro_start_line(&r, "eth0", line, sizeof(line));
	assert_string_equal(line, "--prepare-peer: GRO switched on at vc1 (netns lrlab-bridge-host), the first hop's "
				  "veth peer, for this test; it was off");
	/* not released yet: held */
	lr_peer_gro_end_line(&r, line, sizeof(line));
	assert_string_equal(line, "GRO on at vc1 (netns lrlab-bridge-host) for this test");
	r.released = r.restored = true;
	lr_peer_gro_end_line(&r, line, sizeof(line));
	assert_string_equal(line, "GRO put back off at vc1 (netns lrlab-bridge-host)");
	r.restored = false;
	r.left_on_for = 1;
	lr_peer_gro_end_line(&r, line, sizeof(line));
	assert_string_equal(line, "GRO left on at vc1 (netns lrlab-bridge-host) for 1 other linerate run; the last "
				  "one puts it back");
	r.action = LR_PREP_NONE;
	r.switched_on = false;
	r.gro_before = true;
	r.netns[0] = '\0';
	lr_peer_gro_start_line(&r, "eth0", line, sizeof(line));
	assert_string_equal(line, "--prepare-peer: nothing to do: vc1, the first hop's veth peer, has GRO on already; "
				  "left as it is");
	lr_peer_gro_end_line(&r, line, sizeof(line));
	assert_string_equal(line, "nothing to do: vc1 had GRO on already");
	r.asked = false;
	lr_peer_gro_end_line(&r, line, sizeof(line));
	assert_string_equal(line, "");
	r.asked = true;
	r.action = LR_PREP_NOT_VETH;
	lr_peer_gro_start_line(&r, "br0", line, sizeof(line));
	assert_string_equal(line, "--prepare-peer has nothing to do: br0 is no veth");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_state_refused),
		cmocka_unit_test(test_state_fits),
		cmocka_unit_test(test_count_holders),
		cmocka_unit_test(test_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
