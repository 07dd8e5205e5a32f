/* SPDX-License-Identifier: MIT */
/* Interface facts from ioctl, sysfs and rtnetlink: index, MTU, queues, addresses, next-hop MAC. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include "sys/netdev.h"
#include "util/log.h"

#define SYSFS_NET "/sys/class/net"

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

/* Large enough for a full page of dump messages; the kernel never sends more per datagram. */
#define NL_BUFSZ 32768

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

/* More counters than any driver has; a larger count is a corrupt answer, not an allocation to make. */
#define ETHTOOL_STATS_MAX	65536

struct nl_req {
	struct nlmsghdr nh;
	union {
		struct ndmsg ndm;
		struct ifinfomsg ifi;
		struct rtmsg rtm;
	};
	char attrs[64];
};

struct neigh_query {
	int ifindex;
	int family;
	const struct in6_addr *addr;
	int err;	/* -ENOENT until an answer about @addr arrived */
	struct lr_if_neigh n;
};

struct route_query {
	int family;
	const struct in6_addr *dst;
	int err;	/* -ENOENT until an answer about @dst arrived */
	struct lr_if_nexthop nh;
};

struct genl_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

struct genl_family_query {
	bool have;
	uint16_t id;
};

struct xdp_query {
	int ifindex;
	uint16_t family;
	int err;
	bool have;
	struct lr_if_xdp xdp;
};

struct link_facts {
	bool have;
	struct lr_if_link *out;
};

struct link_info {
	bool have;
	bool is_veth;
	int link;	/* IFLA_LINK: for a veth, the peer's ifindex */
	int link_nsid;	/* IFLA_LINK_NETNSID, -1 if absent (peer in our netns) */
	int master;	/* IFLA_MASTER, 0 if none */
	int tgt_nsid;	/* IFLA_TARGET_NETNSID echoed by the kernel, -1 if absent */
	bool have_mac;
	uint8_t mac[6];
	char name[IF_NAMESIZE];
};


static bool mac_usable(const uint8_t mac[6])
{
	static const uint8_t zero[6], bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	return memcmp(mac, zero, 6) && memcmp(mac, bcast, 6);
}

static void count_queues(const char *name, unsigned int *tx, unsigned int *rx)
{
	char path[128];
	struct dirent *de;
	DIR *dir;

	*tx = 0;
	*rx = 0;
	snprintf(path, sizeof(path), SYSFS_NET "/%s/queues", name);
	dir = opendir(path);
	if (!dir) {
		pr_debug("%s: cannot list %s: %s; assuming one queue each way\n", name, path,
			 strerror(errno));
	} else {
		while ((de = readdir(dir))) {
			if (!strncmp(de->d_name, "tx-", 3))
				(*tx)++;
			else if (!strncmp(de->d_name, "rx-", 3))
				(*rx)++;
		}
		closedir(dir);
	}
	if (!*tx)
		*tx = 1;
	if (!*rx)
		*rx = 1;
}

static void read_driver(int fd, const char *name, char *drv, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	size_t n;
	struct ifreq ifr = { 0 };

	drv[0] = '\0';
	memcpy(ifr.ifr_name, name, strlen(name) + 1);
	ifr.ifr_data = (void *)&info;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0) {
		pr_debug("%s: ETHTOOL_GDRVINFO: %s; driver unknown\n", name, strerror(errno));
		return;
	}
	n = strnlen(info.driver, sizeof(info.driver));
	if (n >= len)
		n = len - 1;
	memcpy(drv, info.driver, n);
	drv[n] = '\0';
}

/* rtnetlink plumbing: just enough to send one request and walk the answers. */

static void nl_put_attr(struct nlmsghdr *nh, size_t cap, int type, const void *data, size_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	/* Requests are built from constants in this file; overflowing is a programming error. */
	if (NLMSG_ALIGN(nh->nlmsg_len) + RTA_SPACE(len) > cap)
		return;
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_SPACE(len);
}

static void nl_parse_attrs(struct rtattr **tb, int max, struct rtattr *rta, int len)
{
	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		int type = rta->rta_type & NLA_TYPE_MASK;

		if (type <= max && !tb[type])
			tb[type] = rta;
	}
}

static int nl_attr_s32(const struct rtattr *rta, int *out)
{
	if (!rta || RTA_PAYLOAD(rta) < sizeof(int32_t))
		return -EINVAL;
	memcpy(out, RTA_DATA(rta), sizeof(int32_t));
	return 0;
}

