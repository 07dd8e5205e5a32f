/* SPDX-License-Identifier: MIT */
/* The reflector's frame rewrite, shared by its XDP program and the unit tests: a round-trip frame turned back. */
#ifndef LINERATE_REFLECT_H
#define LINERATE_REFLECT_H

#include <linux/types.h>
#include "linerate/flow.h"
#include "linerate/probe.h"

#define LR_REFLECT_TTL	64	/* TTL / hop limit of a reflected frame */

/* Ones'-complement sum @sum (unfolded, under 2^48) folded to 16 bits. */
LR_INLINE __u16 lr_csum_fold16(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/*
 * The checksum @csum (as in the header) after 16-bit words summing to
 * @old became words summing to @new, both unfolded sums of at most 2^40:
 * RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), with ~m of a sum of k words
 * taken as k * 0xffff - m.
 */
LR_INLINE __u16 lr_csum_replace(__u16 csum, __u64 old, __u64 new_, __u32 words)
{
	__u64 sum = (__u64)(__u16)~csum + (__u64)words * 0xffff - old + new_;

	return (__u16)~lr_csum_fold16(sum);
}

/* Swaps @n bytes at @a and @b (n a constant: the compiler unrolls it, in BPF too). */
LR_INLINE void lr_swap_bytes(__u8 *a, __u8 *b, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__u8 t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/*
 * Turns a round-trip frame around in place: @data is the frame, @l3 its IP
 * header (@v6 its family), @udp its UDP header with the probe after it,
 * all within bounds the caller checked (lr_find_udp() and the probe's 18
 * bytes). Swaps the Ethernet addresses, the IP addresses and the UDP ports,
 * sets TTL / hop limit to LR_REFLECT_TTL, and rewrites the probe:
 *  - data ("LT"): magic "LB", and @rseq's low 32 bits into the second half of the tail;
 *  - marker ("LU"): magic "LC", @rseq (frames reflected on the flow) as the
 *    sequence, @tail (forward reordered << 32 | duplicates) as the tail.
 * Checksums are updated, not recomputed: the IPv4 header's for the TTL,
 * UDP's for the probe (swapping addresses and ports leaves a sum alone);
 * an IPv4 UDP checksum of 0 (none) stays 0. VLAN tags stay as they are.
 */
LR_INLINE void lr_reflect_rewrite(__u8 *data, __u8 *l3, int v6, __u8 *udp, int eot, __u64 rseq, __u64 tail)
{
	__u8 *pr = udp + 8;
	__u64 old_head, new_head, old_tail, new_tail, new_seq;
	__u16 old_lo, new_lo, c;

	lr_swap_bytes(data, data + 6, 6);
	if (v6) {
		lr_swap_bytes(l3 + 8, l3 + 24, 16);
		l3[7] = LR_REFLECT_TTL;
	} else {
		__u16 old_w = lr_be16(l3 + 8), new_w = (__u16)((LR_REFLECT_TTL << 8) | l3[9]);

		lr_swap_bytes(l3 + 12, l3 + 16, 4);
		l3[8] = LR_REFLECT_TTL;
		lr_put16(l3 + 10, lr_csum_replace(lr_be16(l3 + 10), old_w, new_w, 1));
	}
	lr_swap_bytes(udp, udp + 2, 2);

	/* the probe as three values, the way lr_probe_stamp() writes it: 8 + 2 + 8 bytes */
	old_head = lr_be64(pr);
	old_lo = lr_be16(pr + 8);
	old_tail = lr_be64(pr + 10);
	if (eot) {
		new_seq = rseq & LR_SEQ_MASK;
		new_head = ((__u64)LR_MAGIC_BACK_EOT << 48) | (old_head & 0x0000ffff00000000ULL) | (new_seq >> 16);
		new_lo = (__u16)new_seq;
		new_tail = tail;
	} else {
		new_head = ((__u64)LR_MAGIC_BACK << 48) | (old_head & 0x0000ffffffffffffULL);
		new_lo = old_lo;
		new_tail = (old_tail & 0xffffffff00000000ULL) | (__u32)rseq;
	}
	lr_put64(pr, new_head);
	lr_put16(pr + 8, new_lo);
	lr_put64(pr + 10, new_tail);
	c = lr_be16(udp + 6);
	if (c || v6) {
		c = lr_csum_replace(c, lr_csum_words64(old_head) + old_lo + lr_csum_words64(old_tail),
				    lr_csum_words64(new_head) + new_lo + lr_csum_words64(new_tail), 9);
		lr_put16(udp + 6, c ? c : 0xffff);	/* 0 would mean "no checksum" */
	}
}

/*
 * A frame of another test than the flow's counts belong to (its test id,
 * @tid, differs) starts the flow's counts over, so a reflector that stays
 * up numbers every test's frames from 0: data frames and markers alike (a
 * flow may carry no data in a test), and whether or not the last test's
 * markers came. A late frame of the same test never resets anything.
 */
LR_INLINE void lr_reflect_flow_renew(struct lr_flow_state *st, __u32 tid)
{
	if (st->test_id == tid)
		return;
	__builtin_memset(st, 0, sizeof(*st));	/* a constant size: plain stores, in BPF too */
	st->test_id = tid;
}

/* The tail of a reflected marker: the forward direction's reordered and duplicate frames on the flow. */
LR_INLINE __u64 lr_reflect_eot_tail(const struct lr_flow_state *st)
{
	return ((__u64)lr_sat32(st->late) << 32) | lr_sat32(st->dups);
}

#endif
