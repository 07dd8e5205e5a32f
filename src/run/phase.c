/* SPDX-License-Identifier: MIT */
/* run's traffic: phases (every stream's senders for one window), steps, sweeps and searches. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include "run/run.h"
#include "rx/rx.h"
#include "session/local.h"
#include "tx/frame.h"
#include "tx/rate.h"
#include "tx/tx.h"
#include "util/capture.h"
#include "util/log.h"
#include "util/report.h"

#define NS 1000000000ULL
#define STR(x)	#x
#define XSTR(x)	STR(x)
#define EOT_WAIT_NS (3 * NS)	/* after the senders stop: markers and late frames */
#define WARMUP_WAIT_NS (1 * NS)

void lr_run_stream_opts(const struct lr_run *r, const struct lr_cfg_stream *st, unsigned int size, uint64_t pps,
			uint64_t window_ns, struct lr_send_opts *o)
{
	const struct lr_cfg *cfg = r->cfg;

	lr_send_opts_default(o);
	/* the stream is a sender's spec; [tx]'s settings for every stream and the step's land on it */
	o->tx = st->tx;
	snprintf(o->tx.ifname, sizeof(o->tx.ifname), "%s", cfg->tx_ifname);
	o->tx.engine = r->engine;
	o->tx.xsk_mode = cfg->xsk_mode;
	if (!o->tx.size)
		o->tx.size = size;
	if (pps) {
		uint64_t share = (uint64_t)llround((double)pps * st->share);

		o->tx.rate.kind = LR_RATE_PPS;
		o->tx.rate.value = share ? share : 1;
	}
	o->tx.duration_ns = window_ns;
	o->tx.count = cfg->count;
	o->tx.dst_port = cfg->dst_port;
	if (cfg->batch)
		o->tx.batch = cfg->batch;
	o->tx.latency_every = cfg->latency_every;
	o->tx.rtt = lr_run_mode_rtt(cfg->mode);
	o->quiet = true;
	o->silent = r->banner_done || r->o->quiet;
	o->verbose = r->o->verbose;
	/* a remote sender enters [tx] netns on the agent's host; a local one runs where run entered it */
	if (r->tx_ctl)
		snprintf(o->netns, sizeof(o->netns), "%s", cfg->tx_netns);
	/*
	 * held by the agent for a remote sender; for a local one by run itself, once for every phase,
	 * which the engine's probe must know too (live refuses a peer held only by other runs)
	 */
	o->tx.prepare_peer = cfg->prepare_peer;
}

static void guess_limit(struct lr_step *s)
{
	double busiest = 0;
	unsigned int c, bc = 0;

	for (c = 0; c < s->ncpu; c++) {
		double busy = 100 - s->cpu[c].idle;

		if (busy > busiest)
			busiest = busy, bc = c;
	}
	if (s->rx.ring_drops)
		snprintf(s->limit, sizeof(s->limit), "receiver's AF_PACKET ring full (%llu dropped)",
			 (unsigned long long)s->rx.ring_drops);
	else if (s->tx.device_dropped || s->rx.device.dropped || s->rx.device.driver_drops)
		/* not summed: on a veth one frame refused by a full ring counts at both ends and in the driver's stats */
		snprintf(s->limit, sizeof(s->limit), "receive side: devices dropped frames (tx end %llu, rx end %llu, "
			 "rx driver counters %llu)", (unsigned long long)s->tx.device_dropped,
			 (unsigned long long)s->rx.device.dropped, (unsigned long long)s->rx.device.driver_drops);
	else if (s->rtt_on && (s->rtt.fwd.lost > 0 || s->rtt.ret.lost > 0))
		snprintf(s->limit, sizeof(s->limit), "the path lost %lld on the way there and %lld on the way back",
			 (long long)s->rtt.fwd.lost, (long long)s->rtt.ret.lost);
	else if (!s->rtt_on && s->rx.lost > 0)
		snprintf(s->limit, sizeof(s->limit), "the path between the devices lost %lld", (long long)s->rx.lost);
	else if (lr_search_short(s->offered_pps, s->tx.pps))
		snprintf(s->limit, sizeof(s->limit), "sender below the offered rate (cpu%u %.0f%% busy)", bc, busiest);
	else if (!s->offered_pps)
		snprintf(s->limit, sizeof(s->limit), "cpu%u %.0f%% busy (%.0f%% softirq)", bc, busiest, s->cpu[bc].softirq);
	else
		snprintf(s->limit, sizeof(s->limit), "none: the offered rate went through");
}

