/* SPDX-License-Identifier: MIT */
/* recv's report: the summary on stderr and the JSON document, from the collected result. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "linerate/probe.h"
#include "tx/frame.h"
#include "cmd/cmd.h"
#include "rx/rx.h"
#include "util/log.h"
#include "util/report.h"

#define NS 1000000000ULL

int lr_rx_report(struct lr_rx *rcv, const struct lr_rx_outcome *out)
{
	const struct lr_recv_opts *o = rcv->o;
	struct json_object *root, *rx, *lat, *pq, *pcap;
	struct lr_rx_result r;
	double secs = (double)(out->end_ns - out->start_ns) / NS;
	char b1[32], err[256];
	unsigned int q;
	int ret;

	ret = lr_rx_collect(rcv, &r);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "recv", "cannot read counters: %s", strerror(-ret));

	fprintf(stderr, "\nlinerate recv: %s (%s) on %s, %.3f s (frames arriving for %.3f s), %u flow%s\n",
		rcv->ops->name, rcv->mode, o->ifname, secs, r.active_s, r.flows, r.flows == 1 ? "" : "s");
	fprintf(stderr, "  received  %llu frames, %llu bytes; %s pps, %.3f Gbit/s L2, %.3f Gbit/s L1\n",
		(unsigned long long)r.packets, (unsigned long long)r.bytes, lr_fmt_si(r.pps, b1, sizeof(b1)),
		r.pps * (r.avg_bytes + LR_FCS_LEN) * 8 / 1e9, r.pps * (r.avg_bytes + 24) * 8 / 1e9);
	if (r.flows_eot)
		fprintf(stderr, "  sent      %llu frames (end-of-test markers of %u/%u flows)%s\n",
			(unsigned long long)r.sent, r.flows_eot, r.flows_announced ? r.flows_announced : r.flows,
			r.settled ? "" : "; loss of flows without a marker counts sequence gaps only");
	else
		fprintf(stderr, "  sent      unknown (no end-of-test marker): loss counts sequence gaps only\n");
	fprintf(stderr, "  lost      %lld  reordered %llu  duplicates %llu  foreign %llu\n", (long long)r.lost,
		(unsigned long long)r.late, (unsigned long long)r.dups, (unsigned long long)r.foreign);
	if (o->pcap[0] && out->pcap_lost) {
		fprintf(stderr, "  pcap      none kept: writing %s failed (below)\n", o->pcap);
	} else if (o->pcap[0]) {
		fprintf(stderr, "  pcap      %llu samples written to %s (one in %llu data frames%s; snaplen %u)\n",
			(unsigned long long)r.pcap_written, o->pcap, (unsigned long long)(o->pcap_every ? o->pcap_every : 1),
			o->pcap_foreign ? ", every foreign frame" : "", o->snaplen);
		fprintf(stderr, "  pcap      samples dropped: %llu (ring buffer full); %llu skipped by the size cap\n",
			(unsigned long long)r.pcap_dropped, (unsigned long long)r.pcap_capped);
	}
	if (r.lat_count)
		fprintf(stderr, "  latency   min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu ns\n",
			(unsigned long long)r.lat_min, (unsigned long long)r.lat_p50, (unsigned long long)r.lat_p90,
			(unsigned long long)r.lat_p99, (unsigned long long)r.lat_p999, (unsigned long long)r.lat_max);
	if (r.lat_future)
		fprintf(stderr, "  latency   %llu frames stamped ahead of this clock: sender on another host?\n",
			(unsigned long long)r.lat_future);
	if (r.ring_drops)
		fprintf(stderr, "  warning   %llu frames dropped by the receive ring before they were counted (receiver too slow)\n",
			(unsigned long long)r.ring_drops);
	if (r.bad_flow)
		fprintf(stderr, "  warning   %llu test frames with an out-of-range flow id\n",
			(unsigned long long)r.bad_flow);
	if (!o->json[0])
		return LR_EXIT_OK;

	root = lr_json_doc("recv");
	json_object_object_add(root, "engine", json_object_new_string(rcv->ops->name));
	json_object_object_add(root, "mode", json_object_new_string(rcv->mode));
	json_object_object_add(root, "interface", json_object_new_string(o->ifname));
	json_object_object_add(root, "duration_s", json_object_new_double(secs));
	json_object_object_add(root, "active_s", json_object_new_double(r.active_s));
	json_object_object_add(root, "frame_size", json_object_new_int((int)(r.packets ? r.avg_bytes + LR_FCS_LEN : 0)));
	json_object_object_add(root, "error", out->error[0] ? json_object_new_string(out->error) : NULL);
	rx = json_object_new_object();
	json_object_object_add(rx, "packets", json_object_new_uint64(r.packets));
	json_object_object_add(rx, "bytes", json_object_new_uint64(r.bytes));
	json_object_object_add(rx, "pps", json_object_new_double(r.pps));
	json_object_object_add(rx, "bps_l2", json_object_new_double(r.pps * (r.avg_bytes + LR_FCS_LEN) * 8));
	json_object_object_add(rx, "bps_l1", json_object_new_double(r.pps * (r.avg_bytes + 24) * 8));
	json_object_object_add(rx, "lost", json_object_new_int64(r.lost));
	json_object_object_add(rx, "reordered", json_object_new_uint64(r.late));
	json_object_object_add(rx, "duplicates", json_object_new_uint64(r.dups));
	json_object_object_add(rx, "foreign", json_object_new_uint64(r.foreign));
	json_object_object_add(rx, "sent", r.flows_eot ? json_object_new_uint64(r.sent) : NULL);
	json_object_object_add(rx, "tail_settled", json_object_new_boolean(r.settled));
	json_object_object_add(rx, "flows", json_object_new_int((int)r.flows));
	json_object_object_add(rx, "eot_markers", json_object_new_uint64(r.eot));
	json_object_object_add(rx, "ring_drops", json_object_new_uint64(r.ring_drops));
	pq = json_object_new_array();
	for (q = 0; q < LR_RX_MAX_QUEUES; q++) {
		struct json_object *e;

		if (!r.queue_packets[q])
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "queue", json_object_new_int((int)q));
		json_object_object_add(e, "packets", json_object_new_uint64(r.queue_packets[q]));
		json_object_array_add(pq, e);
	}
	json_object_object_add(rx, "per_queue", pq);
	pcap = NULL;
	if (o->pcap[0]) {
		pcap = json_object_new_object();
		json_object_object_add(pcap, "file", out->pcap_lost ? NULL : json_object_new_string(o->pcap));
		json_object_object_add(pcap, "samples", json_object_new_uint64(out->pcap_lost ? 0 : r.pcap_written));
		json_object_object_add(pcap, "dropped", json_object_new_uint64(r.pcap_dropped));
		json_object_object_add(pcap, "capped", json_object_new_uint64(r.pcap_capped));
		json_object_object_add(pcap, "every", json_object_new_uint64(o->pcap_every ? o->pcap_every : 1));
		json_object_object_add(pcap, "snaplen", json_object_new_int((int)o->snaplen));
	}
	json_object_object_add(rx, "pcap", pcap);
	json_object_object_add(root, "rx", rx);
	lat = json_object_new_object();
	json_object_object_add(lat, "count", json_object_new_uint64(r.lat_count));
	json_object_object_add(lat, "min", json_object_new_uint64(r.lat_min));
	json_object_object_add(lat, "p50", json_object_new_uint64(r.lat_p50));
	json_object_object_add(lat, "p90", json_object_new_uint64(r.lat_p90));
	json_object_object_add(lat, "p99", json_object_new_uint64(r.lat_p99));
	json_object_object_add(lat, "p999", json_object_new_uint64(r.lat_p999));
	json_object_object_add(lat, "max", json_object_new_uint64(r.lat_max));
	json_object_object_add(lat, "mean", json_object_new_uint64(r.lat_mean));
	json_object_object_add(root, "latency_ns", lat);
	ret = lr_json_write(root, o->json, err, sizeof(err));
	json_object_put(root);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "recv", "%s", err);
	return LR_EXIT_OK;
}
