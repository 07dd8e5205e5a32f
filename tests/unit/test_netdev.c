/* SPDX-License-Identifier: MIT */
/* Unit tests for netdev's rtnetlink parsers: route, neighbour and link answers as the kernel sends them. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cmocka.h>

#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <libmnl/libmnl.h>

#include "sys/netdev.h"

/* One rtnetlink message as the kernel lays it out: header, family header, attributes. */
struct msg {
	union {
		struct nlmsghdr nh;
		uint8_t b[512];
	};
};

static const uint8_t mac_c2[6] = { 0x02, 0x42, 0xc6, 0x12, 0x02, 0x03 };

static void msg_init(struct msg *m, uint16_t type, const void *hdr, size_t len)
{
	struct nlmsghdr *nh;

	memset(m, 0, sizeof(*m));
	nh = mnl_nlmsg_put_header(m->b);
	nh->nlmsg_type = type;
	memcpy(mnl_nlmsg_put_extra_header(nh, len), hdr, len);
}

static void msg_put(struct msg *m, uint16_t type, const void *data, uint16_t len)
{
	assert_true(mnl_attr_put_check(&m->nh, sizeof(m->b), type, len, data));
}

static void msg_put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	msg_put(m, type, &v, sizeof(v));
}

/* An address as the rest of linerate holds it: IPv4 in the first 4 bytes. */
static struct in6_addr addr(int family, const char *text)
{
	struct in6_addr a = { 0 };

	assert_int_equal(inet_pton(family, text, &a), 1);
	return a;
}

static void msg_put_addr(struct msg *m, uint16_t type, int family, const char *text)
{
	struct in6_addr a = addr(family, text);

	msg_put(m, type, a.s6_addr, family == AF_INET ? 4 : 16);
}

/* The answer to RTM_GETROUTE, as the kernel lays it out (rt_fill_info, rt6_fill_node). */
static void route_msg(struct msg *m, int family, uint8_t type, const char *dst, int oif)
{
	struct rtmsg rtm = {
		.rtm_family = family,
		.rtm_dst_len = family == AF_INET ? 32 : 128,
		.rtm_table = RT_TABLE_MAIN,
		.rtm_type = type,
		.rtm_flags = RTM_F_CLONED,
	};

	msg_init(m, RTM_NEWROUTE, &rtm, sizeof(rtm));
	msg_put_u32(m, RTA_TABLE, RT_TABLE_MAIN);
	msg_put_addr(m, RTA_DST, family, dst);
	if (oif)
		msg_put_u32(m, RTA_OIF, oif);
}

static void test_route_onlink(void **state)
{
	struct in6_addr dst = addr(AF_INET, "198.18.2.3"), src = addr(AF_INET, "198.18.2.2");
	struct lr_if_nexthop nh;
	struct msg m;

	(void)state;
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.3", 2);
	msg_put_addr(&m, RTA_PREFSRC, AF_INET, "198.18.2.2");
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), 0);
	assert_int_equal(nh.family, AF_INET);
	assert_false(nh.gateway);
	assert_int_equal(nh.oif, 2);
	assert_int_equal(nh.type, RTN_UNICAST);
	/* on-link: the destination is its own next hop */
	assert_memory_equal(&nh.addr, &dst, sizeof(dst));
	/* the source the kernel would pick: what a sender found by its route sends from */
	assert_true(nh.have_src);
	assert_memory_equal(&nh.src, &src, sizeof(src));

	/* without one, none is made up */
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.3", 2);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), 0);
	assert_false(nh.have_src);

	/* a source of the wrong length is a broken answer */
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.3", 2);
	msg_put_addr(&m, RTA_PREFSRC, AF_INET6, "fd00::2");
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), -EBADMSG);
}

