/* SPDX-License-Identifier: MIT */
/* run's report: the table, the JSON document (every step through the result codec) and the CSV. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "ctl/clock.h"
#include "run/run.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/units.h"

#define L1_EXTRA 20	/* preamble, start delimiter and inter-frame gap */
#define FCS_LEN 4

/* The step's frame size as the table and the CSV show it: "64", or "mixed" for several. */
static const char *step_size_str(const struct lr_step *s, char *buf, size_t len)
{
	if (s->nsizes > 1)
		return "mixed";
	snprintf(buf, len, "%u", s->size);
	return buf;
}

/* A step's L1 bit rate as received, from the bytes the receiver counted (rx.bps_l1). */
static double rx_l1_bps(const struct lr_step *s)
{
	return lr_rx_result_bps(&s->rx, FCS_LEN + L1_EXTRA);
}

/*
 * A search's line rate at its found rate @pps: the found trial's frames as sent (their mean, which
 * is the size for one size), else @size's.
 */
static double found_l1_bps(const struct lr_step *b, unsigned int size, double pps)
{
	double frame = b->tx.packets ? (double)b->tx.bytes / (double)b->tx.packets : (double)size - FCS_LEN;

	return pps * (frame + FCS_LEN + L1_EXTRA) * 8;
}

const char *lr_run_tx_mode(const struct lr_run *r)
{
	unsigned int i;

	for (i = 1; i < r->nsteps; i++)
		if (strcmp(r->steps[i].mode, r->steps[0].mode))
			return "mixed";
	return r->nsteps ? r->steps[0].mode : "";
}

const char *lr_run_mode_name(enum lr_run_mode m)
{
	switch (m) {
	case LR_RUN_THROUGHPUT:
		return "throughput search";
	case LR_RUN_RTT:
		return "round-trip sweep";
	case LR_RUN_RTT_THROUGHPUT:
		return "round-trip throughput search";
	default:
		return "sweep";
	}
}

/* [test] mode as the file spells it */
static const char *mode_key(enum lr_run_mode m)
{
	static const char *const names[] = { "sweep", "throughput", "rtt", "rtt-throughput" };

	return (unsigned int)m < 4 ? names[m] : "sweep";
}

static struct json_object *cpu_json(const struct lr_step *s)
{
	struct json_object *cpu = json_object_new_array();
	unsigned int i;

	for (i = 0; i < s->ncpu; i++) {
		struct json_object *c = json_object_new_object();

		json_object_object_add(c, "cpu", json_object_new_int((int)i));
		json_object_object_add(c, "user", json_object_new_double(s->cpu[i].user));
		json_object_object_add(c, "system", json_object_new_double(s->cpu[i].sys));
		json_object_object_add(c, "softirq", json_object_new_double(s->cpu[i].softirq));
		json_object_object_add(c, "irq", json_object_new_double(s->cpu[i].irq));
		json_object_object_add(c, "idle", json_object_new_double(s->cpu[i].idle));
		json_object_object_add(c, "steal", json_object_new_double(s->cpu[i].steal));
		json_object_array_add(cpu, c);
	}
	return cpu;
}

/* A figure, or null where it was not measured (NaN). */
static struct json_object *num_or_null(double v)
{
	return isnan(v) ? NULL : json_object_new_double(v);
}

/* Whether a step's one-way (or round-trip) latency is a figure to print: samples, and valid. */
static bool lat_shown(const struct lr_step *s)
{
	return s->rx.lat_valid && s->rx.lat_count;
}

/* cost_ns_per_packet: the split and each part's error, ns per received packet (docs/cost.md). */
static struct json_object *cost_json(const struct lr_step *s)
{
	const struct lr_cost *c = &s->cost;
	struct json_object *o, *e;

