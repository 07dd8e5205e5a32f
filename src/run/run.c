/* SPDX-License-Identifier: MIT */
/* `linerate run`: a test plan from an INI file, its receiver in a child process, the steps, the report. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/ctl.h"
#include "run/run.h"
#include "tx/frame.h"
#include "tx/tx.h"
#include "util/capture.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"

#define NS 1000000000ULL

/* lr_stop holds the signal, so the exit code can say which one (128 + N, as a shell does). */
static void on_signal(int sig)
{
	lr_stop = sig;
}

int lr_run_fail(struct lr_run *r, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->why) {
		lr_escape(msg, r->why, r->whylen);
	} else {
		lr_err_line("linerate run: ", msg);
		if (!r->error[0])
			snprintf(r->error, sizeof(r->error), "%.*s", (int)sizeof(r->error) - 1, msg);
	}
	return code;
}

int lr_run_steps(struct lr_run *r)
{
	const struct lr_cfg *cfg = r->cfg;
	int64_t offset = 0;
	int ret;

	/* threads only now, after the namespace: pings keep the agents' dead-man timers quiet */
	if ((r->rx.remote && lr_ctl_keepalive(r->rx.ctl)) || (r->tx_ctl && lr_ctl_keepalive(r->tx_ctl)))
		return lr_run_fail(r, LR_EXIT_RUNTIME, "cannot start the keepalive thread");
	/* a round trip is timed on this process's clock alone: no other clock to compare */
	if (!lr_run_mode_rtt(cfg->mode))
		lr_run_clocks_before(r, &offset);
	ret = lr_run_rx_prepare(r, offset);
	if (ret)
		return ret;
	if (lr_run_mode_rtt(cfg->mode) && (ret = lr_run_back_open(r)))
		return ret;
	ret = lr_run_mode_search(cfg->mode) ? lr_run_throughput(r) : lr_run_sweep(r);
	lr_run_back_close(r);
	if (!lr_run_mode_rtt(cfg->mode))
		lr_run_clocks_after(r);
	return ret;
}

/* Everything checked before the receiver starts: 0, or an exit code after one line. */
static int check(struct lr_run *r, char *err, size_t errlen)
{
	const struct lr_cfg *cfg = r->cfg;
	const struct lr_run_opts *o = r->o;
	unsigned int i;

	if ((o->json[0] && lr_out_check("--json", o->json, true, err, errlen)) ||
	    (o->csv[0] && lr_out_check("--csv", o->csv, true, err, errlen)) ||
	    (cfg->tx_pcap[0] && lr_out_check("[tx] pcap", cfg->tx_pcap, false, err, errlen)) ||
	    (cfg->rx_pcap[0] && !cfg->rx_agent[0] && lr_out_check("[rx] pcap", cfg->rx_pcap, false, err, errlen))) {
		lr_err_line("linerate run: ", err);
		return LR_EXIT_USAGE;
	}
	/* a remote receiver's capture is the agent's to write, in its --capture-dir: a name, no path here */
	if (cfg->rx_pcap[0] && cfg->rx_agent[0] && !lr_out_name_ok(cfg->rx_pcap)) {
		lr_msg(err, errlen, "[rx] pcap: '%.64s' is not a bare file name: with [rx] agent the agent writes the "
		       "capture into its --capture-dir, named by 1..%d letters, digits, '.', '_', '-' or '+', not "
		       "starting with '.'", cfg->rx_pcap, LR_OUT_NAME_MAX);
		lr_err_line("linerate run: ", err);
		return LR_EXIT_USAGE;
	}
	/* a remote sender's CPUs are the agent's, checked there */
	for (i = 0; i < cfg->nstreams && !cfg->tx_agent[0]; i++) {
		const struct lr_cfg_stream *st = &cfg->streams[i];
		struct lr_send_opts so;

		lr_run_stream_opts(r, st, LR_MIN_FRAME, 0, NS, &so);
		if (lr_tx_check_cpus(&so.tx, err, errlen)) {
			fprintf(stderr, "linerate run: %s:%d: %s%s%s cpus: %s\n", cfg->path, st->line,
				st->name[0] ? "[stream " : "[tx]", st->name, st->name[0] ? "]" : "", err);
			return LR_EXIT_USAGE;
		}
	}
	return 0;
}

