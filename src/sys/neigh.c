/* SPDX-License-Identifier: MIT */
/* The next hop's MAC: route lookup, the neighbour table, a veth peer, and resolution by the kernel. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "sys/netdev.h"
#include "sys/nl.h"
#include "util/clock.h"
#include "util/log.h"

/* Neighbour states in which the entry carries a usable link-layer address. */
#define NUD_VALID_LLADDR \
	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

/*
 * How long send waits for the kernel to resolve a next hop. The kernel's
 * first solicitation leaves at once and a live host answers within
 * milliseconds; its second one would only leave after retrans_time (1 s).
 */
#define RESOLVE_MS	1000
/* Re-read the entry at least this often, in case the kernel dropped neighbour events (ENOBUFS). */
#define RESOLVE_RECHECK_MS 10

struct neigh_query {
	int ifindex;
	int family;
	const struct in6_addr *addr;
	struct lr_if_neigh *out;
};

struct route_query {
	int family;
	const struct in6_addr *dst;
	struct lr_if_nexthop *out;
};

static bool mac_usable(const uint8_t mac[6])
{
	static const uint8_t zero[6], bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	return memcmp(mac, zero, 6) && memcmp(mac, bcast, 6);
}

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* An address as text for a message; IPv4 lives in the first 4 bytes of @a. */
static const char *addr_str(int family, const struct in6_addr *a, char *buf, size_t len)
{
	if (!inet_ntop(family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

static int route_parse_msg(const struct nlmsghdr *m, void *arg)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(m);
	const struct nlattr *tb[RTA_MAX + 1], *dst;
	const struct route_query *q = arg;
	struct lr_if_nexthop *out = q->out;
	size_t alen = addr_len(q->family);
	int32_t oif;
	int err;

	err = lr_nl_parse(m, RTM_NEWROUTE, sizeof(*rtm), tb, MNL_ARRAY_SIZE(tb));
	if (err)
		return err;
	if (rtm->rtm_family != q->family)
		return -ENOENT;
	/* The answer to a lookup repeats the destination; a route to anything else is not ours. */
	dst = tb[RTA_DST];
	if (dst && (mnl_attr_get_payload_len(dst) != alen || memcmp(mnl_attr_get_payload(dst), q->dst, alen)))
		return -ENOENT;
	if (lr_nl_attr_get(tb[RTA_OIF], &oif, sizeof(oif)))
		return -EBADMSG;

	memset(out, 0, sizeof(*out));
	out->type = rtm->rtm_type;
	out->oif = oif;
	out->family = q->family;
	if (tb[RTA_GATEWAY]) {
		if (lr_nl_attr_get_exact(tb[RTA_GATEWAY], out->addr.s6_addr, alen))
			return -EBADMSG;
		out->gateway = true;
	} else if (tb[RTA_VIA]) {
		/* An IPv4 route through an IPv6 gateway (RFC 5549): that neighbour is found by ND. */
		const struct rtvia *via = mnl_attr_get_payload(tb[RTA_VIA]);
		size_t vlen = mnl_attr_get_payload_len(tb[RTA_VIA]);

		if (vlen < sizeof(*via))
			return -EBADMSG;
		if (via->rtvia_family != AF_INET && via->rtvia_family != AF_INET6)
			return -EAFNOSUPPORT;
		if (vlen - sizeof(*via) != addr_len(via->rtvia_family))
			return -EBADMSG;
		out->family = via->rtvia_family;
		memcpy(out->addr.s6_addr, via->rtvia_addr, vlen - sizeof(*via));
		out->gateway = true;
	} else {
		memcpy(out->addr.s6_addr, q->dst->s6_addr, alen);
	}
	if (tb[RTA_PREFSRC]) {
		if (lr_nl_attr_get_exact(tb[RTA_PREFSRC], out->src.s6_addr, alen))
			return -EBADMSG;
		out->have_src = true;
	}
	return 0;
}

static int neigh_parse_msg(const struct nlmsghdr *m, void *arg)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(m);
	const struct nlattr *tb[NDA_MAX + 1];
	const struct neigh_query *q = arg;
	struct lr_if_neigh *out = q->out;
	size_t alen = addr_len(q->family);
	int err;

	err = lr_nl_parse(m, RTM_NEWNEIGH, sizeof(*ndm), tb, MNL_ARRAY_SIZE(tb));
	if (err)
		return err;
	if (ndm->ndm_ifindex != q->ifindex || ndm->ndm_family != q->family)
		return -ENOENT;
	if (!tb[NDA_DST] || mnl_attr_get_payload_len(tb[NDA_DST]) != alen)
		return -EBADMSG;
	if (memcmp(mnl_attr_get_payload(tb[NDA_DST]), q->addr->s6_addr, alen))
		return -ENOENT;

	memset(out, 0, sizeof(*out));
	out->state = ndm->ndm_state;
	/* An entry still resolving (INCOMPLETE) or given up on (FAILED) has no address yet. */
	out->have_mac = !lr_nl_attr_get_exact(tb[NDA_LLADDR], out->mac, sizeof(out->mac));
	return 0;
}

/* RTM_{GET,NEW,DEL}NEIGH about one address on the interface; the caller may set the state and flags. */
static struct ndmsg *neigh_req_init(struct lr_nl_req *req, uint16_t type, uint16_t flags, const struct lr_if *ifc,
				    int family, const struct in6_addr *addr)
{
	struct ndmsg *ndm = lr_nl_req_init(req, type, flags, sizeof(*ndm));

	ndm->ndm_family = family;
	ndm->ndm_ifindex = ifc->ifindex;
	mnl_attr_put(&req->nh, NDA_DST, addr_len(family), addr->s6_addr);
	return ndm;
}

/* The kernel's entry for @addr on the interface (RTM_GETNEIGH, Linux >= 5.0); -ENOENT when none. */
static int neigh_get(const struct lr_if *ifc, int family, const struct in6_addr *addr,
		     struct lr_if_neigh *n)
{
	struct neigh_query q = { .ifindex = ifc->ifindex, .family = family, .addr = addr, .out = n };
	struct lr_nl_req req;

	neigh_req_init(&req, RTM_GETNEIGH, 0, ifc, family, addr);
	return lr_nl_talk(NETLINK_ROUTE, &req, neigh_parse_msg, &q);
}

/*
 * NTF_USE makes the kernel act as if a packet were waiting for the entry
 * (neigh_add() calls neigh_event_send()): it creates the entry if need be and
 * sends the ARP request or neighbour solicitation itself, from its own
 * address, and the answer fills the table. We send nothing of our own, so no
 * datagram of ours can land in a receiver's counts. The state in the request
 * is NUD_NONE: a permanent one would exempt the entry from garbage collection.
 */
static int neigh_use(const struct lr_if *ifc, int family, const struct in6_addr *addr)
{
	struct lr_nl_req req;
	struct ndmsg *ndm;

	ndm = neigh_req_init(&req, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, ifc, family, addr);
	ndm->ndm_state = NUD_NONE;
	ndm->ndm_flags = NTF_USE;
	return lr_nl_talk(NETLINK_ROUTE, &req, NULL, NULL);
}

static int neigh_del(const struct lr_if *ifc, int family, const struct in6_addr *addr)
{
	struct lr_nl_req req;

	neigh_req_init(&req, RTM_DELNEIGH, 0, ifc, family, addr);
	return lr_nl_talk(NETLINK_ROUTE, &req, NULL, NULL);
}

/*
 * RTM_GETROUTE for @dst leaving through the interface, as `ip route get DST oif IF`; with @ifc
 * NULL, wherever the routing table sends it, as `ip route get DST`.
 */
static int route_get(const struct lr_if *ifc, int family, const struct in6_addr *dst,
		     struct lr_if_nexthop *nh)
{
	struct route_query q = { .family = family, .dst = dst, .out = nh };
	struct lr_nl_req req;
	struct rtmsg *rtm;

	rtm = lr_nl_req_init(&req, RTM_GETROUTE, 0, sizeof(*rtm));
	rtm->rtm_family = family;
	rtm->rtm_dst_len = addr_len(family) * 8;
	mnl_attr_put(&req.nh, RTA_DST, addr_len(family), dst->s6_addr);
	if (ifc)
		mnl_attr_put_u32(&req.nh, RTA_OIF, (uint32_t)ifc->ifindex);
	return lr_nl_talk(NETLINK_ROUTE, &req, route_parse_msg, &q);
}

/* Empties a notification socket: the events only wake us, the entry is read again anyway. */
static void drain(struct mnl_socket *nl)
{
	char buf[8192];
	ssize_t n;

	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		/*
		 * ENOBUFS: the kernel dropped events; ENOSPC: one did not fit.
		 * The next read of the entry makes up for both.
		 */
		if (n > 0 || (n < 0 && (errno == EINTR || errno == ENOBUFS || errno == ENOSPC)))
			continue;
		break;
	}
}