	if (!s->have_cost)
		return NULL;
	o = json_object_new_object();
	e = json_object_new_object();
	json_object_object_add(o, "total", num_or_null(c->total));
	json_object_object_add(o, "sender", num_or_null(c->sender));
	json_object_object_add(o, "path", num_or_null(c->path));
	json_object_object_add(o, "receiver", num_or_null(c->receiver));
	json_object_object_add(e, "total", num_or_null(c->err_total));
	json_object_object_add(e, "sender", num_or_null(c->err_sender));
	json_object_object_add(e, "path", num_or_null(c->err_path));
	json_object_object_add(e, "receiver", num_or_null(c->err_receiver));
	json_object_object_add(o, "error", e);
	json_object_object_add(o, "packets", json_object_new_uint64(s->rx.packets));
	json_object_object_add(o, "busy_cpu_s", json_object_new_double((double)s->busy_ns / 1e9));
	json_object_object_add(o, "receiver_ns_per_run", num_or_null(c->recv_ns_per_run));
	json_object_object_add(o, "paced", json_object_new_boolean(s->cost_paced));
	return o;
}

static struct json_object *step_json(const struct lr_step *s)
{
	struct json_object *o = json_object_new_object(), *sizes = json_object_new_array();
	unsigned int k;

	/* several sizes: no one size; sizes[] holds each, as an IMIX will */
	json_object_object_add(o, "size", s->nsizes > 1 ? NULL : json_object_new_int((int)s->size));
	for (k = 0; k < s->nsizes; k++) {
		struct json_object *z = json_object_new_object();

		json_object_object_add(z, "size", json_object_new_int((int)s->sizes[k].size));
		json_object_object_add(z, "packets", json_object_new_uint64(s->sizes[k].packets));
		json_object_array_add(sizes, z);
	}
	json_object_object_add(o, "sizes", sizes);
	json_object_object_add(o, "offered_pps", s->offered_pps ? json_object_new_uint64(s->offered_pps) : NULL);
	if (s->trial)
		json_object_object_add(o, "trial", json_object_new_int((int)s->trial));
	if (s->rep)
		json_object_object_add(o, "repeat", json_object_new_int((int)s->rep));
	json_object_object_add(o, "mode", json_object_new_string(s->mode));
	json_object_object_add(o, "window_s", json_object_new_double(s->window_s));
	json_object_object_add(o, "pass", json_object_new_boolean(s->pass));
	json_object_object_add(o, "sender_limited", json_object_new_boolean(s->sender_limited));
	json_object_object_add(o, "loss_pct", json_object_new_double(s->loss_pct));
	json_object_object_add(o, "limit", json_object_new_string(s->limit));
	lr_tx_result_put(o, &s->tx);
	lr_rx_result_put(o, &s->rx);
	/* round trips: "rx" and "latency_ns" are the return as counted here, these the split */
	if (s->rtt_on)
		lr_rtt_result_put(o, &s->rtt);
	json_object_object_add(o, "cpu", cpu_json(s));
	json_object_object_add(o, "cost_ns_per_packet", cost_json(s));
	if (s->cost_why[0])
		json_object_object_add(o, "cost_note", json_object_new_string(s->cost_why));
	return o;
}

static struct json_object *search_json(const struct lr_run *r, const struct lr_run_search *ss)
{
	struct json_object *e = json_object_new_object(), *trials = json_object_new_array();
	unsigned int k;

	json_object_object_add(e, "size", json_object_new_int((int)ss->size));
	json_object_object_add(e, "found", json_object_new_boolean(ss->s.found));
	json_object_object_add(e, "capped", json_object_new_boolean(ss->s.capped));
	if (ss->s.found) {
		const struct lr_step *b = &r->steps[ss->first + ss->s.best];

		json_object_object_add(e, "rate_pps", json_object_new_uint64(ss->s.best_pps));
		json_object_object_add(e, "offered_pps", b->offered_pps ? json_object_new_uint64(b->offered_pps) : NULL);
		json_object_object_add(e, "rx_pps", json_object_new_double(b->rx.pps));
		json_object_object_add(e, "bps_l1", json_object_new_double(found_l1_bps(b, ss->size, (double)ss->s.best_pps)));
		/* not valid (clocks of two hosts): no figure, as the table's "n/a" */
		json_object_object_add(e, "latency_p50_ns", lat_shown(b) ? json_object_new_uint64(b->rx.lat_p50) : NULL);
		json_object_object_add(e, "latency_p99_ns", lat_shown(b) ? json_object_new_uint64(b->rx.lat_p99) : NULL);
		if (b->rtt_on)
			json_object_object_add(e, "rtt_p99_ns", json_object_new_uint64(b->rtt.p99));
	} else {
		json_object_object_add(e, "rate_pps", NULL);
	}
	for (k = 0; k < ss->s.ntrials; k++)
		json_object_array_add(trials, step_json(&r->steps[ss->first + k]));
	json_object_object_add(e, "trials", trials);
	return e;
}

