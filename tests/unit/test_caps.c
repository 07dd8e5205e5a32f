/* SPDX-License-Identifier: MIT */
/* Unit tests for the probe's pure logic: netdev netlink answers, ethtool counter names, the probe CLI. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <libmnl/libmnl.h>

#include "cmd/cmd.h"
#include "opt/opts.h"
#include "sys/caps.h"
#include "sys/netdev.h"

/* Attribute numbers of include/uapi/linux/netdev.h, as the kernel sends them. */
#define A_IFINDEX	1
#define A_PAD		2
#define A_XDP_FEATURES	3
#define A_ZC_MAX_SEGS	4

/* A NETDEV_CMD_DEV_GET answer, the way the kernel lays it out. */
struct msg {
	union {
		struct nlmsghdr nh;
		uint8_t b[256];
	};
};

static void msg_init(struct msg *m)
{
	struct genlmsghdr *gh;
	struct nlmsghdr *nh;

	memset(m, 0, sizeof(*m));
	nh = mnl_nlmsg_put_header(m->b);
	nh->nlmsg_type = 0x20;	/* a dynamic family id */
	gh = mnl_nlmsg_put_extra_header(nh, sizeof(*gh));
	gh->cmd = 1;
	gh->version = 1;
}

static void msg_put(struct msg *m, uint16_t type, const void *data, uint16_t len)
{
	assert_true(mnl_attr_put_check(&m->nh, sizeof(m->b), type, len, data));
}

static void msg_put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	msg_put(m, type, &v, sizeof(v));
}

static void msg_put_u64(struct msg *m, uint16_t type, uint64_t v)
{
	msg_put(m, type, &v, sizeof(v));
}

static void test_xdp_parse(void **state)
{
	struct lr_if_xdp x;
	struct msg m;

	(void)state;
	/* veth: basic, redirect, rx_sg; padded so the u64 is 8-byte aligned, no ZC attribute */
	msg_init(&m);
	msg_put_u32(&m, A_IFINDEX, 7);
	msg_put(&m, A_PAD, NULL, 0);
	msg_put_u64(&m, A_XDP_FEATURES, LR_XDP_ACT_BASIC | LR_XDP_ACT_REDIRECT | LR_XDP_ACT_RX_SG);
	assert_int_equal(lr_if_xdp_parse(&m, m.nh.nlmsg_len, 7, &x), 0);
	assert_int_equal(x.features, 0x23);
	assert_int_equal(x.zc_max_segs, 0);

	/* a zero-copy NIC, u64 left 4-byte aligned, and an attribute from a newer kernel at the end */
	msg_init(&m);
	msg_put_u32(&m, A_IFINDEX, 3);
	msg_put_u64(&m, A_XDP_FEATURES, 0x7f);
	msg_put_u32(&m, A_ZC_MAX_SEGS, 17);
	msg_put_u64(&m, 6, 3);
	assert_int_equal(lr_if_xdp_parse(&m, m.nh.nlmsg_len, 3, &x), 0);
	assert_int_equal(x.features, 0x7f);
	assert_true(x.features & LR_XDP_ACT_XSK_ZEROCOPY);
	assert_int_equal(x.zc_max_segs, 17);

	/* the answer is about another device */
	assert_int_equal(lr_if_xdp_parse(&m, m.nh.nlmsg_len, 4, &x), -ENOENT);
	/* cut short: the buffer ends before the message says it does */
	assert_int_equal(lr_if_xdp_parse(&m, m.nh.nlmsg_len - 8, 3, &x), -EBADMSG);
	assert_int_equal(lr_if_xdp_parse(&m, 8, 3, &x), -EBADMSG);

	/* no features attribute, or one too short to hold a u64 */
	msg_init(&m);
	msg_put_u32(&m, A_IFINDEX, 3);
	assert_int_equal(lr_if_xdp_parse(&m, m.nh.nlmsg_len, 3, &x), -EBADMSG);
	msg_put_u32(&m, A_XDP_FEATURES, 1);
	assert_int_equal(lr_if_xdp_parse(&m, m.nh.nlmsg_len, 3, &x), -EBADMSG);

	/* no ifindex */
	msg_init(&m);
	msg_put_u64(&m, A_XDP_FEATURES, 1);
	assert_int_equal(lr_if_xdp_parse(&m, m.nh.nlmsg_len, 3, &x), -EBADMSG);
}

