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
#include "rx/rx.h"
#include "sys/bpfstats.h"
#include "util/capture.h"
#include "util/choose.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"

#define NS 1000000000ULL
#define POLL_NS (100 * 1000000ULL)
#define ONCE_LINGER_NS (50 * 1000000ULL)	/* catch the markers' repeats before leaving */

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
		s->span_packets += p->span_packets;
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

void lr_flow_totals(const struct lr_flow_state *table, struct lr_flow_totals *t)
{
	unsigned int f;

	memset(t, 0, sizeof(*t));
	t->settled = true;
	for (f = 0; f < LR_MAX_FLOWS; f++) {
		/* the BPF side writes these; a torn read only skews a live line */
		const volatile struct lr_flow_state *st = &table[f];
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
			t->fwd_late += st->fwd_late;
			t->fwd_dups += st->fwd_dups;
			t->lost += (int64_t)st->eot_sent - (int64_t)(packets - dups);
			if (st->other_id && !t->flows_shared++) {
				t->run_ids[0] = st->test_id;
				t->run_ids[1] = st->other_id;
			}
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
	return lr_flows_complete(rx->flows);
}

bool lr_flows_complete(const struct lr_flow_state *table)
{
	const volatile struct lr_flow_state *flows = table;
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

int lr_rx_activity(struct lr_rx *rx, uint64_t *count)
{
	int i, ret = rx->ops->read(rx);

	if (ret)
		return ret;
	*count = 0;
	for (i = 0; i < rx->nsources; i++)
		*count += rx->sources[i].packets + rx->sources[i].eot;
	return 0;
}

int lr_rx_collect(struct lr_rx *rx, struct lr_rx_result *r)
{
	struct lr_rx_counters *s;
	struct lr_flow_totals t;
	int ret;

	ret = rx->ops->read(rx);
	if (ret)
		return ret;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	lr_rx_counters_sum(rx->sources, rx->nsources, s);
	lr_flow_totals(rx->flows, &t);
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
	r->fwd_late = t.fwd_late;
	r->fwd_dups = t.fwd_dups;
	r->lost = t.lost;
	r->flows = t.flows;
	r->flows_eot = t.flows_eot;
	r->flows_announced = t.flows_announced;
	r->settled = t.settled;
	r->have_shared = t.flows_shared > 0;
	r->flows_shared = t.flows_shared;
	r->run_ids[0] = t.run_ids[0];
	r->run_ids[1] = t.run_ids[1];
	/* rates over the span the frames actually arrived in, not the time spent waiting */
	r->active_s = s->last_ns > s->first_ns ? (double)(s->last_ns - s->first_ns) / NS : 0;
	/* frames up to each CPU's last clock read (lr_rx_wants_clock()): under LR_RX_CLOCK_EVERY short per CPU */
	r->pps = r->active_s > 0 && s->span_packets ? (s->span_packets - 1) / r->active_s : 0;
	r->lat_count = s->lat_count;
	r->lat_min = s->lat_min;
	r->lat_max = s->lat_max;
	r->lat_mean = s->lat_count ? s->lat_sum / s->lat_count : 0;
	r->lat_sum = s->lat_sum;
	r->lat_future = s->lat_future;
	r->lat_p50 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.50, s->lat_min, s->lat_max);
	r->lat_p90 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.90, s->lat_min, s->lat_max);
	r->lat_p99 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.99, s->lat_min, s->lat_max);
	r->lat_p999 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.999, s->lat_min, s->lat_max);
	/* one clock; or an offset a controller loaded, whose bound and verdict it fills in (ctl/clock.h) */
	r->lat_clock = rx->o->clock_offset_ns ? LR_LAT_CLOCK_ESTIMATED : LR_LAT_CLOCK_SAME_HOST;
	r->lat_offset_ns = rx->o->clock_offset_ns;
	r->lat_valid = !rx->o->clock_offset_ns;
	memcpy(r->queue_packets, s->queue_packets, sizeof(r->queue_packets));
	/* while the capture runs the writer's counts trail the samples a little: a live view */
	r->pcap_written = rx->pcap ? lr_pcap_records(rx->pcap) : rx->pcap_written;
	r->pcap_capped = rx->pcap ? lr_pcap_capped(rx->pcap) : rx->pcap_capped;
	r->pcap_dropped = s->sample_drops;
	/* once closed, a sample taken but never written (in flight at the stop) is a drop too */
	if (!rx->pcap && s->samples > r->pcap_written + r->pcap_capped)
		r->pcap_dropped += s->samples - r->pcap_written - r->pcap_capped;
	r->pcap = rx->o->pcap[0];
	snprintf(r->pcap_file, sizeof(r->pcap_file), "%s", rx->o->pcap);
	r->pcap_every = rx->o->pcap_every ? rx->o->pcap_every : 1;
	r->pcap_snaplen = rx->o->snaplen;
	/* a vanished interface reads as all zeros: no delta then, rather than one that wrapped */
	if (lr_if_present(&rx->ifc)) {
		struct lr_dev_counters now, d;

		lr_dev_counters_read(rx->o->ifname, &now);
		lr_dev_counters_delta(&d, &rx->dev0, &now);
		r->device = (struct lr_dev_result){ d.rx_packets, d.rx_dropped, d.drv_drops };
		/*
		 * XDP runs on every frame the device receives: one it counted that
		 * the program never ran on went past our hook (another program
		 * first, or a tc redirect into this namespace).
		 */
		if (rx->ops == &lr_rx_xdp) {
			uint64_t runs = lr_rx_result_runs(r);

			r->have_unseen = true;
			r->unseen = d.rx_packets > runs ? d.rx_packets - runs : 0;
		}
	}
	if (rx->timed) {
		uint64_t ns, runs;

		if (!lr_bpf_prog_stats(rx->prog_fd, &ns, &runs) && ns >= rx->prog_ns0 && runs >= rx->prog_runs0) {
			r->have_prog = true;
			r->prog = (struct lr_rx_prog){
				.run_ns = ns - rx->prog_ns0,
				.stat_runs = runs - rx->prog_runs0,
				.stats_reported_ns = rx->cal.reported_ns,
				.stats_added_ns = rx->cal.added_ns,
				.stats_added_known = rx->cal.added_known,
				.stats_error_ns = rx->cal.err_ns,
			};
		}
	}
	free(s);
	return 0;
}

