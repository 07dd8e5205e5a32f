// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Live-frames sender: run by BPF_PROG_RUN over the template, stamps each frame and redirects it out. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "linerate/probe.h"
#include "linerate/live.h"

/* Set by user space before load. */
const volatile __u32 cfg_ifindex;
const volatile __u32 cfg_l4_off;	/* UDP header in the template */
const volatile __u32 cfg_csum_base;	/* UDP checksum sum with source port and probe zeroed */
const volatile __u16 cfg_src_port;	/* of flow 0 */
/* The first bytes of the template (headers, probe, padding), in 8-byte words. */
const volatile __u64 cfg_head[LR_LIVE_HEAD_WORDS];
const volatile __u32 cfg_head_words;
/* The idle tap the program is attached to only to keep it in the XDP dispatcher (see engine_live.c). */
const volatile __u32 cfg_hold_ifindex;

/*
 * In .bss, which the engine reads and writes through the skeleton's memory
 * map, with no syscall: each worker loads its own copy of this program and
 * runs it on its own pinned CPU only, so there is one writer at a time and
 * the engine looks only between runs. live_seq[k] counts the frames sent on
 * the worker's k-th flow (flow first + k * stride).
 */
struct lr_live_state live_st;
__u64 live_seq[LR_MAX_FLOWS];

SEC("xdp")
int xdp_live(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct lr_live_state *s = &live_st;
	__u32 k, flow, off = cfg_l4_off;
	__u64 *seq, sq, tail;
	__u8 *udp;
	__u32 i;

	/* a frame that really came in on the holding tap (it is down: none should) is not ours */
	if (cfg_hold_ifindex && ctx->ingress_ifindex == cfg_hold_ifindex)
		return XDP_PASS;
	if (!s->nflows)
		return XDP_ABORTED;
	if (off > 256)
		return XDP_ABORTED;
	udp = (__u8 *)data + off;
	if (udp + 8 + LR_PROBE_LEN > (__u8 *)end)
		return XDP_ABORTED;

	/*
	 * Live frames recycle their pages, and whatever handled a frame may
	 * have rewritten it in place: a router forwarding it writes new MACs,
	 * a TTL and an IP checksum. So every frame gets the template's headers
	 * back before it is stamped, or it would leave with the router's MACs.
	 */
#pragma unroll
	for (i = 0; i < LR_LIVE_HEAD_WORDS; i++) {
		if (i >= cfg_head_words)
			break;
		if ((__u8 *)data + 8 * i + 8 > (__u8 *)end)
			break;
		*(__u64 *)((__u8 *)data + 8 * i) = cfg_head[i];
	}

	k = s->cur;
	if (k >= LR_MAX_FLOWS)
		return XDP_ABORTED;
	flow = s->first + k * s->stride;
	if (++s->cur >= s->nflows)
		s->cur = 0;
	seq = &live_seq[k];
	if (s->eot) {
		sq = *seq;
		tail = (__u64)s->flows_total << 48;
	} else {
		sq = (*seq)++;
		tail = bpf_ktime_get_ns();
	}

	lr_probe_stamp(udp, cfg_csum_base, (__u16)(cfg_src_port + flow), s->eot ? LR_MAGIC_EOT : LR_MAGIC_DATA,
		       (__u16)flow, sq, tail);
	s->sent++;
	return bpf_redirect(cfg_ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
