// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Live-frames sender: run by BPF_PROG_RUN over the template, stamps each frame and redirects it out. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "linerate/live.h"
#include "linerate/probe.h"

/* Set by user space before load. */
const volatile __u32 cfg_ifindex;
const volatile __u32 cfg_l4_off;	/* UDP header in the template */
const volatile __u32 cfg_csum_base;	/* UDP checksum sum with source port and probe zeroed */
const volatile __u16 cfg_src_port;	/* of flow 0 */
/* The first bytes of the template (headers, probe, padding), in 8-byte words. */
const volatile __u64 cfg_head[LR_LIVE_HEAD_WORDS];
const volatile __u32 cfg_head_words;
/* send --rtt: round-trip frames for a reflector ("LT", "LU"), with 32-bit stamps */
const volatile __u8 cfg_rtt;
const volatile __u32 cfg_rtt_id;	/* the run id, in every marker and round-trip frame */
/*
 * --pcap: the program copies chosen data frames to the samples ring. A
 * constant, so that when it is off the verifier prunes the sampling code
 * and the frames that are not sampled pay nothing for it.
 */
const volatile __u8 cfg_sample;
const volatile __u32 cfg_snaplen;	/* bytes kept of a sample: the template's length, <= LR_LIVE_SNAP_MAX */

/* Sampled frames, drained by the worker after each run; the engine sizes it before load (a page when off). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} samples SEC(".maps");

/*
 * In .bss, which the engine reads and writes through the skeleton's memory
 * map, with no syscall: each worker loads its own copy of this program and
 * runs it on its own pinned CPU only, so there is one writer at a time and
 * the engine looks only between runs. live_seq[k] counts the frames sent on
 * the worker's k-th flow (flow first + k * stride).
 */
struct lr_live_state live_st;
__u64 live_seq[LR_MAX_FLOWS];

/* Whether this data frame is one --pcap keeps: the first sample_left, or one in sample_every from the first. */
static __always_inline int sample_due(struct lr_live_state *s)
{
	if (s->sample_every) {
		if (s->sample_wait) {
			s->sample_wait--;
			return 0;
		}
		s->sample_wait = s->sample_every - 1;
		return 1;
	}
	if (!s->sample_left)
		return 0;
	s->sample_left--;
	return 1;
}

/*
 * Copies the frame as it leaves into the ring. The reservation size comes
 * from cfg_snaplen, a constant to the verifier (.rodata is frozen before
 * load), as the reservation must be. A full ring is counted, never waited
 * for. No wake-up: nobody sleeps on the ring, the worker reads it between
 * runs.
 */
static __always_inline void sample(struct lr_live_state *s, struct xdp_md *ctx, __u64 ts)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 snap = cfg_snaplen;
	struct lr_live_sample *rec;
	__u64 len, caplen;

	if (snap < 1 || snap > LR_LIVE_SNAP_MAX)
		return;
	rec = bpf_ringbuf_reserve(&samples, sizeof(*rec) + snap, 0);
	if (!rec) {
		s->sample_drops++;
		return;
	}
	/* a live frame is one linear buffer (no fragments); 64-bit bounds, as the helper checks its length */
	len = (__u64)(end - data);
	caplen = len < snap ? len : snap;
	if (caplen < 1 || bpf_xdp_load_bytes(ctx, 0, rec->data, (__u32)caplen)) {
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		return;
	}
	rec->ts_ns = ts;
	rec->len = (__u32)len;
	rec->caplen = (__u32)caplen;
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

SEC("xdp")
int xdp_live(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct lr_live_state *s = &live_st;
	__u32 k, flow, off = cfg_l4_off, words = cfg_head_words;
	__u64 *seq, sq, tail, now = 0;
	__u8 *udp;
	__u32 i;

	/*
	 * No check of the ingress device: the holding tap is ours, down and
	 * never written to, so no frame can arrive on it, and the program is
	 * attached nowhere else. The bounds: .rodata is frozen, so the
	 * verifier reads @off and @words as constants and one check covers
	 * every store below.
	 */
	if (off > 256 || words > LR_LIVE_HEAD_WORDS)
		return XDP_ABORTED;
	udp = (__u8 *)data + off;
	if (udp + 8 + LR_PROBE_LEN > (__u8 *)end || (__u8 *)data + 8 * words > (__u8 *)end)
		return XDP_ABORTED;

	/*
	 * Live frames recycle their pages, and whatever handled a frame may
	 * have rewritten it in place: a router forwarding it writes new MACs,
	 * a TTL and an IP checksum. So every frame gets the template's headers
	 * back before it is stamped, or it would leave with the router's MACs.
	 */
#pragma unroll
	for (i = 0; i < LR_LIVE_HEAD_WORDS; i++)
		if (i < words)
			*(__u64 *)((__u8 *)data + 8 * i) = cfg_head[i];

	/* no flows in the state (lr_live_try()): abort, nothing is redirected */
	k = s->cur;
	if (k >= s->nflows || k >= LR_MAX_FLOWS)
		return XDP_ABORTED;
	flow = s->first + k * s->stride;
	if (++s->cur >= s->nflows)
		s->cur = 0;
	seq = &live_seq[k];
	if (s->eot) {
		sq = *seq;
		tail = ((__u64)s->flows_total << 48) | cfg_rtt_id;
	} else {
		/*
		 * --latency-every: a timestamp in the frames whose sequence is
		 * a multiple of the power of two stamp_mask + 1, 0 ("none") in
		 * the others; every frame keeps its flow and sequence.
		 */
		sq = (*seq)++;
		now = sq & s->stamp_mask ? 0 : bpf_ktime_get_ns();
		tail = cfg_rtt ? (now ? lr_rtt_tail(now) : 0) | cfg_rtt_id : now;
	}

	lr_probe_stamp(udp, cfg_csum_base, (__u16)(cfg_src_port + flow),
		       cfg_rtt ? (s->eot ? LR_MAGIC_RTT_EOT : LR_MAGIC_RTT) : (s->eot ? LR_MAGIC_EOT : LR_MAGIC_DATA),
		       (__u16)flow, sq, tail);
	s->sent++;
	/* stamped and counted first: sampling never changes what is sent or counted; markers are not sampled */
	if (cfg_sample && !s->eot && sample_due(s))
		sample(s, ctx, now ? now : bpf_ktime_get_ns());
	return bpf_redirect(cfg_ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
