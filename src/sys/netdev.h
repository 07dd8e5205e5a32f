/* SPDX-License-Identifier: MIT */
/* What user space learns about an interface: index, MTU, queues, addresses, next hops, kind, counters. */
#ifndef LINERATE_NETDEV_H
#define LINERATE_NETDEV_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <net/if.h>
#include <netinet/in.h>

struct lr_if {
	char name[IF_NAMESIZE];
	int ifindex;
	unsigned int mtu;
	unsigned int tx_queues, rx_queues;
	bool up;
	bool physical;	/* a device behind it in sysfs */
	uint8_t mac[6];
	char driver[32];
};

/* -ENODEV (unknown), or another -errno with a message for the user in @err. */
int lr_if_open(const char *name, struct lr_if *ifc, char *err, size_t errlen);
/* The interface still exists in this namespace (it may have been renamed). */
bool lr_if_present(const struct lr_if *ifc);
/* First address of @family on the interface. */
int lr_if_addr(const struct lr_if *ifc, int family, struct in6_addr *out);
/*
 * MAC of @dst's next hop on the interface: the gateway of the kernel's route
 * through it, else @dst itself. Taken from the neighbour table, else from the
 * veth peer when that is not a bridge port, else resolved by the kernel now
 * (ARP, neighbour discovery; at most about a second). @how says which, for a
 * summary; on failure, -errno and one line for the user in @err that names
 * the address, the interface and the next hop.
 */
int lr_if_dst_mac(const struct lr_if *ifc, int family, const struct in6_addr *dst, uint8_t mac[6],
		  char *how, size_t howlen, char *err, size_t errlen);

/* Where the kernel sends frames for a destination: an answer to RTM_GETROUTE. */
struct lr_if_nexthop {
	int family;	/* of @addr; an IPv4 route may have an IPv6 gateway (RFC 5549) */
	struct in6_addr addr;	/* the gateway, else the destination; IPv4 in the first 4 bytes */
	bool gateway;
	int oif;	/* the interface the route leaves through */
	unsigned int type;	/* RTN_* */
	bool have_src;	/* RTA_PREFSRC: the source address the kernel picks for @dst */
	struct in6_addr src;	/* of the destination's family */
};

/*
 * Parses one RTM_NEWROUTE message (netlink header included) answering a lookup
 * of @dst. -ENOENT when it is about another route, -EBADMSG when malformed.
 */
int lr_if_route_parse(const void *msg, size_t len, int family, const struct in6_addr *dst,
		      struct lr_if_nexthop *out);

/*
 * The interface the routing table sends @dst out of, as `ip route get DST`: 0, its name in @ifname
 * and the route in @nh (with its preferred source address when it has one); -errno with one line
 * in @err naming @dst when there is no route, or when @dst is no one other host (an address of
 * this host, a broadcast, a blackhole, ...).
 */
int lr_if_route_to(int family, const struct in6_addr *dst, char ifname[IF_NAMESIZE], struct lr_if_nexthop *nh,
		   char *err, size_t errlen);

/* One neighbour table entry. */
struct lr_if_neigh {
	unsigned int state;	/* NUD_* of linux/neighbour.h */
	bool have_mac;
	uint8_t mac[6];
};

/*
 * Parses one RTM_NEWNEIGH message (netlink header included) about @addr on
 * @ifindex. -ENOENT when it is about another entry, -EBADMSG when malformed.
 */
int lr_if_neigh_parse(const void *msg, size_t len, int ifindex, int family, const struct in6_addr *addr,
		      struct lr_if_neigh *out);
/* True when the entry's state vouches for its MAC and the MAC is a unicast one. */
bool lr_if_neigh_usable(const struct lr_if_neigh *n);
/* A counter from /sys/class/net/IF/statistics (e.g. "tx_dropped"); -errno. */
int lr_if_stat(const char *ifname, const char *counter, uint64_t *out);

/* The driver's name (ETHTOOL_GDRVINFO) into @drv, "" when it cannot be read (said at debug level); 0 or -errno. */
int lr_if_driver(const char *ifname, char *drv, size_t len);

/* ethtool driver counters (ETH_SS_STATS): names and values in the driver's order, on the heap. */
#define LR_ETHTOOL_NAME_LEN 33	/* ETH_GSTRING_LEN and a NUL */

struct lr_ethtool_stats {
	unsigned int n;
	char (*names)[LR_ETHTOOL_NAME_LEN];	/* NUL-terminated */
	uint64_t *values;
};

/* Reads every counter at once; -EOPNOTSUPP when the driver has none. Free with lr_ethtool_stats_free(). */
int lr_if_ethtool_stats(const char *ifname, struct lr_ethtool_stats *out);
void lr_ethtool_stats_free(struct lr_ethtool_stats *s);
/* Value of the counter called @name; -ENOENT when the driver has no such counter. */
int lr_ethtool_stats_find(const struct lr_ethtool_stats *s, const char *name, uint64_t *out);
/* The same, the name made from a pattern with one %u for the queue, e.g. "tx_queue_%u_packets". */
int lr_ethtool_stats_findq(const struct lr_ethtool_stats *s, const char *fmt, unsigned int queue, uint64_t *out)
	__attribute__((format(printf, 2, 0)));
/*
 * True for a per-queue counter named "rx_queue_N_FIELD" or "tx_queue_N_FIELD"
 * (veth, virtio_net, and the drivers that follow their naming); sets the queue,
 * the direction and FIELD.
 */
bool lr_ethtool_stat_queue(const char *name, unsigned int *queue, bool *tx, const char **field);

