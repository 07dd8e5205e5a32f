/* SPDX-License-Identifier: MIT */
/* Ethernet/IPv4/IPv6/UDP test frame templates, checksums, and per-packet stamping. */
#ifndef LINERATE_FRAME_H
#define LINERATE_FRAME_H

#include <stdint.h>
#include <stddef.h>
#include <netinet/in.h>
#include "linerate/probe.h"
#include "util/frame_size.h"

struct lr_frame_spec {
	int family;	/* AF_INET or AF_INET6 */
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	struct in6_addr src_ip;	/* IPv4 as the first 4 bytes */
	struct in6_addr dst_ip;
	uint16_t src_port;	/* of flow 0; flow f uses src_port + f */
	uint16_t dst_port;
	unsigned int size;	/* Ethernet frame size incl. FCS, as in RFC 2544 */
};

/* A frame as built once; per packet only the probe, source port and UDP checksum change. */
struct lr_tmpl {
	uint8_t data[LR_MAX_FRAME];
	unsigned int len;	/* bytes handed to the device: size - FCS */
	unsigned int l4_off;	/* UDP header */
	uint32_t csum_base;	/* UDP checksum sum with source port and probe zeroed, unfolded */
	uint16_t src_port;
	int family;
	uint32_t rtt_id;	/* this send's run id, in every marker and round-trip frame; random, never 0 */
};

int lr_frame_build(const struct lr_frame_spec *spec, struct lr_tmpl *t);

/*
 * Writes a probe into any captured frame that is UDP to @dport with room
 * for it, and recomputes its UDP checksum (for replay). 1 stamped, 0 not.
 */
int lr_frame_stamp_udp(uint8_t *frame, unsigned int len, uint16_t dport, uint16_t magic, uint16_t flow, uint64_t seq,
		       uint64_t tail);

/* RFC 1071 sum helpers (host-order accumulation of big-endian 16-bit words). */
uint32_t lr_csum_add(uint32_t sum, const void *buf, size_t len);
static inline uint16_t lr_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}


/* Writes probe, source port and checksum into @pkt, a copy of @t->data. */
static inline void lr_frame_stamp(const struct lr_tmpl *t, uint8_t *pkt, uint16_t magic,
				  uint16_t flow, uint64_t seq, uint64_t tail)
{
	lr_probe_stamp(pkt + t->l4_off, t->csum_base, (uint16_t)(t->src_port + flow), magic, flow, seq, tail);
}

#endif