/* Renames the capture into place; the backend's consumer must have stopped (ops->stop). */
int lr_rx_capture_close(struct lr_rx *rx, char *err, size_t errlen)
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
void lr_rx_capture_abort(struct lr_rx *rx)
{
	if (!rx->pcap)
		return;
	lr_pcap_abort(rx->pcap);
	rx->pcap = NULL;
}

bool lr_rx_wait_back(struct lr_rx *rx, unsigned int flows, uint64_t timeout_ns)
{
	const volatile struct lr_flow_state *fl = rx->flows;
	uint64_t end = lr_now_ns() + timeout_ns;
	struct timespec tick = { 0, 10 * 1000000L }, linger = { 0, 50 * 1000000L };
	unsigned int f, in = 0;

	/* not cut short by a signal: the markers still leave after one, and the wait is bounded */
	for (;;) {
		for (in = 0, f = 0; f < flows && f < LR_MAX_FLOWS; f++)
			in += fl[f].eot_seen != 0;
		if (in == flows || lr_now_ns() >= end)
			break;
		nanosleep(&tick, NULL);
	}
	/* the markers' repeats, and anything still on its way behind them */
	nanosleep(&linger, NULL);
	return in == flows;
}

/* The program's stats from here on (they only grow, and only while stats are on). */
static void prog_base(struct lr_rx *rx)
{
	if (rx->timed && lr_bpf_prog_stats(rx->prog_fd, &rx->prog_ns0, &rx->prog_runs0))
		rx->prog_ns0 = rx->prog_runs0 = 0;
}

void lr_rx_reset(struct lr_rx *rx)
{
	rx->ops->reset(rx);
	rx->ring_drops = 0;
	lr_dev_counters_read(rx->o->ifname, &rx->dev0);
	prog_base(rx);
	/* a window at the start of every test: a short one gets its share of counted runs */
	lr_bpf_sampler_kick(rx->stats);
}

/*
 * --prog-stats: calibrate what bpf_stats add (sys/bpfstats.h), then sample
 * them. Without an XDP program (the packet engine), or where stats cannot be
 * turned on (no CAP_SYS_ADMIN), the receiver counts as ever and is not
 * timed: @note says why. 0, or -ENOMEM.
 */