/* Counts @packets frames of @size into the step's sizes; s->size is that size while it is the only one. */
static void add_size(struct lr_step *s, unsigned int size, uint64_t packets)
{
	unsigned int k;

	for (k = 0; k < s->nsizes && s->sizes[k].size != size; k++)
		;
	if (k == s->nsizes) {
		if (k == LR_CFG_MAX_STREAMS)
			return;
		s->sizes[s->nsizes++] = (struct lr_step_size){ size, 0 };
	}
	s->sizes[k].packets += packets;
	s->size = s->nsizes == 1 ? s->sizes[0].size : 0;
}

/*
 * What every stream's senders did in one window, as one tx result: counts summed, queues listed
 * in stream order, and the drops of the one sending interface, read around the whole window.
 */
static int tx_sum(const struct lr_run *r, struct lr_tx *const *tx, const struct lr_send_opts *opts,
		  const struct lr_dev_counters *d0, struct lr_step *s)
{
	const struct lr_cfg *cfg = r->cfg;
	struct lr_tx_result *one = malloc(sizeof(*one));
	struct lr_tx_result *t = &s->tx;
	struct lr_dev_counters d1, dd;
	uint64_t bytes = 0;
	unsigned int i, k;
	double secs;

	if (!one)
		return -ENOMEM;
	for (i = 0; i < cfg->nstreams; i++) {
		/* every stream went at the same start: the window ends with the last one's data */
		lr_tx_collect(tx[i], one, &secs);
		if (secs > s->window_s)
			s->window_s = secs;
		t->queued += one->queued;
		t->completed += one->completed;
		t->eot += one->eot;
		/* streams at different rates may stamp differently by default: the sparsest */
		if (one->latency_every > t->latency_every)
			t->latency_every = one->latency_every;
		bytes += one->completed * (opts[i].tx.size - LR_FCS_LEN);
		add_size(s, opts[i].tx.size, one->completed);
		for (k = 0; k < one->nqueues && t->nqueues < LR_TX_MAX_QUEUES; k++)
			t->queues[t->nqueues++] = one->queues[k];
		/*
		 * The workers' CPU: every stream's, or none when one of them could not say. One
		 * stream's interrupt work stands; several streams' is estimated again, together,
		 * by streams_softirq().
		 */
		t->have_cpu = (i == 0 || t->have_cpu) && one->have_cpu;
		if (i == 0) {
			t->cpu = one->cpu;
		} else {
			t->cpu.thread_ns += one->cpu.thread_ns;
			t->cpu.prog_stat_runs += one->cpu.prog_stat_runs;
		}
	}
	free(one);
	lr_dev_counters_read(cfg->tx_ifname, &d1);
	lr_dev_counters_delta(&dd, d0, &d1);
	t->device = (struct lr_dev_result){ dd.tx_packets, dd.tx_dropped, dd.drv_drops };
	/*
	 * Data frames the sending device dropped: its tx_dropped when the last
	 * stream's data was done, before the end-of-test markers (which a full
	 * ring may turn away too), less the reading at the start. Engines that
	 * resend what the device pushed back (AF_PACKET) lost none of them.
	 */
	if (lr_tx_ops(tx[0])->drops_completed) {
		uint64_t at_end = d0->tx_dropped, v;

		for (i = 0; i < cfg->nstreams; i++)
			if (!lr_tx_dropped_at_data_end(tx[i], &v) && v > at_end)
				at_end = v;
		t->device_dropped = at_end - d0->tx_dropped;
	}
	t->packets = t->completed - (t->device_dropped < t->completed ? t->device_dropped : t->completed);
	/* the frames' bytes in the streams' proportions: exact when the streams share one size */
	t->bytes = t->completed ? (uint64_t)((unsigned __int128)bytes * t->packets / t->completed) : 0;
	t->pps = s->window_s > 0 ? t->packets / s->window_s : 0;
	for (k = 0; k < t->nqueues; k++)
		t->queues[k].pps = s->window_s > 0 ? t->queues[k].packets / s->window_s : 0;
	/* every stream's workers: one mode, or "mixed" when a socket fell back */
	s->mode = lr_tx_mode(tx[0]);
	for (i = 1; i < cfg->nstreams; i++)
		if (strcmp(lr_tx_mode(tx[i]), s->mode))
			s->mode = "mixed";
	return 0;
}

