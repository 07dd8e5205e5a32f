/* SPDX-License-Identifier: MIT */
/* Probe header on the wire and the one frame parser, shared by user space and the BPF receiver. */
#ifndef LINERATE_PROBE_H
#define LINERATE_PROBE_H

#include <linux/types.h>

/*
 * The parser below is compiled twice: into the XDP program (clang -target bpf)
 * and into user space (unit tests, AF_PACKET receiver). It therefore uses only
 * __u* types, compiler builtins, and pointer-vs-end bounds checks the verifier
 * understands.
 */
#ifndef LR_INLINE
#define LR_INLINE static inline __attribute__((always_inline))
#endif

#define LR_MAGIC_DATA	0x4c52	/* "LR": a counted test frame */
#define LR_MAGIC_EOT	0x4c45	/* "LE": end-of-test marker, carries the sender's totals */
/*
 * Round trips (send --rtt, linerate reflect): the same 18 bytes, so the
 * smallest frames work, with the tail split in two 32-bit halves. On the
 * way out: the low 32 bits of the sender's clock (0: no stamp) and the
 * sender's test id (random, never 0; markers carry it in their tail's low
 * 32 bits too), which tells the reflector a new test began; on
 * the way back the reflector writes its own per-flow sequence (the low 32
 * bits of the frames it reflected on the flow before this one) into the
 * second half. A round trip over 2^32 ns (4.29 s) aliases. A reflected
 * marker carries, instead of the sender's totals, the reflector's: frames
 * reflected on the flow in the sequence field, and the forward direction's
 * reordered and duplicate frames (32 bits each, saturating) in the tail.
 * Back frames swap the ports: they are matched on their source port.
 */
#define LR_MAGIC_RTT	0x4c54	/* "LT": a round-trip data frame on its way to the reflector */
#define LR_MAGIC_RTT_EOT 0x4c55	/* "LU": a round-trip end-of-test marker on its way */
#define LR_MAGIC_BACK	0x4c42	/* "LB": an "LT" frame the reflector sent back */
#define LR_MAGIC_BACK_EOT 0x4c43	/* "LC": an "LU" marker sent back with the reflector's totals */
#define LR_DEFAULT_DST_PORT 7447
/*
 * Source port of flow 0 unless told: 54329..65535 is a range neither
 * tcpdump 4.99 nor Wireshark decodes as any protocol (7000..7009, the old
 * default, is AFS rx to both), so a capture shows plain UDP. When the flows
 * need more room than the range has, the base moves down (lr_src_port_base).
 */
#define LR_DEFAULT_SRC_PORT 55000
#define LR_SEQ_BITS	48
#define LR_SEQ_MASK	((1ULL << LR_SEQ_BITS) - 1)
#define LR_MAX_FLOWS	65536
#define LR_PROBE_LEN	18

/* The default source port of flow 0 for @flows flows: LR_DEFAULT_SRC_PORT while they fit below 65536. */
LR_INLINE __u16 lr_src_port_base(__u32 flows)
{
	return flows > 65536 - LR_DEFAULT_SRC_PORT ? (__u16)(65536 - flows) : LR_DEFAULT_SRC_PORT;
}

/*
 * The flow count of a test from an end-of-test marker's tail: its top 16
 * bits, where LR_MAX_FLOWS (65536) is written as 0 (a test has a flow).
 */
LR_INLINE __u32 lr_eot_flows(__u64 tail)
{
	__u32 n = (__u32)(tail >> 48);

	return n ? n : LR_MAX_FLOWS;
}

/* Big-endian on the wire, every field. */
struct lr_probe {
	__u8 magic[2];
	__u8 flow[2];
	__u8 seq[6];	/* data: sequence in flow; EOT: frames the sender sent on the flow */
	/*
	 * data: CLOCK_MONOTONIC ns at queueing; EOT: flows in test (2 B, 0:
	 * 65536), 0 (2 B), the sender's run id (4 B: random, never 0; 0 from
	 * senders before it), which tells a receiver two senders share a flow
	 */
	__u8 tail[8];
} __attribute__((packed));