/*
 * Send @nh on a fresh netlink socket of protocol @proto and feed every answer
 * to @cb (if any) until NLMSG_DONE (dumps) or the acknowledgement (single
 * requests, sent with NLM_F_ACK).
 */
static int nl_talk_proto(int proto, struct nlmsghdr *nh, void (*cb)(const struct nlmsghdr *, void *),
			 void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	bool done = false;
	char *buf = NULL;
	int fd, err = 0;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -errno;
	buf = malloc(NL_BUFSZ);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	nh->nlmsg_seq = 1;
	if (sendto(fd, nh, nh->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	while (!done) {
		struct nlmsghdr *m;

		n = recv(fd, buf, NL_BUFSZ, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (n == 0) {
			err = -EPIPE;
			goto out;
		}
		for (m = (struct nlmsghdr *)buf; NLMSG_OK(m, n); m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_seq != nh->nlmsg_seq)
				continue;
			if (m->nlmsg_type == NLMSG_DONE) {
				int rc = 0;

				/* Since 4.x the DONE message carries the dump's status. */
				if (m->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					memcpy(&rc, NLMSG_DATA(m), sizeof(int));
				if (rc < 0 && !err)
					err = rc;
				done = true;
				break;
			}
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(m);

				if (m->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
					if (!err)
						err = -EBADMSG;
				} else if (e->error && !err) {
					err = e->error;
				}
				done = true;
				break;
			}
			/* Keep reading a dump to its end even after an error, then report it. */
			if (!err && cb)
				cb(m, arg);
		}
	}
out:
	free(buf);
	close(fd);
	return err;
}

static int nl_talk(struct nlmsghdr *nh, void (*cb)(const struct nlmsghdr *, void *), void *arg)
{
	return nl_talk_proto(NETLINK_ROUTE, nh, cb, arg);
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

/* One RTM_NEWROUTE message whose length the caller checked. */
static int route_parse_msg(const struct nlmsghdr *m, int family, const struct in6_addr *dst,
			   struct lr_if_nexthop *out)
{
	struct rtattr *tb[RTA_MAX + 1];
	const struct rtmsg *rtm;
	size_t alen = addr_len(family);
	int oif;

	if (m->nlmsg_type != RTM_NEWROUTE)
		return -ENOENT;
	if (m->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EBADMSG;
	rtm = NLMSG_DATA(m);
	if (rtm->rtm_family != family)
		return -ENOENT;
	nl_parse_attrs(tb, RTA_MAX, RTM_RTA(rtm), m->nlmsg_len - NLMSG_LENGTH(sizeof(*rtm)));
	/* The answer to a lookup repeats the destination; a route to anything else is not ours. */
	if (tb[RTA_DST] && (RTA_PAYLOAD(tb[RTA_DST]) != alen ||
			    memcmp(RTA_DATA(tb[RTA_DST]), dst->s6_addr, alen)))
		return -ENOENT;
	if (nl_attr_s32(tb[RTA_OIF], &oif))
		return -EBADMSG;

	memset(out, 0, sizeof(*out));
	out->type = rtm->rtm_type;
	out->oif = oif;
	out->family = family;
	if (tb[RTA_GATEWAY]) {
		if (RTA_PAYLOAD(tb[RTA_GATEWAY]) != alen)
			return -EBADMSG;
		memcpy(out->addr.s6_addr, RTA_DATA(tb[RTA_GATEWAY]), alen);
		out->gateway = true;
	} else if (tb[RTA_VIA]) {
		/* An IPv4 route through an IPv6 gateway (RFC 5549): that neighbour is found by ND. */
		const struct rtvia *via = RTA_DATA(tb[RTA_VIA]);
		size_t vlen = RTA_PAYLOAD(tb[RTA_VIA]);

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
		memcpy(out->addr.s6_addr, dst->s6_addr, alen);
	}
	return 0;
}

/* One RTM_NEWNEIGH message whose length the caller checked. */
static int neigh_parse_msg(const struct nlmsghdr *m, int ifindex, int family,
			   const struct in6_addr *addr, struct lr_if_neigh *out)
{
	struct rtattr *tb[NDA_MAX + 1];
	const struct ndmsg *ndm;
	size_t alen = addr_len(family);

	if (m->nlmsg_type != RTM_NEWNEIGH)
		return -ENOENT;
	if (m->nlmsg_len < NLMSG_LENGTH(sizeof(*ndm)))
		return -EBADMSG;
	ndm = NLMSG_DATA(m);
	if (ndm->ndm_ifindex != ifindex || ndm->ndm_family != family)
		return -ENOENT;
	nl_parse_attrs(tb, NDA_MAX, (struct rtattr *)((char *)ndm + NLMSG_ALIGN(sizeof(*ndm))),
		       m->nlmsg_len - NLMSG_LENGTH(sizeof(*ndm)));
	if (!tb[NDA_DST] || RTA_PAYLOAD(tb[NDA_DST]) != alen)
		return -EBADMSG;
	if (memcmp(RTA_DATA(tb[NDA_DST]), addr->s6_addr, alen))
		return -ENOENT;

	memset(out, 0, sizeof(*out));
	out->state = ndm->ndm_state;
	/* An entry still resolving (INCOMPLETE) or given up on (FAILED) has no address yet. */
	if (tb[NDA_LLADDR] && RTA_PAYLOAD(tb[NDA_LLADDR]) == 6) {
		memcpy(out->mac, RTA_DATA(tb[NDA_LLADDR]), 6);
		out->have_mac = true;
	}
	return 0;
}

static void neigh_cb(const struct nlmsghdr *m, void *arg)
{
	struct neigh_query *q = arg;

	if (q->err == -ENOENT)
		q->err = neigh_parse_msg(m, q->ifindex, q->family, q->addr, &q->n);
}

static void route_cb(const struct nlmsghdr *m, void *arg)
{
	struct route_query *q = arg;

	if (q->err == -ENOENT)
		q->err = route_parse_msg(m, q->family, q->dst, &q->nh);
}

/* RTM_{GET,NEW,DEL}NEIGH about one address on the interface; always acknowledged. */
static void neigh_req_init(struct nl_req *req, uint16_t type, uint16_t flags, const struct lr_if *ifc,
			   int family, const struct in6_addr *addr)
{
	memset(req, 0, sizeof(*req));
	req->nh.nlmsg_len = NLMSG_LENGTH(sizeof(req->ndm));
	req->nh.nlmsg_type = type;
	req->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	req->ndm.ndm_family = family;
	req->ndm.ndm_ifindex = ifc->ifindex;
	nl_put_attr(&req->nh, sizeof(*req), NDA_DST, addr->s6_addr, addr_len(family));
}

/* The kernel's entry for @addr on the interface (RTM_GETNEIGH, Linux >= 5.0); -ENOENT when none. */
static int neigh_get(const struct lr_if *ifc, int family, const struct in6_addr *addr,
		     struct lr_if_neigh *n)
{
	struct neigh_query q = { .ifindex = ifc->ifindex, .family = family, .addr = addr, .err = -ENOENT };
	struct nl_req req;
	int err;

	neigh_req_init(&req, RTM_GETNEIGH, 0, ifc, family, addr);
	err = nl_talk(&req.nh, neigh_cb, &q);
	if (err)
		return err;
	if (q.err)
		return q.err;
	*n = q.n;
	return 0;
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
	struct nl_req req;

	neigh_req_init(&req, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, ifc, family, addr);
	req.ndm.ndm_state = NUD_NONE;
	req.ndm.ndm_flags = NTF_USE;
	return nl_talk(&req.nh, NULL, NULL);
}

static int neigh_del(const struct lr_if *ifc, int family, const struct in6_addr *addr)
{
	struct nl_req req;

	neigh_req_init(&req, RTM_DELNEIGH, 0, ifc, family, addr);
	return nl_talk(&req.nh, NULL, NULL);
}

/* RTM_GETROUTE for @dst leaving through the interface, as `ip route get DST oif IF`. */
static int route_get(const struct lr_if *ifc, int family, const struct in6_addr *dst,
		     struct lr_if_nexthop *nh)
{
	struct route_query q = { .family = family, .dst = dst, .err = -ENOENT };
	uint32_t oif = ifc->ifindex;
	struct nl_req req = { 0 };
	int err;

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.rtm));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.rtm.rtm_family = family;
	req.rtm.rtm_dst_len = addr_len(family) * 8;
	/* &req rather than &req.nh: the attributes go past the header, and GCC checks writes against it */
	nl_put_attr((struct nlmsghdr *)&req, sizeof(req), RTA_DST, dst->s6_addr, addr_len(family));
	nl_put_attr((struct nlmsghdr *)&req, sizeof(req), RTA_OIF, &oif, sizeof(oif));
	err = nl_talk(&req.nh, route_cb, &q);
	if (err)
		return err;
	if (q.err)
		return q.err;
	*nh = q.nh;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Empties a notification socket: the events only wake us, the entry is read again anyway. */
static void drain(int fd)
{
	char buf[8192];
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		/* ENOBUFS: the kernel dropped events; the next read of the entry makes up for them */
		if (n > 0 || (n < 0 && (errno == EINTR || errno == ENOBUFS)))
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
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_NEIGH };
	struct pollfd pfd = { .events = POLLIN };
	bool created = false;
	struct lr_if_neigh n;
	int64_t deadline, left;
	int err;

	pfd.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (pfd.fd < 0)
		return -errno;
	/* Listening before asking, so that no change of the entry falls between the request and the wait. */
	if (bind(pfd.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
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

	deadline = now_ms() + RESOLVE_MS;
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
		left = deadline - now_ms();
		if (left <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, left < RESOLVE_RECHECK_MS ? (int)left : RESOLVE_RECHECK_MS) < 0 &&
		    errno != EINTR) {
			err = -errno;
			break;
		}
		drain(pfd.fd);
	}
	pr_debug("%s: resolving took %lld ms: %s\n", ifc->name,
		 (long long)(now_ms() - deadline + RESOLVE_MS), err ? strerror(-err) : "resolved");
out:
	/*
	 * The kernel would go on asking (mcast_probes, one a second) and put
	 * stray requests on the link after we are gone: remove an entry we made.
	 */
	if (err && created)
		neigh_del(ifc, family, addr);
	close(pfd.fd);
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

static void link_cb(const struct nlmsghdr *m, void *arg)
{
	struct rtattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1];
	struct link_info *l = arg;
	const struct ifinfomsg *ifi;

	if (l->have || m->nlmsg_type != RTM_NEWLINK || m->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return;
	ifi = NLMSG_DATA(m);
	nl_parse_attrs(tb, IFLA_MAX, IFLA_RTA(ifi), m->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
	l->have = true;
	if (nl_attr_s32(tb[IFLA_LINK], &l->link))
		l->link = 0;
	if (nl_attr_s32(tb[IFLA_LINK_NETNSID], &l->link_nsid))
		l->link_nsid = -1;
	if (nl_attr_s32(tb[IFLA_MASTER], &l->master))
		l->master = 0;
	if (nl_attr_s32(tb[IFLA_TARGET_NETNSID], &l->tgt_nsid))
		l->tgt_nsid = -1;
	if (tb[IFLA_ADDRESS] && RTA_PAYLOAD(tb[IFLA_ADDRESS]) == 6) {
		memcpy(l->mac, RTA_DATA(tb[IFLA_ADDRESS]), 6);
		l->have_mac = true;
	}
	if (tb[IFLA_IFNAME])
		snprintf(l->name, sizeof(l->name), "%.*s", (int)RTA_PAYLOAD(tb[IFLA_IFNAME]),
			 (const char *)RTA_DATA(tb[IFLA_IFNAME]));
	if (tb[IFLA_LINKINFO]) {
		nl_parse_attrs(li, IFLA_INFO_MAX, RTA_DATA(tb[IFLA_LINKINFO]),
			       RTA_PAYLOAD(tb[IFLA_LINKINFO]));
		if (li[IFLA_INFO_KIND])
			l->is_veth = RTA_PAYLOAD(li[IFLA_INFO_KIND]) >= 4 &&
				     !strncmp(RTA_DATA(li[IFLA_INFO_KIND]), "veth",
					      RTA_PAYLOAD(li[IFLA_INFO_KIND]));
	}
}

/* RTM_GETLINK for one ifindex, in the namespace with id @nsid (-1: our own). */
static int link_get(int ifindex, int nsid, struct link_info *l)
{
	struct nl_req req = { 0 };
	int err;

	memset(l, 0, sizeof(*l));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifindex;
	if (nsid >= 0)
		nl_put_attr(&req.nh, sizeof(req), IFLA_TARGET_NETNSID, &nsid, sizeof(nsid));
	err = nl_talk(&req.nh, link_cb, l);
	if (err)
		return err;
	return l->have ? 0 : -ENOENT;
}

static int veth_peer_mac(const struct lr_if *ifc, uint8_t mac[6], char *how, size_t howlen)
{
	struct link_info self, peer;
	int err;

	err = link_get(ifc->ifindex, -1, &self);
	if (err) {
		pr_debug("%s: RTM_GETLINK: %s\n", ifc->name, strerror(-err));
		return err;
	}
	if (!self.is_veth || self.link <= 0)
		return -ENOENT;

	err = link_get(self.link, self.link_nsid, &peer);
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
	if ((self.link_nsid >= 0 && peer.tgt_nsid != self.link_nsid) || peer.link != ifc->ifindex) {
		pr_debug("%s: veth peer lookup answered about another device, ignored\n",
			 ifc->name);
		return -ENOENT;
	}
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

static void link_facts_cb(const struct nlmsghdr *m, void *arg)
{
	struct rtattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1];
	struct link_facts *q = arg;
	struct lr_if_link *l = q->out;
	const struct ifinfomsg *ifi;

	if (q->have || m->nlmsg_type != RTM_NEWLINK || m->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return;
	ifi = NLMSG_DATA(m);
	nl_parse_attrs(tb, IFLA_MAX, IFLA_RTA(ifi), m->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
	q->have = true;
	if (tb[IFLA_OPERSTATE] && RTA_PAYLOAD(tb[IFLA_OPERSTATE]) >= 1)
		l->operstate = *(const uint8_t *)RTA_DATA(tb[IFLA_OPERSTATE]);
	if (nl_attr_s32(tb[IFLA_LINK], &l->link))
		l->link = 0;
	if (nl_attr_s32(tb[IFLA_LINK_NETNSID], &l->link_nsid))
		l->link_nsid = -1;
	if (nl_attr_s32(tb[IFLA_MASTER], &l->master))
		l->master = 0;
	if (tb[IFLA_LINKINFO]) {
		nl_parse_attrs(li, IFLA_INFO_MAX, RTA_DATA(tb[IFLA_LINKINFO]), RTA_PAYLOAD(tb[IFLA_LINKINFO]));
		if (li[IFLA_INFO_KIND])
			snprintf(l->kind, sizeof(l->kind), "%.*s", (int)strnlen(RTA_DATA(li[IFLA_INFO_KIND]),
									 RTA_PAYLOAD(li[IFLA_INFO_KIND])),
				 (const char *)RTA_DATA(li[IFLA_INFO_KIND]));
	}
}

/* Generic netlink: attributes start after the family header. */
static struct rtattr *genl_attrs(const struct nlmsghdr *m, int *len)
{
	*len = (int)m->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN);
	/* struct nlattr and struct rtattr share layout and alignment, so the RTA_* walkers serve both. */
	return (struct rtattr *)((char *)NLMSG_DATA(m) + GENL_HDRLEN);
}

static void genl_req_init(struct genl_req *req, uint16_t family, uint8_t cmd, uint8_t version)
{
	memset(req, 0, sizeof(*req));
	req->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req->nh.nlmsg_type = family;
	req->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req->gh.cmd = cmd;
	req->gh.version = version;
}

static void family_cb(const struct nlmsghdr *m, void *arg)
{
	struct rtattr *tb[CTRL_ATTR_MAX + 1], *attrs;
	struct genl_family_query *q = arg;
	int len;

	if (q->have || m->nlmsg_type != GENL_ID_CTRL || m->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return;
	attrs = genl_attrs(m, &len);
	nl_parse_attrs(tb, CTRL_ATTR_MAX, attrs, len);
	if (!tb[CTRL_ATTR_FAMILY_ID] || RTA_PAYLOAD(tb[CTRL_ATTR_FAMILY_ID]) < sizeof(uint16_t))
		return;
	memcpy(&q->id, RTA_DATA(tb[CTRL_ATTR_FAMILY_ID]), sizeof(uint16_t));
	q->have = true;
}

/* Family id of a generic-netlink family; -EOPNOTSUPP when this kernel does not have it. */
static int genl_family_id(const char *name, uint16_t *id)
{
	struct genl_family_query q = { 0 };
	struct genl_req req;
	int err;

	genl_req_init(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	nl_put_attr(&req.nh, sizeof(req), CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	err = nl_talk_proto(NETLINK_GENERIC, &req.nh, family_cb, &q);
	if (err == -ENOENT)
		return -EOPNOTSUPP;
	if (err)
		return err;
	if (!q.have)
		return -EBADMSG;
	*id = q.id;
	return 0;
}

static int xdp_parse_msg(const struct nlmsghdr *m, int ifindex, struct lr_if_xdp *out)
{
	struct rtattr *tb[ND_A_DEV_MAX + 1], *attrs;
	uint32_t idx;
	int len;

	if (m->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return -EBADMSG;
	attrs = genl_attrs(m, &len);
	nl_parse_attrs(tb, ND_A_DEV_MAX, attrs, len);
	if (!tb[ND_A_DEV_IFINDEX] || RTA_PAYLOAD(tb[ND_A_DEV_IFINDEX]) < sizeof(idx))
		return -EBADMSG;
	memcpy(&idx, RTA_DATA(tb[ND_A_DEV_IFINDEX]), sizeof(idx));
	if (idx != (uint32_t)ifindex)
		return -ENOENT;
	/* A u64 attribute is only 4-byte aligned (the kernel may pad before it): memcpy, no cast. */
	if (!tb[ND_A_DEV_XDP_FEATURES] || RTA_PAYLOAD(tb[ND_A_DEV_XDP_FEATURES]) < sizeof(out->features))
		return -EBADMSG;
	memcpy(&out->features, RTA_DATA(tb[ND_A_DEV_XDP_FEATURES]), sizeof(out->features));
	/* Sent only when the driver advertises XSK zero-copy. */
	out->zc_max_segs = 0;
	if (tb[ND_A_DEV_XDP_ZC_MAX_SEGS] && RTA_PAYLOAD(tb[ND_A_DEV_XDP_ZC_MAX_SEGS]) >= sizeof(uint32_t))
		memcpy(&out->zc_max_segs, RTA_DATA(tb[ND_A_DEV_XDP_ZC_MAX_SEGS]), sizeof(uint32_t));
	return 0;
}

static void xdp_cb(const struct nlmsghdr *m, void *arg)
{
	struct xdp_query *q = arg;
	int err;

	if (q->have || m->nlmsg_type != q->family)
		return;
	err = xdp_parse_msg(m, q->ifindex, &q->xdp);
	if (err)
		q->err = err;
	else
		q->have = true;
}

static int ethtool_ioctl(int fd, const char *ifname, void *data)
{
	struct ifreq ifr = { 0 };
	size_t len = strlen(ifname);

	if (!len || len >= IFNAMSIZ)
		return -EINVAL;
	memcpy(ifr.ifr_name, ifname, len + 1);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

int lr_if_open(const char *name, struct lr_if *ifc, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	size_t len;
	int fd = -1, ret = 0;
	char path[128];

	memset(ifc, 0, sizeof(*ifc));
	if (!name || !name[0]) {
		lr_msg(err, errlen, "no interface name given");
		return -EINVAL;
	}
	len = strlen(name);
	if (len >= IFNAMSIZ) {
		lr_msg(err, errlen, "interface name '%s' is too long (at most %d characters)",
			name, IFNAMSIZ - 1);
		return -EINVAL;
	}
	memcpy(ifc->name, name, len + 1);

	ifc->ifindex = if_nametoindex(name);
	if (!ifc->ifindex) {
		ret = -errno;
		if (ret == -ENODEV || ret == -ENXIO || !ret) {
			lr_msg(err, errlen, "interface '%s' not found", name);
			return -ENODEV;
		}
		lr_msg(err, errlen, "cannot look up interface '%s': %s", name, strerror(-ret));
		return ret;
	}

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot open a socket to query interface '%s': %s", name,
			strerror(-ret));
		goto out;
	}
	memcpy(ifr.ifr_name, name, len + 1);

	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		ret = -errno;
		if (ret == -ENODEV)
			lr_msg(err, errlen, "interface '%s' not found", name);
		else
			lr_msg(err, errlen, "cannot read flags of interface '%s': %s", name,
				strerror(-ret));
		goto out;
	}
	ifc->up = ifr.ifr_flags & IFF_UP;

	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot read MTU of interface '%s': %s", name, strerror(-ret));
		goto out;
	}
	ifc->mtu = ifr.ifr_mtu;

	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot read MAC address of interface '%s': %s", name,
			strerror(-ret));
		goto out;
	}
	memcpy(ifc->mac, ifr.ifr_hwaddr.sa_data, sizeof(ifc->mac));

	read_driver(fd, name, ifc->driver, sizeof(ifc->driver));
	count_queues(name, &ifc->tx_queues, &ifc->rx_queues);
	snprintf(path, sizeof(path), SYSFS_NET "/%s/device", name);
	ifc->physical = !access(path, F_OK);

	pr_debug("%s: ifindex %d mtu %u queues tx %u rx %u driver '%s'%s\n", name, ifc->ifindex,
		 ifc->mtu, ifc->tx_queues, ifc->rx_queues, ifc->driver,
		 ifc->physical ? " physical" : "");

	/* Checked last so a caller that wants to explain the refusal has the facts. */
	if (!ifc->up) {
		lr_msg(err, errlen, "interface '%s' is down", name);
		ret = -ENETDOWN;
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int lr_if_addr(const struct lr_if *ifc, int family, struct in6_addr *out)
{
	const struct in6_addr *fallback = NULL, *best = NULL;
	struct ifaddrs *ifa, *list;
	size_t nlen = strlen(ifc->name);
	int err = 0;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (getifaddrs(&list) < 0)
		return -errno;

	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		/* IPv4 addresses with a label show up under "name:label". */
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family ||
		    strncmp(ifa->ifa_name, ifc->name, nlen) ||
		    (ifa->ifa_name[nlen] && ifa->ifa_name[nlen] != ':'))
			continue;
		if (family == AF_INET) {
			const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;

			memset(out, 0, sizeof(*out));
			memcpy(out->s6_addr, &sin->sin_addr, 4);
			goto out;
		}
		best = &((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;
		if (!IN6_IS_ADDR_LINKLOCAL(best))
			break;
		if (!fallback)
			fallback = best;
		best = NULL;
	}
	if (!best)
		best = fallback;
	if (best)
		*out = *best;
	else
		err = -ENOENT;
out:
	freeifaddrs(list);
	return err;
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

int lr_if_stat(const char *ifname, const char *counter, uint64_t *out)
{
	char path[256], buf[32], *end;
	unsigned long long v;
	int fd, n, err = 0;
	ssize_t len;

	/* Both end up in a path; refuse anything that could walk out of the directory. */
	if (!ifname[0] || !counter[0] || strchr(ifname, '/') || strchr(counter, '/') ||
	    !strcmp(ifname, "..") || !strcmp(counter, ".."))
		return -EINVAL;
	n = snprintf(path, sizeof(path), SYSFS_NET "/%s/statistics/%s", ifname, counter);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0) {
		err = -errno;
		goto out;
	}
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n')) {
		err = -EINVAL;
		goto out;
	}
	*out = v;
out:
	close(fd);
	return err;
}

int lr_if_ethtool_stats(const char *ifname, struct lr_ethtool_stats *out)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t data[1];
	} sset = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_STATS } };
	struct ethtool_gstrings *gs = NULL;
	struct ethtool_stats *st = NULL;
	unsigned int n, i;
	int fd, err;

	memset(out, 0, sizeof(*out));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = ethtool_ioctl(fd, ifname, &sset);
	if (err)
		goto out;
	/* The kernel clears the bit of every set the driver does not have. */
	if (!(sset.hdr.sset_mask & (1ULL << ETH_SS_STATS)) || !sset.data[0]) {
		err = -EOPNOTSUPP;
		goto out;
	}
	n = sset.data[0];
	if (n > ETHTOOL_STATS_MAX) {
		err = -E2BIG;
		goto out;
	}
	gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	st = calloc(1, sizeof(*st) + (size_t)n * sizeof(uint64_t));
	out->names = calloc(n, sizeof(*out->names));
	out->values = calloc(n, sizeof(*out->values));
	if (!gs || !st || !out->names || !out->values) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * The kernel asks the driver for the count again on each call and writes
	 * that many entries; like ethtool(8) we rely on it not growing between
	 * calls (it changes only with the channel count), and refuse a mismatch.
	 */
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	err = ethtool_ioctl(fd, ifname, gs);
	if (err)
		goto out;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = n;
	err = ethtool_ioctl(fd, ifname, st);
	if (err)
		goto out;
	if (gs->len != n || st->n_stats != n) {
		err = -EAGAIN;
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* A name may fill all ETH_GSTRING_LEN bytes without a NUL; ours have room for one. */
		memcpy(out->names[i], gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		out->names[i][ETH_GSTRING_LEN] = '\0';
		out->values[i] = st->data[i];
	}
	out->n = n;
out:
	if (err)
		lr_ethtool_stats_free(out);
	free(gs);
	free(st);
	close(fd);
	return err;
}

void lr_ethtool_stats_free(struct lr_ethtool_stats *s)
{
	free(s->names);
	free(s->values);
	memset(s, 0, sizeof(*s));
}

int lr_ethtool_stats_find(const struct lr_ethtool_stats *s, const char *name, uint64_t *out)
{
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		if (!strcmp(s->names[i], name)) {
			*out = s->values[i];
			return 0;
		}
	}
	return -ENOENT;
}

int lr_ethtool_stats_findq(const struct lr_ethtool_stats *s, const char *fmt, unsigned int queue, uint64_t *out)
{
	char name[LR_ETHTOOL_NAME_LEN];
	int n;

	n = snprintf(name, sizeof(name), fmt, queue);
	if (n < 0 || (size_t)n >= sizeof(name))
		return -ENOENT;
	return lr_ethtool_stats_find(s, name, out);
}

bool lr_ethtool_stat_queue(const char *name, unsigned int *queue, bool *tx, const char **field)
{
	static const char rx_prefix[] = "rx_queue_", tx_prefix[] = "tx_queue_";
	const size_t plen = sizeof(rx_prefix) - 1;
	unsigned long q;
	bool is_tx;
	char *end;

	if (!strncmp(name, rx_prefix, plen))
		is_tx = false;
	else if (!strncmp(name, tx_prefix, plen))
		is_tx = true;
	else
		return false;
	if (!isdigit((unsigned char)name[plen]))
		return false;
	errno = 0;
	q = strtoul(name + plen, &end, 10);
	if (errno || q > UINT_MAX || *end != '_' || !end[1])
		return false;
	if (queue)
		*queue = (unsigned int)q;
	if (tx)
		*tx = is_tx;
	if (field)
		*field = end + 1;
	return true;
}

int lr_if_channels(const char *ifname, struct lr_if_channels *out)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int fd, err;

	memset(out, 0, sizeof(*out));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = ethtool_ioctl(fd, ifname, &ch);
	close(fd);
	if (err)
		return err;
	out->max_rx = ch.max_rx;
	out->max_tx = ch.max_tx;
	out->max_other = ch.max_other;
	out->max_combined = ch.max_combined;
	out->rx = ch.rx_count;
	out->tx = ch.tx_count;
	out->other = ch.other_count;
	out->combined = ch.combined_count;
	return 0;
}

