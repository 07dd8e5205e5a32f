/* SPDX-License-Identifier: MIT */
/* `linerate recv`: picks a receive backend, runs the window, settles loss, reports. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "linerate/capture.h"
#include "linerate/choose.h"
#include "linerate/cmd.h"
#include "linerate/frame.h"
#include "linerate/log.h"
#include "linerate/outfile.h"
#include "linerate/rate.h"
#include "linerate/report.h"
#include "linerate/rx.h"

#define NS 1000000000ULL
#define POLL_NS (100 * 1000000ULL)
#define ONCE_LINGER_NS (50 * 1000000ULL)	/* catch the markers' repeats before leaving */

struct recv_ctx {
	struct lr_rx rx;
	uint64_t start_ns, end_ns;
	bool pcap_lost;	/* the capture could not be completed and was removed */
	char error[256];	/* why the test ended early, for the last line and the JSON; "" if it did not */
};

/* Totals over all flows, with the sender's end-of-test numbers settled in. */
struct rx_totals {
	uint64_t packets, unique, lost_gap, late, dups, sent;
	int64_t lost;
	unsigned int flows, flows_eot, flows_announced;
	bool settled;
};

static void on_signal(int sig)
{
	(void)sig;
	lr_stop = 1;
}

void lr_rx_counters_sum(const struct lr_rx_counters *src, int n, struct lr_rx_counters *s)
{
	int i, b, q;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		const struct lr_rx_counters *p = &src[i];

		s->packets += p->packets;
		s->bytes += p->bytes;
		s->foreign += p->foreign;
		s->eot += p->eot;
		s->bad_flow += p->bad_flow;
		s->lat_future += p->lat_future;
		s->sample_tick += p->sample_tick;
		s->samples += p->samples;
		s->sample_drops += p->sample_drops;
		if (p->first_ns && (!s->first_ns || p->first_ns < s->first_ns))
			s->first_ns = p->first_ns;
		if (p->last_ns > s->last_ns)
			s->last_ns = p->last_ns;
		if (p->lat_count && (!s->lat_count || p->lat_min < s->lat_min))
			s->lat_min = p->lat_min;
		if (p->lat_max > s->lat_max)
			s->lat_max = p->lat_max;
		s->lat_count += p->lat_count;
		s->lat_sum += p->lat_sum;
		for (q = 0; q < LR_RX_MAX_QUEUES; q++)
			s->queue_packets[q] += p->queue_packets[q];
		for (b = 0; b < LR_LAT_BUCKETS; b++)
			s->lat_hist[b] += p->lat_hist[b];
	}
}

static void flow_totals(const struct lr_rx *rx, struct rx_totals *t)
{
	unsigned int f;

	memset(t, 0, sizeof(*t));
	t->settled = true;
	for (f = 0; f < LR_MAX_FLOWS; f++) {
		/* the BPF side writes these; a torn read only skews a live line */
		const volatile struct lr_flow_state *st = &rx->flows[f];
		uint64_t packets = st->packets, dups = st->dups, gaps = st->gaps, late = st->late;
		uint32_t eot_seen = st->eot_seen;

		if (!packets && !eot_seen)
			continue;
		t->flows++;
		t->packets += packets;
		t->unique += packets - dups;
		t->late += late;
		t->dups += dups;
		t->lost_gap += gaps - late;
		if (eot_seen) {
			t->flows_eot++;
			if (st->eot_flows > t->flows_announced)
				t->flows_announced = st->eot_flows;
			t->sent += st->eot_sent;
			t->lost += (int64_t)st->eot_sent - (int64_t)(packets - dups);
		} else {
			t->settled = false;
			t->lost += (int64_t)gaps - (int64_t)late;
		}
	}
	if (t->flows_announced > t->flows_eot)
		t->settled = false;
	if (!t->flows)
		t->settled = false;
}

bool lr_rx_complete(const struct lr_rx *rx)
{
	const volatile struct lr_flow_state *flows = rx->flows;
	unsigned int f, n = 0;

	for (f = 0; f < LR_MAX_FLOWS; f++)
		if (flows[f].eot_seen) {
			n = flows[f].eot_flows;
			break;
		}
	if (!n)
		return false;
	for (f = 0; f < n && f < LR_MAX_FLOWS; f++)
		if (!flows[f].eot_seen)
			return false;
	return true;
}