enum lr_pkt_kind {
	LR_PKT_FOREIGN = 0,	/* anything that is not ours */
	LR_PKT_DATA = 1,
	LR_PKT_EOT = 2,
	LR_PKT_BACK = 3,	/* a reflected round-trip data frame */
	LR_PKT_BACK_EOT = 4,	/* a reflected round-trip marker */
};

struct lr_pkt {
	/*
	 * data: sequence; EOT: frames sent on the flow; back: the reflector's
	 * sequence, rebuilt to 48 bits; back EOT: frames the reflector reflected
	 */
	__u64 seq;
	/*
	 * data: tx timestamp (round trip: its low 32 bits); EOT: flow count of
	 * the test, << 48; back EOT: forward reordered << 32 | forward duplicates
	 */
	__u64 tail;
	__u32 flow;
	__u32 len;	/* bytes from the Ethernet header on (no FCS) */
	__u32 probe_off;	/* offset of the probe header in the frame */
	__u32 tid;	/* the sender's run id: a marker's ("LE", "LU") or a round trip's ("LT"); 0: none */
	__u8 rtt;	/* a round-trip frame: the timestamp is 32 bits, latency modulo 2^32 */
	__u8 reflect;	/* data or marker on its way to a reflector ("LT", "LU") */
};

LR_INLINE __u64 lr_get_be(const __u8 *p, int n)
{
	__u64 v = 0;
	int i;

	for (i = 0; i < 8; i++)
		if (i < n)
			v = (v << 8) | p[i];
	return v;
}

LR_INLINE void lr_put_be(__u8 *p, __u64 v, int n)
{
	int i;

	for (i = 7; i >= 0; i--)
		if (i < n) {
			p[i] = (__u8)v;
			v >>= 8;
		}
}

LR_INLINE void lr_probe_encode(struct lr_probe *p, __u16 magic, __u16 flow, __u64 seq, __u64 tail)
{
	lr_put_be(p->magic, magic, 2);
	lr_put_be(p->flow, flow, 2);
	lr_put_be(p->seq, seq & LR_SEQ_MASK, 6);
	lr_put_be(p->tail, tail, 8);
}

/*
 * Big-endian fields at any offset, each one access: in BPF a direct load or
 * store, which the verifier allows at any packet offset where the CPU
 * handles unaligned access (x86-64, arm64: CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS)
 * and clang keeps whole where a memcpy would become byte accesses on this
 * target; in user space, where a buffer may sit anywhere, a memcpy the
 * compiler turns into one access. bswap is one BPF instruction (BPF_END).
 */
#ifdef __bpf__
#define LR_LOAD(T, p)		(*(const T *)(p))
#define LR_STORE(T, p, v)	(*(T *)(p) = (v))
#else
#define LR_LOAD(T, p)		({ T lr_v_; __builtin_memcpy(&lr_v_, (p), sizeof(lr_v_)); lr_v_; })
#define LR_STORE(T, p, v)	do { T lr_v_ = (v); __builtin_memcpy((p), &lr_v_, sizeof(lr_v_)); } while (0)
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LR_BE16(v)	__builtin_bswap16(v)
#define LR_BE64(v)	__builtin_bswap64(v)
#else
#define LR_BE16(v)	(v)
#define LR_BE64(v)	(v)
#endif

LR_INLINE __u16 lr_be16(const __u8 *p)
{
	return LR_BE16(LR_LOAD(__u16, p));
}

LR_INLINE __u64 lr_be64(const __u8 *p)
{
	return LR_BE64(LR_LOAD(__u64, p));
}

LR_INLINE void lr_put16(__u8 *p, __u16 v)
{
	LR_STORE(__u16, p, LR_BE16(v));
}

