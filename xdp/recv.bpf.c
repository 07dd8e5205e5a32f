// SPDX-License-Identifier: GPL-2.0 OR MIT
/* XDP receiver: classifies frames, accounts test flows and latency at full rate, samples frames to a ring buffer. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "linerate/flow.h"
#include "linerate/probe.h"

/* Set by user space before load. */
const volatile __u16 cfg_dport = LR_DEFAULT_DST_PORT;
const volatile __u8 cfg_pass_test = 0;	/* XDP_PASS test frames instead of dropping them */
const volatile __u64 cfg_sample_every = 0;	/* sample one data frame in N per CPU; 0 = off */
const volatile __u8 cfg_sample_foreign = 0;	/* also sample every foreign frame */
const volatile __u32 cfg_snaplen = 0;	/* bytes kept of a sample, LR_RX_SNAP_MIN..LR_RX_SNAP_MAX */
/*
 * The receiver's clock minus the sender's, ns: 0 on one host; across hosts the
 * controller's estimate, measured before the receiver is loaded, so .rodata
 * holds it from the first frame on. It never changes during a test: the drift
 * over the test widens the error bound instead (docs/counting.md).
 */
const volatile __s64 cfg_clock_offset = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lr_rx_counters);
} rx_counters SEC(".maps");

/*
 * Per-flow sequence state is shared, not per-CPU: a flow arrives on one
 * queue, whose NAPI poll is serialised, but that poll may move between CPUs.
 * Per-CPU state would then invent gaps. One writer at a time per flow means
 * plain stores are enough; user space only reads.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LR_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct lr_flow_state);
} flows SEC(".maps");

/* Sampled frames for the pcap file; user space sizes it before load (4 MiB with --pcap, a page without). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} samples SEC(".maps");

/*
 * Copies the frame's first bytes into the ring buffer. The reservation size
 * comes from cfg_snaplen: .rodata is frozen before load, so the verifier
 * reads it as a constant, both for the reservation (which must be constant)
 * and for the bound on caplen. A full ring is counted, never waited for.
 */
static __always_inline void sample(struct xdp_md *ctx, struct lr_rx_counters *c, __u64 now)
{
	__u32 snap = cfg_snaplen;
	struct lr_rx_sample *rec;
	__u64 len, caplen;

	if (snap < LR_RX_SNAP_MIN || snap > LR_RX_SNAP_MAX)
		return;
	rec = bpf_ringbuf_reserve(&samples, sizeof(*rec) + snap, 0);
	if (!rec) {
		c->sample_drops++;
		return;
	}
	/* fragments included; bounds in 64 bits, the width the helper's length is checked at */
	len = bpf_xdp_get_buff_len(ctx);
	caplen = len < snap ? len : snap;
	if (caplen < 1 || bpf_xdp_load_bytes(ctx, 0, rec->data, (__u32)caplen)) {
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		return;
	}
	rec->ts_ns = now;
	rec->len = (__u32)len;
	rec->caplen = (__u32)caplen;
	bpf_ringbuf_submit(rec, 0);
	c->samples++;
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct lr_rx_counters *c;
	struct lr_flow_state *st;
	struct lr_pkt pkt = {};
	__u32 key = 0;
	__u64 now;
	int kind;

	c = bpf_map_lookup_elem(&rx_counters, &key);
	if (!c)
		return XDP_PASS;
	kind = lr_parse(data, end, cfg_dport, &pkt);
	if (kind == LR_PKT_FOREIGN) {
		c->foreign++;
		if (cfg_sample_foreign)
			sample(ctx, c, bpf_ktime_get_ns());
		return XDP_PASS;
	}
	key = pkt.flow;
	st = bpf_map_lookup_elem(&flows, &key);
	if (!st) {
		c->bad_flow++;
		return XDP_PASS;
	}
	if (kind == LR_PKT_EOT) {
		/* markers are not sampled: the capture holds data frames as the sender sent them */
		lr_rx_count_eot(c, st, &pkt);
		return cfg_pass_test ? XDP_PASS : XDP_DROP;
	}
	if (kind == LR_PKT_BACK_EOT) {
		lr_rx_count_back_eot(c, st, &pkt);
		return cfg_pass_test ? XDP_PASS : XDP_DROP;
	}
	/* a reflected frame counts on the reflector's sequence: gaps there are loss on the way back */
	/*
	 * The clock only where it is needed (lr_rx_wants_clock()): a frame
	 * with a timestamp, one frame in LR_RX_CLOCK_EVERY for the span of
	 * the arrivals, a sample. Counting never depends on sampling: count
	 * first, then maybe sample.
	 */
	now = lr_rx_wants_clock(c, &pkt) ? bpf_ktime_get_ns() : 0;
	lr_rx_count_data(c, st, &pkt, pkt.len, ctx->rx_queue_index, now, cfg_clock_offset);
	if (cfg_sample_every && c->sample_tick++ % cfg_sample_every == 0)
		sample(ctx, c, now ? now : bpf_ktime_get_ns());
	return cfg_pass_test ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