static void test_route_gateway(void **state)
{
	struct in6_addr dst = addr(AF_INET, "198.18.200.5"), gw = addr(AF_INET, "198.18.2.1");
	struct in6_addr dst6 = addr(AF_INET6, "2001:2:0:1::5"), gw6 = addr(AF_INET6, "fe80::1");
	struct lr_if_nexthop nh;
	struct msg m;

	(void)state;
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.200.5", 3);
	msg_put_addr(&m, RTA_GATEWAY, AF_INET, "198.18.2.1");
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), 0);
	assert_true(nh.gateway);
	assert_int_equal(nh.family, AF_INET);
	assert_int_equal(nh.oif, 3);
	assert_memory_equal(&nh.addr, &gw, sizeof(gw));

	route_msg(&m, AF_INET6, RTN_UNICAST, "2001:2:0:1::5", 4);
	msg_put_addr(&m, RTA_GATEWAY, AF_INET6, "fe80::1");
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET6, &dst6, &nh), 0);
	assert_true(nh.gateway);
	assert_int_equal(nh.family, AF_INET6);
	assert_int_equal(nh.oif, 4);
	assert_memory_equal(&nh.addr, &gw6, sizeof(gw6));
}

/* An IPv4 route through an IPv6 gateway (RFC 5549): the neighbour to find is an IPv6 one. */
static void test_route_via(void **state)
{
	struct in6_addr dst = addr(AF_INET, "198.18.200.5"), gw6 = addr(AF_INET6, "fe80::2");
	struct lr_if_nexthop nh;
	uint8_t via[2 + 16];
	uint16_t fam = AF_INET6;
	struct msg m;

	(void)state;
	memcpy(via, &fam, sizeof(fam));
	memcpy(via + 2, gw6.s6_addr, 16);
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.200.5", 2);
	msg_put(&m, RTA_VIA, via, sizeof(via));
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), 0);
	assert_true(nh.gateway);
	assert_int_equal(nh.family, AF_INET6);
	assert_memory_equal(&nh.addr, &gw6, sizeof(gw6));

	/* a via of the wrong length is a broken answer, not a next hop */
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.200.5", 2);
	msg_put(&m, RTA_VIA, via, 2 + 4);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), -EBADMSG);
}

static void test_route_other(void **state)
{
	struct in6_addr dst = addr(AF_INET, "198.18.2.3"), own = addr(AF_INET, "198.18.2.2");
	struct lr_if_nexthop nh;
	struct msg m;

	(void)state;
	/* our own address: the kernel routes it to lo; the caller refuses that type */
	route_msg(&m, AF_INET, RTN_LOCAL, "198.18.2.2", 1);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &own, &nh), 0);
	assert_int_equal(nh.type, RTN_LOCAL);
	assert_int_equal(nh.oif, 1);

	/* about another destination, another family, or not a route at all: not ours */
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.4", 2);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), -ENOENT);
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.3", 2);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET6, &dst, &nh), -ENOENT);
	m.nh.nlmsg_type = RTM_NEWLINK;
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), -ENOENT);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_PACKET, &dst, &nh), -EAFNOSUPPORT);

	/* no outgoing interface, a gateway of the wrong size, a message cut short */
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.3", 0);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), -EBADMSG);
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.3", 2);
	msg_put_addr(&m, RTA_GATEWAY, AF_INET6, "fe80::1");
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len, AF_INET, &dst, &nh), -EBADMSG);
	route_msg(&m, AF_INET, RTN_UNICAST, "198.18.2.3", 2);
	assert_int_equal(lr_if_route_parse(&m, m.nh.nlmsg_len - 4, AF_INET, &dst, &nh), -EBADMSG);
	assert_int_equal(lr_if_route_parse(&m, 8, AF_INET, &dst, &nh), -EBADMSG);
}

