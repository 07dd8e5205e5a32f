/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the frame parser both receivers run on whatever arrives (lr_parse(), compiled
 * into the XDP program and the AF_PACKET receiver), the flow accounting behind it, and the two
 * stampers: replay's, which recomputes the UDP checksum in full (lr_frame_stamp_udp()), and the
 * engines' incremental one (lr_probe_stamp()), which must give the same checksum from a base sum.
 * The frame sits in a buffer of exactly its size, so ASan catches any read past its end.
 */
/*
 * CC=clang cmake -S . -B build-fuzz -DLINERATE_FUZZ=ON -DBUILD_TESTING=OFF
 * cmake --build build-fuzz --target fuzz_frame
 * build-fuzz/tests/fuzz/fuzz_frame -dict=tests/fuzz/frame.dict -max_total_time=60 CORPUS_DIR
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linerate/flow.h"
#include "linerate/probe.h"
#include "tx/frame.h"

#define CHECK(cond)                        \
	do {                               \
		if (!(cond))               \
			__builtin_trap();  \
	} while (0)

static struct lr_rx_counters counters;
static struct lr_flow_state flows[LR_MAX_FLOWS];

/* The UDP checksum base of a parsed frame: pseudo header and UDP with port, checksum and probe zero. */
static uint32_t csum_base(uint8_t *f, const struct lr_pkt *pkt)
{
	const uint8_t *l3;
	uint8_t *udp, save[8 + LR_PROBE_LEN];
	unsigned int ulen;
	uint32_t sum;
	int v6;

	udp = (uint8_t *)lr_find_udp(f, f + pkt->len, &l3, &v6);
	CHECK(udp && udp + 8 == f + pkt->probe_off);
	ulen = lr_be16(udp + 4);
	memcpy(save, udp, sizeof(save));
	udp[0] = udp[1] = udp[6] = udp[7] = 0;
	memset(udp + 8, 0, LR_PROBE_LEN);
	sum = v6 ? lr_csum_add(0, l3 + 8, 32) : lr_csum_add(0, l3 + 12, 8);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, LR_IPPROTO_UDP }, 2);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, 0, ulen >> 8, (uint8_t)ulen }, 4);
	sum = lr_csum_add(sum, udp, ulen);
	memcpy(udp, save, sizeof(save));
	sum = (sum & 0xffff) + (sum >> 16);
	return (sum & 0xffff) + (sum >> 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lr_pkt pkt = { 0 }, again = { 0 };
	uint8_t *f, *g;
	int kind;

	if (size > 9216)
		return 0;
	f = malloc(size ? size : 1);
	g = malloc(size ? size : 1);
	CHECK(f && g);
	memcpy(f, data, size);
	kind = lr_parse(f, f + size, LR_DEFAULT_DST_PORT, &pkt);
	CHECK(kind == LR_PKT_FOREIGN || kind == LR_PKT_DATA || kind == LR_PKT_EOT);
	if (kind == LR_PKT_FOREIGN)
		goto out;
	CHECK(pkt.len == size && pkt.probe_off + LR_PROBE_LEN <= size);
	CHECK(pkt.flow < LR_MAX_FLOWS && pkt.seq <= LR_SEQ_MASK);
	if (kind == LR_PKT_DATA) {
		uint64_t before = counters.packets;

		lr_rx_count_data(&counters, &flows[pkt.flow], &pkt, pkt.len, 0,
				 lr_rx_wants_clock(&counters, &pkt) ? 1 + size : 0, 0);
		CHECK(counters.packets == before + 1 && counters.span_packets <= counters.packets);
	} else {
		lr_rx_count_eot(&counters, &flows[pkt.flow], &pkt);
	}
	/* replay's stamp: the same fields back, when the UDP length fits the frame */
	memcpy(g, f, size);
	if (lr_frame_stamp_udp(g, (unsigned int)size, LR_DEFAULT_DST_PORT, kind == LR_PKT_DATA ? LR_MAGIC_DATA :
			       LR_MAGIC_EOT, (uint16_t)pkt.flow, pkt.seq, pkt.tail)) {
		unsigned int ck = pkt.probe_off - 2;

		CHECK(lr_parse(g, g + size, LR_DEFAULT_DST_PORT, &again) == kind);
		CHECK(again.flow == pkt.flow && again.seq == pkt.seq && again.tail == pkt.tail);
		/* the incremental stamp from the base sum writes the same checksum as the full one */
		lr_probe_stamp(f + pkt.probe_off - 8, csum_base(f, &pkt), lr_be16(f + pkt.probe_off - 8),
			       kind == LR_PKT_DATA ? LR_MAGIC_DATA : LR_MAGIC_EOT, (uint16_t)pkt.flow, pkt.seq, pkt.tail);
		CHECK(f[ck] == g[ck] && f[ck + 1] == g[ck + 1]);
		CHECK(!memcmp(f, g, size));
	}
out:
	free(f);
	free(g);
	return 0;
}