static void test_xdp_names(void **state)
{
	(void)state;
	assert_string_equal(lr_xdp_act_name(LR_XDP_ACT_BASIC), "basic");
	assert_string_equal(lr_xdp_act_name(LR_XDP_ACT_NDO_XMIT), "ndo_xmit");
	assert_string_equal(lr_xdp_act_name(LR_XDP_ACT_XSK_ZEROCOPY), "xsk_zerocopy");
	assert_string_equal(lr_xdp_act_name(LR_XDP_ACT_NDO_XMIT_SG), "ndo_xmit_sg");
	assert_null(lr_xdp_act_name(1ULL << LR_XDP_ACT_COUNT));
	assert_null(lr_xdp_act_name(LR_XDP_ACT_BASIC | LR_XDP_ACT_REDIRECT));
	assert_string_equal(lr_if_operstate_name(6), "up");
	assert_string_equal(lr_if_operstate_name(2), "down");
	assert_string_equal(lr_if_operstate_name(99), "unknown");
}

static void queue_ok(const char *name, unsigned int want_q, bool want_tx, const char *want_field)
{
	const char *field = NULL;
	unsigned int q = 12345;
	bool tx = !want_tx;

	if (!lr_ethtool_stat_queue(name, &q, &tx, &field))
		fail_msg("'%s' not taken for a per-queue counter", name);
	assert_int_equal(q, want_q);
	assert_int_equal(tx, want_tx);
	assert_string_equal(field, want_field);
}

static void test_stat_queue_names(void **state)
{
	static const char *const bad[] = {
		"peer_ifindex", "rx_queue_", "rx_queue_0", "rx_queue_0_", "rx_queue_x_packets",
		"rx_queue__0_packets", "rx_queue_-1_packets", "rx_queue_+1_packets", "rx_queue_1packets",
		"rxq_0_packets", "rx-0.packets", "rx_queue_99999999999_packets", "",
	};
	unsigned int i;

	(void)state;
	queue_ok("rx_queue_0_xdp_packets", 0, false, "xdp_packets");
	queue_ok("tx_queue_1_xdp_xmit_errors", 1, true, "xdp_xmit_errors");
	queue_ok("rx_queue_63_drops", 63, false, "drops");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (lr_ethtool_stat_queue(bad[i], NULL, NULL, NULL))
			fail_msg("'%s' taken for a per-queue counter", bad[i]);
}