/* An RTM_NEWNEIGH message, the answer to RTM_GETNEIGH and the event alike (neigh_fill_info). */
static void neigh_msg(struct msg *m, int family, int ifindex, uint16_t nud, const char *dst,
		      const uint8_t *lladdr)
{
	struct nda_cacheinfo ci = { .ndm_refcnt = 1 };
	struct ndmsg ndm = {
		.ndm_family = family,
		.ndm_ifindex = ifindex,
		.ndm_state = nud,
		.ndm_type = RTN_UNICAST,
	};

	msg_init(m, RTM_NEWNEIGH, &ndm, sizeof(ndm));
	msg_put_addr(m, NDA_DST, family, dst);
	if (lladdr)
		msg_put(m, NDA_LLADDR, lladdr, 6);
	msg_put_u32(m, NDA_PROBES, 1);
	msg_put(m, NDA_CACHEINFO, &ci, sizeof(ci));
}

static void test_neigh_states(void **state)
{
	struct in6_addr a = addr(AF_INET, "198.18.2.3");
	struct lr_if_neigh n;
	struct msg m;

	(void)state;
	/* while the kernel is asking: no address yet, keep waiting */
	neigh_msg(&m, AF_INET, 2, NUD_INCOMPLETE, "198.18.2.3", NULL);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), 0);
	assert_int_equal(n.state, NUD_INCOMPLETE);
	assert_false(n.have_mac);
	assert_false(lr_if_neigh_usable(&n));

	/* answered */
	neigh_msg(&m, AF_INET, 2, NUD_REACHABLE, "198.18.2.3", mac_c2);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), 0);
	assert_int_equal(n.state, NUD_REACHABLE);
	assert_true(n.have_mac);
	assert_memory_equal(n.mac, mac_c2, 6);
	assert_true(lr_if_neigh_usable(&n));

	/* STALE, DELAY, PROBE and PERMANENT still vouch for the address */
	n.state = NUD_STALE;
	assert_true(lr_if_neigh_usable(&n));
	n.state = NUD_DELAY;
	assert_true(lr_if_neigh_usable(&n));
	n.state = NUD_PROBE;
	assert_true(lr_if_neigh_usable(&n));
	n.state = NUD_PERMANENT;
	assert_true(lr_if_neigh_usable(&n));

	/* given up on: the kernel may keep the old address in a FAILED entry, which must not be used */
	neigh_msg(&m, AF_INET, 2, NUD_FAILED, "198.18.2.3", mac_c2);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), 0);
	assert_int_equal(n.state, NUD_FAILED);
	assert_false(lr_if_neigh_usable(&n));
	n.state = NUD_NONE;
	assert_false(lr_if_neigh_usable(&n));
}

static void test_neigh_macs(void **state)
{
	static const uint8_t zero[6], bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct in6_addr a = addr(AF_INET, "198.18.2.3");
	struct lr_if_neigh n;
	struct msg m;

	(void)state;
	/* a NOARP device's entries carry its broadcast or a zero address: no frame goes to those */
	neigh_msg(&m, AF_INET, 2, NUD_NOARP, "198.18.2.3", zero);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), 0);
	assert_false(lr_if_neigh_usable(&n));
	neigh_msg(&m, AF_INET, 2, NUD_PERMANENT, "198.18.2.3", bcast);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), 0);
	assert_false(lr_if_neigh_usable(&n));
}

