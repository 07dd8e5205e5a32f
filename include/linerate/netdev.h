/* SPDX-License-Identifier: MIT */
/* What user space learns about an interface: index, MTU, queues, addresses, kind, counters. */
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
/* First address of @family on the interface. */
int lr_if_addr(const struct lr_if *ifc, int family, struct in6_addr *out);
/*
 * Next-hop MAC for @dst: the neighbour table first, then the veth peer when
 * it is not a bridge port. -ENOENT when neither knows.
 */
int lr_if_dst_mac(const struct lr_if *ifc, int family, const struct in6_addr *dst, uint8_t mac[6],
		  char *how, size_t howlen);
/* A counter from /sys/class/net/IF/statistics (e.g. "tx_dropped"); -errno. */
int lr_if_stat(const char *ifname, const char *counter, uint64_t *out);

/* Enter a network namespace: NAME (/run/netns/NAME), pid:PID or a path; remounts /sys for it. */
int lr_netns_enter(const char *spec, char *err, size_t errlen);

#endif
