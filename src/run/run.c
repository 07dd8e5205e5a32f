/* SPDX-License-Identifier: MIT */
/* `linerate run`: a test plan from an INI file, the receiver in a child process, sweeps and throughput search. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "cmd/cmd.h"
#include "run/config.h"
#include "rx/rx.h"
#include "sys/netdev.h"
#include "sys/counters.h"
#include "tx/frame.h"
#include "tx/rate.h"
#include "tx/tx.h"
#include "util/capture.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"

#define NS 1000000000ULL
#define RX_READY_TIMEOUT_MS 15000
#define EOT_WAIT_NS (3 * NS)	/* after the senders stop: markers and late frames */
#define WARMUP_WAIT_NS (1 * NS)
#define MAX_STEPS 4096

/*
 * The receiver lives in a child process: it must sit in the [rx] network
 * namespace (and see that namespace's /sys), while the senders sit in the
 * [tx] one, and both namespaces are per process for sysfs. The two talk
 * over a SOCK_SEQPACKET pair, one request, one reply.
 */
enum rx_cmd { RXC_RESET = 1, RXC_WAIT, RXC_QUIT };

struct rx_req {
	int cmd;
	uint64_t timeout_ns;
};

struct rx_rep {
	int status;	/* 0, or an exit code */
	char text[768];	/* the start line, or the error */
	bool complete;	/* every flow's end-of-test marker arrived */
	struct lr_rx_result res;
	struct lr_dev_counters dev;	/* of the receiving interface, since the last reset */
};

struct step_result {
	unsigned int size;
	uint64_t offered_pps;	/* 0: max */
	unsigned int trial;	/* throughput search: 1-based trial of this size; 0 for sweeps */
	unsigned int rep;
	double window_s;
	uint64_t tx_queued, tx_completed, tx_accepted;
	uint64_t tx_dev_dropped;	/* data frames the sending device dropped (before the markers) */
	double tx_pps;
	unsigned int nworkers;
	unsigned int wq[LR_MAX_WORKERS], wcpu[LR_MAX_WORKERS];
	uint64_t wdone[LR_MAX_WORKERS];
	struct lr_dev_counters txdev;
	struct rx_rep rx;
	double loss_pct;
	unsigned int ncpu;
	struct lr_cpu_split cpu[LR_MAX_CPUS];
	char limit[160];	/* what most likely limited the rate */
	bool pass;	/* within the thresholds */
};

struct size_search {
	unsigned int size;
	bool found;
	unsigned int best;	/* index into steps of the best passing trial */
	unsigned int first, ntrials;
};

struct run_ctx {
	const struct lr_cfg *cfg;
	const struct lr_run_opts *o;
	int sock;
	pid_t child;
	char rx_line[768];
	enum lr_engine_kind engine;	/* the engine the first phase chose, kept for the rest */
	const char *tx_engine, *tx_mode;
	unsigned int flows_total;
	struct step_result *steps;
	unsigned int nsteps;
	struct size_search searches[LR_CFG_MAX_SIZES];
	struct lr_pcap_writer *pcap;	/* [tx] pcap: samples of every measured window */
	struct lr_sampler *sampler;
	unsigned int nsearch;
	bool banner_done;
	/* the step under way, for the message when a signal cuts it short */
	unsigned int cur_size;
	uint64_t cur_pps;
	bool in_step;
};

/* lr_stop holds the signal, so the exit code can say which one (128 + N, as a shell does). */
static void on_signal(int sig)
{
	lr_stop = sig;
}

/* ---- the receiver side (child process) ---- */

static int send_rep(int sock, const struct rx_rep *rep)
{
	return send(sock, rep, sizeof(*rep), MSG_NOSIGNAL) == (ssize_t)sizeof(*rep) ? 0 : -errno;
}

static void rx_fill(struct lr_rx *rx, const struct lr_dev_counters *base, struct rx_rep *rep)
{
	struct lr_dev_counters now;

	rep->status = lr_rx_collect(rx, &rep->res) ? LR_EXIT_RUNTIME : 0;
	lr_dev_counters_read(rx->o->ifname, &now);
	lr_dev_counters_delta(&rep->dev, base, &now);
}