/*
 * Several streams' workers may share a CPU, and each stream's own estimate took all of that CPU's
 * interrupt work off its own time: the estimate again, once, over every stream's workers, with
 * the window's own readings (@c0, @c1, ksoftirqd's @ks0, @ks1).
 */
static void streams_softirq(struct lr_tx *const *tx, unsigned int n, const struct lr_cpu_times *c0,
			    const struct lr_cpu_times *c1, const uint64_t *ks0, const uint64_t *ks1, struct lr_tx_cpu *cpu)
{
	struct lr_cost_cpus cc = { 0 };
	unsigned int i;

	for (i = 0; i < n; i++) {
		lr_tx_cost_cpus(tx[i], &cc);
		if (!cc.n)
			return;
	}
	lr_cost_sender_irq(&cc, c0, c1, ks0, ks1, cpu);
}

/*
 * The step's CPU per received packet and its split: every CPU's busy time
 * over the window (@c0, @c1), the senders' own, our XDP program's.
 */
static void step_cost(const struct lr_run *r, const struct lr_cpu_times *c0, const struct lr_cpu_times *c1,
		      struct lr_step *s)
{
	struct lr_cost_in in = { 0 };
	const char *why = NULL;

	if (!r->cfg->cost)
		why = "[test] cost = no";
	else if (s->rtt_on)
		why = "round trips: the reflector's work is not told apart";
	else if (r->tx_ctl)
		why = "the senders run on an agent";
	else if (r->rx.remote && r->clock.state != LR_CLOCK_SAME)
		why = "the receiver runs on another host";
	else if (!c0->n || !c1->n)
		why = "/proc/stat could not be read";
	else if (c0->truncated)
		why = "the host has more than " XSTR(LR_MAX_CPUS) " CPUs: their time would be left out";
	else if (!s->rx.packets)
		why = "no packet was received";
	if (why) {
		snprintf(s->cost_why, sizeof(s->cost_why), "%s", why);
		return;
	}
	in.packets = s->rx.packets;
	in.busy_ns = lr_cost_busy_ns(c0, c1, &in.busy_err_ns);
	s->busy_ns = in.busy_ns;
	in.have_sender = s->tx.have_cpu;
	in.sender_thread_ns = s->tx.cpu.thread_ns;
	in.sender_softirq_ns = s->tx.cpu.softirq_ns;
	in.sender_softirq_err_ns = s->tx.cpu.softirq_err_ns;
	in.sender_stat_runs = s->tx.cpu.prog_stat_runs;
	in.have_receiver = s->rx.have_prog;
	in.recv_run_ns = s->rx.prog.run_ns;
	in.recv_stat_runs = s->rx.prog.stat_runs;
	in.recv_runs = lr_rx_result_runs(&s->rx);
	in.cal = (struct lr_stats_cal){ .valid = s->rx.have_prog, .reported_ns = s->rx.prog.stats_reported_ns,
					.added_ns = s->rx.prog.stats_added_ns,
					.added_known = s->rx.prog.stats_added_known,
					.err_ns = s->rx.prog.stats_error_ns };
	lr_cost_compute(&in, &s->cost);
	s->have_cost = s->cost.valid;
	/* below max a worker spins between bursts to keep its timing: its time is its core's, wait included */
	s->cost_paced = s->offered_pps != 0;
	if (!s->tx.have_cpu)
		snprintf(s->cost_why, sizeof(s->cost_why), "the senders' CPU time could not be read");
	else if (!s->rx.have_prog)
		snprintf(s->cost_why, sizeof(s->cost_why), "receiver not timed (no XDP program, or no bpf_stats)");
	else if (s->rx.prog.stat_runs < LR_PROG_MIN_RUNS)
		snprintf(s->cost_why, sizeof(s->cost_why), "receiver not timed: bpf_stats counted %llu run%s in the step, "
			 "fewer than %d", (unsigned long long)s->rx.prog.stat_runs, lr_s(s->rx.prog.stat_runs),
			 LR_PROG_MIN_RUNS);
}

