/* SPDX-License-Identifier: MIT */
/* RTM_GETLINK: one parser for every link fact linerate reads (kind, state, peer, master, MAC). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "sys/netdev.h"
#include "sys/nl.h"
#include "util/log.h"

struct link_query {
	int ifindex;
	struct lr_if_link *out;
};

static void link_clear(struct lr_if_link *l)
{
	memset(l, 0, sizeof(*l));
	l->link_nsid = -1;
	l->target_nsid = -1;
}

static int link_parse_msg(const struct nlmsghdr *m, void *arg)
{
	const struct nlattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1], *xa[IFLA_XDP_MAX + 1];
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(m);
	const struct link_query *q = arg;
	struct lr_if_link *l = q->out;
	uint8_t oper = 0, attached = XDP_ATTACHED_NONE;
	uint32_t drv_id = 0;
	int err;

	err = lr_nl_parse(m, RTM_NEWLINK, sizeof(*ifi), tb, MNL_ARRAY_SIZE(tb));
	if (!err && ifi->ifi_index != q->ifindex)
		err = -ENOENT;
	if (err)
		return err;

	link_clear(l);
	l->ifindex = ifi->ifi_index;
	lr_nl_attr_str(tb[IFLA_IFNAME], l->name, sizeof(l->name));
	lr_nl_attr_get(tb[IFLA_OPERSTATE], &oper, sizeof(oper));
	l->operstate = oper;
	/* What is absent (or too short to read) keeps the value link_clear() gave it. */
	lr_nl_attr_get(tb[IFLA_LINK], &l->link, sizeof(int32_t));
	lr_nl_attr_get(tb[IFLA_LINK_NETNSID], &l->link_nsid, sizeof(int32_t));
	lr_nl_attr_get(tb[IFLA_MASTER], &l->master, sizeof(int32_t));
	lr_nl_attr_get(tb[IFLA_TARGET_NETNSID], &l->target_nsid, sizeof(int32_t));
	l->have_mac = !lr_nl_attr_get_exact(tb[IFLA_ADDRESS], l->mac, sizeof(l->mac));
	if (tb[IFLA_LINKINFO]) {
		lr_nl_parse_nested(tb[IFLA_LINKINFO], li, MNL_ARRAY_SIZE(li));
		lr_nl_attr_str(li[IFLA_INFO_KIND], l->kind, sizeof(l->kind));
	}
	/* generic (SKB-mode) XDP does not count: only a driver-mode program gives a veth its NAPI */
	if (tb[IFLA_XDP]) {
		lr_nl_parse_nested(tb[IFLA_XDP], xa, MNL_ARRAY_SIZE(xa));
		lr_nl_attr_get(xa[IFLA_XDP_ATTACHED], &attached, sizeof(attached));
		lr_nl_attr_get(xa[IFLA_XDP_DRV_PROG_ID], &drv_id, sizeof(drv_id));
		l->xdp_native = attached == XDP_ATTACHED_DRV || (attached == XDP_ATTACHED_MULTI && drv_id);
	}
	return 0;
}

int lr_if_link_parse(const void *msg, size_t len, int ifindex, struct lr_if_link *out)
{
	struct link_query q = { .ifindex = ifindex, .out = out };

	return lr_nl_msg_parse(msg, len, link_parse_msg, &q);
}

int lr_if_link_query(int ifindex, int nsid, struct lr_if_link *out)
{
	struct link_query q = { .ifindex = ifindex, .out = out };
	struct lr_nl_req req;
	struct ifinfomsg *ifi;

	link_clear(out);
	ifi = lr_nl_req_init(&req, RTM_GETLINK, 0, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (nsid >= 0)
		mnl_attr_put_u32(&req.nh, IFLA_TARGET_NETNSID, (uint32_t)nsid);
	return lr_nl_talk(NETLINK_ROUTE, &req, link_parse_msg, &q);
}

int lr_if_link_get(const struct lr_if *ifc, struct lr_if_link *out)
{
	return lr_if_link_query(ifc->ifindex, -1, out);
}

int lr_if_veth_peer(const struct lr_if *ifc, struct lr_if_link *peer)
{
	struct lr_if_link self;
	int err;

	err = lr_if_link_get(ifc, &self);
	if (err) {
		pr_debug("%s: RTM_GETLINK: %s\n", ifc->name, strerror(-err));
		return err;
	}
	if (strcmp(self.kind, "veth") || self.link <= 0)
		return -ENOENT;

	err = lr_if_link_query(self.link, self.link_nsid, peer);
	if (err) {
		pr_debug("%s: cannot look up veth peer ifindex %d (netns id %d): %s\n", ifc->name,
			 self.link, self.link_nsid, strerror(-err));
		return -ENOENT;
	}
	/*
	 * A kernel before 4.20 ignores IFLA_TARGET_NETNSID and answers about a
	 * device of the same index in our own namespace; it then does not echo
	 * the attribute back. The peer must also point back at us.
	 */
	if ((self.link_nsid >= 0 && peer->target_nsid != self.link_nsid) || peer->link != ifc->ifindex) {
		pr_debug("%s: veth peer lookup answered about another device, ignored\n", ifc->name);
		return -ENOENT;
	}
	return 0;
}

const char *lr_if_operstate_name(unsigned int operstate)
{
	/* IF_OPER_* (RFC 2863) of linux/if.h, which cannot be included next to net/if.h. */
	static const char *const names[] = {
		"unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up",
	};

	return operstate < sizeof(names) / sizeof(names[0]) ? names[operstate] : "unknown";
}