LR_INLINE void lr_put64(__u8 *p, __u64 v)
{
	LR_STORE(__u64, p, LR_BE64(v));
}

/*
 * The ones'-complement sum of the four 16-bit words of @v, not folded (at
 * most 4 * 0xffff): pairs of words added in two 32-bit lanes, then the lanes.
 */
LR_INLINE __u64 lr_csum_words64(__u64 v)
{
	v = (v & 0x0000ffff0000ffffULL) + ((v >> 16) & 0x0000ffff0000ffffULL);
	return (v & 0xffffffffULL) + (v >> 32);
}

/*
 * Writes the UDP source port, the probe and the UDP checksum at @udp, from
 * @csum_base: the checksum sum of the frame with source port and probe
 * zeroed, folded to 17 bits. Incremental, so the payload is never re-read;
 * shared by the user-space engines and the live-frames BPF program, where
 * it runs for every frame: three wide stores for the probe (8 + 2 + 8
 * bytes) and the sum taken from the values, not from the bytes written.
 */
LR_INLINE void lr_probe_stamp(__u8 *udp, __u32 csum_base, __u16 sport, __u16 magic, __u16 flow, __u64 seq,
			      __u64 tail)
{
	__u8 *p = udp + 8;
	__u64 sum, head;
	__u16 c;

	seq &= LR_SEQ_MASK;
	/* magic, flow and the sequence's high 32 bits; then its low 16; then the tail */
	head = ((__u64)magic << 48) | ((__u64)flow << 32) | (seq >> 16);
	lr_put64(p, head);
	lr_put16(p + 8, (__u16)seq);
	lr_put64(p + 10, tail);
	lr_put16(udp, sport);
	/* under 2^21: a 17-bit base and eleven 16-bit words */
	sum = (__u64)csum_base + sport + lr_csum_words64(head) + (seq & 0xffff) + lr_csum_words64(tail);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	c = (__u16)~sum;
	lr_put16(udp + 6, c ? c : 0xffff);	/* 0 would mean "no checksum" */
}

/*
 * The reflector's 48-bit sequence of a reflected frame from its low 32 bits
 * @r and the frame's own sequence @seq: the two differ by the forward loss
 * (and reordering) on the flow so far, which stays far below 2^31.
 */
LR_INLINE __u64 lr_rtt_back_seq(__u64 seq, __u32 r)
{
	return (seq - (__u64)(__s64)(__s32)((__u32)seq - r)) & LR_SEQ_MASK;
}

/* The 32-bit send stamp of a round-trip frame: 0 means none, so a clock reading of 0 becomes 1. */
LR_INLINE __u64 lr_rtt_tail(__u64 now)
{
	__u32 t = (__u32)now;

	return (__u64)(t ? t : 1) << 32;
}

/* Ethernet, at most one 802.1Q/802.1ad tag, IPv4 (any IHL, unfragmented) or IPv6 (no extension headers), UDP. */
#define LR_ETH_HLEN	14
#define LR_ETH_P_IP	0x0800
#define LR_ETH_P_IPV6	0x86dd
#define LR_ETH_P_8021Q	0x8100
#define LR_ETH_P_8021AD	0x88a8
#define LR_IPPROTO_UDP	17

/*
 * The UDP header of an Ethernet frame (at most one VLAN tag, IPv4 of any
 * IHL and unfragmented, or IPv6 without extension headers), with its 8
 * bytes inside @end; NULL otherwise. *l3 gets the IP header, *v6 the family.
 */