/* The first phase's engine is kept for the rest, so every step measures the same one. */
static void keep_engine(struct lr_run *r, const struct lr_tx *tx)
{
	const char *name = lr_tx_ops(tx)->name;

	r->engine = lr_engine_kind_of(name);
	r->tx_engine = name;
}

/* What a window's counts say once both ends reported: loss, and what most likely limited the rate. */
static void settle(const struct lr_run *r, struct lr_step *s, bool complete)
{
	/* the markers settle each flow's tail only if they all came */
	s->complete = complete;
	s->rx.settled = s->rx.settled && complete;
	/*
	 * The receiver's rate over the sender's window, not over its own first-to-last arrival
	 * (active_s): two spans of different lengths would put rx above tx at zero loss. Over one
	 * window the two rates differ by the frames lost, and the bit rates follow.
	 */
	s->rx.pps = s->window_s > 0 ? (double)s->rx.packets / s->window_s : 0;
	if (s->rtt_on) {
		/* round trips: both directions' loss, of the frames sent; the markers announce the frames queued */
		lr_rtt_compute(s->tx.queued, r->flows_total, &s->rx, &s->rtt);
		s->loss_pct = s->rtt.fwd.sent ?
			100.0 * (double)(s->rtt.fwd.lost + s->rtt.ret.lost) / (double)s->rtt.fwd.sent : 0;
	} else {
		uint64_t sent = s->rx.flows_eot ? s->rx.sent : s->tx.completed;

		s->loss_pct = sent ? 100.0 * (double)s->rx.lost / (double)sent : 0;
	}
	guess_limit(s);
}

/* The phase with the sender on the [tx] agent (one stream, config.c insists). */
static int remote_phase(struct lr_run *r, unsigned int size, uint64_t pps, uint64_t window_ns, struct lr_step *s,
			struct lr_send_opts *opts, struct lr_rx_result *scratch)
{
	bool complete;
	int ret;

	lr_run_stream_opts(r, &r->cfg->streams[0], size, pps, window_ns, &opts[0]);
	ret = lr_run_remote_tx(r, &opts[0], window_ns, s);
	if (!ret)
		ret = lr_run_rx_wait(r, s ? EOT_WAIT_NS : WARMUP_WAIT_NS, s ? &s->rx : scratch, &complete);
	if (ret || !s)
		return ret;
	add_size(s, opts[0].tx.size, s->tx.completed);
	s->offered_pps = pps;
	snprintf(s->cost_why, sizeof(s->cost_why), "the senders run on an agent");
	settle(r, s, complete);
	return 0;
}

/*
 * The sending interface is gone (deleted, or it was a veth whose peer's namespace went away)
 * since the first phase opened it: a failure of the run, exit code 1, said as that, not as the
 * sender's "no IPv4 address" or "No such device", which reads as if the file were wrong.
 */
/* A line of the sender's (its notice, its refusal) with the settings named as run-file keys. */
static void tx_say(const char *text)
{
	char msg[LR_ERR_MAX + 256];

	lr_err_line("linerate send: ", lr_err_spell_text(text, lr_cfg_spell, msg, sizeof(msg)));
}

static void tx_fail(const struct lr_err *e)
{
	tx_say(e->msg);
}

static bool tx_gone(const struct lr_run *r)
{
	return r->banner_done && !if_nametoindex(r->cfg->tx_ifname) && errno == ENODEV;
}

static int tx_gone_fail(struct lr_run *r)
{
	return lr_run_fail(r, LR_EXIT_RUNTIME, "[tx] interface %s disappeared (deleted, or its veth peer's "
			   "namespace went away)", r->cfg->tx_ifname);
}

/*
 * One traffic phase: every stream's workers at their share of @pps (0: max)
 * for @window_ns, counted by the receiver from a reset. @s may be NULL for a
 * warm-up, whose numbers nobody reads.
 */
