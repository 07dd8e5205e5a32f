/* SPDX-License-Identifier: MIT */
/* Builds Ethernet/IPv4/IPv6/UDP test frame templates once; checksums per RFC 1071. */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include "tx/frame.h"

uint32_t lr_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t s = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += ((uint32_t)p[i] << 8) | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 32)
		s = (s & 0xffffffffULL) + (s >> 32);
	return (uint32_t)s;
}

int lr_frame_build(const struct lr_frame_spec *spec, struct lr_tmpl *t)
{
	unsigned int l3len, udplen;
	uint8_t *p = t->data, *ip, *udp;
	uint32_t sum;

	if (spec->family != AF_INET && spec->family != AF_INET6)
		return -EAFNOSUPPORT;
	if (spec->size < lr_frame_min_size(spec->family) || spec->size > LR_MAX_FRAME)
		return -ERANGE;

	memset(t, 0, sizeof(*t));
	t->family = spec->family;
	t->len = spec->size - LR_FCS_LEN;
	t->src_port = spec->src_port;
	memcpy(p, spec->dst_mac, 6);
	memcpy(p + 6, spec->src_mac, 6);
	ip = p + LR_ETH_HLEN;
	l3len = t->len - LR_ETH_HLEN;

	if (spec->family == AF_INET) {
		lr_put16(p + 12, LR_ETH_P_IP);
		ip[0] = 0x45;
		lr_put16(ip + 2, (uint16_t)l3len);
		lr_put16(ip + 6, 0x4000);	/* DF: never fragment a test frame */
		ip[8] = 64;
		ip[9] = LR_IPPROTO_UDP;
		memcpy(ip + 12, &spec->src_ip, 4);
		memcpy(ip + 16, &spec->dst_ip, 4);
		lr_put16(ip + 10, lr_csum_fold(lr_csum_add(0, ip, 20)));
		udp = ip + 20;
	} else {
		lr_put16(p + 12, LR_ETH_P_IPV6);
		ip[0] = 0x60;
		lr_put16(ip + 4, (uint16_t)(l3len - 40));
		ip[6] = LR_IPPROTO_UDP;
		ip[7] = 64;
		memcpy(ip + 8, &spec->src_ip, 16);
		memcpy(ip + 24, &spec->dst_ip, 16);
		udp = ip + 40;
	}
	udplen = (unsigned int)(p + t->len - udp);
	t->l4_off = (unsigned int)(udp - p);
	lr_put16(udp + 2, spec->dst_port);
	lr_put16(udp + 4, (uint16_t)udplen);

	/* Pseudo header, then the UDP header and payload with source port, checksum and probe zero. */
	if (spec->family == AF_INET)
		sum = lr_csum_add(0, ip + 12, 8);
	else
		sum = lr_csum_add(0, ip + 8, 32);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, LR_IPPROTO_UDP }, 2);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, 0, udplen >> 8, (uint8_t)udplen }, 4);
	sum = lr_csum_add(sum, udp, udplen);
	/* fold to 17 bits so the per-packet additions in lr_frame_stamp() cannot overflow */
	sum = (sum & 0xffff) + (sum >> 16);
	t->csum_base = (sum & 0xffff) + (sum >> 16);

	/* A valid frame as built: flow 0, sequence 0, no timestamp. */
	lr_frame_stamp(t, p, LR_MAGIC_DATA, 0, 0, 0);
	return 0;
}

int lr_frame_stamp_udp(uint8_t *frame, unsigned int len, uint16_t dport, uint16_t magic, uint16_t flow, uint64_t seq,
		       uint64_t tail)
{
	const uint8_t *l3c;
	uint8_t *l3, *udp;
	unsigned int ulen;
	uint32_t sum;
	uint16_t c;
	int v6;

	udp = (uint8_t *)lr_find_udp(frame, frame + len, &l3c, &v6);
	if (!udp || lr_be16(udp + 2) != dport)
		return 0;
	l3 = (uint8_t *)l3c;
	ulen = lr_be16(udp + 4);
	/* the UDP length must cover the probe and stay inside the frame */
	if (ulen < 8 + LR_PROBE_LEN || udp + ulen > frame + len)
		return 0;
	lr_probe_encode((struct lr_probe *)(udp + 8), magic, flow, seq, tail);
	/* a replayed frame's payload is arbitrary: the whole checksum again, not the incremental one */
	udp[6] = udp[7] = 0;
	sum = v6 ? lr_csum_add(0, l3 + 8, 32) : lr_csum_add(0, l3 + 12, 8);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, LR_IPPROTO_UDP }, 2);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, 0, ulen >> 8, (uint8_t)ulen }, 4);
	sum = lr_csum_add(sum, udp, ulen);
	c = lr_csum_fold(sum);
	lr_put16(udp + 6, c ? c : 0xffff);
	return 1;
}
