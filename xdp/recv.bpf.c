// SPDX-License-Identifier: GPL-2.0 OR MIT
/* XDP receiver: classifies frames, accounts test flows and latency at full rate. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "linerate/probe.h"
#include "linerate/flow.h"

/* Set by user space before load. */
const volatile __u16 cfg_dport = LR_DEFAULT_DST_PORT;
const volatile __u8 cfg_pass_test = 0;	/* XDP_PASS test frames instead of dropping them */

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

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct lr_rx_counters *c;
	struct lr_flow_state *st;
	struct lr_pkt pkt = {};
	__u32 key = 0;
	int kind;

	c = bpf_map_lookup_elem(&rx_counters, &key);
	if (!c)
		return XDP_PASS;
	kind = lr_parse(data, end, cfg_dport, &pkt);
	if (kind == LR_PKT_FOREIGN) {
		c->foreign++;
		return XDP_PASS;
	}
	key = pkt.flow;
	st = bpf_map_lookup_elem(&flows, &key);
	if (!st) {
		c->bad_flow++;
		return XDP_PASS;
	}
	if (kind == LR_PKT_EOT)
		lr_rx_count_eot(c, st, &pkt);
	else
		lr_rx_count_data(c, st, &pkt, pkt.len, ctx->rx_queue_index, bpf_ktime_get_ns());
	return cfg_pass_test ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
