// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cheapest receiver there is: every frame dropped, nothing counted. Not
 * part of linerate: scripts/bench --receiver drop attaches it as the baseline
 * the peers are measured against, and its ns per run under bpf_stats is the
 * statistics' own overhead, subtracted from the other programs' figures.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