int lr_rx_collect(struct lr_rx *rx, struct lr_rx_result *r)
{
	struct lr_rx_counters *s;
	struct rx_totals t;
	int ret;

	ret = rx->ops->read(rx);
	if (ret)
		return ret;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	lr_rx_counters_sum(rx->sources, rx->nsources, s);
	flow_totals(rx, &t);
	memset(r, 0, sizeof(*r));
	r->packets = s->packets;
	r->bytes = s->bytes;
	r->foreign = s->foreign;
	r->eot = s->eot;
	r->bad_flow = s->bad_flow;
	r->ring_drops = rx->ring_drops;
	r->sent = t.sent;
	r->late = t.late;
	r->dups = t.dups;
	r->lost = t.lost;
	r->flows = t.flows;
	r->flows_eot = t.flows_eot;
	r->flows_announced = t.flows_announced;
	r->settled = t.settled;
	r->first_ns = s->first_ns;
	r->last_ns = s->last_ns;
	/* rates over the span the frames actually arrived in, not the time spent waiting */
	r->active_s = s->last_ns > s->first_ns ? (double)(s->last_ns - s->first_ns) / NS : 0;
	r->pps = r->active_s > 0 ? (s->packets - 1) / r->active_s : 0;
	r->avg_bytes = s->packets ? (double)s->bytes / s->packets : 0;
	r->lat_count = s->lat_count;
	r->lat_min = s->lat_min;
	r->lat_max = s->lat_max;
	r->lat_mean = s->lat_count ? s->lat_sum / s->lat_count : 0;
	r->lat_future = s->lat_future;
	r->lat_p50 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.50, s->lat_min, s->lat_max);
	r->lat_p90 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.90, s->lat_min, s->lat_max);
	r->lat_p99 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.99, s->lat_min, s->lat_max);
	r->lat_p999 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.999, s->lat_min, s->lat_max);
	memcpy(r->queue_packets, s->queue_packets, sizeof(r->queue_packets));
	/* while the capture runs the writer's counts trail the samples a little: a live view */
	r->pcap_written = rx->pcap ? lr_pcap_records(rx->pcap) : rx->pcap_written;
	r->pcap_capped = rx->pcap ? lr_pcap_capped(rx->pcap) : rx->pcap_capped;
	r->pcap_dropped = s->sample_drops;
	/* once closed, a sample taken but never written (in flight at the stop) is a drop too */
	if (!rx->pcap && s->samples > r->pcap_written + r->pcap_capped)
		r->pcap_dropped += s->samples - r->pcap_written - r->pcap_capped;
	free(s);
	return 0;
}

/* Renames the capture into place; the backend's consumer must have stopped (ops->stop). */
static int capture_close(struct lr_rx *rx, char *err, size_t errlen)
{
	struct lr_pcap_writer *w = rx->pcap;

	if (!w)
		return 0;
	rx->pcap = NULL;
	rx->pcap_written = lr_pcap_records(w);
	rx->pcap_capped = lr_pcap_capped(w);
	if (rx->pcap_err) {
		lr_pcap_abort(w);
		lr_msg(err, errlen, "cannot write '%s': %s; nothing was kept", rx->o->pcap, strerror(-rx->pcap_err));
		return rx->pcap_err;
	}
	return lr_pcap_close(w, err, errlen);
}

/* An error path: leave nothing behind under the final name nor beside it. */
static void capture_abort(struct lr_rx *rx)
{
	if (!rx->pcap)
		return;
	lr_pcap_abort(rx->pcap);
	rx->pcap = NULL;
}

void lr_rx_reset(struct lr_rx *rx)
{
	rx->ops->reset(rx);
	rx->ring_drops = 0;
}