static void test_neigh_match(void **state)
{
	struct in6_addr a = addr(AF_INET, "198.18.2.3"), a6 = addr(AF_INET6, "2001:2::2");
	struct lr_if_neigh n;
	struct ndmsg ndm = { .ndm_family = AF_INET, .ndm_ifindex = 2, .ndm_state = NUD_REACHABLE };
	struct msg m;

	(void)state;
	neigh_msg(&m, AF_INET6, 5, NUD_STALE, "2001:2::2", mac_c2);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 5, AF_INET6, &a6, &n), 0);
	assert_true(lr_if_neigh_usable(&n));

	/* another interface, another address, another family: not the entry asked about */
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 4, AF_INET6, &a6, &n), -ENOENT);
	neigh_msg(&m, AF_INET, 2, NUD_REACHABLE, "198.18.2.4", mac_c2);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), -ENOENT);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET6, &a, &n), -ENOENT);
	m.nh.nlmsg_type = RTM_DELNEIGH;
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), -ENOENT);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_UNSPEC, &a, &n), -EAFNOSUPPORT);

	/* no NDA_DST, or one of the wrong size; a length longer than the buffer */
	msg_init(&m, RTM_NEWNEIGH, &ndm, sizeof(ndm));
	msg_put(&m, NDA_LLADDR, mac_c2, 6);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), -EBADMSG);
	msg_put_addr(&m, NDA_DST, AF_INET6, "2001:2::2");
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len, 2, AF_INET, &a, &n), -EBADMSG);
	neigh_msg(&m, AF_INET, 2, NUD_REACHABLE, "198.18.2.3", mac_c2);
	assert_int_equal(lr_if_neigh_parse(&m, m.nh.nlmsg_len - 1, 2, AF_INET, &a, &n), -EBADMSG);
}

/* An RTM_NEWLINK message, the answer to RTM_GETLINK (rtnl_fill_ifinfo), without the nest. */
static void link_msg(struct msg *m, int ifindex, const char *name, const uint8_t *mac)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex, .ifi_flags = 0x11043 };
	uint8_t up = 6;	/* IF_OPER_UP */

	msg_init(m, RTM_NEWLINK, &ifi, sizeof(ifi));
	msg_put(m, IFLA_IFNAME, name, (uint16_t)(strlen(name) + 1));
	msg_put_u32(m, IFLA_TXQLEN, 1000);
	msg_put(m, IFLA_OPERSTATE, &up, sizeof(up));
	msg_put_u32(m, IFLA_MTU, 1500);
	if (mac)
		msg_put(m, IFLA_ADDRESS, mac, 6);
}

/* IFLA_LINKINFO with IFLA_INFO_KIND (and, for a port, IFLA_INFO_SLAVE_KIND), as the kernel nests it. */
static void link_put_kind(struct msg *m, const char *kind, const char *slave_kind)
{
	struct nlattr *nest = mnl_attr_nest_start_check(&m->nh, sizeof(m->b), IFLA_LINKINFO);

	assert_non_null(nest);
	assert_true(mnl_attr_put_strz_check(&m->nh, sizeof(m->b), IFLA_INFO_KIND, kind));
	if (slave_kind)
		assert_true(mnl_attr_put_strz_check(&m->nh, sizeof(m->b), IFLA_INFO_SLAVE_KIND, slave_kind));
	mnl_attr_nest_end(&m->nh, nest);
}

/* A veth whose peer lives in the namespace ours calls 2; and the peer as seen from here through that id. */
static void test_link_veth_peer(void **state)
{
	static const uint8_t peer_mac[6] = { 0x02, 0x42, 0xc6, 0x12, 0x02, 0x09 };
	struct lr_if_link l;
	struct msg m;

	(void)state;
	link_msg(&m, 5, "veth-h", mac_c2);
	msg_put_u32(&m, IFLA_LINK, 9);
	link_put_kind(&m, "veth", NULL);
	msg_put_u32(&m, IFLA_LINK_NETNSID, 2);
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 5, &l), 0);
	assert_int_equal(l.ifindex, 5);
	assert_string_equal(l.name, "veth-h");
	assert_string_equal(l.kind, "veth");
	assert_int_equal(l.operstate, 6);
	assert_string_equal(lr_if_operstate_name(l.operstate), "up");
	assert_int_equal(l.link, 9);
	assert_int_equal(l.link_nsid, 2);
	assert_int_equal(l.master, 0);
	assert_int_equal(l.target_nsid, -1);
	assert_true(l.have_mac);
	assert_memory_equal(l.mac, mac_c2, 6);

	/* the peer, asked for with IFLA_TARGET_NETNSID 2: the kernel echoes the id; it points back at 5 */
	link_msg(&m, 9, "eth0", peer_mac);
	msg_put_u32(&m, IFLA_TARGET_NETNSID, 2);
	msg_put_u32(&m, IFLA_LINK, 5);
	link_put_kind(&m, "veth", NULL);
	msg_put_u32(&m, IFLA_LINK_NETNSID, 0);
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 9, &l), 0);
	assert_string_equal(l.name, "eth0");
	assert_int_equal(l.target_nsid, 2);
	assert_int_equal(l.link, 5);
	assert_int_equal(l.link_nsid, 0);
	assert_memory_equal(l.mac, peer_mac, 6);
}