int lr_if_link_get(const struct lr_if *ifc, struct lr_if_link *out)
{
	struct link_facts q = { .out = out };
	struct nl_req req = { 0 };
	int err;

	memset(out, 0, sizeof(*out));
	out->link_nsid = -1;
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifc->ifindex;
	err = nl_talk(&req.nh, link_facts_cb, &q);
	if (err)
		return err;
	return q.have ? 0 : -ENOENT;
}

const char *lr_if_operstate_name(unsigned int operstate)
{
	/* IF_OPER_* (RFC 2863) of linux/if.h, which cannot be included next to net/if.h. */
	static const char *const names[] = {
		"unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up",
	};

	return operstate < sizeof(names) / sizeof(names[0]) ? names[operstate] : "unknown";
}

int lr_if_xdp_parse(const void *msg, size_t len, int ifindex, struct lr_if_xdp *out)
{
	const struct nlmsghdr *m = msg;

	if (len < sizeof(*m) || m->nlmsg_len > len || !NLMSG_OK(m, (unsigned int)len))
		return -EBADMSG;
	return xdp_parse_msg(m, ifindex, out);
}

bool lr_if_neigh_usable(const struct lr_if_neigh *n)
{
	return (n->state & NUD_VALID_LLADDR) && n->have_mac && mac_usable(n->mac);
}