LR_INLINE const __u8 *lr_find_udp(const void *data, const void *end, const __u8 **l3out, int *v6)
{
	const __u8 *p = (const __u8 *)data;
	const __u8 *l3, *l4;
	__u16 proto;

	if (p + LR_ETH_HLEN > (const __u8 *)end)
		return 0;
	proto = lr_be16(p + 12);
	l3 = p + LR_ETH_HLEN;
	if (proto == LR_ETH_P_8021Q || proto == LR_ETH_P_8021AD) {
		if (l3 + 4 > (const __u8 *)end)
			return 0;
		proto = lr_be16(l3 + 2);
		l3 += 4;
	}
	if (proto == LR_ETH_P_IP) {
		__u32 ihl;

		if (l3 + 20 > (const __u8 *)end)
			return 0;
		if ((l3[0] >> 4) != 4 || l3[9] != LR_IPPROTO_UDP)
			return 0;
		/* a fragment (MF set or an offset) is never a whole test frame */
		if (((l3[6] & 0x3f) | l3[7]) != 0)
			return 0;
		ihl = (l3[0] & 0x0f) * 4;
		if (ihl < 20)
			return 0;
		l4 = l3 + ihl;
		*v6 = 0;
	} else if (proto == LR_ETH_P_IPV6) {
		if (l3 + 40 > (const __u8 *)end)
			return 0;
		if ((l3[0] >> 4) != 6 || l3[6] != LR_IPPROTO_UDP)
			return 0;
		l4 = l3 + 40;
		*v6 = 1;
	} else {
		return 0;
	}
	if (l4 + 8 > (const __u8 *)end)
		return 0;
	*l3out = l3;
	return l4;
}

/*
 * Classifies one frame. @data/@end bound it; @dport is the test's UDP
 * destination port (host order). Fills @out for LR_PKT_DATA and LR_PKT_EOT.
 */
LR_INLINE int lr_parse(const void *data, const void *end, __u16 dport, struct lr_pkt *out)
{
	const __u8 *p = (const __u8 *)data;
	const __u8 *l3, *l4;
	const struct lr_probe *pr;
	__u64 head;
	__u16 magic;
	int v6;

	l4 = lr_find_udp(data, end, &l3, &v6);
	if (!l4)
		return LR_PKT_FOREIGN;
	if (l4 + 8 + LR_PROBE_LEN > (const __u8 *)end)
		return LR_PKT_FOREIGN;
	pr = (const struct lr_probe *)(l4 + 8);
	/* three loads: magic, flow and the sequence's high 32 bits; its low 16; the tail */
	head = lr_be64(pr->magic);
	magic = (__u16)(head >> 48);
	/* on the way out the test port is the destination; reflected, the source */
	if (lr_be16(magic == LR_MAGIC_BACK || magic == LR_MAGIC_BACK_EOT ? l4 : l4 + 2) != dport)
		return LR_PKT_FOREIGN;
	out->flow = (__u16)(head >> 32);
	out->seq = ((head & 0xffffffffULL) << 16) | lr_be16(pr->seq + 4);
	out->tail = lr_be64(pr->tail);
	out->len = (__u32)((const __u8 *)end - p);
	out->probe_off = (__u32)((const __u8 *)pr - p);
	out->rtt = 0;
	out->reflect = 0;
	out->tid = 0;
	switch (magic) {
	case LR_MAGIC_DATA:
		return LR_PKT_DATA;
	case LR_MAGIC_EOT:
		out->tid = (__u32)out->tail;
		return LR_PKT_EOT;
	case LR_MAGIC_RTT:
		out->tid = (__u32)out->tail;
		out->tail >>= 32;
		out->rtt = 1;
		out->reflect = 1;
		return LR_PKT_DATA;
	case LR_MAGIC_RTT_EOT:
		out->tid = (__u32)out->tail;
		out->reflect = 1;
		return LR_PKT_EOT;
	case LR_MAGIC_BACK:
		out->seq = lr_rtt_back_seq(out->seq, (__u32)out->tail);
		out->tail >>= 32;
		out->rtt = 1;
		return LR_PKT_BACK;
	case LR_MAGIC_BACK_EOT:
		return LR_PKT_BACK_EOT;
	}
	return LR_PKT_FOREIGN;
}

#endif