/* The ready file appears whole, under its name, once counting has started: our PID. */
static int write_ready(const char *path, char *err, size_t errlen)
{
	struct lr_out out;
	char pid[32];
	int ret;

	ret = lr_out_open(path, LR_OUT_MODE, &out, err, errlen);
	if (ret)
		return ret;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	ret = lr_out_write(&out, pid, strlen(pid));
	if (ret) {
		lr_msg(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		lr_out_abort(&out);
		return ret;
	}
	return lr_out_commit(&out, err, errlen);
}

static void live_line(struct recv_ctx *c, uint64_t *prev_pkts, uint64_t *prev_bytes, uint64_t dt)
{
	struct lr_rx_result r;
	char b1[32];
	double s = (double)dt / NS;
	uint64_t dp, db;

	if (lr_rx_collect(&c->rx, &r))
		return;
	dp = r.packets - *prev_pkts;
	db = r.bytes - *prev_bytes;
	*prev_pkts = r.packets;
	*prev_bytes = r.bytes;
	fprintf(stderr, "rx %s pps  %.3f Gbit/s L2  %.3f Gbit/s L1  total %llu  lost %lld  reord %llu  dup %llu  foreign %llu\n",
		lr_fmt_si(dp / s, b1, sizeof(b1)), (db + dp * 4.0) * 8.0 / s / 1e9, (db + dp * 24.0) * 8.0 / s / 1e9,
		(unsigned long long)r.packets, (long long)r.lost, (unsigned long long)r.late, (unsigned long long)r.dups,
		(unsigned long long)r.foreign);
}

static int report(struct recv_ctx *c)
{
	const struct lr_recv_opts *o = c->rx.o;
	struct json_object *root, *rx, *lat, *pq, *pcap;
	struct lr_rx_result r;
	double secs = (double)(c->end_ns - c->start_ns) / NS;
	char b1[32], err[256];
	unsigned int q;
	int ret;

	ret = lr_rx_collect(&c->rx, &r);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "recv", "cannot read counters: %s", strerror(-ret));

	fprintf(stderr, "\nlinerate recv: %s (%s) on %s, %.3f s (frames arriving for %.3f s), %u flow%s\n",
		c->rx.ops->name, c->rx.mode, o->ifname, secs, r.active_s, r.flows, r.flows == 1 ? "" : "s");
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
	if (o->pcap[0] && c->pcap_lost) {
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
	json_object_object_add(root, "engine", json_object_new_string(c->rx.ops->name));
	json_object_object_add(root, "mode", json_object_new_string(c->rx.mode));
	json_object_object_add(root, "interface", json_object_new_string(o->ifname));
	json_object_object_add(root, "duration_s", json_object_new_double(secs));
	json_object_object_add(root, "active_s", json_object_new_double(r.active_s));
	json_object_object_add(root, "frame_size", json_object_new_int((int)(r.packets ? r.avg_bytes + LR_FCS_LEN : 0)));
	json_object_object_add(root, "error", c->error[0] ? json_object_new_string(c->error) : NULL);
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
		json_object_object_add(pcap, "file", c->pcap_lost ? NULL : json_object_new_string(o->pcap));
		json_object_object_add(pcap, "samples", json_object_new_uint64(c->pcap_lost ? 0 : r.pcap_written));
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

static int loop(struct recv_ctx *c)
{
	const struct lr_recv_opts *o = c->rx.o;
	uint64_t last, now, deadline, prev_pkts = 0, prev_bytes = 0, complete_at = 0;

	c->start_ns = lr_now_ns();
	deadline = o->duration_ns ? c->start_ns + o->duration_ns : 0;
	last = c->start_ns;
	while (!lr_stop) {
		struct timespec ts = { 0, (long)POLL_NS };

		nanosleep(&ts, NULL);
		now = lr_now_ns();
		if (deadline && now >= deadline)
			break;
		/*
		 * A deleted interface (or a veth whose peer's namespace or
		 * container went away, which takes the pair with it) never
		 * delivers another frame: say so now, not after --duration,
		 * and never wait forever with --once.
		 */
		if (!lr_if_present(&c->rx.ifc)) {
			snprintf(c->error, sizeof(c->error), "interface %s disappeared %.1f s into the test (deleted, or "
				 "its veth peer's namespace went away); the counts are up to that moment", o->ifname,
				 (double)(now - c->start_ns) / NS);
			break;
		}
		if (o->once) {
			if (!complete_at && lr_rx_complete(&c->rx))
				complete_at = now;
			if (complete_at && now - complete_at >= ONCE_LINGER_NS)
				break;
		}
		if (now - last >= NS) {
			if (!o->quiet)
				live_line(c, &prev_pkts, &prev_bytes, now - last);
			last = now;
		}
	}
	c->end_ns = lr_now_ns();
	return 0;
}


static int open_backend(void *ctx, const struct lr_cand *cand, char *why, size_t len)
{
	struct lr_rx *rx = ctx;

	rx->ops = cand->data;
	rx->note[0] = '\0';
	return rx->ops->open(rx, why, len);
}

int lr_rx_begin(const struct lr_recv_opts *o, struct lr_rx *rx, char *line, size_t linelen, char *err, size_t errlen)
{
	static const struct lr_cand all[] = {
		{ "xdp", open_backend, &lr_rx_xdp },
		{ "packet", open_backend, &lr_rx_packet },
	};
	const struct lr_cand *cands = all;
	struct lr_choice ch;
	char why[512], unused[160] = "";
	unsigned int n = 2;
	int ret;

	memset(rx, 0, sizeof(*rx));
	rx->o = o;
	ret = lr_if_open(o->ifname, &rx->ifc, err, errlen);
	if (ret)
		return LR_EXIT_USAGE;
	/* before anything is attached: a path we cannot write is a usage error, not a lost capture */
	if (o->pcap[0]) {
		char perr[384];

		ret = lr_pcap_open(o->pcap, o->pcap_max_bytes, o->snaplen, &rx->pcap, perr, sizeof(perr));
		if (ret) {
			rx->pcap = NULL;
			snprintf(err, errlen, "--pcap: %s", perr);
			return LR_EXIT_USAGE;
		}
	}
	if (o->engine == LR_RX_ENGINE_XDP)
		n = 1;
	else if (o->engine == LR_RX_ENGINE_PACKET)
		cands = &all[1], n = 1;
	ret = lr_choose(cands, n, rx, &ch);
	if (ret) {
		if (n > 1) {
			lr_choice_why(&ch, why, sizeof(why));
			snprintf(err, errlen, "no engine can count on %s%s", o->ifname, why);
		} else {
			snprintf(err, errlen, "%s", ch.tried[ch.ntried - 1].why);
		}
		rx->ops = NULL;
		capture_abort(rx);
		return ret == -ENOMEM ? LR_EXIT_RUNTIME : LR_EXIT_USAGE;
	}
	lr_choice_why(&ch, why, sizeof(why));
	/* auto chose: say which given option the chosen engine has no use for */
	if (rx->ops == &lr_rx_xdp && o->workers_set)
		snprintf(unused, sizeof(unused), " (--workers %u is for the packet engine: XDP counts in the softirq "
			 "of every CPU that receives)", o->workers);
	else if (rx->ops == &lr_rx_packet && o->xdp_mode_set)
		snprintf(unused, sizeof(unused), " (--xdp-mode is for the xdp engine, which was not usable)");
	snprintf(line, linelen, "ready on %s, engine %s (%s), counting UDP port %u%s%s%s%s", o->ifname, rx->ops->name,
		 rx->mode, o->dst_port, rx->note[0] ? ": " : "", rx->note, why, unused);
	return 0;
}

void lr_rx_end(struct lr_rx *rx)
{
	char err[512];

	if (!rx->ops)
		return;
	rx->ops->stop(rx);
	if (capture_close(rx, err, sizeof(err)))
		pr_warn("recv: --pcap: %s\n", err);
	rx->ops->close(rx);
	rx->ops = NULL;
}

int lr_cmd_recv(const struct lr_recv_opts *o)
{
	struct recv_ctx c;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[512], line[768];
	int ret, cret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	/* every output path before any interface is touched: a bad one is a usage error, not a lost test */
	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->pcap[0] && lr_out_check("--pcap", o->pcap, false, err, sizeof(err))) ||
	    (o->ready_file[0] && lr_out_check("--ready-file", o->ready_file, false, err, sizeof(err))))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);
	memset(&c, 0, sizeof(c));
	ret = lr_rx_begin(o, &c.rx, line, sizeof(line), err, sizeof(err));
	if (ret)
		return lr_fail(ret, "recv", "%s", err);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "linerate recv: %s\n", line);
	if (o->ready_file[0] && write_ready(o->ready_file, err, sizeof(err))) {
		ret = lr_fail(LR_EXIT_RUNTIME, "recv", "--ready-file: %s", err);
		goto out;
	}
	loop(&c);
	/* a signal ends the loop too: the capture is renamed into place on this path as well */
	c.rx.ops->stop(&c.rx);
	cret = capture_close(&c.rx, err, sizeof(err));
	c.pcap_lost = cret != 0;
	ret = report(&c);
	if (cret)
		ret = lr_fail(LR_EXIT_RUNTIME, "recv", "--pcap: %s", err);
	if (c.error[0])
		ret = lr_fail(LR_EXIT_RUNTIME, "recv", "%s", c.error);
out:
	if (ret && c.rx.pcap) {
		c.rx.ops->stop(&c.rx);
		capture_abort(&c.rx);
	}
	lr_rx_end(&c.rx);
	return ret;
}