static int prog_stats_begin(struct lr_rx *rx, char *note, size_t len)
{
	char why[256];
	int ret;

	note[0] = '\0';
	if (!rx->o->prog_stats)
		return 0;
	if (rx->prog_fd < 0) {
		snprintf(note, len, " (--prog-stats: the packet engine runs no program to time)");
		return 0;
	}
	ret = lr_bpf_stats_calibrate(&rx->cal, why, sizeof(why));
	/* stats on already (the sysctl, another tool): every run is counted without a sampler */
	if (!ret && !rx->cal.already_on)
		ret = lr_bpf_sampler_start(&rx->stats, why, sizeof(why));
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		snprintf(note, len, " (--prog-stats: %s; the program is not timed)", why);
		return 0;
	}
	rx->timed = true;
	if (rx->cal.already_on)
		snprintf(note, len, " (--prog-stats: bpf_stats were on already: every run is counted, and their cost "
			 "is in every figure)");
	prog_base(rx);
	return 0;
}

static int open_backend(void *ctx, const struct lr_cand *cand, char *why, size_t len)
{
	struct lr_rx *rx = ctx;

	rx->ops = cand->data;
	rx->note[0] = '\0';
	return rx->ops->open(rx, why, len);
}

int lr_rx_begin(const struct lr_rx_spec *o, struct lr_rx *rx, char *line, size_t linelen, char *err, size_t errlen)
{
	static const struct lr_cand all[] = {
		{ "xdp", open_backend, &lr_rx_xdp },
		{ "packet", open_backend, &lr_rx_packet },
	};
	const struct lr_cand *cands = all;
	struct lr_choice ch;
	char why[LR_CHOICE_WHY_MAX(2)], unused[LR_RX_UNUSED_MAX] = "", statsnote[LR_RX_STATS_NOTE_MAX];
	unsigned int n = 2;
	int ret;

	memset(rx, 0, sizeof(*rx));
	rx->o = o;
	rx->prog_fd = -1;
	ret = lr_if_open(o->ifname, &rx->ifc, err, errlen);
	if (ret)
		return LR_EXIT_USAGE;
	/* before anything is attached: a path we cannot write is a usage error, not a lost capture */
	if (o->pcap[0]) {
		char perr[384];

		if (o->pcap_in_dir)
			ret = lr_pcap_openat(o->pcap_dirfd, o->pcap, o->pcap_max_bytes, o->snaplen, &rx->pcap, perr,
					     sizeof(perr));
		else
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
		lr_rx_capture_abort(rx);
		return ret == -ENOMEM ? LR_EXIT_RUNTIME : LR_EXIT_USAGE;
	}
	/*
	 * Auto, and XDP refused because a program holds the hook: that program
	 * runs before any socket, so AF_PACKET would count what it lets by (a
	 * second linerate receiver drops every test frame: 0). Refused, unless
	 * the user asked for the packet engine.
	 */
	if (n > 1 && rx->ops == &lr_rx_packet && ch.tried[0].err == -EBUSY) {
		snprintf(err, errlen, "%s: the packet engine would count only what that program passes on (--engine "
			 "packet forces it)", ch.tried[0].why);
		rx->ops->close(rx);
		rx->ops = NULL;
		lr_rx_capture_abort(rx);
		return LR_EXIT_USAGE;
	}
	lr_choice_why(&ch, why, sizeof(why));
	/* auto chose: say which given option the chosen engine has no use for */
	if (rx->ops == &lr_rx_xdp && o->workers_set)
		snprintf(unused, sizeof(unused), " (--workers %u is for the packet engine: XDP counts in the softirq "
			 "of every CPU that receives)", o->workers);
	else if (rx->ops == &lr_rx_packet && o->xdp_mode_set)
		snprintf(unused, sizeof(unused), " (--xdp-mode is for the xdp engine, which was not usable)");
	ret = prog_stats_begin(rx, statsnote, sizeof(statsnote));
	if (ret) {
		snprintf(err, errlen, "out of memory");
		rx->ops->stop(rx);
		lr_rx_capture_abort(rx);
		rx->ops->close(rx);
		rx->ops = NULL;
		return LR_EXIT_RUNTIME;
	}
	snprintf(line, linelen, "ready on %s, engine %s (%s), counting UDP port %u%s%s%s%s%s", o->ifname,
		 rx->ops->name, rx->mode, o->dst_port, rx->note[0] ? ": " : "", rx->note, why, unused, statsnote);
	lr_dev_counters_read(o->ifname, &rx->dev0);
	return 0;
}

void lr_rx_end(struct lr_rx *rx)
{
	char err[512];

	if (!rx->ops)
		return;
	lr_bpf_sampler_stop(rx->stats);
	rx->stats = NULL;
	rx->ops->stop(rx);
	if (lr_rx_capture_close(rx, err, sizeof(err)))
		pr_warn("recv: --pcap: %s\n", err);
	rx->ops->close(rx);
	rx->ops = NULL;
}