/*
 * Has the kernel resolve @addr on the interface and waits up to RESOLVE_MS.
 * 0 with the MAC; -ETIMEDOUT when nothing answered in time; -EHOSTUNREACH
 * when the kernel gave up (FAILED); -EEXIST for a permanent or NOARP entry
 * without a usable MAC (NTF_USE would strip its permanence); -EINTR on a stop
 * signal; another -errno when the kernel could not be asked.
 */
static int neigh_resolve(const struct lr_if *ifc, int family, const struct in6_addr *addr,
			 uint8_t mac[6])
{
	struct pollfd pfd = { .events = POLLIN };
	bool created = false;
	struct mnl_socket *nl;
	struct lr_if_neigh n;
	int64_t deadline, left;
	int err;

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!nl)
		return -errno;
	pfd.fd = mnl_socket_get_fd(nl);
	/* Listening before asking, so that no change of the entry falls between the request and the wait. */
	if (mnl_socket_bind(nl, RTMGRP_NEIGH, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto out;
	}
	err = neigh_get(ifc, family, addr, &n);
	if (err == -ENOENT) {
		created = true;
	} else if (err) {
		goto out;
	} else if (n.state & (NUD_PERMANENT | NUD_NOARP)) {
		err = -EEXIST;
		goto out;
	}
	err = neigh_use(ifc, family, addr);
	if (err)
		goto out;

	deadline = lr_now_ms() + RESOLVE_MS;
	for (;;) {
		err = neigh_get(ifc, family, addr, &n);
		if (!err && lr_if_neigh_usable(&n)) {
			memcpy(mac, n.mac, 6);
			break;
		}
		if (!err && (n.state & NUD_FAILED)) {
			err = -EHOSTUNREACH;
			break;
		}
		/* -ENOENT: the entry went away (flushed); it is asked for once only, so wait it out */
		if (err && err != -ENOENT)
			break;
		if (lr_stop) {
			err = -EINTR;
			break;
		}
		left = deadline - lr_now_ms();
		if (left <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, left < RESOLVE_RECHECK_MS ? (int)left : RESOLVE_RECHECK_MS) < 0 &&
		    errno != EINTR) {
			err = -errno;
			break;
		}
		drain(nl);
	}
	pr_debug("%s: resolving took %lld ms: %s\n", ifc->name,
		 (long long)(lr_now_ms() - deadline + RESOLVE_MS), err ? strerror(-err) : "resolved");