/* ETHTOOL_GCHANNELS: current and maximum queue (channel) counts. */
struct lr_if_channels {
	unsigned int max_rx, max_tx, max_other, max_combined;
	unsigned int rx, tx, other, combined;
};

/* -EOPNOTSUPP when the driver does not report channels. */
int lr_if_channels(const char *ifname, struct lr_if_channels *out);

/* GRO of the interface in the current namespace (ETHTOOL_GGRO): 0 or -errno. */
int lr_if_gro(const char *ifname, bool *on);
/* Switches it (ETHTOOL_SGRO) and reads it back: -EOPNOTSUPP when the device kept the old value. */
int lr_if_set_gro(const char *ifname, bool on);

/*
 * One RTM_NEWLINK answer: facts beyond struct lr_if (link kind, RFC 2863
 * operational state, the device it is linked to), and what a veth peer's
 * MAC lookup needs of a device in another namespace.
 */
struct lr_if_link {
	int ifindex;
	char name[IF_NAMESIZE];
	char kind[16];	/* IFLA_INFO_KIND ("veth", "bridge", ...); empty for a plain device */
	unsigned int operstate;	/* IF_OPER_* */
	int link;	/* IFLA_LINK: for a veth the peer's ifindex (in the peer's namespace); 0 if none */
	int link_nsid;	/* namespace id of @link as seen from ours; -1 when it is our own */
	int master;	/* IFLA_MASTER: the bridge (or bond) it is a port of; 0 if none */
	int target_nsid;	/* IFLA_TARGET_NETNSID echoed by the kernel (Linux >= 4.20); -1 if absent */
	bool xdp_native;	/* a driver-mode XDP program is attached (IFLA_XDP): on a veth, the peer may redirect in */
	bool have_mac;
	uint8_t mac[6];	/* IFLA_ADDRESS */
};

int lr_if_link_get(const struct lr_if *ifc, struct lr_if_link *out);
/*
 * RTM_GETLINK for @ifindex in the namespace that ours calls @nsid (-1: our own).
 * A kernel before 4.20 answers about our own namespace and echoes no target_nsid.
 */
int lr_if_link_query(int ifindex, int nsid, struct lr_if_link *out);
/*
 * The peer of the interface, when it is a veth, found by RTM_GETLINK in the
 * peer's namespace and checked to point back at the interface; -ENOENT when
 * it is no veth or the kernel answered about another device.
 */
int lr_if_veth_peer(const struct lr_if *ifc, struct lr_if_link *peer);
/*
 * Parses one RTM_NEWLINK message (netlink header included) about @ifindex.
 * -ENOENT when it is about another device, -EBADMSG when malformed.
 */
int lr_if_link_parse(const void *msg, size_t len, int ifindex, struct lr_if_link *out);
/* "up", "down", "lowerlayerdown", ... as in /sys/class/net/IF/operstate. */
const char *lr_if_operstate_name(unsigned int operstate);

/* XDP features a driver advertises (NETDEV_XDP_ACT_* of include/uapi/linux/netdev.h, Linux >= 6.3). */
#define LR_XDP_ACT_BASIC	(1ULL << 0)	/* native XDP: DROP, PASS, TX, ABORTED */
#define LR_XDP_ACT_REDIRECT	(1ULL << 1)
#define LR_XDP_ACT_NDO_XMIT	(1ULL << 2)	/* other devices may XDP_REDIRECT into it */
#define LR_XDP_ACT_XSK_ZEROCOPY	(1ULL << 3)
#define LR_XDP_ACT_HW_OFFLOAD	(1ULL << 4)
#define LR_XDP_ACT_RX_SG	(1ULL << 5)
#define LR_XDP_ACT_NDO_XMIT_SG	(1ULL << 6)
#define LR_XDP_ACT_COUNT	7

struct lr_if_xdp {
	uint64_t features;	/* LR_XDP_ACT_* */
	uint32_t zc_max_segs;	/* fragments per zero-copy AF_XDP frame; 0 when not reported */
};

/*
 * Asks the "netdev" generic-netlink family (NETDEV_CMD_DEV_GET). -EOPNOTSUPP
 * when the kernel has no such family (before 6.3), -ENODEV for an unknown ifindex.
 */
int lr_if_xdp_features(int ifindex, struct lr_if_xdp *out);
/* Parses one NETDEV_CMD_DEV_GET answer (netlink header included) for @ifindex; for the unit tests. */
int lr_if_xdp_parse(const void *msg, size_t len, int ifindex, struct lr_if_xdp *out);
/* Short name of one LR_XDP_ACT_* bit ("basic", "redirect", ...), NULL for an unknown bit. */
const char *lr_xdp_act_name(uint64_t bit);

/*
 * Enter a network namespace: NAME (/run/netns/NAME), pid:PID, container:NAME (its PID from a
 * docker-compatible CLI) or a path; remounts /sys for it.
 */
int lr_netns_enter(const char *spec, char *err, size_t errlen);
/* RTM_GETNSID: the id the current namespace gives to the one @fd refers to; -1 when it has none. */
int lr_netns_id(int fd, int *nsid);
/*
 * The namespace the current one calls @nsid (a veth's IFLA_LINK_NETNSID), looked for among
 * /run/netns/NAME, /run/docker/netns/ID and /proc/PID/ns/net, each namespace asked once: 0, an
 * open fd in @fd and in @label its name, path or "pid:PID" (as --netns takes it); -ENOENT when
 * none of them is.
 */
int lr_netns_find(int nsid, int *fd, char *label, size_t len);

#endif