int lr_if_neigh_parse(const void *msg, size_t len, int ifindex, int family, const struct in6_addr *addr,
		      struct lr_if_neigh *out)
{
	const struct nlmsghdr *m = msg;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (len < sizeof(*m) || m->nlmsg_len > len || !NLMSG_OK(m, (unsigned int)len))
		return -EBADMSG;
	return neigh_parse_msg(m, ifindex, family, addr, out);
}

int lr_if_route_parse(const void *msg, size_t len, int family, const struct in6_addr *dst,
		      struct lr_if_nexthop *out)
{
	const struct nlmsghdr *m = msg;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (len < sizeof(*m) || m->nlmsg_len > len || !NLMSG_OK(m, (unsigned int)len))
		return -EBADMSG;
	return route_parse_msg(m, family, dst, out);
}

int lr_if_xdp_features(int ifindex, struct lr_if_xdp *out)
{
	struct xdp_query q = { .ifindex = ifindex };
	struct genl_req req;
	uint32_t idx = ifindex;
	int err;

	memset(out, 0, sizeof(*out));
	err = genl_family_id(ND_FAMILY_NAME, &q.family);
	if (err)
		return err;
	genl_req_init(&req, q.family, ND_CMD_DEV_GET, ND_FAMILY_VERSION);
	nl_put_attr(&req.nh, sizeof(req), ND_A_DEV_IFINDEX, &idx, sizeof(idx));
	err = nl_talk_proto(NETLINK_GENERIC, &req.nh, xdp_cb, &q);
	if (err)
		return err;
	if (!q.have)
		return q.err ? q.err : -ENOENT;
	*out = q.xdp;
	return 0;
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

bool lr_if_present(const struct lr_if *ifc)
{
	char name[IF_NAMESIZE];

	/* by index: a rename is not a disappearance; ENXIO (and only that) says it is gone */
	return if_indextoname((unsigned int)ifc->ifindex, name) || errno != ENXIO;
}