/* A veth that is a port of bridge 3 in our own namespace: the master is known, no netns id. */
static void test_link_bridge_port(void **state)
{
	struct lr_if_link l;
	struct msg m;

	(void)state;
	link_msg(&m, 11, "veth-br", mac_c2);
	msg_put_u32(&m, IFLA_MASTER, 3);
	msg_put_u32(&m, IFLA_LINK, 12);
	link_put_kind(&m, "veth", "bridge");
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 11, &l), 0);
	assert_string_equal(l.kind, "veth");
	assert_int_equal(l.master, 3);
	assert_int_equal(l.link, 12);
	assert_int_equal(l.link_nsid, -1);
	assert_int_equal(l.target_nsid, -1);
}

static void test_link_plain(void **state)
{
	static const uint8_t long_addr[20] = { 0x80 };
	struct lr_if_link l;
	struct msg m;

	(void)state;
	/* a NIC: no link info, no IFLA_LINK (the kernel leaves it out when it names the device itself) */
	link_msg(&m, 2, "eth0", mac_c2);
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 2, &l), 0);
	assert_string_equal(l.name, "eth0");
	assert_string_equal(l.kind, "");
	assert_int_equal(l.link, 0);
	assert_int_equal(l.link_nsid, -1);
	assert_int_equal(l.master, 0);
	assert_true(l.have_mac);

	/* a device whose address is no MAC (an InfiniBand one has 20 bytes); a kind longer than ours */
	link_msg(&m, 4, "ib0", NULL);
	msg_put(&m, IFLA_ADDRESS, long_addr, sizeof(long_addr));
	link_put_kind(&m, "a-very-long-kind-name", NULL);
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 4, &l), 0);
	assert_false(l.have_mac);
	assert_string_equal(l.kind, "a-very-long-kin");
}

static void test_link_other(void **state)
{
	struct ifinfomsg ifi = { .ifi_index = 2 };
	struct lr_if_link l;
	struct msg m;

	(void)state;
	link_msg(&m, 2, "eth0", mac_c2);
	/* about another device, or not a link at all */
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 3, &l), -ENOENT);
	m.nh.nlmsg_type = RTM_NEWROUTE;
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 2, &l), -ENOENT);
	/* cut short: the buffer ends before the message does, or the message before its family header */
	link_msg(&m, 2, "eth0", mac_c2);
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len - 4, 2, &l), -EBADMSG);
	assert_int_equal(lr_if_link_parse(&m, 8, 2, &l), -EBADMSG);
	msg_init(&m, RTM_NEWLINK, &ifi, sizeof(ifi) - 4);
	assert_int_equal(lr_if_link_parse(&m, m.nh.nlmsg_len, 2, &l), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_onlink),
		cmocka_unit_test(test_route_gateway),
		cmocka_unit_test(test_route_via),
		cmocka_unit_test(test_route_other),
		cmocka_unit_test(test_neigh_states),
		cmocka_unit_test(test_neigh_macs),
		cmocka_unit_test(test_neigh_match),
		cmocka_unit_test(test_link_veth_peer),
		cmocka_unit_test(test_link_bridge_port),
		cmocka_unit_test(test_link_plain),
		cmocka_unit_test(test_link_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
