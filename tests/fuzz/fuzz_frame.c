/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the frame parser both receivers run on whatever arrives (lr_parse(), compiled
 * into the XDP program and the AF_PACKET receiver), the flow accounting behind it, and the two
 * stampers: replay's, which recomputes the UDP checksum in full (lr_frame_stamp_udp()), and the
 * engines' incremental one (lr_probe_stamp()), which must give the same checksum from a base sum.
 * A round-trip frame ("LT", "LU") also goes through the reflector's rewrite (lr_reflect_rewrite()):
 * it must parse back as "LB" / "LC" on the same flow, with checksums that stay valid.
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
#include "linerate/reflect.h"
#include "tx/frame.h"
#include "reach.h"

#define CHECK(cond)                        \
	do {                               \
		if (!(cond))               \
			__builtin_trap();  \
	} while (0)

static struct lr_rx_counters counters;
static struct lr_flow_state flows[LR_MAX_FLOWS];

/* each kind of test frame parsed, the reflector's rewrite, replay's stamp */
enum { R_DATA, R_EOT, R_BACK, R_BACK_EOT, R_REFLECT, R_STAMP };
static struct fuzz_reach reached[] = {
	[R_DATA] = { "data" }, [R_EOT] = { "eot" }, [R_BACK] = { "back" }, [R_BACK_EOT] = { "back_eot" },
	[R_REFLECT] = { "reflect" }, [R_STAMP] = { "stamp" }, { NULL }
};

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

/*
 * The UDP checksum verified from scratch: the folded sum over pseudo header, UDP header and payload,
 * checksum included, 0xffff when valid; 0 when the UDP length does not cover the probe or does not
 * fit the frame (the probe outside the sum, or a length that lies: nothing to verify).
 */
static uint16_t udp_sum(const uint8_t *f, size_t size, const uint8_t *l3, const uint8_t *udp, int v6)
{
	unsigned int ulen = lr_be16(udp + 4);
	uint32_t sum;

	if (ulen < 8 + LR_PROBE_LEN || udp + ulen > f + size)
		return 0;
	sum = v6 ? lr_csum_add(0, l3 + 8, 32) : lr_csum_add(0, l3 + 12, 8);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, LR_IPPROTO_UDP }, 2);
	sum = lr_csum_add(sum, (uint8_t[]){ 0, 0, ulen >> 8, (uint8_t)ulen }, 4);
	sum = lr_csum_add(sum, udp, ulen);
	return (uint16_t)~lr_csum_fold(sum);
}

/*
 * The reflector on a copy of a frame to reflect: it comes back as the other kind on the same flow,
 * with the reflector's sequence and the stamp or totals, everything swapped, the rest untouched,
 * and checksums that were valid still valid (an IPv4 UDP checksum of 0 stays 0).
 */
