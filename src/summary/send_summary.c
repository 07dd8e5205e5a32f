// SPDX-License-Identifier: MIT
/* send's summary lines, from what the sender was and its result: the words of send and of an agent's sender. */
#include <stdio.h>
#include "summary/summary.h"
#include "sys/peer_gro.h"
#include "util/report.h"
#include "util/units.h"

void lr_send_summary(FILE *f, const struct lr_tx_about *a, const struct lr_tx_result *r, double secs,
		     const struct lr_prep_result *prep)
{
	char b1[32], line[512];
	unsigned int i;

	fprintf(f, "linerate send: %s (%s) on %s, %u worker%s, %u-byte frames%s, %u flow%s, dst MAC from %s\n",
		a->engine, a->mode, a->ifname, a->nworkers, a->nworkers == 1 ? "" : "s", a->frame_bytes,
		a->replay ? " (mean of the capture)" : "",
		a->flows, a->flows == 1 ? "" : "s", a->mac_how);
	fprintf(f, "  sent      %llu frame%s in %.3f s, accepted by the device\n", (unsigned long long)r->packets,
		lr_s(r->packets), secs);
	/* where the engine resends what the device pushed back (AF_PACKET), tx_dropped counts attempts, not losses */
	fprintf(f, "  ring      %llu queued, %llu completed, %llu %s, %llu in flight at end\n",
		(unsigned long long)r->queued, (unsigned long long)r->completed, (unsigned long long)r->device_dropped,
		a->drops_completed ? "dropped by the device" : "pushed back by the device and resent",
		(unsigned long long)(r->queued - r->completed));
	fprintf(f, "  rate      %s pps, %.3f Gbit/s L2, %.3f Gbit/s L1\n", lr_fmt_si(r->pps, b1, sizeof(b1)),
		r->pps * a->frame_bytes * 8 / 1e9, r->pps * (a->frame_bytes + 20) * 8 / 1e9);
	/* a replay without --stamp writes no probe of its own */
	if (a->replay && !a->stamp)
		fprintf(f, "  latency   no timestamps: the capture's frames go out as they are\n");
	else if (r->latency_every == 1)
		fprintf(f, "  latency   a timestamp in every data frame\n");
	else
		fprintf(f, "  latency   a timestamp in one data frame in %llu of each flow (--latency-every)\n",
			(unsigned long long)r->latency_every);
	for (i = 0; i < r->nqueues && r->nqueues > 1; i++) {
		const struct lr_tx_queue_result *q = &r->queues[i];

		fprintf(f, "  queue %-3u cpu %-3u %llu frame%s, %s pps", q->queue, q->cpu,
			(unsigned long long)q->packets, lr_s(q->packets), lr_fmt_si(q->pps, b1, sizeof(b1)));
		if (q->have_device_packets)
			fprintf(f, "; the device counted %llu on this queue", (unsigned long long)q->device_packets);
		fputc('\n', f);
	}
	/* the path measured: with GRO switched on at the peer, NAPI and GRO there instead of the backlog */
	if (prep) {
		lr_peer_gro_end_line(prep, line, sizeof(line));
		fprintf(f, "  prepare   %s\n", line);
	}
}

void lr_rtt_summary(FILE *f, const struct lr_rtt_result *t, unsigned int port)
{
	const struct lr_rtt_dir *fw = &t->fwd, *b = &t->ret;

	if (t->count)
		fprintf(f, "  rtt       min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu ns (%llu sample%s)\n",
			(unsigned long long)t->min, (unsigned long long)t->p50, (unsigned long long)t->p90,
			(unsigned long long)t->p99, (unsigned long long)t->p999, (unsigned long long)t->max,
			(unsigned long long)t->count, lr_s(t->count));
	else
		fprintf(f, "  rtt       no stamped frame came back\n");
	fprintf(f, "  forward   sent %llu  reflected %llu  lost %lld  reordered %llu  duplicates %llu\n",
		(unsigned long long)fw->sent, (unsigned long long)fw->received, (long long)fw->lost,
		(unsigned long long)fw->late, (unsigned long long)fw->dups);
	fprintf(f, "  return    sent %llu  received %llu  lost %lld  reordered %llu  duplicates %llu\n",
		(unsigned long long)b->sent, (unsigned long long)b->received, (long long)b->lost,
		(unsigned long long)b->late, (unsigned long long)b->dups);
	if (!b->received && !t->flows_eot)
		fprintf(f, "  nothing came back: is linerate reflect running on the far end, on UDP port %u, and does "
			"its interface route back to this one?\n", port);
	else if (!t->settled)
		fprintf(f, "  markers   %u of %u %s reflected markers came back: the split between the two "
			"directions is an estimate (open gaps on the way back)\n", t->flows_eot, t->flows,
			t->flows == 1 ? "flow's" : "flows'");
}