static int run_phase(struct lr_run *r, unsigned int size, uint64_t pps, uint64_t window_ns, struct lr_step *s)
{
	const struct lr_cfg *cfg = r->cfg;
	struct lr_tx *tx[LR_CFG_MAX_STREAMS] = { 0 };	/* the streams' senders, as l[i] holds them */
	struct lr_local *l = NULL;
	struct lr_rx_result *scratch = NULL;
	struct lr_send_opts *opts;
	struct lr_dev_counters d0;
	struct lr_err e;
	struct lr_cpu_times c0, c1;
	pid_t kpids[LR_MAX_CPUS];
	uint64_t ks0[LR_MAX_CPUS], ks1[LR_MAX_CPUS];
	unsigned int i, base = 0;
	bool complete;
	uint64_t start;
	int ret = 0;

	opts = calloc(cfg->nstreams, sizeof(*opts));
	if (!s)
		scratch = malloc(sizeof(*scratch));
	if (!opts || (!s && !scratch)) {
		free(opts);
		return LR_EXIT_RUNTIME;
	}
	/* a reflector numbers each test's frames anew by itself; the return's counts are ours to zero */
	if (r->back)
		lr_rx_reset(r->back);
	else if (lr_run_rx_reset(r)) {
		ret = LR_EXIT_RUNTIME;
		goto out;
	}
	if (r->tx_ctl) {
		ret = remote_phase(r, size, pps, window_ns, s, opts, scratch);
		goto out;
	}
	if (tx_gone(r)) {
		ret = tx_gone_fail(r);
		goto out;
	}
	/* every stream an endpoint of this process's; the peer's GRO is run's to hold (run.c), not theirs */
	l = calloc(cfg->nstreams, sizeof(*l));
	if (!l) {
		ret = lr_run_fail(r, LR_EXIT_RUNTIME, "out of memory");
		goto out;
	}
	for (i = 0; i < cfg->nstreams; i++) {
		lr_local_init(&l[i], NULL, NULL);
		lr_run_stream_opts(r, &cfg->streams[i], size, pps, window_ns, &opts[i]);
		ret = lr_local_prepare_stream(&l[i], &opts[i].tx, base, r->flows_total, &e);
		if (ret) {
			tx_fail(&e);
			/* gone between the check and the open: the sender said its part, this says why */
			if (tx_gone(r))
				ret = tx_gone_fail(r);
			goto out;
		}
		tx[i] = l[i].tx;
		if (lr_tx_notice(tx[i]))
			tx_say(lr_tx_notice(tx[i]));
		if (!opts[i].silent)
			fprintf(stderr, "linerate send: %s\n", l[i].line);
		if (!r->banner_done)
			keep_engine(r, tx[i]);
		base += cfg->streams[i].tx.flows;
	}
	r->banner_done = true;
	for (i = 0, base = 0; i < cfg->nstreams; i++) {
		unsigned int nw;

		if (s && r->sampler)
			lr_tx_sample(tx[i], r->sampler, base, cfg->tx_pcap_every,
				     cfg->tx_pcap_every ? 0 : LR_PCAP_DEFAULT_COUNT);
		lr_tx_workers(tx[i], &nw);
		base += nw;
		/* each stream's workers made and at their gate, released together below */
		ret = lr_local_arm(&l[i], &e);
		if (ret) {
			tx_fail(&e);
			if (tx_gone(r))
				ret = tx_gone_fail(r);
			goto out;
		}
	}
	lr_dev_counters_read(cfg->tx_ifname, &d0);
	if (cfg->nstreams > 1) {
		lr_ksoftirqd_find(kpids, LR_MAX_CPUS);
		lr_ksoftirqd_read(kpids, ks0, LR_MAX_CPUS);
	}
	lr_cpu_times_read(&c0);
	start = lr_now_ns();
	for (i = 0; i < cfg->nstreams; i++)
		lr_local_go(&l[i], start);
	for (;;) {
		bool done = true;

		for (i = 0; i < cfg->nstreams; i++)
			done &= lr_local_done(&l[i]);
		if (done)
			break;
		usleep(10000);
	}
	lr_cpu_times_read(&c1);
	if (cfg->nstreams > 1)
		lr_ksoftirqd_read(kpids, ks1, LR_MAX_CPUS);
	for (i = 0; i < cfg->nstreams; i++)
		lr_local_join(&l[i]);
	if (r->back)
		ret = lr_run_back_wait(r, s ? EOT_WAIT_NS : WARMUP_WAIT_NS, s ? &s->rx : scratch, &complete);
	else
		ret = lr_run_rx_wait(r, s ? EOT_WAIT_NS : WARMUP_WAIT_NS, s ? &s->rx : scratch, &complete);
	if (ret || !s)
		goto out;
	s->rtt_on = r->back != NULL;

	/* what the senders did (tx_sum() sets the sizes) */
	s->offered_pps = pps;
	s->ncpu = lr_cpu_split(&c0, &c1, s->cpu, LR_MAX_CPUS);
	if (tx_sum(r, tx, opts, &d0, s)) {
		ret = lr_run_fail(r, LR_EXIT_RUNTIME, "out of memory");
		goto out;
	}
	if (cfg->nstreams > 1 && s->tx.have_cpu)
		streams_softirq(tx, cfg->nstreams, &c0, &c1, ks0, ks1, &s->tx.cpu);
	step_cost(r, &c0, &c1, s);
	settle(r, s, complete);
out:
	for (i = 0; l && i < cfg->nstreams; i++)
		lr_local_end(&l[i]);
	free(l);
	free(opts);
	free(scratch);
	return ret;
}

