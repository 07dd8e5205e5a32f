/* SPDX-License-Identifier: MIT */
/* Ethernet/IPv4/IPv6/UDP test frame templates, checksums, and per-packet stamping. */
#ifndef LINERATE_FRAME_H
#define LINERATE_FRAME_H

#include <stdint.h>
#include <stddef.h>
#include <netinet/in.h>
#include "linerate/probe.h"

#define LR_FCS_LEN	4
#define LR_MIN_FRAME	64
#define LR_MAX_FRAME	9018	/* jumbo, incl. FCS */

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
};

/* Smallest frame (incl. FCS) that carries a probe for @family. */
unsigned int lr_frame_min_size(int family);
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

static inline void lr_store_be16(uint8_t *p, uint16_t v)
{
	v = __builtin_bswap16(v);
	__builtin_memcpy(p, &v, 2);
}

/* Writes probe, source port and checksum into @pkt, a copy of @t->data. */
static inline void lr_frame_stamp(const struct lr_tmpl *t, uint8_t *pkt, uint16_t magic,
				  uint16_t flow, uint64_t seq, uint64_t tail)
{
	uint8_t *udp = pkt + t->l4_off;
	uint8_t *p = udp + 8;
	uint16_t sport = (uint16_t)(t->src_port + flow);
	uint16_t w[9], c;
	uint32_t sum = t->csum_base;
	int i;

	/* the probe as nine big-endian words: magic, flow, seq (3), tail (4) */
	w[0] = magic;
	w[1] = flow;
	w[2] = (uint16_t)(seq >> 32);
	w[3] = (uint16_t)(seq >> 16);
	w[4] = (uint16_t)seq;
	w[5] = (uint16_t)(tail >> 48);
	w[6] = (uint16_t)(tail >> 32);
	w[7] = (uint16_t)(tail >> 16);
	w[8] = (uint16_t)tail;
	/* incremental checksum: the base sum saw zeros where these words now stand */
	sum += sport;
	for (i = 0; i < 9; i++) {
		sum += w[i];
		lr_store_be16(p + 2 * i, w[i]);
	}
	lr_store_be16(udp, sport);
	c = lr_csum_fold(sum);
	lr_store_be16(udp + 6, c ? c : 0xffff);	/* 0 would mean "no checksum" */
}

#endif