out:
	/*
	 * The kernel would go on asking (mcast_probes, one a second) and put
	 * stray requests on the link after we are gone: remove an entry we made.
	 */
	if (err && created)
		neigh_del(ifc, family, addr);
	mnl_socket_close(nl);
	return err;
}

/* "WHAT, gateway G" for send's summary; the address left out where it would not fit. */
static void how_msg(char *how, size_t len, const char *what, const struct lr_if_nexthop *nh)
{
	char gw[INET6_ADDRSTRLEN];
	int n;

	if (!how || !len)
		return;
	if (!nh->gateway) {
		snprintf(how, len, "%s", what);
		return;
	}
	n = snprintf(how, len, "%s, gateway %s", what, addr_str(nh->family, &nh->addr, gw, sizeof(gw)));
	if (n < 0 || (size_t)n >= len)
		snprintf(how, len, "%s, of the gateway", what);
}

static const char *rtn_name(unsigned int type)
{
	switch (type) {
	case RTN_LOCAL:
		return "local";
	case RTN_BROADCAST:
		return "broadcast";
	case RTN_ANYCAST:
		return "anycast";
	case RTN_MULTICAST:
		return "multicast";
	case RTN_BLACKHOLE:
		return "blackhole";
	case RTN_UNREACHABLE:
		return "unreachable";
	case RTN_PROHIBIT:
		return "prohibit";
	}
	return "non-unicast";
}