int lr_run_write_json(const struct lr_run *r)
{
	const struct lr_cfg *cfg = r->cfg;
	struct json_object *root = lr_json_doc("run"), *steps = json_object_new_array();
	char err[256];
	unsigned int i;
	int ret;

	json_object_object_add(root, "name", json_object_new_string(cfg->name));
	json_object_object_add(root, "file", json_object_new_string(cfg->path));
	json_object_object_add(root, "mode", json_object_new_string(mode_key(cfg->mode)));
	json_object_object_add(root, "engine", json_object_new_string(r->tx_engine ? r->tx_engine : ""));
	json_object_object_add(root, "tx_mode", json_object_new_string(lr_run_tx_mode(r)));
	json_object_object_add(root, "rx", json_object_new_string(r->rx.line));
	json_object_object_add(root, "error", r->error[0] ? json_object_new_string(r->error) : NULL);
	lr_prep_result_put(root, &r->prep);
	for (i = 0; i < r->nsteps; i++)
		json_object_array_add(steps, step_json(&r->steps[i]));
	json_object_object_add(root, "steps", steps);
	if (lr_run_mode_search(cfg->mode)) {
		struct json_object *res = json_object_new_array();

		for (i = 0; i < r->nsearch; i++)
			json_object_array_add(res, search_json(r, &r->searches[i]));
		json_object_object_add(root, "throughput", res);
	}
	ret = lr_json_write(root, r->o->json, err, sizeof(err));
	json_object_put(root);
	if (ret)
		lr_err_line("linerate run: ", err);
	return ret;
}

static void csv_rows(FILE *f, const struct lr_run *r)
{
	bool rtt = lr_run_mode_rtt(r->cfg->mode);
	unsigned int i;

	/*
	 * round trips: p50/p99 are round-trip times, lost both ways; the split in the last columns.
	 * size: "mixed" for a step of several sizes, as in the table; p50_ns, p99_ns: empty where the
	 * latency is not valid (the table's "n/a")
	 */
	fprintf(f, "step,size,trial,offered_pps,tx_pps,rx_pps,l1_gbps,loss_pct,lost,reordered,duplicates,"
		   "p50_ns,p99_ns,tx_queued,tx_completed,tx_dev_dropped,rx_dev_dropped,rx_drv_drops,ring_drops,pass,limit%s\n",
		rtt ? ",forward_lost,return_lost,forward_reordered,return_reordered" : "");
	for (i = 0; i < r->nsteps; i++) {
		const struct lr_step *s = &r->steps[i];
		char sz[16], p50[24] = "", p99[24] = "";

		if (lat_shown(s)) {
			snprintf(p50, sizeof(p50), "%llu", (unsigned long long)s->rx.lat_p50);
			snprintf(p99, sizeof(p99), "%llu", (unsigned long long)s->rx.lat_p99);
		}
		fprintf(f, "%u,%s,%u,%llu,%.0f,%.0f,%.4f,%.4f,%lld,%llu,%llu,%s,%s,%llu,%llu,%llu,%llu,%llu,%llu,%d,\"%s\"",
			i + 1, step_size_str(s, sz, sizeof(sz)), s->trial, (unsigned long long)s->offered_pps, s->tx.pps,
			s->rx.pps, rx_l1_bps(s) / 1e9, s->loss_pct,
			(long long)(s->rtt_on ? s->rtt.fwd.lost + s->rtt.ret.lost : s->rx.lost),
			(unsigned long long)s->rx.late, (unsigned long long)s->rx.dups,
			p50, p99, (unsigned long long)s->tx.queued, (unsigned long long)s->tx.completed,
			(unsigned long long)s->tx.device.dropped, (unsigned long long)s->rx.device.dropped,
			(unsigned long long)s->rx.device.driver_drops, (unsigned long long)s->rx.ring_drops, s->pass,
			s->limit);
		if (rtt)
			fprintf(f, ",%lld,%lld,%llu,%llu", (long long)s->rtt.fwd.lost, (long long)s->rtt.ret.lost,
				(unsigned long long)s->rtt.fwd.late, (unsigned long long)s->rtt.ret.late);
		fputc('\n', f);
	}
}

