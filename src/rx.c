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
#include "linerate/choose.h"
#include "linerate/cmd.h"
#include "linerate/frame.h"
#include "linerate/log.h"
#include "linerate/rate.h"
#include "linerate/report.h"
#include "linerate/rx.h"

#define NS 1000000000ULL
#define POLL_NS (100 * 1000000ULL)
#define ONCE_LINGER_NS (50 * 1000000ULL)	/* catch the markers' repeats before leaving */

struct recv_ctx {
	struct lr_rx rx;
	struct lr_rx_counters sum;
	uint64_t start_ns, end_ns;
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

static int read_counters(struct recv_ctx *c)
{
	int ret = c->rx.ops->read(&c->rx);

	if (ret)
		return ret;
	lr_rx_counters_sum(c->rx.sources, c->rx.nsources, &c->sum);
	return 0;
}

static void flow_totals(const struct recv_ctx *c, struct rx_totals *t)
{
	unsigned int f;

	memset(t, 0, sizeof(*t));
	t->settled = true;
	for (f = 0; f < LR_MAX_FLOWS; f++) {
		/* the BPF side writes these; a torn read only skews a live line */
		const volatile struct lr_flow_state *st = &c->rx.flows[f];
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

/* --once: every flow the sender announced has its marker in. */
static bool test_complete(const struct recv_ctx *c)
{
	unsigned int f, n = 0;

	for (f = 0; f < LR_MAX_FLOWS; f++)
		if (c->rx.flows[f].eot_seen) {
			n = c->rx.flows[f].eot_flows;
			break;
		}
	if (!n)
		return false;
	for (f = 0; f < n && f < LR_MAX_FLOWS; f++)
		if (!((const volatile struct lr_flow_state *)c->rx.flows)[f].eot_seen)
			return false;
	return true;
}

static int write_ready(const char *path)
{
	char tmp[LR_PATH_MAX + 16];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	dprintf(fd, "%d\n", (int)getpid());
	close(fd);
	if (rename(tmp, path))
		return -errno;
	return 0;
}

static void live_line(struct recv_ctx *c, uint64_t *prev_pkts, uint64_t *prev_bytes, uint64_t dt)
{
	struct rx_totals t;
	char b1[32];
	double s = (double)dt / NS;
	uint64_t dp, db;

	if (read_counters(c))
		return;
	flow_totals(c, &t);
	dp = c->sum.packets - *prev_pkts;
	db = c->sum.bytes - *prev_bytes;
	*prev_pkts = c->sum.packets;
	*prev_bytes = c->sum.bytes;
	fprintf(stderr, "rx %s pps  %.3f Gbit/s L2  %.3f Gbit/s L1  total %llu  lost %lld  reord %llu  dup %llu  foreign %llu\n",
		lr_fmt_si(dp / s, b1, sizeof(b1)), (db + dp * 4.0) * 8.0 / s / 1e9, (db + dp * 24.0) * 8.0 / s / 1e9,
		(unsigned long long)c->sum.packets, (long long)t.lost, (unsigned long long)t.late,
		(unsigned long long)t.dups, (unsigned long long)c->sum.foreign);
}

static int report(struct recv_ctx *c)
{
	const struct lr_recv_opts *o = c->rx.o;
	const struct lr_rx_counters *s = &c->sum;
	struct json_object *root, *rx, *lat, *pq;
	struct rx_totals t;
	uint64_t p50, p90, p99, p999;
	double secs = (double)(c->end_ns - c->start_ns) / NS, active, pps, avg;
	char b1[32], err[256];
	unsigned int q;
	int ret;

	ret = read_counters(c);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "recv", "cannot read counters: %s", strerror(-ret));
	flow_totals(c, &t);
	/* rates over the span the frames actually arrived in, not the time spent waiting */
	active = s->last_ns > s->first_ns ? (double)(s->last_ns - s->first_ns) / NS : 0;
	pps = active > 0 ? (s->packets - 1) / active : 0;
	avg = s->packets ? (double)s->bytes / s->packets : 0;	/* frame bytes without FCS */
	p50 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.50, s->lat_min, s->lat_max);
	p90 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.90, s->lat_min, s->lat_max);
	p99 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.99, s->lat_min, s->lat_max);
	p999 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.999, s->lat_min, s->lat_max);

	fprintf(stderr, "\nlinerate recv: %s (%s) on %s, %.3f s (frames arriving for %.3f s), %u flow%s\n", c->rx.ops->name, c->rx.mode,
		o->ifname, secs, active, t.flows, t.flows == 1 ? "" : "s");
	fprintf(stderr, "  received  %llu frames, %llu bytes; %s pps, %.3f Gbit/s L2, %.3f Gbit/s L1\n",
		(unsigned long long)s->packets, (unsigned long long)s->bytes, lr_fmt_si(pps, b1, sizeof(b1)),
		pps * (avg + LR_FCS_LEN) * 8 / 1e9, pps * (avg + 24) * 8 / 1e9);
	if (t.flows_eot)
		fprintf(stderr, "  sent      %llu frames (end-of-test markers of %u/%u flows)%s\n",
			(unsigned long long)t.sent, t.flows_eot, t.flows_announced ? t.flows_announced : t.flows,
			t.settled ? "" : "; loss of flows without a marker counts sequence gaps only");
	else
		fprintf(stderr, "  sent      unknown (no end-of-test marker): loss counts sequence gaps only\n");
	fprintf(stderr, "  lost      %lld  reordered %llu  duplicates %llu  foreign %llu\n", (long long)t.lost,
		(unsigned long long)t.late, (unsigned long long)t.dups, (unsigned long long)s->foreign);
	if (s->lat_count)
		fprintf(stderr, "  latency   min %llu  p50 %llu  p90 %llu  p99 %llu  p99.9 %llu  max %llu ns\n",
			(unsigned long long)s->lat_min, (unsigned long long)p50, (unsigned long long)p90,
			(unsigned long long)p99, (unsigned long long)p999, (unsigned long long)s->lat_max);
	if (s->lat_future)
		fprintf(stderr, "  latency   %llu frames stamped ahead of this clock: sender on another host?\n",
			(unsigned long long)s->lat_future);
	if (c->rx.ring_drops)
		fprintf(stderr, "  warning   %llu frames dropped by the receive ring before they were counted (receiver too slow)\n",
			(unsigned long long)c->rx.ring_drops);
	if (s->bad_flow)
		fprintf(stderr, "  warning   %llu test frames with an out-of-range flow id\n",
			(unsigned long long)s->bad_flow);
	if (!o->json[0])
		return LR_EXIT_OK;

	root = json_object_new_object();
	json_object_object_add(root, "command", json_object_new_string("recv"));
	json_object_object_add(root, "engine", json_object_new_string(c->rx.ops->name));
	json_object_object_add(root, "mode", json_object_new_string(c->rx.mode));
	json_object_object_add(root, "interface", json_object_new_string(o->ifname));
	json_object_object_add(root, "duration_s", json_object_new_double(secs));
	json_object_object_add(root, "active_s", json_object_new_double(active));
	json_object_object_add(root, "frame_size", json_object_new_int((int)(s->packets ? avg + LR_FCS_LEN : 0)));
	rx = json_object_new_object();
	json_object_object_add(rx, "packets", json_object_new_uint64(s->packets));
	json_object_object_add(rx, "bytes", json_object_new_uint64(s->bytes));
	json_object_object_add(rx, "pps", json_object_new_double(pps));
	json_object_object_add(rx, "bps_l2", json_object_new_double(pps * (avg + LR_FCS_LEN) * 8));
	json_object_object_add(rx, "bps_l1", json_object_new_double(pps * (avg + 24) * 8));
	json_object_object_add(rx, "lost", json_object_new_int64(t.lost));
	json_object_object_add(rx, "reordered", json_object_new_uint64(t.late));
	json_object_object_add(rx, "duplicates", json_object_new_uint64(t.dups));
	json_object_object_add(rx, "foreign", json_object_new_uint64(s->foreign));
	json_object_object_add(rx, "sent", t.flows_eot ? json_object_new_uint64(t.sent) : NULL);
	json_object_object_add(rx, "tail_settled", json_object_new_boolean(t.settled));
	json_object_object_add(rx, "flows", json_object_new_int((int)t.flows));
	json_object_object_add(rx, "eot_markers", json_object_new_uint64(s->eot));
	json_object_object_add(rx, "ring_drops", json_object_new_uint64(c->rx.ring_drops));
	pq = json_object_new_array();
	for (q = 0; q < LR_RX_MAX_QUEUES; q++) {
		struct json_object *e;

		if (!s->queue_packets[q])
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "queue", json_object_new_int((int)q));
		json_object_object_add(e, "packets", json_object_new_uint64(s->queue_packets[q]));
		json_object_array_add(pq, e);
	}
	json_object_object_add(rx, "per_queue", pq);
	json_object_object_add(root, "rx", rx);
	lat = json_object_new_object();
	json_object_object_add(lat, "count", json_object_new_uint64(s->lat_count));
	json_object_object_add(lat, "min", json_object_new_uint64(s->lat_min));
	json_object_object_add(lat, "p50", json_object_new_uint64(p50));
	json_object_object_add(lat, "p90", json_object_new_uint64(p90));
	json_object_object_add(lat, "p99", json_object_new_uint64(p99));
	json_object_object_add(lat, "p999", json_object_new_uint64(p999));
	json_object_object_add(lat, "max", json_object_new_uint64(s->lat_max));
	json_object_object_add(lat, "mean", json_object_new_uint64(s->lat_count ? s->lat_sum / s->lat_count : 0));
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
		if (o->once) {
			if (!complete_at && test_complete(c))
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

int lr_cmd_recv(const struct lr_recv_opts *o)
{
	static const struct lr_cand all[] = {
		{ "xdp", open_backend, &lr_rx_xdp },
		{ "packet", open_backend, &lr_rx_packet },
	};
	struct recv_ctx c = { .rx.o = o };
	struct sigaction sa = { .sa_handler = on_signal };
	const struct lr_cand *cands = all;
	struct lr_choice ch;
	char err[256], why[512];
	unsigned int n = 2;
	int ret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	if (o->json[0] && lr_json_check_path(o->json, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err + strlen("--json: "));
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);
	ret = lr_if_open(o->ifname, &c.rx.ifc, err, sizeof(err));
	if (ret)
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);

	if (o->engine == LR_RX_ENGINE_XDP)
		n = 1;
	else if (o->engine == LR_RX_ENGINE_PACKET)
		cands = &all[1], n = 1;
	ret = lr_choose(cands, n, &c.rx, &ch);
	if (ret) {
		if (n > 1) {
			lr_choice_why(&ch, why, sizeof(why));
			return lr_fail(ret == -ENOMEM ? LR_EXIT_RUNTIME : LR_EXIT_USAGE, "recv",
				       "no engine can count on %s%s", o->ifname, why);
		}
		return lr_fail(ret == -ENOMEM ? LR_EXIT_RUNTIME : LR_EXIT_USAGE, "recv", "%s",
			       ch.tried[ch.ntried - 1].why);
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lr_choice_why(&ch, why, sizeof(why));
	fprintf(stderr, "linerate recv: ready on %s, engine %s (%s), counting UDP port %u%s%s%s\n", o->ifname,
		c.rx.ops->name, c.rx.mode, o->dst_port, c.rx.note[0] ? ": " : "", c.rx.note, why);
	if (o->ready_file[0] && (ret = write_ready(o->ready_file))) {
		ret = lr_fail(LR_EXIT_USAGE, "recv", "--ready-file: cannot write '%s': %s", o->ready_file,
			      strerror(-ret));
		goto out;
	}
	loop(&c);
	c.rx.ops->stop(&c.rx);
	ret = report(&c);
out:
	c.rx.ops->close(&c.rx);
	return ret;
}