/*
 * Why the route lookup gives no next hop on this interface to resolve, or ""
 * when it does. @ret is route_get()'s result.
 */
static void route_problem(const struct lr_if *ifc, const char *dstr, int ret,
			  const struct lr_if_nexthop *nh, char *why, size_t len)
{
	char name[IF_NAMESIZE];

	why[0] = '\0';
	if (ret)
		snprintf(why, len, "no route to %s leaves through %s (%s)", dstr, ifc->name, strerror(-ret));
	else if (nh->type == RTN_LOCAL)
		snprintf(why, len, "%s is an address of this host", dstr);
	else if (nh->type != RTN_UNICAST)
		snprintf(why, len, "%s is a %s destination, not one host", dstr, rtn_name(nh->type));
	else if (nh->oif != ifc->ifindex)
		snprintf(why, len, "no route to %s leaves through %s (the kernel routes it through %s)", dstr,
			 ifc->name, if_indextoname(nh->oif, name) ? name : "another interface");
}

int lr_if_route_to(int family, const struct in6_addr *dst, char ifname[IF_NAMESIZE], struct lr_if_nexthop *nh,
		   char *err, size_t errlen)
{
	char dstr[INET6_ADDRSTRLEN];
	int ret;

	if (family != AF_INET && family != AF_INET6) {
		lr_msg(err, errlen, "a route for address family %d: only IPv4 and IPv6 have one", family);
		return -EAFNOSUPPORT;
	}
	addr_str(family, dst, dstr, sizeof(dstr));
	ret = route_get(NULL, family, dst, nh);
	if (ret) {
		lr_msg(err, errlen, "no route to %s in this network namespace (%s)", dstr, strerror(-ret));
		return ret;
	}
	if (nh->type == RTN_LOCAL) {
		lr_msg(err, errlen, "%s is an address of this host, not another one to send to", dstr);
		return -EINVAL;
	}
	if (nh->type != RTN_UNICAST) {
		lr_msg(err, errlen, "the route to %s is a %s one: no one host to send to", dstr, rtn_name(nh->type));
		return -EHOSTUNREACH;
	}
	if (!if_indextoname((unsigned int)nh->oif, ifname)) {
		ret = -errno;
		lr_msg(err, errlen, "the route to %s leaves through ifindex %d, which has no name here: %s", dstr,
		       nh->oif, strerror(-ret));
		return ret;
	}
	return 0;
}

/* The veth peer's MAC, when the interface is a veth and its peer no bridge port. */
static int veth_peer_mac(const struct lr_if *ifc, uint8_t mac[6], char *how, size_t howlen)
{
	struct lr_if_link peer;

	if (lr_if_veth_peer(ifc, &peer))
		return -ENOENT;
	if (peer.master) {
		pr_debug("%s: veth peer %s is a port of ifindex %d; its MAC is not the next hop\n",
			 ifc->name, peer.name, peer.master);
		return -ENOENT;
	}
	if (!peer.have_mac || !mac_usable(peer.mac))
		return -ENOENT;
	memcpy(mac, peer.mac, 6);
	lr_msg(how, howlen, "veth peer %s", peer.name[0] ? peer.name : "(unnamed)");
	return 0;
}

