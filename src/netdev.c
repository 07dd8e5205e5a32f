/* SPDX-License-Identifier: MIT */
/* Interface facts from ioctl, sysfs and rtnetlink: index, MTU, queues, addresses, next-hop MAC. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include "linerate/log.h"
#include "linerate/netdev.h"

#define SYSFS_NET "/sys/class/net"

/* Neighbour states in which the entry carries a usable link-layer address. */
#define NUD_VALID_LLADDR \
	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

/* Large enough for a full page of dump messages; the kernel never sends more per datagram. */
#define NL_BUFSZ 32768

struct nl_req {
	struct nlmsghdr nh;
	union {
		struct ndmsg ndm;
		struct ifinfomsg ifi;
	};
	char attrs[64];
};

struct neigh_query {
	int ifindex;
	int family;
	const struct in6_addr *dst;
	bool found;
	uint8_t mac[6];
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
 * Send @nh on a fresh NETLINK_ROUTE socket and feed every answer to @cb until
 * NLMSG_DONE (dumps) or the acknowledgement (single requests, sent with NLM_F_ACK).
 */
static int nl_talk(struct nlmsghdr *nh, void (*cb)(const struct nlmsghdr *, void *), void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	bool done = false;
	char *buf = NULL;
	int fd, err = 0;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
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
			if (!err)
				cb(m, arg);
		}
	}
out:
	free(buf);
	close(fd);
	return err;
}

static void neigh_cb(const struct nlmsghdr *m, void *arg)
{
	struct neigh_query *q = arg;
	struct rtattr *tb[NDA_MAX + 1];
	const struct ndmsg *ndm;
	size_t alen;

	if (q->found || m->nlmsg_type != RTM_NEWNEIGH || m->nlmsg_len < NLMSG_LENGTH(sizeof(*ndm)))
		return;
	ndm = NLMSG_DATA(m);
	/* Older kernels ignore the filter in the request, so check again here. */
	if (ndm->ndm_ifindex != q->ifindex || ndm->ndm_family != q->family)
		return;
	if (!(ndm->ndm_state & NUD_VALID_LLADDR))
		return;
	nl_parse_attrs(tb, NDA_MAX, (struct rtattr *)((char *)ndm + NLMSG_ALIGN(sizeof(*ndm))),
		       m->nlmsg_len - NLMSG_LENGTH(sizeof(*ndm)));
	alen = q->family == AF_INET ? 4 : 16;
	if (!tb[NDA_DST] || RTA_PAYLOAD(tb[NDA_DST]) != alen ||
	    memcmp(RTA_DATA(tb[NDA_DST]), q->dst->s6_addr, alen))
		return;
	if (!tb[NDA_LLADDR] || RTA_PAYLOAD(tb[NDA_LLADDR]) != 6)
		return;
	memcpy(q->mac, RTA_DATA(tb[NDA_LLADDR]), 6);
	if (!mac_usable(q->mac)) {
		pr_debug("ifindex %d: neighbour entry has no usable MAC, ignored\n", q->ifindex);
		return;
	}
	q->found = true;
}

static int neigh_lookup(const struct lr_if *ifc, int family, const struct in6_addr *dst,
			uint8_t mac[6])
{
	struct neigh_query q = { .ifindex = ifc->ifindex, .family = family, .dst = dst };
	struct nl_req req = { 0 };
	uint32_t idx = ifc->ifindex;
	int err;

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ndm));
	req.nh.nlmsg_type = RTM_GETNEIGH;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.ndm.ndm_family = family;
	/* Since 4.20 the kernel filters the dump by this attribute. */
	nl_put_attr(&req.nh, sizeof(req), NDA_IFINDEX, &idx, sizeof(idx));
	err = nl_talk(&req.nh, neigh_cb, &q);
	if (err)
		return err;
	if (!q.found)
		return -ENOENT;
	memcpy(mac, q.mac, 6);
	return 0;
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
		  char *how, size_t howlen)
{
	int err;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;

	if (dst) {
		err = neigh_lookup(ifc, family, dst, mac);
		if (!err) {
			lr_msg(how, howlen, "neighbour table");
			return 0;
		}
		if (err != -ENOENT)
			pr_debug("%s: neighbour dump failed: %s\n", ifc->name, strerror(-err));
	}
	err = veth_peer_mac(ifc, mac, how, howlen);
	return err ? -ENOENT : 0;
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
