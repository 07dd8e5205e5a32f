/* SPDX-License-Identifier: MIT */
/*
 * What an endpoint says of its host in hello (docs/protocol.md): the facts a controller needs to
 * tell one host from two and to find interfaces by address. Read here, carried as JSON, parsed back.
 */
#ifndef LINERATE_CTL_HOST_H
#define LINERATE_CTL_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <json-c/json.h>

#define LR_HOST_MAX_IFS		64	/* interfaces listed; a namespace with more lists the first */
#define LR_HOST_MAX_ADDRS	8	/* addresses listed per interface */
#define LR_HOST_ADDR_LEN	52	/* an IPv6 address, '/', a prefix length */
#define LR_BOOT_ID_LEN		36	/* 8-4-4-4-12 hex digits */

struct lr_host_if {
	char name[IF_NAMESIZE];
	char kind[16];	/* "veth", "bridge", "vxlan", ...; "" for a plain device (lo, a NIC) */
	bool physical;	/* a device behind it in sysfs */
	unsigned int naddrs;
	char addrs[LR_HOST_MAX_ADDRS][LR_HOST_ADDR_LEN];	/* "198.18.0.1/24" */
};

struct lr_host {
	char hostname[256];
	char boot_id[LR_BOOT_ID_LEN + 1];
	char kernel[128];
	unsigned int cpus;
	int64_t timens_monotonic_ns;	/* the time namespace's offset of CLOCK_MONOTONIC; 0 outside one */
	unsigned int nifs;
	struct lr_host_if ifs[LR_HOST_MAX_IFS];
};

/* This process's host, and the interfaces of the network namespace it is in. 0 or -errno. */
int lr_host_read(struct lr_host *h);
/* /proc/sys/kernel/random/boot_id: 36 characters "8-4-4-4-12" of lower-case hex, a newline. 0 or -EINVAL. */
int lr_host_boot_id_parse(const char *text, char out[LR_BOOT_ID_LEN + 1]);
int lr_host_boot_id(char out[LR_BOOT_ID_LEN + 1]);
/* "host": the facts, as hello carries them. */
void lr_host_put(struct json_object *parent, const struct lr_host *h);
/* Reads "host" of @parent strictly: 0, or -EINVAL with "host.KEY: why" in @err. */
int lr_host_get(struct json_object *parent, struct lr_host *h, char *err, size_t errlen);
/*
 * The interface of this namespace that holds @address (an IPv4 or IPv6 address): 0 and its name,
 * -EINVAL for no address, -ENOENT when none holds it; one line in @err.
 */
int lr_host_iface_of(const char *address, char ifname[IF_NAMESIZE], char *err, size_t errlen);

#endif