int lr_if_dst_mac(const struct lr_if *ifc, int family, const struct in6_addr *dst, uint8_t mac[6],
		  char *how, size_t howlen, char *err, size_t errlen)
{
	char dstr[INET6_ADDRSTRLEN], hstr[INET6_ADDRSTRLEN], why[160], what[48];
	struct lr_if_nexthop nh;
	struct lr_if_neigh n;
	const char *proto;
	int ret;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (!dst) {
		if (!veth_peer_mac(ifc, mac, how, howlen))
			return 0;
		lr_msg(err, errlen, "no MAC address known for %s's next hop (no veth peer outside a bridge): give --dst-mac",
		       ifc->name);
		return -ENOENT;
	}
	addr_str(family, dst, dstr, sizeof(dstr));

	/* The MAC to find is the next hop's: the gateway's when the route has one. */
	ret = route_get(ifc, family, dst, &nh);
	route_problem(ifc, dstr, ret, &nh, why, sizeof(why));
	if (why[0]) {
		pr_debug("%s: %s\n", ifc->name, why);
		/* Nothing to resolve, but a neighbour entry or a veth peer may still know the MAC. */
		memset(&nh, 0, sizeof(nh));
		nh.family = family;
		nh.addr = *dst;
	}
	addr_str(nh.family, &nh.addr, hstr, sizeof(hstr));

	ret = neigh_get(ifc, nh.family, &nh.addr, &n);
	if (!ret && lr_if_neigh_usable(&n)) {
		memcpy(mac, n.mac, 6);
		how_msg(how, howlen, "neighbour table", &nh);
		return 0;
	}
	if (ret && ret != -ENOENT)
		pr_debug("%s: neighbour lookup for %s failed: %s\n", ifc->name, hstr, strerror(-ret));
	if (!veth_peer_mac(ifc, mac, how, howlen))
		return 0;
	if (why[0]) {
		lr_msg(err, errlen, "no MAC address known for %s on %s: %s, and neither the neighbour table nor a veth peer knows one: give --dst-mac",
		       dstr, ifc->name, why);
		return -ENOENT;
	}

	proto = nh.family == AF_INET ? "ARP" : "neighbour discovery";
	pr_debug("%s: resolving %s (%s) by %s\n", ifc->name, hstr, nh.gateway ? "gateway" : "on-link", proto);
	ret = neigh_resolve(ifc, nh.family, &nh.addr, mac);
	if (!ret) {
		snprintf(what, sizeof(what), "%s (resolved now)", proto);
		how_msg(how, howlen, what, &nh);
		return 0;
	}
	switch (ret) {
	case -ETIMEDOUT:
		snprintf(why, sizeof(why), "no %s answer within %d s", proto, RESOLVE_MS / 1000);
		break;
	case -EHOSTUNREACH:
		snprintf(why, sizeof(why), "%s failed", proto);
		break;
	case -EINTR:
		snprintf(why, sizeof(why), "interrupted");
		break;
	case -EEXIST:
		snprintf(why, sizeof(why), "its neighbour entry is permanent or NOARP and has no usable MAC");
		break;
	default:
		snprintf(why, sizeof(why), "cannot ask the kernel to resolve it: %s", strerror(-ret));
		break;
	}
	if (nh.gateway)
		lr_msg(err, errlen, "cannot resolve the MAC address of %s on %s (next hop: gateway %s; %s): %sgive --dst-mac to skip resolution",
		       dstr, ifc->name, hstr, why, ret == -ETIMEDOUT || ret == -EHOSTUNREACH ? "is the gateway up? " : "");
	else
		lr_msg(err, errlen, "cannot resolve the MAC address of %s on %s (on-link; %s): %sgive --dst-mac to skip resolution",
		       dstr, ifc->name, why, ret == -ETIMEDOUT || ret == -EHOSTUNREACH ? "is the host up? " : "");
	return ret;
}

bool lr_if_neigh_usable(const struct lr_if_neigh *n)
{
	return (n->state & NUD_VALID_LLADDR) && n->have_mac && mac_usable(n->mac);
}

int lr_if_neigh_parse(const void *msg, size_t len, int ifindex, int family, const struct in6_addr *addr,
		      struct lr_if_neigh *out)
{
	struct neigh_query q = { .ifindex = ifindex, .family = family, .addr = addr, .out = out };

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	return lr_nl_msg_parse(msg, len, neigh_parse_msg, &q);
}

int lr_if_route_parse(const void *msg, size_t len, int family, const struct in6_addr *dst,
		      struct lr_if_nexthop *out)
{
	struct route_query q = { .family = family, .dst = dst, .out = out };

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	return lr_nl_msg_parse(msg, len, route_parse_msg, &q);
}