static void csv_fill(FILE *f, const void *arg)
{
	csv_rows(f, arg);
}

int lr_run_write_csv(const struct lr_run *r)
{
	char err[512];
	int ret;

	ret = lr_out_stream(r->o->csv, csv_fill, r, err, sizeof(err));
	if (ret)
		fprintf(stderr, "linerate run: --csv: %s\n", err);
	return ret;
}

/* A latency figure in us, or "n/a" where the step's latency is not valid. */
static const char *lat_us(const struct lr_step *s, uint64_t ns, char *buf, size_t len)
{
	if (!lat_shown(s))
		return "n/a";
	snprintf(buf, len, "%.1f", ns / 1e3);
	return buf;
}

/*
 * Under the table, one line for the steps whose latency shows "n/a": which they are, and why, in
 * the words of the clock's own verdict (the first such step's; each step's is in its JSON).
 */
static void print_lat_why(FILE *out, const struct lr_run *r)
{
	const struct lr_step *first = NULL;
	unsigned int i, n = 0;
	char why[256];

	for (i = 0; i < r->nsteps; i++) {
		if (lat_shown(&r->steps[i]))
			continue;
		if (!n++) {
			first = &r->steps[i];
			fprintf(out, "latency n/a in step %u", i + 1);
		} else {
			fprintf(out, ", %u", i + 1);
		}
	}
	if (!n)
		return;
	/* one clock: not valid only for want of a sample */
	if (!lr_clock_describe(&first->rx, why, sizeof(why))[0])
		snprintf(why, sizeof(why), "no frame with a latency sample arrived");
	fprintf(out, ": %s%s\n", why, n > 1 ? " (the first's figures; every step's in latency_ns of the JSON)" : "");
}

/*
 * The pass column: yes or NO, and when the senders fell short, "sender-limited" in words the
 * reader cannot take for a pass: alone when that is all the step failed on.
 */
static const char *pass_word(const struct lr_step *s)
{
	if (!s->sender_limited)
		return s->pass ? "yes" : "NO";
	if (s->pass)
		return "yes, sender-limited";
	return s->pass_else ? "sender-limited" : "NO, sender-limited";
}

static void print_steps(FILE *out, const struct lr_run *r)
{
	unsigned int i, k;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[16];

	fprintf(out, "%-4s %5s %5s %10s %10s %10s %8s %8s %6s %8s %8s  %-18s %s\n", "step", "size", "trial", "offered",
		"tx pps", "rx pps", "L1 Gb/s", "loss %", "reord", "p50 us", "p99 us", "tx per queue", "pass");
	for (i = 0; i < r->nsteps; i++) {
		const struct lr_step *s = &r->steps[i];
		char spread[64] = "";
		size_t off = 0;

		for (k = 0; k < s->tx.nqueues && off < sizeof(spread) - 12; k++)
			off += (size_t)snprintf(spread + off, sizeof(spread) - off, "%s%s", k ? "/" : "",
						lr_fmt_si(s->tx.queues[k].pps, b3, sizeof(b3)));
		fprintf(out, "%-4u %5s %5s %10s %10s %10s %8.3f %8.3f %6llu %8s %8s  %-18s %s\n", i + 1,
			step_size_str(s, b7, sizeof(b7)),
			s->trial ? (snprintf(b3, sizeof(b3), "%u", s->trial), b3) : "-",
			s->offered_pps ? lr_fmt_si((double)s->offered_pps, b1, sizeof(b1)) : "max",
			lr_fmt_si(s->tx.pps, b2, sizeof(b2)), lr_fmt_si(s->rx.pps, b4, sizeof(b4)),
			rx_l1_bps(s) / 1e9, s->loss_pct, (unsigned long long)s->rx.late,
			lat_us(s, s->rx.lat_p50, b5, sizeof(b5)), lat_us(s, s->rx.lat_p99, b6, sizeof(b6)), spread,
			pass_word(s));
	}
	print_lat_why(out, r);
}