static void check_reflect(const uint8_t *data, size_t size, uint8_t *h, int kind, const struct lr_pkt *pkt)
{
	const int eot = kind == LR_PKT_EOT;
	const uint64_t rseq = pkt->seq ^ 0x5a5a;
	const size_t pend = pkt->probe_off + LR_PROBE_LEN;
	struct lr_pkt back = { 0 };
	const uint8_t *l3;
	uint8_t *udp;
	unsigned int ihl = 0;
	int v6, udp_ok, ip_ok = 0;
	uint16_t c0;

	memcpy(h, data, size);
	udp = (uint8_t *)lr_find_udp(h, h + size, &l3, &v6);
	CHECK(udp && udp + 8 == h + pkt->probe_off);
	c0 = lr_be16(udp + 6);
	udp_ok = udp_sum(h, size, l3, udp, v6) == 0xffff;
	if (!v6) {
		ihl = (l3[0] & 0x0f) * 4u;
		ip_ok = lr_csum_fold(lr_csum_add(0, l3, ihl)) == 0;
	}
	lr_reflect_rewrite(h, (uint8_t *)l3, v6, udp, eot, rseq, pkt->tail);

	CHECK(lr_parse(h, h + size, LR_DEFAULT_DST_PORT, &back) == (eot ? LR_PKT_BACK_EOT : LR_PKT_BACK));
	CHECK(back.flow == pkt->flow && back.len == pkt->len && back.probe_off == pkt->probe_off);
	/* rseq differs from the frame's sequence in its low 16 bits: well within lr_rtt_back_seq()'s 2^31 */
	CHECK(back.seq == (rseq & LR_SEQ_MASK) && back.tail == pkt->tail);
	CHECK(back.rtt == !eot && !back.reflect);
	CHECK(!memcmp(h, data + 6, 6) && !memcmp(h + 6, data, 6));
	CHECK(lr_be16(udp) == lr_be16(data + (udp - h) + 2) && lr_be16(udp + 2) == lr_be16(data + (udp - h)));
	CHECK(l3[v6 ? 7 : 8] == LR_REFLECT_TTL);
	if (v6)
		CHECK(!memcmp(l3 + 8, data + (l3 - h) + 24, 16) && !memcmp(l3 + 24, data + (l3 - h) + 8, 16));
	else
		CHECK(!memcmp(l3 + 12, data + (l3 - h) + 16, 4) && !memcmp(l3 + 16, data + (l3 - h) + 12, 4));
	CHECK(!memcmp(h + pend, data + pend, size - pend));
	if (!v6 && ip_ok)
		CHECK(lr_csum_fold(lr_csum_add(0, l3, ihl)) == 0);
	if (!v6 && !c0) {
		CHECK(lr_be16(udp + 6) == 0);
	} else if (udp_ok) {
		CHECK(lr_be16(udp + 6) != 0);
		CHECK(udp_sum(h, size, l3, udp, v6) == 0xffff);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	reach_init("fuzz_frame", reached);
	return 0;
}

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
	CHECK(kind == LR_PKT_FOREIGN || kind == LR_PKT_DATA || kind == LR_PKT_EOT || kind == LR_PKT_BACK ||
	      kind == LR_PKT_BACK_EOT);
	if (kind == LR_PKT_FOREIGN)
		goto out;
	reached[kind == LR_PKT_DATA ? R_DATA : kind == LR_PKT_EOT ? R_EOT : kind == LR_PKT_BACK ? R_BACK :
		R_BACK_EOT].n++;
	CHECK(pkt.len == size && pkt.probe_off + LR_PROBE_LEN <= size);
	CHECK(pkt.flow < LR_MAX_FLOWS && pkt.seq <= LR_SEQ_MASK);
	/* a round trip's stamp is 32 bits; only frames on their way out are reflected */
	CHECK(!pkt.rtt || pkt.tail <= 0xffffffffULL);
	CHECK(!pkt.reflect || kind == LR_PKT_DATA || kind == LR_PKT_EOT);
	if (kind == LR_PKT_DATA || kind == LR_PKT_BACK) {
		uint64_t before = counters.packets;

		lr_rx_count_data(&counters, &flows[pkt.flow], &pkt, pkt.len, 0,
				 lr_rx_wants_clock(&counters, &pkt) ? 1 + size : 0, 0);
		CHECK(counters.packets == before + 1 && counters.span_packets <= counters.packets);
	} else if (kind == LR_PKT_BACK_EOT) {
		lr_rx_count_back_eot(&counters, &flows[pkt.flow], &pkt);
		CHECK(flows[pkt.flow].eot_sent == pkt.seq);
		CHECK(flows[pkt.flow].fwd_late == (uint32_t)(pkt.tail >> 32));
		CHECK(flows[pkt.flow].fwd_dups == (uint32_t)pkt.tail);
	} else {
		lr_rx_count_eot(&counters, &flows[pkt.flow], &pkt);
	}
	if (pkt.reflect) {
		uint8_t *h = malloc(size);

		CHECK(h);
		check_reflect(data, size, h, kind, &pkt);
		free(h);
		reached[R_REFLECT].n++;
	}
	/* the stampers below write frames on their way out only */
	if (kind == LR_PKT_BACK || kind == LR_PKT_BACK_EOT)
		goto out;
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
		reached[R_STAMP].n++;
	}
out:
	free(f);
	free(g);
	return 0;
}