static void test_stats_find(void **state)
{
	char names[4][LR_ETHTOOL_NAME_LEN] = {
		"peer_ifindex", "rx_queue_0_drops", "tx_queue_0_xdp_xmit", "tx_queue_1_xdp_xmit",
	};
	uint64_t values[4] = { 9, 10, 11, 12 };
	struct lr_ethtool_stats s = { .n = 4, .names = names, .values = values };
	uint64_t v = 0;

	(void)state;
	assert_int_equal(lr_ethtool_stats_find(&s, "peer_ifindex", &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(lr_ethtool_stats_find(&s, "peer", &v), -ENOENT);
	assert_int_equal(lr_ethtool_stats_findq(&s, "tx_queue_%u_xdp_xmit", 1, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(lr_ethtool_stats_findq(&s, "rx_queue_%u_drops", 0, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(lr_ethtool_stats_findq(&s, "rx_queue_%u_drops", 1, &v), -ENOENT);
	/* a made-up name longer than any counter can have is simply not there */
	assert_int_equal(lr_ethtool_stats_findq(&s, "a_very_long_counter_name_for_queue_%u_xx", 1, &v), -ENOENT);
}

/* A writable argv for getopt, and a help sink. */
static int probe_parse(struct lr_probe_opts *o, char *err, size_t errlen, int argc, const char *const *args)
{
	char *argv[16], *help = NULL;
	size_t help_len = 0;
	FILE *out;
	int i, ret;

	assert_true(argc < 16);
	for (i = 0; i < argc; i++)
		argv[i] = strdup(args[i]);
	argv[argc] = NULL;
	out = open_memstream(&help, &help_len);
	assert_non_null(out);
	ret = lr_cli_parse_probe(argc, argv, o, out, err, errlen);
	fclose(out);
	if (ret == 1)
		assert_non_null(strstr(help, "--interface"));
	free(help);
	for (i = 0; i < argc; i++)
		free(argv[i]);
	return ret;
}

#define PARSE(o, err, ...)                                                                                     \
	probe_parse(o, err, sizeof(err), sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *),      \
		    (const char *const[]){ __VA_ARGS__ })

static void test_cli(void **state)
{
	struct lr_probe_opts o;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&o, err, "probe", "-i", "veth0"), 0);
	assert_string_equal(o.ifname, "veth0");
	assert_string_equal(o.netns, "");
	assert_string_equal(o.json, "");
	assert_int_equal(o.verbose, 0);

	assert_int_equal(PARSE(&o, err, "probe", "--interface", "p0", "-n", "lab", "--json", "-", "-vv"), 0);
	assert_string_equal(o.ifname, "p0");
	assert_string_equal(o.netns, "lab");
	assert_string_equal(o.json, "-");
	assert_int_equal(o.verbose, 2);

	assert_int_equal(PARSE(&o, err, "probe", "--help"), 1);

	assert_int_equal(PARSE(&o, err, "probe"), -EINVAL);
	assert_non_null(strstr(err, "-i/--interface"));
	assert_int_equal(PARSE(&o, err, "probe", "-i", "a-name-far-too-long"), -EINVAL);
	assert_non_null(strstr(err, "--interface"));
	assert_int_equal(PARSE(&o, err, "probe", "-i", "p0", "--rate", "1M"), -EINVAL);
	assert_non_null(strstr(err, "--rate"));
	assert_int_equal(PARSE(&o, err, "probe", "-i", "p0", "extra"), -EINVAL);
	assert_non_null(strstr(err, "extra"));
}

static void test_cap_names(void **state)
{
	unsigned int i, j;

	(void)state;
	assert_string_equal(lr_cap_state_name(LR_CAP_YES), "yes");
	assert_string_equal(lr_cap_state_name(LR_CAP_NO), "no");
	assert_string_equal(lr_cap_state_name(LR_CAP_LIKELY), "likely");
	assert_string_equal(lr_cap_state_name(LR_CAP_UNKNOWN), "unknown");
	assert_string_equal(lr_cap_key(LR_CAP_AFXDP_COPY), "afxdp_copy");
	/* JSON keys are unique and every capability has a label */
	for (i = 0; i < LR_CAP_COUNT; i++) {
		assert_non_null(lr_cap_key(i));
		assert_non_null(lr_cap_label(i));
		for (j = i + 1; j < LR_CAP_COUNT; j++)
			assert_string_not_equal(lr_cap_key(i), lr_cap_key(j));
	}
}

/* A live-frames try's answer as the caller hands it over: yes, unknown without privileges, else no. */
static void test_set_live(void **state)
{
	struct lr_caps caps;
	const struct lr_cap *c = &caps.cap[LR_CAP_LIVE_FRAMES];

	(void)state;
	memset(&caps, 0, sizeof(caps));
	caps.have_xdp = true;
	caps.xdp.features = LR_XDP_ACT_NDO_XMIT;
	lr_caps_set_live(&caps, 0, "ran");
	assert_int_equal(c->state, LR_CAP_YES);
	assert_int_equal(c->err, 0);
	assert_string_equal(c->detail, "ran");

	/* a device that cannot take redirected frames yet gets the note */
	caps.xdp.features = 0;
	lr_caps_set_live(&caps, 0, "ran");
	assert_int_equal(c->state, LR_CAP_YES);
	assert_non_null(strstr(c->detail, "xdp_ndo_xmit"));

	lr_caps_set_live(&caps, -EPERM, "needs root");
	assert_int_equal(c->state, LR_CAP_UNKNOWN);
	assert_int_equal(c->err, -EPERM);
	assert_string_equal(c->detail, "needs root");

	lr_caps_set_live(&caps, -EINVAL, "refused");
	assert_int_equal(c->state, LR_CAP_NO);
	assert_int_equal(c->err, -EINVAL);
	assert_string_equal(c->detail, "refused");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xdp_parse),
		cmocka_unit_test(test_xdp_names),
		cmocka_unit_test(test_stat_queue_names),
		cmocka_unit_test(test_stats_find),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_cap_names),
		cmocka_unit_test(test_set_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