static int rx_child(const struct lr_cfg *cfg, int sock, int verbose)
{
	struct lr_recv_opts ro;
	struct lr_dev_counters base;
	struct rx_rep *rep;
	struct lr_rx rx;
	char err[512];
	int ret;

	/*
	 * The parent coordinates: Ctrl-C or a SIGTERM to the process group
	 * reaches it, and it tells us to quit, or its exit (EOF on the socket)
	 * ends us, with the capture closed properly either way.
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return LR_EXIT_RUNTIME;
	lr_recv_opts_default(&ro);
	snprintf(ro.ifname, sizeof(ro.ifname), "%s", cfg->rx_ifname);
	ro.engine = cfg->rx_engine;
	ro.xdp_mode = cfg->xdp_mode;
	ro.workers = cfg->rx_workers ? cfg->rx_workers : 1;
	ro.dst_port = cfg->dst_port;
	ro.quiet = true;
	ro.verbose = verbose;
	if (cfg->rx_pcap[0]) {
		snprintf(ro.pcap, sizeof(ro.pcap), "%s", cfg->rx_pcap);
		ro.pcap_every = cfg->rx_pcap_every ? cfg->rx_pcap_every : 1;
		ro.snaplen = cfg->rx_snaplen ? cfg->rx_snaplen : LR_PCAP_DEFAULT_SNAPLEN;
	}
	if (cfg->rx_netns[0] && lr_netns_enter(cfg->rx_netns, err, sizeof(err))) {
		rep->status = LR_EXIT_USAGE;
		snprintf(rep->text, sizeof(rep->text), "[rx] %s", err);
		send_rep(sock, rep);
		free(rep);
		return LR_EXIT_USAGE;
	}
	ret = lr_rx_begin(&ro, &rx, rep->text, sizeof(rep->text), err, sizeof(err));
	if (ret) {
		rep->status = ret;
		snprintf(rep->text, sizeof(rep->text), "[rx] %s", err);
		send_rep(sock, rep);
		free(rep);
		return ret;
	}
	lr_dev_counters_read(ro.ifname, &base);
	send_rep(sock, rep);

	for (;;) {
		struct rx_req req;
		ssize_t n = recv(sock, &req, sizeof(req), 0);

		if (n != (ssize_t)sizeof(req) || req.cmd == RXC_QUIT)
			break;
		memset(rep, 0, sizeof(*rep));
		if (!lr_if_present(&rx.ifc)) {
			rep->status = LR_EXIT_RUNTIME;
			snprintf(rep->text, sizeof(rep->text), "[rx] interface %s disappeared (deleted, or its veth "
				 "peer's namespace went away)", ro.ifname);
		} else if (req.cmd == RXC_RESET) {
			lr_rx_reset(&rx);
			lr_dev_counters_read(ro.ifname, &base);
		} else if (req.cmd == RXC_WAIT) {
			uint64_t end = lr_now_ns() + req.timeout_ns;

			while (!(rep->complete = lr_rx_complete(&rx)) && lr_now_ns() < end)
				usleep(5000);
			/* markers are repeated; late frames of other queues may still be on their way */
			usleep(20000);
			rx_fill(&rx, &base, rep);
		}
		if (send_rep(sock, rep))
			break;
	}
	lr_rx_end(&rx);
	free(rep);
	return 0;
}