static struct lr_step *new_step(struct lr_run *r)
{
	struct lr_step *s;

	if (r->nsteps >= LR_RUN_MAX_STEPS)
		return NULL;
	if (!(r->nsteps % 64)) {
		s = realloc(r->steps, sizeof(*s) * (r->nsteps + 64));
		if (!s)
			return NULL;
		r->steps = s;
	}
	s = &r->steps[r->nsteps];
	memset(s, 0, sizeof(*s));
	return s;
}

static void judge(const struct lr_run *r, struct lr_step *s)
{
	const struct lr_cfg *cfg = r->cfg;

	s->pass = s->complete && s->loss_pct <= cfg->max_loss * 100 + 1e-9;
	if (cfg->max_p99_ns && s->rx.lat_p99 > cfg->max_p99_ns)
		s->pass = false;
	if (s->rtt_on && cfg->max_rtt_p99_ns && s->rtt.p99 > cfg->max_rtt_p99_ns)
		s->pass = false;
	/*
	 * A sender short of the offered rate tested a lower one than the step names. Told apart from
	 * the other thresholds, so that the table can say which failed.
	 */
	s->sender_limited = lr_search_short(s->offered_pps, s->tx.pps);
	s->pass_else = s->pass;
	if (s->sender_limited && !cfg->sender_limited_pass)
		s->pass = false;
}

static void progress(const struct lr_run *r, const struct lr_step *s, const char *what)
{
	char b1[32], b2[32], b3[32], p99[64], sz[24];

	if (r->o->quiet)
		return;
	if (s->nsizes > 1)
		snprintf(sz, sizeof(sz), "mixed sizes");
	else
		snprintf(sz, sizeof(sz), "%u B", s->size);
	/* across clocks, latency is judged once the clocks are compared again after the last step */
	if (r->clock.state == LR_CLOCK_NONE)
		snprintf(p99, sizeof(p99), "n/a (no clock estimate)");
	else if (r->clock.state != LR_CLOCK_SAME)
		snprintf(p99, sizeof(p99), "n/a until the clocks are compared after the last step");
	else if (!s->rx.lat_count)
		snprintf(p99, sizeof(p99), "n/a (no latency sample)");
	else
		snprintf(p99, sizeof(p99), "%.1f us", s->rx.lat_p99 / 1e3);
	if (s->rtt_on) {
		fprintf(stderr, "linerate run: %s %s at %s: tx %s pps, back %s pps, lost %lld there and %lld back "
			"(%.3f%%), rtt p50 %.1f us p99 %.1f us%s; limit: %s\n",
			what, sz, s->offered_pps ? lr_fmt_si((double)s->offered_pps, b1, sizeof(b1)) : "max",
			lr_fmt_si(s->tx.pps, b2, sizeof(b2)), lr_fmt_si(s->rx.pps, b3, sizeof(b3)),
			(long long)s->rtt.fwd.lost, (long long)s->rtt.ret.lost, s->loss_pct, s->rtt.p50 / 1e3,
			s->rtt.p99 / 1e3, s->complete ? "" : " (reflected markers missing)", s->limit);
		return;
	}
	fprintf(stderr, "linerate run: %s %s at %s: tx %s pps, rx %s pps, lost %lld (%.3f%%), p99 %s%s; limit: %s\n",
		what, sz, s->offered_pps ? lr_fmt_si((double)s->offered_pps, b1, sizeof(b1)) : "max",
		lr_fmt_si(s->tx.pps, b2, sizeof(b2)), lr_fmt_si(s->rx.pps, b3, sizeof(b3)), (long long)s->rx.lost,
		s->loss_pct, p99, s->complete ? "" : " (markers missing)", s->limit);
}