/* One part of the cost split: "N (+-E)", or "not measured". */
static void part(FILE *out, double v, double err)
{
	if (isnan(v))
		fprintf(out, "not measured");
	else
		fprintf(out, "%.0f (+-%.0f)", v, err);
}

static void print_where(FILE *out, const struct lr_run *r)
{
	bool mixed = !strcmp(lr_run_tx_mode(r), "mixed");
	unsigned int i, k, c;

	fprintf(out, "\nwhere the frames went (per step): queued > completed by the device > received; drops by place; CPU split\n");
	for (i = 0; i < r->nsteps; i++) {
		const struct lr_step *s = &r->steps[i];

		fprintf(out, "%-4u %s%s%squeued %llu, completed %llu, received %llu, lost %lld; tx dev dropped %llu, "
			     "rx dev dropped %llu, driver drops %llu+%llu, ring %llu; rx queues",
			i + 1, mixed ? "mode " : "", mixed ? s->mode : "", mixed ? "; " : "",
			(unsigned long long)s->tx.queued, (unsigned long long)s->tx.completed,
			(unsigned long long)s->rx.packets, (long long)s->rx.lost, (unsigned long long)s->tx.device.dropped,
			(unsigned long long)s->rx.device.dropped, (unsigned long long)s->tx.device.driver_drops,
			(unsigned long long)s->rx.device.driver_drops, (unsigned long long)s->rx.ring_drops);
		for (k = 0; k < LR_RX_MAX_QUEUES; k++)
			if (s->rx.queue_packets[k])
				fprintf(out, " q%u:%llu", k, (unsigned long long)s->rx.queue_packets[k]);
		fprintf(out, "\n     cpu");
		for (c = 0; c < s->ncpu; c++)
			fprintf(out, "%s%u usr %.0f%% sys %.0f%% sirq %.0f%% idle %.0f%%", c ? "; " : " ", c, s->cpu[c].user,
				s->cpu[c].sys, s->cpu[c].softirq, s->cpu[c].idle);
		if (s->have_cost) {
			const struct lr_cost *k = &s->cost;

			fprintf(out, "\n     cost %.0f ns/packet (+-%.0f): sender ", k->total, k->err_total);
			part(out, k->sender, k->err_sender);
			if (s->cost_paced)
				fprintf(out, " with its pacing wait");
			fprintf(out, ", path ");
			part(out, k->path, k->err_path);
			fprintf(out, ", receiver ");
			part(out, k->receiver, k->err_receiver);
			/* a paced sender's spinning is no cost of the frames: say so, or 50 us a frame reads as the path's */
			if (s->cost_paced)
				fprintf(out, "; paced: the sender spins between bursts, so it and the total hold that wait "
					     "(path and receiver do not; compare totals at rate max)");
		}
		if (s->cost_why[0])
			fprintf(out, "%s%s", s->have_cost ? "; " : "\n     cost: ", s->cost_why);
		if (s->rtt_on)
			fprintf(out, "\n     forward sent %llu, reflected %llu, lost %lld, reordered %llu, duplicates %llu; "
				     "return lost %lld, reordered %llu, duplicates %llu%s",
				(unsigned long long)s->rtt.fwd.sent, (unsigned long long)s->rtt.fwd.received,
				(long long)s->rtt.fwd.lost, (unsigned long long)s->rtt.fwd.late,
				(unsigned long long)s->rtt.fwd.dups, (long long)s->rtt.ret.lost,
				(unsigned long long)s->rtt.ret.late, (unsigned long long)s->rtt.ret.dups,
				s->rtt.settled ? "" : " (markers missing: split estimated)");
		fprintf(out, "; limit: %s\n", s->limit);
	}
}

