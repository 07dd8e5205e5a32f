// SPDX-License-Identifier: MIT
/* recv's summary lines, from a result and its context: a receiver here and one an agent ran alike. */
#include <math.h>
#include <stdio.h>
#include "linerate/probe.h"
#include "rx/report.h"
#include "summary/summary.h"
#include "util/frame_size.h"
#include "util/log.h"
#include "util/report.h"
#include "util/result.h"
#include "util/units.h"

/* The latency line(s): the figures, or why they are not valid (docs/counting.md, "Latency across hosts"). */
static void print_latency(FILE *f, const struct lr_rx_result *r)
{
	if (r->lat_clock == LR_LAT_CLOCK_ESTIMATED)
		fprintf(f, "  clock     estimated: offset %lld ns, error bound %llu ns, drift %lld ppb\n",
			(long long)r->lat_offset_ns, (unsigned long long)r->lat_error_bound_ns,
			(long long)r->lat_drift_ppb);
	if (r->lat_count && r->lat_clock == LR_LAT_CLOCK_NONE)
		fprintf(f, "  latency   not valid: the two hosts' clocks could not be compared\n");
	else if (r->lat_count && !r->lat_valid && r->lat_future)
		fprintf(f, "  latency   not valid: %llu frame%s came stamped ahead of this clock, closer than the offset's error bound (%llu ns)\n",
			(unsigned long long)r->lat_future, lr_s(r->lat_future), (unsigned long long)r->lat_error_bound_ns);
	else if (r->lat_count && !r->lat_valid)
		fprintf(f, "  latency   not valid: the clock offset is known to %llu ns, more than a quarter of the smallest latency (%llu ns)\n",
			(unsigned long long)r->lat_error_bound_ns, (unsigned long long)r->lat_min);
	else if (r->lat_count)
		fprintf(f, "  latency   min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu ns\n",
			(unsigned long long)r->lat_min, (unsigned long long)r->lat_p50, (unsigned long long)r->lat_p90,
			(unsigned long long)r->lat_p99, (unsigned long long)r->lat_p999, (unsigned long long)r->lat_max);
	if (r->lat_future && (r->lat_clock == LR_LAT_CLOCK_SAME_HOST || !r->lat_count))
		fprintf(f, "  latency   %llu frame%s stamped ahead of this clock: sender on another host?\n",
			(unsigned long long)r->lat_future, lr_s(r->lat_future));
}

void lr_recv_summary(FILE *f, const struct lr_rx_context *x, const struct lr_rx_result *r)
{
	double frame = lr_rx_result_frame_bytes(r);
	char b1[32];

	fprintf(f, "\nlinerate recv: %s (%s) on %s%s, %.3f s (frames arriving for %.3f s), %u flow%s\n",
		x->engine, x->mode, x->ifname, x->where, x->secs, r->active_s, r->flows, r->flows == 1 ? "" : "s");
	fprintf(f, "  received  %llu frame%s, %llu byte%s; %s pps, %.3f Gbit/s L2, %.3f Gbit/s L1\n",
		(unsigned long long)r->packets, lr_s(r->packets), (unsigned long long)r->bytes, lr_s(r->bytes),
		lr_fmt_si(r->pps, b1, sizeof(b1)),
		r->pps * (frame + LR_FCS_LEN) * 8 / 1e9, r->pps * (frame + 24) * 8 / 1e9);
	if (r->flows_eot)
		fprintf(f, "  sent      %llu frame%s (end-of-test markers of %u/%u flows)%s\n",
			(unsigned long long)r->sent, lr_s(r->sent), r->flows_eot, r->flows_announced ? r->flows_announced : r->flows,
			r->settled ? "" : "; loss of flows without a marker counts sequence gaps only");
	else
		fprintf(f, "  sent      unknown (no end-of-test marker): loss counts sequence gaps only\n");
	fprintf(f, "  lost      %lld  reordered %llu  duplicates %llu  foreign %llu\n", (long long)r->lost,
		(unsigned long long)r->late, (unsigned long long)r->dups, (unsigned long long)r->foreign);
	if (x->pcap && x->pcap[0] && x->pcap_lost) {
		fprintf(f, "  pcap      none kept: writing %s failed (below)\n", x->pcap);
	} else if (x->pcap && x->pcap[0]) {
		char every[48] = "every data frame";

		if (r->pcap_every != 1)
			snprintf(every, sizeof(every), "one in %llu data frames", (unsigned long long)r->pcap_every);
		fprintf(f, "  pcap      %llu sample%s written to %s (%s%s; snaplen %u)\n",
			(unsigned long long)r->pcap_written, lr_s(r->pcap_written), x->pcap, every,
			x->pcap_foreign ? ", every foreign frame" : "", r->pcap_snaplen);
		fprintf(f, "  pcap      samples dropped: %llu (ring buffer full); %llu skipped by the size cap\n",
			(unsigned long long)r->pcap_dropped, (unsigned long long)r->pcap_capped);
	}
	print_latency(f, r);
	if (r->have_prog && !isnan(lr_rx_prog_ns_per_run(&r->prog)))
		fprintf(f, "  program   %.1f ns per frame (+-%.1f; bpf_stats on %llu of %llu runs, less the %.1f ns they "
			"add inside each)\n", lr_rx_prog_ns_per_run(&r->prog), r->prog.stats_error_ns,
			(unsigned long long)r->prog.stat_runs, (unsigned long long)lr_rx_result_runs(r),
			r->prog.stats_reported_ns);
	else if (r->have_prog)
		fprintf(f, "  program   not timed: bpf_stats counted %llu run%s, fewer than %d\n",
			(unsigned long long)r->prog.stat_runs, lr_s(r->prog.stat_runs), LR_PROG_MIN_RUNS);
	if (r->ring_drops)
		fprintf(f, "  warning   %llu frame%s dropped by the receive ring before they were counted (receiver too slow)\n",
			(unsigned long long)r->ring_drops, lr_s(r->ring_drops));
	if (r->bad_flow)
		fprintf(f, "  warning   %llu test frame%s with an out-of-range flow id\n",
			(unsigned long long)r->bad_flow, lr_s(r->bad_flow));
	if (r->have_shared)
		fprintf(f, "  warning   two senders use the same flows (run ids %08x and %08x, on %u flow%s): their "
			"sequences mix, so lost, reordered and duplicates do not describe either\n", r->run_ids[0],
			r->run_ids[1], r->flows_shared, r->flows_shared == 1 ? "" : "s");
	if (lr_rx_unseen_warn(r))
		fprintf(f, "  warning   the interface received %llu frame%s that the XDP program did not see: another "
			"program runs before ours, or the frames bypass XDP (a tc redirect into this namespace); try "
			"--xdp-mode generic\n", (unsigned long long)r->unseen, lr_s(r->unseen));
}