/* [tx] pcap: after the fork, so that the receiver process never inherits (and flushes) the file. */
static int open_tx_pcap(struct lr_run *r, char *err, size_t errlen)
{
	const struct lr_cfg *cfg = r->cfg;
	unsigned int i, producers = 0;

	for (i = 0; i < cfg->nstreams; i++)
		producers += cfg->streams[i].tx.nworkers;
	if (lr_pcap_open(cfg->tx_pcap, 0, 0, &r->pcap, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "run", "[tx] pcap: %s", err);
	if (lr_sampler_open(r->pcap, producers, LR_MAX_FRAME, &r->sampler)) {
		lr_pcap_abort(r->pcap);
		r->pcap = NULL;
		return lr_fail(LR_EXIT_RUNTIME, "run", "[tx] pcap: cannot start the sampler");
	}
	return 0;
}

/* One line: which signal, during which step, and how many steps finished. */
static void say_interrupted(const struct lr_run *r)
{
	const struct lr_run_opts *o = r->o;
	char rate[32];

	if (r->in_step)
		snprintf(rate, sizeof(rate), "%s", r->cur_pps ? lr_fmt_si((double)r->cur_pps, (char[32]){ 0 }, 32) : "max");
	fprintf(stderr, "linerate run: interrupted by %s",
		lr_stop == SIGINT ? "SIGINT" : lr_stop == SIGTERM ? "SIGTERM" : "a signal");
	if (r->in_step)
		fprintf(stderr, " during step %u (%u B at %s%s)", r->nsteps + 1, r->cur_size, rate, r->cur_pps ? " pps" : "");
	fprintf(stderr, "; %u finished step%s%s\n", r->nsteps, r->nsteps == 1 ? "" : "s",
		!r->nsteps ? "" : o->json[0] || o->csv[0] ? ", in the table above and the files" : ", in the table above");
}

/* Thresholds: any failed sweep step, or a search that found no passing rate. */
static int verdict(const struct lr_run *r)
{
	unsigned int i;

	if (lr_run_mode_search(r->cfg->mode)) {
		for (i = 0; i < r->nsearch; i++)
			if (!r->searches[i].s.found)
				return LR_EXIT_THRESHOLD;
	} else {
		for (i = 0; i < r->nsteps; i++)
			if (!r->steps[i].pass)
				return LR_EXIT_THRESHOLD;
	}
	return LR_EXIT_OK;
}

/* [tx] prepare_peer with a local sender: GRO on at the peer of [tx] interface, said in one line. */
static int hold_peer(struct lr_run *r, char *err, size_t errlen)
{
	char line[512];
	int ret;

	ret = lr_peer_gro_hold(r->cfg->tx_ifname, &r->pg, err, errlen);
	if (ret)
		return lr_run_fail(r, ret, "[tx] %s", err);
	r->prep = r->pg.r;
	lr_peer_gro_start_line(&r->prep, r->cfg->tx_ifname, line, sizeof(line));
	fprintf(stderr, "linerate run: %s\n", line);
	return 0;
}

/* After the last step: put back (a remote sender's agent did after each phase), and say how it went. */
static void release_peer(struct lr_run *r)
{
	char line[512];

	if (!r->tx_ctl) {
		lr_peer_gro_release(&r->pg);
		r->prep = r->pg.r;
	}
	lr_peer_gro_end_line(&r->prep, line, sizeof(line));
	if (line[0])
		fprintf(stderr, "linerate run: --prepare-peer: %s\n", line);
}

/* The steps, after the receiver started; the report of those that finished. */
static int measure(struct lr_run *r, char *err, size_t errlen)
{
	const struct lr_cfg *cfg = r->cfg;
	const struct lr_run_opts *o = r->o;
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned int i;
	int ret;

	for (i = 0; i < cfg->nstreams; i++)
		r->flows_total += cfg->streams[i].tx.flows;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a remote sender's netns is the agent's: it enters it itself */
	if (!r->tx_ctl && cfg->tx_netns[0] && lr_netns_enter(cfg->tx_netns, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "run", "[tx] %s", err);
	/*
	 * Once for every step, before any thread: the guardian is forked, and [tx] pcap's sampler
	 * (below) and the keepalives (in lr_run_steps()) are threads.
	 */
	if (!r->tx_ctl && cfg->prepare_peer) {
		ret = hold_peer(r, err, errlen);
		if (ret)
			return ret;
	}
	ret = cfg->tx_pcap[0] ? open_tx_pcap(r, err, errlen) : 0;
	if (!ret)
		ret = lr_run_steps(r);
	if (cfg->prepare_peer)
		release_peer(r);
	if (r->nsteps)
		lr_run_print_table(r);
	/*
	 * A run that failed at run time (an agent that did not finish its step, say) says so in its
	 * document too; bad input (exit 2) leaves nothing behind.
	 */
	if (o->json[0] && (r->nsteps || (ret == LR_EXIT_RUNTIME && r->error[0])) && lr_run_write_json(r) && !ret)
		ret = LR_EXIT_RUNTIME;
	if (r->nsteps && o->csv[0] && lr_run_write_csv(r) && !ret)
		ret = LR_EXIT_RUNTIME;
	if (lr_stop) {
		say_interrupted(r);
		return 128 + lr_stop;
	}
	return ret ? ret : verdict(r);
}

int lr_cmd_run(const struct lr_run_opts *o)
{
	struct lr_run r = { .o = o, .rx = { .ctl = NULL } };
	struct lr_cfg *cfg;
	char err[1024];
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
		       lr_run_mode_name(cfg->mode), cfg->nsizes, cfg->nsizes == 1 ? "" : "s",
		       cfg->nrates, cfg->nrates == 1 ? "" : "s", cfg->nstreams, cfg->nstreams == 1 ? "" : "s");
		free(cfg);
		return LR_EXIT_OK;
	}
	r.cfg = cfg;
	r.engine = cfg->tx_engine;
	ret = check(&r, err, sizeof(err));
	if (ret) {
		free(cfg);
		return ret;
	}
	ret = lr_run_rx_start(&r);
	/* agents are reached from where run started, before any namespace is entered */
	if (!ret && cfg->tx_agent[0])
		ret = lr_run_agent_connect("[tx]", cfg->tx_agent, cfg->tx_token_file, &r.tx_ctl);
	if (!ret)
		ret = measure(&r, err, sizeof(err));
	if (r.tx_ctl) {
		if (lr_ctl_quit(r.tx_ctl, err, sizeof(err)))
			pr_debug("run: the sender's quit: %s\n", err);
		lr_ctl_close(r.tx_ctl);
	}
	lr_run_rx_stop(&r);
	if (r.sampler) {
		lr_sampler_close(r.sampler);
		if (lr_pcap_close(r.pcap, err, sizeof(err)) && !ret)
			ret = lr_fail(LR_EXIT_RUNTIME, "run", "[tx] pcap: %s", err);
	}
	free(r.steps);
	free(cfg);
	return ret;
}