static void print_searches(FILE *out, const struct lr_run *r)
{
	unsigned int i;
	char b1[32], b2[32], b3[32], cap[96];

	if (lr_run_mode_rtt(r->cfg->mode) && r->cfg->max_rtt_p99_ns)
		fprintf(out, "\nzero-loss round-trip throughput (loss both ways <= %.4g%%, rtt p99 <= %.1f us):\n",
			r->cfg->max_loss * 100, r->cfg->max_rtt_p99_ns / 1e3);
	else
		fprintf(out, "\nzero-loss %sthroughput (loss%s <= %.4g%%):\n", lr_run_mode_rtt(r->cfg->mode) ? "round-trip " : "",
			lr_run_mode_rtt(r->cfg->mode) ? " both ways" : "", r->cfg->max_loss * 100);
	for (i = 0; i < r->nsearch; i++) {
		const struct lr_run_search *ss = &r->searches[i];
		const struct lr_step *b;
		double rate = (double)ss->s.best_pps;

		if (!ss->s.found) {
			fprintf(out, "  %5u B: no rate passed in %u trial%s\n", ss->size, ss->s.ntrials, lr_s(ss->s.ntrials));
			continue;
		}
		b = &r->steps[ss->first + ss->s.best];
		/* the upper bound passed: no trial failed above it, so the throughput is only bounded below */
		if (!ss->s.capped)
			cap[0] = '\0';
		else if (!b->offered_pps)
			snprintf(cap, sizeof(cap), ": the upper bound (max: what the sender reached) passed");
		else if (b->sender_limited)
			snprintf(cap, sizeof(cap), ": the upper bound passed, its sender short of the %s offered",
				 lr_fmt_si((double)b->offered_pps, b2, sizeof(b2)));
		else
			snprintf(cap, sizeof(cap), ": the upper bound passed");
		fprintf(out, "  %5u B: %s%s pps (%.3f Gbit/s L1)%s, %sp50 %s us, p99 %s us, %u trial%s\n", ss->size,
			ss->s.capped ? "at least " : "", lr_fmt_si(rate, b1, sizeof(b1)),
			found_l1_bps(b, ss->size, rate) / 1e9, cap, b->rtt_on ? "rtt " : "",
			lat_us(b, b->rx.lat_p50, b2, sizeof(b2)), lat_us(b, b->rx.lat_p99, b3, sizeof(b3)), ss->s.ntrials,
			lr_s(ss->s.ntrials));
	}
}

void lr_run_print_table(const struct lr_run *r)
{
	const struct lr_cfg *cfg = r->cfg;
	const struct lr_run_opts *o = r->o;
	FILE *out = (o->json[0] && !strcmp(o->json, "-")) || (o->csv[0] && !strcmp(o->csv, "-")) ? stderr : stdout;

	fprintf(out, "\n%s: %s%s, tx engine %s (%s); %s %s\n", cfg->name, lr_run_mode_name(cfg->mode),
		lr_run_mode_search(cfg->mode) ? " (RFC 2544 26.1)" : "", r->tx_engine, lr_run_tx_mode(r),
		lr_run_mode_rtt(cfg->mode) ? "reflector" : "rx", r->rx.line);
	if (lr_run_mode_rtt(cfg->mode))
		fprintf(out, "round trips: rx pps is the return counted on %s; loss is both ways; p50 and p99 are "
			"round-trip times\n", cfg->tx_ifname);
	/* the path measured: GRO on at the peer puts NAPI and GRO where the backlog was */
	if (r->prep.asked) {
		char start[512], end[512];

		lr_peer_gro_start_line(&r->prep, cfg->tx_ifname, start, sizeof(start));
		lr_peer_gro_end_line(&r->prep, end, sizeof(end));
		fprintf(out, "%s (at the end: %s)\n", start, end);
	}
	print_steps(out, r);
	print_where(out, r);
	if (lr_run_mode_search(cfg->mode))
		print_searches(out, r);
}