/* One measured step: optional warm-up, then the window. */
static int run_step(struct lr_run *r, unsigned int size, uint64_t pps, uint64_t window_ns, struct lr_step **out)
{
	struct lr_step *s;
	int ret;

	r->cur_size = size;
	r->cur_pps = pps;
	r->in_step = true;
	if (r->cfg->warmup_ns) {
		ret = run_phase(r, size, pps, r->cfg->warmup_ns, NULL);
		if (ret)
			return ret;
	}
	s = new_step(r);
	if (!s) {
		return lr_run_fail(r, LR_EXIT_USAGE, "too many steps (at most %d)", LR_RUN_MAX_STEPS);
	}
	ret = run_phase(r, size, pps, window_ns, s);
	if (ret)
		return ret;
	/* a step cut short by a signal is not a result */
	if (lr_stop)
		return LR_EXIT_RUNTIME;
	judge(r, s);
	r->nsteps++;
	r->in_step = false;
	*out = s;
	return 0;
}

int lr_run_sweep(struct lr_run *r)
{
	const struct lr_cfg *cfg = r->cfg;
	unsigned int si, ri, rep, nsizes = cfg->nsizes ? cfg->nsizes : 1;
	char what[64];
	int ret;

	for (si = 0; si < nsizes; si++) {
		unsigned int size = cfg->nsizes ? cfg->sizes[si] : 64;

		for (ri = 0; ri < cfg->nrates; ri++) {
			for (rep = 0; rep < cfg->repeat; rep++) {
				struct lr_step *s;
				uint64_t pps = lr_rate_pps(&cfg->rates[ri], size);

				if (lr_stop)
					return LR_EXIT_RUNTIME;
				ret = run_step(r, size, pps, cfg->duration_ns, &s);
				if (ret)
					return ret;
				s->rep = rep + 1;
				snprintf(what, sizeof(what), "step %u", r->nsteps);
				progress(r, s, what);
			}
		}
	}
	return 0;
}

/* For each size, trials at the rates the search asks for until it is done (search.c). */
int lr_run_throughput(struct lr_run *r)
{
	const struct lr_cfg *cfg = r->cfg;
	unsigned int si, nsizes = cfg->nsizes ? cfg->nsizes : 1;
	char what[64];
	int ret;

	for (si = 0; si < nsizes; si++) {
		struct lr_run_search *ss = &r->searches[r->nsearch++];
		unsigned int size = cfg->nsizes ? cfg->sizes[si] : 64;
		struct lr_search_cfg sc = {
			.upper_pps = lr_rate_pps(&cfg->rates[0], size),
			.resolution_pps = cfg->resolution_pps,
			.resolution = cfg->resolution,
			.max_trials = cfg->max_trials,
		};
		uint64_t rate;

		ss->size = size;
		ss->first = r->nsteps;
		lr_search_init(&ss->s, &sc);
		while (lr_search_next(&ss->s, &rate)) {
			struct lr_step *s;

			if (lr_stop)
				return LR_EXIT_RUNTIME;
			ret = run_step(r, size, rate, cfg->trial_ns, &s);
			if (ret)
				return ret;
			s->trial = ss->s.ntrials + 1;
			snprintf(what, sizeof(what), "size %u trial %u", size, s->trial);
			progress(r, s, what);
			lr_search_feed(&ss->s, s->tx.pps, s->pass);
		}
	}
	return 0;
}