static int rx_call(struct run_ctx *r, int cmd, uint64_t timeout_ns, struct rx_rep *rep)
{
	struct rx_req req = { .cmd = cmd, .timeout_ns = timeout_ns };
	struct pollfd pfd = { .fd = r->sock, .events = POLLIN };
	int wait_ms = (int)(timeout_ns / 1000000) + 5000;

	if (send(r->sock, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return -EPIPE;
	if (poll(&pfd, 1, wait_ms) != 1)
		return -ETIMEDOUT;
	if (recv(r->sock, rep, sizeof(*rep), 0) != (ssize_t)sizeof(*rep))
		return -EPIPE;
	return rep->status ? -EIO : 0;
}

/* The receiver's own reason when it gave one, else that it went silent. */
static void rx_failed(const struct rx_rep *rep)
{
	if (rep->status && rep->text[0])
		lr_err_line("linerate run: ", rep->text);
	else
		fprintf(stderr, "linerate run: the receiver stopped answering\n");
}

/* ---- the sender side ---- */

static void stream_opts(const struct run_ctx *r, const struct lr_cfg_stream *st, unsigned int size, uint64_t pps,
			uint64_t window_ns, struct lr_send_opts *o)
{
	const struct lr_cfg *cfg = r->cfg;

	lr_send_opts_default(o);
	snprintf(o->ifname, sizeof(o->ifname), "%s", cfg->tx_ifname);
	o->engine = r->engine;
	o->xsk_mode = cfg->xsk_mode;
	o->nworkers = st->nqueues;
	memcpy(o->queues, st->queues, sizeof(o->queues));
	memcpy(o->cpus, st->cpus, sizeof(o->cpus));
	o->cpus_set = st->cpus_set;
	o->ncpus = st->nqueues;
	o->size = st->size ? st->size : size;
	o->flows = st->flows;
	if (pps) {
		uint64_t share = (uint64_t)llround((double)pps * st->share);

		o->rate.kind = LR_RATE_PPS;
		o->rate.value = share ? share : 1;
	}
	o->duration_ns = window_ns;
	o->family = st->family;
	o->src_ip = st->src_ip;
	o->dst_ip = st->dst_ip;
	o->have_src_ip = st->have_src_ip;
	o->have_dst_ip = true;
	memcpy(o->src_mac, st->src_mac, 6);
	memcpy(o->dst_mac, st->dst_mac, 6);
	o->have_src_mac = st->have_src_mac;
	o->have_dst_mac = st->have_dst_mac;
	o->src_port = st->src_port;
	o->dst_port = cfg->dst_port;
	o->batch = cfg->batch ? cfg->batch : 64;
	o->quiet = true;
	o->silent = r->banner_done || r->o->quiet;
	o->verbose = r->o->verbose;
}

/*
 * The rate a passing trial really tested: the offered rate, or what the
 * sender reached when it fell more than 2 % short of it (a loss-free trial
 * at 237 kpps is no evidence for 300 kpps), or the sender's rate for "max".
 */
static uint64_t tested_pps(const struct step_result *s)
{
	/* short by more than 2 %, as guess_limit() says "sender below the offered rate" */
	if (!s->offered_pps || s->tx_pps < 0.98 * (double)s->offered_pps)
		return (uint64_t)s->tx_pps;
	return s->offered_pps;
}

static void guess_limit(const struct run_ctx *r, struct step_result *s)
{
	double busiest = 0;
	unsigned int c, bc = 0;

	for (c = 0; c < s->ncpu; c++) {
		double busy = 100 - s->cpu[c].idle;

		if (busy > busiest)
			busiest = busy, bc = c;
	}
	if (s->rx.res.ring_drops)
		snprintf(s->limit, sizeof(s->limit), "receiver's AF_PACKET ring full (%llu dropped)",
			 (unsigned long long)s->rx.res.ring_drops);
	else if (s->tx_dev_dropped || s->rx.dev.rx_dropped || s->rx.dev.drv_drops)
		/* not summed: on a veth one frame refused by a full ring counts at both ends and in the driver's stats */
		snprintf(s->limit, sizeof(s->limit), "receive side: devices dropped frames (tx end %llu, rx end %llu, "
			 "rx driver counters %llu)", (unsigned long long)s->tx_dev_dropped,
			 (unsigned long long)s->rx.dev.rx_dropped, (unsigned long long)s->rx.dev.drv_drops);
	else if (s->rx.res.lost > 0)
		snprintf(s->limit, sizeof(s->limit), "the path between the devices lost %lld",
			 (long long)s->rx.res.lost);
	else if (s->offered_pps && s->tx_pps < 0.98 * (double)s->offered_pps)
		snprintf(s->limit, sizeof(s->limit), "sender below the offered rate (cpu%u %.0f%% busy)", bc, busiest);
	else if (!s->offered_pps)
		snprintf(s->limit, sizeof(s->limit), "cpu%u %.0f%% busy (%.0f%% softirq)", bc, busiest, s->cpu[bc].softirq);
	else
		snprintf(s->limit, sizeof(s->limit), "none: the offered rate went through");
	(void)r;
}

/*
 * One traffic phase: every stream's workers at their share of @pps (0: max)
 * for @window_ns, counted by the receiver from a reset. @s may be NULL for a
 * warm-up, whose numbers nobody reads.
 */
static int run_phase(struct run_ctx *r, unsigned int size, uint64_t pps, uint64_t window_ns, struct step_result *s)
{
	const struct lr_cfg *cfg = r->cfg;
	struct lr_send_opts *opts;
	struct lr_tx *tx[LR_CFG_MAX_STREAMS] = { 0 };
	struct lr_dev_counters d0, d1;
	struct lr_cpu_times c0, c1;
	struct rx_rep *rep = s ? &s->rx : NULL, scratch;
	unsigned int i, base = 0;
	uint64_t start, end = 0;
	int ret = 0;

	if (!rep)
		rep = &scratch;
	opts = calloc(cfg->nstreams, sizeof(*opts));
	if (!opts)
		return LR_EXIT_RUNTIME;
	if (rx_call(r, RXC_RESET, 0, rep)) {
		rx_failed(rep);
		free(opts);
		return LR_EXIT_RUNTIME;
	}
	for (i = 0; i < cfg->nstreams; i++) {
		stream_opts(r, &cfg->streams[i], size, pps, window_ns, &opts[i]);
		ret = lr_tx_open(&opts[i], base, r->flows_total, &tx[i]);
		if (ret)
			goto out;
		if (!r->banner_done) {
			const char *name = lr_tx_ops(tx[i])->name;

			r->engine = !strcmp(name, "live")    ? LR_ENGINE_LIVE :
				    !strcmp(name, "afxdp") ? LR_ENGINE_AFXDP :
							     LR_ENGINE_PACKET;
			r->tx_engine = name;
			r->tx_mode = lr_tx_mode(tx[i]);
		}
		base += cfg->streams[i].flows;
	}
	r->banner_done = true;
	for (i = 0, base = 0; i < cfg->nstreams; i++) {
		unsigned int nw;

		if (s && r->sampler) {
			lr_tx_sample(tx[i], r->sampler, base, cfg->tx_pcap_every,
				     cfg->tx_pcap_every ? 0 : LR_PCAP_DEFAULT_COUNT);
		}
		lr_tx_workers(tx[i], &nw);
		base += nw;
		ret = lr_tx_start(tx[i]);
		if (ret)
			goto out;
	}
	for (i = 0; i < cfg->nstreams; i++)
		lr_tx_ready(tx[i], 2 * NS);
	lr_dev_counters_read(cfg->tx_ifname, &d0);
	lr_cpu_times_read(&c0);
	start = lr_now_ns();
	for (i = 0; i < cfg->nstreams; i++)
		lr_tx_go(tx[i], start);
	for (;;) {
		bool done = true;

		for (i = 0; i < cfg->nstreams; i++)
			done &= lr_tx_done(tx[i]);
		if (done)
			break;
		usleep(10000);
	}
	lr_cpu_times_read(&c1);
	for (i = 0; i < cfg->nstreams; i++)
		lr_tx_join(tx[i]);
	if (rx_call(r, RXC_WAIT, s ? EOT_WAIT_NS : WARMUP_WAIT_NS, rep)) {
		rx_failed(rep);
		ret = LR_EXIT_RUNTIME;
		goto out;
	}
	lr_dev_counters_read(cfg->tx_ifname, &d1);
	if (!s)
		goto out;

	/* what the senders did */
	s->size = cfg->nstreams == 1 && !cfg->streams[0].size ? size : opts[0].size;
	s->offered_pps = pps;
	lr_dev_counters_delta(&s->txdev, &d0, &d1);
	s->ncpu = lr_cpu_split(&c0, &c1, s->cpu, LR_MAX_CPUS);
	s->nworkers = 0;
	for (i = 0; i < cfg->nstreams; i++) {
		const struct lr_worker *ws;
		unsigned int n, k;

		ws = lr_tx_workers(tx[i], &n);
		for (k = 0; k < n; k++) {
			const struct lr_worker *w = &ws[k];
			uint64_t done = lr_tx_worker_done(w);

			s->tx_queued += w->stats.queued;
			s->tx_completed += done;
			if (w->end_ns > end)
				end = w->end_ns;
			if (s->nworkers < LR_MAX_WORKERS) {
				s->wq[s->nworkers] = w->queue;
				s->wcpu[s->nworkers] = w->cpu;
				s->wdone[s->nworkers] = done;
				s->nworkers++;
			}
		}
	}
	/*
	 * Data frames the sending device dropped: its tx_dropped when the last
	 * stream's data was done, before the end-of-test markers (which a full
	 * ring may turn away too), less the reading at the start. Engines that
	 * resend what the device pushed back (AF_PACKET) lost none of them.
	 */
	if (lr_tx_ops(tx[0])->drops_completed) {
		uint64_t at_end = d0.tx_dropped, v;

		for (i = 0; i < cfg->nstreams; i++)
			if (!lr_tx_dropped_at_data_end(tx[i], &v) && v > at_end)
				at_end = v;
		s->tx_dev_dropped = at_end - d0.tx_dropped;
	}
	s->tx_accepted = s->tx_completed -
			 (s->tx_dev_dropped < s->tx_completed ? s->tx_dev_dropped : s->tx_completed);
	s->window_s = end > start ? (double)(end - start) / NS : 0;
	s->tx_pps = s->window_s > 0 ? s->tx_accepted / s->window_s : 0;
	{
		uint64_t sent = rep->res.flows_eot ? rep->res.sent : s->tx_completed;

		s->loss_pct = sent ? 100.0 * (double)rep->res.lost / (double)sent : 0;
	}
	guess_limit(r, s);
out:
	for (i = 0; i < cfg->nstreams; i++)
		lr_tx_close(tx[i]);
	free(opts);
	return ret;
}

static struct step_result *new_step(struct run_ctx *r)
{
	struct step_result *s;

	if (r->nsteps >= MAX_STEPS)
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

static void judge(const struct run_ctx *r, struct step_result *s)
{
	const struct lr_cfg *cfg = r->cfg;

	s->pass = s->rx.complete && s->loss_pct <= cfg->max_loss * 100 + 1e-9;
	if (cfg->max_p99_ns && s->rx.res.lat_p99 > cfg->max_p99_ns)
		s->pass = false;
}

static void progress(const struct run_ctx *r, const struct step_result *s, const char *what)
{
	char b1[32], b2[32];

	if (r->o->quiet)
		return;
	fprintf(stderr, "linerate run: %s %u B at %s: tx %s pps, rx %s pps, lost %lld (%.3f%%), p99 %.1f us%s; limit: %s\n",
		what, s->size, s->offered_pps ? lr_fmt_si((double)s->offered_pps, b1, sizeof(b1)) : "max",
		lr_fmt_si(s->tx_pps, b2, sizeof(b2)), lr_fmt_si(s->rx.res.pps, (char[32]){ 0 }, 32),
		(long long)s->rx.res.lost, s->loss_pct, s->rx.res.lat_p99 / 1e3,
		s->rx.complete ? "" : " (markers missing)", s->limit);
}

/* One measured step: optional warm-up, then the window. */
static int run_step(struct run_ctx *r, unsigned int size, uint64_t pps, uint64_t window_ns, struct step_result **out)
{
	struct step_result *s;
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
		fprintf(stderr, "linerate run: too many steps (at most %d)\n", MAX_STEPS);
		return LR_EXIT_USAGE;
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

static int run_sweep(struct run_ctx *r)
{
	const struct lr_cfg *cfg = r->cfg;
	unsigned int si, ri, rep, nsizes = cfg->nsizes ? cfg->nsizes : 1;
	char what[64];
	int ret;

	for (si = 0; si < nsizes; si++) {
		unsigned int size = cfg->nsizes ? cfg->sizes[si] : 64;

		for (ri = 0; ri < cfg->nrates; ri++) {
			for (rep = 0; rep < cfg->repeat; rep++) {
				struct step_result *s;
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

/*
 * RFC 2544 26.1: the highest offered rate with loss within the threshold.
 * The first trial runs at the upper bound (a rate, or "max": whatever the
 * sender reaches); then binary search between the best passing and the
 * lowest failing rate until the gap is within the resolution or the trials
 * run out.
 */
static int run_search(struct run_ctx *r)
{
	const struct lr_cfg *cfg = r->cfg;
	unsigned int si, nsizes = cfg->nsizes ? cfg->nsizes : 1;
	char what[64];
	int ret;

	for (si = 0; si < nsizes; si++) {
		struct size_search *ss = &r->searches[r->nsearch++];
		unsigned int size = cfg->nsizes ? cfg->sizes[si] : 64;
		uint64_t lo = 0, hi = 0, rate = lr_rate_pps(&cfg->rates[0], size);
		struct step_result *s;

		memset(ss, 0, sizeof(*ss));
		ss->size = size;
		ss->first = r->nsteps;
		for (;;) {
			if (lr_stop)
				return LR_EXIT_RUNTIME;
			ret = run_step(r, size, rate, cfg->trial_ns, &s);
			if (ret)
				return ret;
			s->trial = ++ss->ntrials;
			snprintf(what, sizeof(what), "size %u trial %u", size, s->trial);
			progress(r, s, what);
			if (!rate) {
				/* "max": what the sender reached is the upper bound */
				rate = (uint64_t)s->tx_pps;
				s->offered_pps = 0;
			}
			if (s->pass) {
				/* what was really sent: a sender short of the rate tested a lower one */
				uint64_t t = tested_pps(s);

				if (!ss->found || t >= tested_pps(&r->steps[ss->best]))
					ss->best = r->nsteps - 1;
				if (t > lo)
					lo = t;
				ss->found = true;
				if (ss->ntrials == 1)
					break;	/* the upper bound itself passes */
				/* the sender fell short: higher offers would only repeat this trial */
				if (s->offered_pps && t < s->offered_pps)
					break;
			} else {
				hi = rate;
				if (ss->ntrials == 1)
					lo = 0;
			}
			if (ss->ntrials == 1)
				hi = rate;
			if (ss->ntrials >= cfg->max_trials || hi <= 1)
				break;
			if (ss->found && hi > lo) {
				uint64_t gap = hi - lo;

				if ((cfg->resolution_pps && gap <= cfg->resolution_pps) ||
				    (!cfg->resolution_pps && (double)gap <= cfg->resolution * (double)hi))
					break;
			}
			if (!ss->found && cfg->resolution_pps && hi <= cfg->resolution_pps)
				break;
			rate = lo + (hi - lo) / 2;
			if (!rate)
				break;
		}
	}
	return 0;
}

/* ---- output ---- */

static struct json_object *step_json(const struct step_result *s)
{
	struct json_object *o = json_object_new_object(), *tx, *rx, *lat, *q, *dev, *cpu;
	unsigned int i;

	json_object_object_add(o, "size", json_object_new_int((int)s->size));
	json_object_object_add(o, "offered_pps", s->offered_pps ? json_object_new_uint64(s->offered_pps) : NULL);
	if (s->trial)
		json_object_object_add(o, "trial", json_object_new_int((int)s->trial));
	if (s->rep)
		json_object_object_add(o, "repeat", json_object_new_int((int)s->rep));
	json_object_object_add(o, "window_s", json_object_new_double(s->window_s));
	json_object_object_add(o, "pass", json_object_new_boolean(s->pass));
	json_object_object_add(o, "loss_pct", json_object_new_double(s->loss_pct));
	json_object_object_add(o, "limit", json_object_new_string(s->limit));

	tx = json_object_new_object();
	json_object_object_add(tx, "queued", json_object_new_uint64(s->tx_queued));
	json_object_object_add(tx, "completed", json_object_new_uint64(s->tx_completed));
	json_object_object_add(tx, "packets", json_object_new_uint64(s->tx_accepted));
	json_object_object_add(tx, "pps", json_object_new_double(s->tx_pps));
	json_object_object_add(tx, "bps_l1", json_object_new_double(s->tx_pps * (s->size + 20) * 8));
	q = json_object_new_array();
	for (i = 0; i < s->nworkers; i++) {
		struct json_object *w = json_object_new_object();

		json_object_object_add(w, "queue", json_object_new_int((int)s->wq[i]));
		json_object_object_add(w, "cpu", json_object_new_int((int)s->wcpu[i]));
		json_object_object_add(w, "packets", json_object_new_uint64(s->wdone[i]));
		json_object_array_add(q, w);
	}
	json_object_object_add(tx, "per_queue", q);
	dev = json_object_new_object();
	json_object_object_add(dev, "tx_packets", json_object_new_uint64(s->txdev.tx_packets));
	json_object_object_add(dev, "tx_dropped", json_object_new_uint64(s->txdev.tx_dropped));
	json_object_object_add(dev, "driver_drops", json_object_new_uint64(s->txdev.drv_drops));
	json_object_object_add(tx, "device", dev);
	json_object_object_add(o, "tx", tx);

	rx = json_object_new_object();
	json_object_object_add(rx, "packets", json_object_new_uint64(s->rx.res.packets));
	json_object_object_add(rx, "pps", json_object_new_double(s->rx.res.pps));
	json_object_object_add(rx, "bps_l1", json_object_new_double(s->rx.res.pps * (s->rx.res.avg_bytes + 24) * 8));
	json_object_object_add(rx, "lost", json_object_new_int64(s->rx.res.lost));
	json_object_object_add(rx, "reordered", json_object_new_uint64(s->rx.res.late));
	json_object_object_add(rx, "duplicates", json_object_new_uint64(s->rx.res.dups));
	json_object_object_add(rx, "foreign", json_object_new_uint64(s->rx.res.foreign));
	json_object_object_add(rx, "sent", s->rx.res.flows_eot ? json_object_new_uint64(s->rx.res.sent) : NULL);
	json_object_object_add(rx, "tail_settled", json_object_new_boolean(s->rx.res.settled && s->rx.complete));
	json_object_object_add(rx, "ring_drops", json_object_new_uint64(s->rx.res.ring_drops));
	q = json_object_new_array();
	for (i = 0; i < LR_RX_MAX_QUEUES; i++) {
		struct json_object *e;

		if (!s->rx.res.queue_packets[i])
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "queue", json_object_new_int((int)i));
		json_object_object_add(e, "packets", json_object_new_uint64(s->rx.res.queue_packets[i]));
		json_object_array_add(q, e);
	}
	json_object_object_add(rx, "per_queue", q);
	dev = json_object_new_object();
	json_object_object_add(dev, "rx_packets", json_object_new_uint64(s->rx.dev.rx_packets));
	json_object_object_add(dev, "rx_dropped", json_object_new_uint64(s->rx.dev.rx_dropped));
	json_object_object_add(dev, "driver_drops", json_object_new_uint64(s->rx.dev.drv_drops));
	json_object_object_add(rx, "device", dev);
	json_object_object_add(o, "rx", rx);

	lat = json_object_new_object();
	json_object_object_add(lat, "min", json_object_new_uint64(s->rx.res.lat_min));
	json_object_object_add(lat, "p50", json_object_new_uint64(s->rx.res.lat_p50));
	json_object_object_add(lat, "p90", json_object_new_uint64(s->rx.res.lat_p90));
	json_object_object_add(lat, "p99", json_object_new_uint64(s->rx.res.lat_p99));
	json_object_object_add(lat, "p999", json_object_new_uint64(s->rx.res.lat_p999));
	json_object_object_add(lat, "max", json_object_new_uint64(s->rx.res.lat_max));
	json_object_object_add(o, "latency_ns", lat);

	cpu = json_object_new_array();
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
	json_object_object_add(o, "cpu", cpu);
	return o;
}

static int write_json(const struct run_ctx *r)
{
	const struct lr_cfg *cfg = r->cfg;
	struct json_object *root = lr_json_doc("run"), *steps = json_object_new_array();
	char err[256];
	unsigned int i;
	int ret;

	json_object_object_add(root, "name", json_object_new_string(cfg->name));
	json_object_object_add(root, "file", json_object_new_string(cfg->path));
	json_object_object_add(root, "mode", json_object_new_string(cfg->mode == LR_RUN_THROUGHPUT ? "throughput" : "sweep"));
	json_object_object_add(root, "engine", json_object_new_string(r->tx_engine ? r->tx_engine : ""));
	json_object_object_add(root, "tx_mode", json_object_new_string(r->tx_mode ? r->tx_mode : ""));
	json_object_object_add(root, "rx", json_object_new_string(r->rx_line));
	for (i = 0; i < r->nsteps; i++)
		json_object_array_add(steps, step_json(&r->steps[i]));
	json_object_object_add(root, "steps", steps);
	if (cfg->mode == LR_RUN_THROUGHPUT) {
		struct json_object *res = json_object_new_array();

		for (i = 0; i < r->nsearch; i++) {
			const struct size_search *ss = &r->searches[i];
			struct json_object *e = json_object_new_object(), *trials = json_object_new_array();
			unsigned int k;

			json_object_object_add(e, "size", json_object_new_int((int)ss->size));
			json_object_object_add(e, "found", json_object_new_boolean(ss->found));
			if (ss->found) {
				const struct step_result *b = &r->steps[ss->best];

				json_object_object_add(e, "rate_pps", json_object_new_uint64(tested_pps(b)));
				json_object_object_add(e, "offered_pps", b->offered_pps ? json_object_new_uint64(b->offered_pps)
											 : NULL);
				json_object_object_add(e, "rx_pps", json_object_new_double(b->rx.res.pps));
				json_object_object_add(e, "bps_l1", json_object_new_double(b->rx.res.pps * (ss->size + 20) * 8));
				json_object_object_add(e, "latency_p50_ns", json_object_new_uint64(b->rx.res.lat_p50));
				json_object_object_add(e, "latency_p99_ns", json_object_new_uint64(b->rx.res.lat_p99));
			} else {
				json_object_object_add(e, "rate_pps", NULL);
			}
			for (k = 0; k < ss->ntrials; k++)
				json_object_array_add(trials, step_json(&r->steps[ss->first + k]));
			json_object_object_add(e, "trials", trials);
			json_object_array_add(res, e);
		}
		json_object_object_add(root, "throughput", res);
	}
	ret = lr_json_write(root, r->o->json, err, sizeof(err));
	json_object_put(root);
	if (ret)
		lr_err_line("linerate run: ", err);
	return ret;
}

static int write_csv(const struct run_ctx *r)
{
	const char *path = r->o->csv;
	struct lr_out out = { .fd = -1 };
	char err[512];
	FILE *f;
	unsigned int i;
	int ret = 0;

	if (!strcmp(path, "-")) {
		f = stdout;
	} else {
		ret = lr_out_open(path, LR_OUT_MODE, &out, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "linerate run: --csv: %s\n", err);
			return ret;
		}
		f = fdopen(out.fd, "w");
		if (!f) {
			ret = -errno;
			fprintf(stderr, "linerate run: --csv: cannot write '%s': %s\n", path, strerror(-ret));
			lr_out_abort(&out);
			return ret;
		}
		out.fd = -1;	/* the FILE owns it now */
	}
	fprintf(f, "step,size,trial,offered_pps,tx_pps,rx_pps,l1_gbps,loss_pct,lost,reordered,duplicates,"
		   "p50_ns,p99_ns,tx_queued,tx_completed,tx_dev_dropped,rx_dev_dropped,rx_drv_drops,ring_drops,pass,limit\n");
	for (i = 0; i < r->nsteps; i++) {
		const struct step_result *s = &r->steps[i];

		fprintf(f, "%u,%u,%u,%llu,%.0f,%.0f,%.4f,%.4f,%lld,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%d,\"%s\"\n",
			i + 1, s->size, s->trial, (unsigned long long)s->offered_pps, s->tx_pps, s->rx.res.pps,
			s->rx.res.pps * (s->size + 20) * 8 / 1e9, s->loss_pct, (long long)s->rx.res.lost,
			(unsigned long long)s->rx.res.late, (unsigned long long)s->rx.res.dups,
			(unsigned long long)s->rx.res.lat_p50, (unsigned long long)s->rx.res.lat_p99,
			(unsigned long long)s->tx_queued, (unsigned long long)s->tx_completed,
			(unsigned long long)s->txdev.tx_dropped, (unsigned long long)s->rx.dev.rx_dropped,
			(unsigned long long)s->rx.dev.drv_drops, (unsigned long long)s->rx.res.ring_drops, s->pass, s->limit);
	}
	if (f != stdout) {
		errno = 0;
		if (fflush(f) || ferror(f) || fsync(fileno(f)))
			ret = errno ? -errno : -EIO;
		if (fclose(f) && !ret)
			ret = -errno;
		if (ret) {
			fprintf(stderr, "linerate run: --csv: cannot write '%s': %s\n", path, strerror(-ret));
			lr_out_abort(&out);
		} else if ((ret = lr_out_commit(&out, err, sizeof(err)))) {
			fprintf(stderr, "linerate run: --csv: %s\n", err);
		}
	} else {
		fflush(f);
	}
	return ret;
}

static void print_table(const struct run_ctx *r)
{
	const struct lr_cfg *cfg = r->cfg;
	FILE *out = (r->o->json[0] && !strcmp(r->o->json, "-")) || (r->o->csv[0] && !strcmp(r->o->csv, "-")) ? stderr
														     : stdout;
	unsigned int i, k, c;
	char b1[32], b2[32], b3[32];

	fprintf(out, "\n%s: %s, tx engine %s (%s); rx %s\n", cfg->name,
		cfg->mode == LR_RUN_THROUGHPUT ? "throughput search (RFC 2544 26.1)" : "sweep", r->tx_engine, r->tx_mode,
		r->rx_line);
	fprintf(out, "%-4s %5s %5s %10s %10s %10s %8s %8s %6s %8s %8s  %-18s %s\n", "step", "size", "trial", "offered",
		"tx pps", "rx pps", "L1 Gb/s", "loss %", "reord", "p50 us", "p99 us", "tx per queue", "pass");
	for (i = 0; i < r->nsteps; i++) {
		const struct step_result *s = &r->steps[i];
		char spread[64] = "";
		size_t off = 0;

		for (k = 0; k < s->nworkers && off < sizeof(spread) - 12; k++)
			off += (size_t)snprintf(spread + off, sizeof(spread) - off, "%s%s", k ? "/" : "",
						lr_fmt_si(s->window_s > 0 ? s->wdone[k] / s->window_s : 0, b3, sizeof(b3)));
		fprintf(out, "%-4u %5u %5s %10s %10s %10s %8.3f %8.3f %6llu %8.1f %8.1f  %-18s %s\n", i + 1, s->size,
			s->trial ? (snprintf(b3, sizeof(b3), "%u", s->trial), b3) : "-",
			s->offered_pps ? lr_fmt_si((double)s->offered_pps, b1, sizeof(b1)) : "max",
			lr_fmt_si(s->tx_pps, b2, sizeof(b2)), lr_fmt_si(s->rx.res.pps, (char[32]){ 0 }, 32),
			s->rx.res.pps * (s->size + 20) * 8 / 1e9, s->loss_pct, (unsigned long long)s->rx.res.late,
			s->rx.res.lat_p50 / 1e3, s->rx.res.lat_p99 / 1e3, spread, s->pass ? "yes" : "NO");
	}
	fprintf(out, "\nwhere the frames went (per step): queued > completed by the device > received; drops by place; CPU split\n");
	for (i = 0; i < r->nsteps; i++) {
		const struct step_result *s = &r->steps[i];

		fprintf(out, "%-4u queued %llu, completed %llu, received %llu, lost %lld; tx dev dropped %llu, rx dev dropped %llu, "
			     "driver drops %llu+%llu, ring %llu; rx queues",
			i + 1, (unsigned long long)s->tx_queued, (unsigned long long)s->tx_completed,
			(unsigned long long)s->rx.res.packets, (long long)s->rx.res.lost,
			(unsigned long long)s->txdev.tx_dropped, (unsigned long long)s->rx.dev.rx_dropped,
			(unsigned long long)s->txdev.drv_drops, (unsigned long long)s->rx.dev.drv_drops,
			(unsigned long long)s->rx.res.ring_drops);
		for (k = 0; k < LR_RX_MAX_QUEUES; k++)
			if (s->rx.res.queue_packets[k])
				fprintf(out, " q%u:%llu", k, (unsigned long long)s->rx.res.queue_packets[k]);
		fprintf(out, "\n     cpu");
		for (c = 0; c < s->ncpu; c++)
			fprintf(out, "%s%u usr %.0f%% sys %.0f%% sirq %.0f%% idle %.0f%%", c ? "; " : " ", c, s->cpu[c].user,
				s->cpu[c].sys, s->cpu[c].softirq, s->cpu[c].idle);
		fprintf(out, "; limit: %s\n", s->limit);
	}
	if (cfg->mode != LR_RUN_THROUGHPUT)
		return;
	fprintf(out, "\nzero-loss throughput (loss <= %.4g%%):\n", cfg->max_loss * 100);
	for (i = 0; i < r->nsearch; i++) {
		const struct size_search *ss = &r->searches[i];

		if (!ss->found) {
			fprintf(out, "  %5u B: no rate passed in %u trials\n", ss->size, ss->ntrials);
			continue;
		}
		{
			const struct step_result *b = &r->steps[ss->best];
			double rate = (double)tested_pps(b);

			fprintf(out, "  %5u B: %s pps (%.3f Gbit/s L1), p50 %.1f us, p99 %.1f us, %u trials\n", ss->size,
				lr_fmt_si(rate, b1, sizeof(b1)), rate * (ss->size + 20) * 8 / 1e9, b->rx.res.lat_p50 / 1e3,
				b->rx.res.lat_p99 / 1e3, ss->ntrials);
		}
	}
}

static int start_receiver(struct run_ctx *r)
{
	struct rx_rep *rep;
	struct pollfd pfd;
	int sv[2], ret = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return lr_fail(LR_EXIT_RUNTIME, "run", "socketpair: %s", strerror(errno));
	fflush(NULL);
	r->child = fork();
	if (r->child < 0)
		return lr_fail(LR_EXIT_RUNTIME, "run", "fork: %s", strerror(errno));
	if (r->child == 0) {
		close(sv[0]);
		return -1 - rx_child(r->cfg, sv[1], r->o->verbose);	/* the caller returns this exit code */
	}
	close(sv[1]);
	r->sock = sv[0];
	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return LR_EXIT_RUNTIME;
	pfd = (struct pollfd){ .fd = r->sock, .events = POLLIN };
	if (poll(&pfd, 1, RX_READY_TIMEOUT_MS) != 1 || recv(r->sock, rep, sizeof(*rep), 0) != (ssize_t)sizeof(*rep)) {
		ret = lr_fail(LR_EXIT_RUNTIME, "run", "the receiver did not start");
	} else if (rep->status) {
		ret = lr_fail(rep->status, "run", "%s", rep->text);
	} else {
		snprintf(r->rx_line, sizeof(r->rx_line), "%s", rep->text);
		if (!r->o->quiet)
			fprintf(stderr, "linerate run: receiver %s\n", rep->text);
	}
	free(rep);
	return ret;
}

static void stop_receiver(struct run_ctx *r)
{
	struct rx_req req = { .cmd = RXC_QUIT };
	int status;

	if (r->child <= 0)
		return;
	send(r->sock, &req, sizeof(req), MSG_NOSIGNAL);
	close(r->sock);
	waitpid(r->child, &status, 0);
	r->child = 0;
}

int lr_cmd_run(const struct lr_run_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct run_ctx r = { .o = o };
	struct lr_cfg *cfg;
	char err[1024];
	unsigned int i;
	int ret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return lr_fail(LR_EXIT_RUNTIME, "run", "out of memory");
	/* the whole file is checked before anything is touched */
	if (lr_cfg_load(o->file, cfg, err, sizeof(err))) {
		lr_err_line("", err);
		free(cfg);
		return LR_EXIT_USAGE;
	}
	if (o->check) {
		printf("%s: ok (%s, %u size%s, %u rate%s, %u stream%s)\n", o->file,
		       cfg->mode == LR_RUN_THROUGHPUT ? "throughput search" : "sweep", cfg->nsizes, cfg->nsizes == 1 ? "" : "s",
		       cfg->nrates, cfg->nrates == 1 ? "" : "s", cfg->nstreams, cfg->nstreams == 1 ? "" : "s");
		free(cfg);
		return LR_EXIT_OK;
	}
	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->csv[0] && lr_out_check("--csv", o->csv, true, err, sizeof(err))) ||
	    (cfg->tx_pcap[0] && lr_out_check("[tx] pcap", cfg->tx_pcap, false, err, sizeof(err))) ||
	    (cfg->rx_pcap[0] && lr_out_check("[rx] pcap", cfg->rx_pcap, false, err, sizeof(err)))) {
		lr_err_line("linerate run: ", err);
		free(cfg);
		return LR_EXIT_USAGE;
	}
	r.cfg = cfg;
	r.engine = cfg->tx_engine;
	for (i = 0; i < cfg->nstreams; i++) {
		const struct lr_cfg_stream *st = &cfg->streams[i];
		struct lr_send_opts so;

		stream_opts(&r, st, LR_MIN_FRAME, 0, NS, &so);
		if (lr_tx_check_cpus(&so, err, sizeof(err))) {
			fprintf(stderr, "linerate run: %s:%d: %s%s%s cpus: %s\n", cfg->path, st->line,
				st->name[0] ? "[stream " : "[tx]", st->name, st->name[0] ? "]" : "", err);
			free(cfg);
			return LR_EXIT_USAGE;
		}
	}
	ret = start_receiver(&r);
	if (ret < 0) {
		free(cfg);
		return -1 - ret;	/* the receiver process ends here (the pcap is the parent's) */
	}
	if (ret)
		goto out;
	/* after the fork: the receiver process must not inherit (and flush) the file */
	if (cfg->tx_pcap[0]) {
		unsigned int producers = 0;

		for (i = 0; i < cfg->nstreams; i++)
			producers += cfg->streams[i].nqueues;
		if (lr_pcap_open(cfg->tx_pcap, 0, 0, &r.pcap, err, sizeof(err))) {
			ret = lr_fail(LR_EXIT_USAGE, "run", "[tx] pcap: %s", err);
			goto out;
		}
		if (lr_sampler_open(r.pcap, producers, LR_MAX_FRAME, &r.sampler)) {
			lr_pcap_abort(r.pcap);
			r.pcap = NULL;
			ret = lr_fail(LR_EXIT_RUNTIME, "run", "[tx] pcap: cannot start the sampler");
			goto out;
		}
	}
	for (i = 0; i < cfg->nstreams; i++)
		r.flows_total += cfg->streams[i].flows;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (cfg->tx_netns[0] && lr_netns_enter(cfg->tx_netns, err, sizeof(err))) {
		ret = lr_fail(LR_EXIT_USAGE, "run", "[tx] %s", err);
		goto out;
	}
	ret = cfg->mode == LR_RUN_THROUGHPUT ? run_search(&r) : run_sweep(&r);
	if (r.nsteps) {
		print_table(&r);
		if (o->json[0] && write_json(&r) && !ret)
			ret = LR_EXIT_RUNTIME;
		if (o->csv[0] && write_csv(&r) && !ret)
			ret = LR_EXIT_RUNTIME;
	}
	if (lr_stop) {
		char rate[32];

		if (r.in_step)
			snprintf(rate, sizeof(rate), "%s", r.cur_pps ? lr_fmt_si((double)r.cur_pps, (char[32]){ 0 }, 32) : "max");
		fprintf(stderr, "linerate run: interrupted by %s", lr_stop == SIGINT ? "SIGINT" : lr_stop == SIGTERM ? "SIGTERM" : "a signal");
		if (r.in_step)
			fprintf(stderr, " during step %u (%u B at %s%s)", r.nsteps + 1, r.cur_size, rate, r.cur_pps ? " pps" : "");
		fprintf(stderr, "; %u finished step%s%s\n", r.nsteps, r.nsteps == 1 ? "" : "s",
			!r.nsteps ? "" : o->json[0] || o->csv[0] ? ", in the table above and the files" : ", in the table above");
		ret = 128 + lr_stop;
	} else if (!ret) {
		/* thresholds: any failed sweep step, or a search that found no passing rate */
		if (cfg->mode == LR_RUN_THROUGHPUT) {
			for (i = 0; i < r.nsearch; i++)
				if (!r.searches[i].found)
					ret = LR_EXIT_THRESHOLD;
		} else {
			for (i = 0; i < r.nsteps; i++)
				if (!r.steps[i].pass)
					ret = LR_EXIT_THRESHOLD;
		}
	}
out:
	stop_receiver(&r);
	if (r.sampler) {
		lr_sampler_close(r.sampler);
		if (lr_pcap_close(r.pcap, err, sizeof(err)) && !ret)
			ret = lr_fail(LR_EXIT_RUNTIME, "run", "[tx] pcap: %s", err);
	}
	free(r.steps);
	free(cfg);
	return ret;
}
