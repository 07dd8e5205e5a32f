/* SPDX-License-Identifier: MIT */
/* recv's report: the summary on stderr and the JSON document, from the collected result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "linerate/probe.h"
#include "tx/frame.h"
#include "rx/rx.h"
#include "util/log.h"
#include "util/report.h"
#include "util/result.h"

#define NS 1000000000ULL

static void print_summary(const struct lr_rx *rcv, const struct lr_rx_outcome *out, const struct lr_rx_result *r,
			  double secs)
{
	const struct lr_recv_opts *o = rcv->o;
	double frame = lr_rx_result_frame_bytes(r);
	char b1[32];

	fprintf(stderr, "\nlinerate recv: %s (%s) on %s, %.3f s (frames arriving for %.3f s), %u flow%s\n",
		rcv->ops->name, rcv->mode, o->ifname, secs, r->active_s, r->flows, r->flows == 1 ? "" : "s");
	fprintf(stderr, "  received  %llu frames, %llu bytes; %s pps, %.3f Gbit/s L2, %.3f Gbit/s L1\n",
		(unsigned long long)r->packets, (unsigned long long)r->bytes, lr_fmt_si(r->pps, b1, sizeof(b1)),
		r->pps * (frame + LR_FCS_LEN) * 8 / 1e9, r->pps * (frame + 24) * 8 / 1e9);
	if (r->flows_eot)
		fprintf(stderr, "  sent      %llu frames (end-of-test markers of %u/%u flows)%s\n",
			(unsigned long long)r->sent, r->flows_eot, r->flows_announced ? r->flows_announced : r->flows,
			r->settled ? "" : "; loss of flows without a marker counts sequence gaps only");
	else
		fprintf(stderr, "  sent      unknown (no end-of-test marker): loss counts sequence gaps only\n");
	fprintf(stderr, "  lost      %lld  reordered %llu  duplicates %llu  foreign %llu\n", (long long)r->lost,
		(unsigned long long)r->late, (unsigned long long)r->dups, (unsigned long long)r->foreign);
	if (o->pcap[0] && out->pcap_lost) {
		fprintf(stderr, "  pcap      none kept: writing %s failed (below)\n", o->pcap);
	} else if (o->pcap[0]) {
		fprintf(stderr, "  pcap      %llu samples written to %s (one in %llu data frames%s; snaplen %u)\n",
			(unsigned long long)r->pcap_written, o->pcap, (unsigned long long)r->pcap_every,
			o->pcap_foreign ? ", every foreign frame" : "", o->snaplen);
		fprintf(stderr, "  pcap      samples dropped: %llu (ring buffer full); %llu skipped by the size cap\n",
			(unsigned long long)r->pcap_dropped, (unsigned long long)r->pcap_capped);
	}
	if (r->lat_count)
		fprintf(stderr, "  latency   min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu ns\n",
			(unsigned long long)r->lat_min, (unsigned long long)r->lat_p50, (unsigned long long)r->lat_p90,
			(unsigned long long)r->lat_p99, (unsigned long long)r->lat_p999, (unsigned long long)r->lat_max);
	if (r->lat_future)
		fprintf(stderr, "  latency   %llu frames stamped ahead of this clock: sender on another host?\n",
			(unsigned long long)r->lat_future);
	if (r->ring_drops)
		fprintf(stderr, "  warning   %llu frames dropped by the receive ring before they were counted (receiver too slow)\n",
			(unsigned long long)r->ring_drops);
	if (r->bad_flow)
		fprintf(stderr, "  warning   %llu test frames with an out-of-range flow id\n",
			(unsigned long long)r->bad_flow);
}

static int write_json(const struct lr_rx *rcv, const struct lr_rx_outcome *out, const struct lr_rx_result *r,
		      double secs)
{
	const struct lr_recv_opts *o = rcv->o;
	double frame = lr_rx_result_frame_bytes(r);
	struct json_object *root = lr_json_doc("recv");
	char err[256];
	int ret;

	json_object_object_add(root, "engine", json_object_new_string(rcv->ops->name));
	json_object_object_add(root, "mode", json_object_new_string(rcv->mode));
	json_object_object_add(root, "interface", json_object_new_string(o->ifname));
	json_object_object_add(root, "duration_s", json_object_new_double(secs));
	json_object_object_add(root, "frame_size", json_object_new_int((int)(r->packets ? frame + LR_FCS_LEN : 0)));
	json_object_object_add(root, "error", out->error[0] ? json_object_new_string(out->error) : NULL);
	lr_rx_result_put(root, r);
	ret = lr_json_write(root, o->json, err, sizeof(err));
	json_object_put(root);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "recv", "%s", err);
	return LR_EXIT_OK;
}

int lr_rx_report(struct lr_rx *rcv, const struct lr_rx_outcome *out)
{
	double secs = (double)(out->end_ns - out->start_ns) / NS;
	struct lr_rx_result *r;
	int ret;

	r = malloc(sizeof(*r));
	if (!r)
		return lr_fail(LR_EXIT_RUNTIME, "recv", "out of memory");
	ret = lr_rx_collect(rcv, r);
	if (ret) {
		free(r);
		return lr_fail(LR_EXIT_RUNTIME, "recv", "cannot read counters: %s", strerror(-ret));
	}
	/* a capture that could not be completed was removed: nothing of it is kept */
	if (out->pcap_lost) {
		r->pcap_file[0] = '\0';
		r->pcap_written = 0;
	}
	print_summary(rcv, out, r, secs);
	ret = rcv->o->json[0] ? write_json(rcv, out, r, secs) : LR_EXIT_OK;
	free(r);
	return ret;
}
