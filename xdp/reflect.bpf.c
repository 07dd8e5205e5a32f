// SPDX-License-Identifier: GPL-2.0 OR MIT
/* XDP reflector: counts round-trip test frames like the receiver, numbers them per flow and sends them back (XDP_TX). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "linerate/flow.h"
#include "linerate/probe.h"
#include "linerate/reflect.h"

/* Set by user space before load. */
const volatile __u16 cfg_dport = LR_DEFAULT_DST_PORT;

/*
 * The receiver's counters, per CPU: packets are the data frames reflected,
 * eot the markers reflected, foreign what passed untouched (other traffic,
 * and one-way test frames, which no sender waits for); the latency is the
 * forward one-way time modulo 2^32 ns, which holds on one host only.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lr_rx_counters);
} rx_counters SEC(".maps");

/* Shared, not per-CPU, as in the receiver: one writer per flow at a time. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LR_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct lr_flow_state);
} flows SEC(".maps");

SEC("xdp")
int xdp_reflect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct lr_rx_counters *c;
	struct lr_flow_state *st;
	struct lr_pkt pkt = {};
	const __u8 *l3, *l4;
	__u32 key = 0;
	__u64 rseq, now;
	int kind, v6;

	c = bpf_map_lookup_elem(&rx_counters, &key);
	if (!c)
		return XDP_PASS;
	kind = lr_parse(data, end, cfg_dport, &pkt);
	if ((kind != LR_PKT_DATA && kind != LR_PKT_EOT) || !pkt.reflect) {
		c->foreign++;
		return XDP_PASS;
	}
	/* the headers again, for pointers the verifier holds bounds on */
	l4 = lr_find_udp(data, end, &l3, &v6);
	if (!l4 || l4 + 8 + LR_PROBE_LEN > (const __u8 *)end)
		return XDP_PASS;
	key = pkt.flow;
	st = bpf_map_lookup_elem(&flows, &key);
	if (!st) {
		c->bad_flow++;
		return XDP_PASS;
	}
	lr_reflect_flow_renew(st, pkt.tid);
	if (kind == LR_PKT_EOT) {
		lr_rx_count_eot(c, st, &pkt);
		lr_reflect_rewrite(data, (__u8 *)l3, v6, (__u8 *)l4, 1, st->packets, lr_reflect_eot_tail(st));
		return XDP_TX;
	}
	rseq = st->packets;	/* frames reflected on the flow before this one */
	now = lr_rx_wants_clock(c, &pkt) ? bpf_ktime_get_ns() : 0;
	lr_rx_count_data(c, st, &pkt, pkt.len, ctx->rx_queue_index, now, 0);
	lr_reflect_rewrite(data, (__u8 *)l3, v6, (__u8 *)l4, 0, rseq, 0);
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
