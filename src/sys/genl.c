/* SPDX-License-Identifier: MIT */
/* Generic netlink: a family's id, and the XDP features of the "netdev" family (Linux >= 6.3). */
#include <errno.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "sys/netdev.h"
#include "sys/nl.h"

/*
 * The "netdev" generic-netlink family (Linux >= 6.3), values from the kernel's
 * include/uapi/linux/netdev.h. Debian 12's 6.1 headers lack that file, and a
 * 6.3 one lacks the ZC_MAX_SEGS attribute (6.6), so we carry our own names.
 */
#define ND_FAMILY_NAME		"netdev"
#define ND_FAMILY_VERSION	1
#define ND_CMD_DEV_GET		1
#define ND_A_DEV_IFINDEX	1
#define ND_A_DEV_XDP_FEATURES	3
#define ND_A_DEV_XDP_ZC_MAX_SEGS 4
#define ND_A_DEV_MAX		ND_A_DEV_XDP_ZC_MAX_SEGS

struct xdp_query {
	int ifindex;
	uint16_t family;	/* of the answers; 0 for any (a message the caller holds) */
	struct lr_if_xdp *out;
};

static void genl_req_init(struct lr_nl_req *req, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct genlmsghdr *gh = lr_nl_req_init(req, family, 0, sizeof(*gh));

	gh->cmd = cmd;
	gh->version = version;
}

static int family_parse_msg(const struct nlmsghdr *m, void *arg)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	int err;

	err = lr_nl_parse(m, GENL_ID_CTRL, GENL_HDRLEN, tb, MNL_ARRAY_SIZE(tb));
	if (err)
		return err;
	return lr_nl_attr_get(tb[CTRL_ATTR_FAMILY_ID], arg, sizeof(uint16_t)) ? -EBADMSG : 0;
}

/* Family id of a generic-netlink family; -EOPNOTSUPP when this kernel does not have it. */
static int genl_family_id(const char *name, uint16_t *id)
{
	struct lr_nl_req req;
	int err;

	genl_req_init(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(&req.nh, CTRL_ATTR_FAMILY_NAME, name);
	err = lr_nl_talk(NETLINK_GENERIC, &req, family_parse_msg, id);
	return err == -ENOENT ? -EOPNOTSUPP : err;
}

static int xdp_parse_msg(const struct nlmsghdr *m, void *arg)
{
	const struct nlattr *tb[ND_A_DEV_MAX + 1];
	const struct xdp_query *q = arg;
	struct lr_if_xdp *out = q->out;
	uint32_t idx;
	int err;

	err = lr_nl_parse(m, q->family, GENL_HDRLEN, tb, MNL_ARRAY_SIZE(tb));
	if (err)
		return err;
	if (lr_nl_attr_get(tb[ND_A_DEV_IFINDEX], &idx, sizeof(idx)))
		return -EBADMSG;
	if (idx != (uint32_t)q->ifindex)
		return -ENOENT;
	if (lr_nl_attr_get(tb[ND_A_DEV_XDP_FEATURES], &out->features, sizeof(out->features)))
		return -EBADMSG;
	/* Sent only when the driver advertises XSK zero-copy. */
	out->zc_max_segs = 0;
	lr_nl_attr_get(tb[ND_A_DEV_XDP_ZC_MAX_SEGS], &out->zc_max_segs, sizeof(out->zc_max_segs));
	return 0;
}

int lr_if_xdp_parse(const void *msg, size_t len, int ifindex, struct lr_if_xdp *out)
{
	struct xdp_query q = { .ifindex = ifindex, .out = out };

	return lr_nl_msg_parse(msg, len, xdp_parse_msg, &q);
}

int lr_if_xdp_features(int ifindex, struct lr_if_xdp *out)
{
	struct xdp_query q = { .ifindex = ifindex, .out = out };
	struct lr_nl_req req;
	int err;

	memset(out, 0, sizeof(*out));
	err = genl_family_id(ND_FAMILY_NAME, &q.family);
	if (err)
		return err;
	genl_req_init(&req, q.family, ND_CMD_DEV_GET, ND_FAMILY_VERSION);
	mnl_attr_put_u32(&req.nh, ND_A_DEV_IFINDEX, (uint32_t)ifindex);
	err = lr_nl_talk(NETLINK_GENERIC, &req, xdp_parse_msg, &q);
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}

const char *lr_xdp_act_name(uint64_t bit)
{
	switch (bit) {
	case LR_XDP_ACT_BASIC:
		return "basic";
	case LR_XDP_ACT_REDIRECT:
		return "redirect";
	case LR_XDP_ACT_NDO_XMIT:
		return "ndo_xmit";
	case LR_XDP_ACT_XSK_ZEROCOPY:
		return "xsk_zerocopy";
	case LR_XDP_ACT_HW_OFFLOAD:
		return "hw_offload";
	case LR_XDP_ACT_RX_SG:
		return "rx_sg";
	case LR_XDP_ACT_NDO_XMIT_SG:
		return "ndo_xmit_sg";
	}
	return NULL;
}
