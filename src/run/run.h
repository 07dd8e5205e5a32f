/* SPDX-License-Identifier: MIT */
/*
 * `linerate run` inside: the steps it measured, the receiver endpoint it drives, and the parts
 * that share them (phase.c runs steps and searches, receiver.c the receiver, run_report.c the output).
 */
#ifndef LINERATE_RUN_H
#define LINERATE_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "ctl/clock_window.h"
#include "opt/opts.h"
#include "run/config.h"
#include "run/search.h"
#include "sys/cost.h"
#include "sys/counters.h"
#include "sys/peer_gro.h"
#include "util/choose.h"
#include "util/result.h"

#define LR_RUN_MAX_STEPS 4096

struct lr_rx;

/* Frames of one size a step sent (streams of that size together). */
struct lr_step_size {
	unsigned int size;	/* including the FCS */
	uint64_t packets;	/* data frames completed */
};

/* One measured window: what the senders did, what the receiver counted, and the verdict. */
struct lr_step {
	unsigned int size;	/* including the FCS; 0 when the streams sent several sizes (sizes[]) */
	unsigned int nsizes;
	struct lr_step_size sizes[LR_CFG_MAX_STREAMS];	/* by first appearance in stream order */
	uint64_t offered_pps;	/* 0: max */
	unsigned int trial;	/* throughput search: 1-based trial of this size; 0 for sweeps */
	unsigned int rep;	/* sweeps: 1-based repetition; 0 for searches */
	const char *mode;	/* the mode the tx engine ran this window in */
	double window_s;	/* start to the last worker's data end */
	struct lr_tx_result tx;	/* every stream's workers together */
	struct lr_rx_result rx;
	bool complete;	/* every flow's end-of-test marker arrived (round trips: came back) */
	/* round trips (mode = rtt): rx above counts the return; this splits both directions */
	bool rtt_on;
	struct lr_rtt_result rtt;
	double loss_pct;
	unsigned int ncpu;
	struct lr_cpu_split cpu[LR_MAX_CPUS];
	char limit[160];	/* what most likely limited the rate */
	bool pass;	/* within the thresholds */
	bool sender_limited;	/* the senders fell more than 2 % short of the offered rate */
	bool pass_else;	/* within the thresholds other than [test] sender_limited */
	/* CPU per received packet, split (sys/cost.h); else why not */
	bool have_cost;
	struct lr_cost cost;
	bool cost_paced;	/* at an offered rate: the sender's part (and the total) hold its pacing wait */
	uint64_t busy_ns;	/* every CPU's busy time over the window */
	char cost_why[120];
};

/* The search of one frame size: its trials are steps[first .. first + s.ntrials - 1]. */
struct lr_run_search {
	unsigned int size;
	unsigned int first;
	struct lr_search s;
};

/* The receiver endpoint: a child process in [rx] netns, or an agent ([rx] agent), spoken to over a socket. */
struct lr_run_rx {
	struct lr_ctl *ctl;	/* NULL: none */
	pid_t child;	/* 0: none (or remote) */
	bool remote;	/* an agent's */
	char line[LR_START_LINE_MAX];	/* its start line */
	char ifname[16];	/* the interface it counts on, as the endpoint found it */
};

struct lr_run {
	const struct lr_cfg *cfg;
	const struct lr_run_opts *o;
	struct lr_run_rx rx;
	struct lr_ctl *tx_ctl;	/* [tx] agent: the agent that runs the sender; NULL: it runs here */
	char tx_ifname[16];	/* [tx] agent: the interface it sent on, as it found it */
	/* round trips: the receiver on [tx] interface that counts what the reflector sends back */
	struct lr_rx *back;
	struct lr_recv_opts back_opts;
	char back_line[LR_START_LINE_MAX];
	struct lr_clock_window clock;	/* latency's two clocks, when an end runs on an agent */
	enum lr_engine_kind engine;	/* the engine the first phase chose, kept for the rest */
	const char *tx_engine;
	unsigned int flows_total;
	struct lr_step *steps;
	unsigned int nsteps;
	struct lr_run_search searches[LR_CFG_MAX_SIZES];
	unsigned int nsearch;
	/* [tx] prepare_peer: held here for the whole run (a local sender), or by the agent per phase */
	struct lr_peer_gro pg;
	struct lr_prep_result prep;	/* what was done: pg.r, or the last remote phase's */
	struct lr_pcap_writer *pcap;	/* [tx] pcap: samples of every measured window */
	struct lr_sampler *sampler;
	bool banner_done;
	/* the step under way, for the message when a signal cuts it short */
	unsigned int cur_size;
	uint64_t cur_pps;
	bool in_step;
	/* NULL: a failure is printed, one line (run); else the last one is kept here unprinted (the matrix) */
	char *why;
	size_t whylen;
	char error[512];	/* run: the first failure printed, the document's "error" */
};

/*
 * A failure in running the steps: "linerate run: " and one line of @fmt on stderr, or kept in
 * r->why when the caller reports it itself. Returns @code.
 */
int lr_run_fail(struct lr_run *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * With both ends connected (r->rx.ctl, r->tx_ctl when the sender is an agent's) and the namespace
 * entered: the keepalives, the clocks compared, the receiver (or reflector) prepared, the sweep or
 * the search, the clocks again. The steps measured are in r->steps either way. 0 or an exit code.
 */
int lr_run_steps(struct lr_run *r);

/* phase.c: a sweep (sizes x rates x repeat), or a search per size; 0 or an exit code. */
int lr_run_sweep(struct lr_run *r);
int lr_run_throughput(struct lr_run *r);
/* phase.c: the sender options of stream @st at @size and @pps (0: max) for @window_ns. */
void lr_run_stream_opts(const struct lr_run *r, const struct lr_cfg_stream *st, unsigned int size, uint64_t pps,
			uint64_t window_ns, struct lr_send_opts *o);

/*
 * receiver.c: forks the receiver endpoint and has it prepare [rx]: 0 or an exit code. The child
 * serves the endpoint and _exit()s with its own exit code; it never returns.
 */
int lr_run_rx_start(struct lr_run *r);
void lr_run_rx_stop(struct lr_run *r);
/* Asks the receiver started above for [rx], its clock @offset_ns from the sender's. 0 or an exit code. */
int lr_run_rx_prepare(struct lr_run *r, int64_t offset_ns);
/* Zero its counts; wait for the markers and collect. 0, or 1 after one line on stderr. */
int lr_run_rx_reset(struct lr_run *r);
int lr_run_rx_wait(struct lr_run *r, uint64_t timeout_ns, struct lr_rx_result *res, bool *complete);
/*
 * Round trips, in run's own process (in [tx] netns): the receiver of what comes back, opened
 * before the first step and ended after the last; between the phases zeroed, and after each one
 * waited on for every flow's reflected marker. 0 or an exit code after one line.
 */
int lr_run_back_open(struct lr_run *r);
void lr_run_back_close(struct lr_run *r);
int lr_run_back_wait(struct lr_run *r, uint64_t timeout_ns, struct lr_rx_result *res, bool *complete);

/*
 * remote.c: connects to a [tx] or [rx] agent (@section names it in messages), with its token. 0
 * or an exit code after one line.
 */
int lr_run_agent_connect(const char *section, const char *hostport, const char *token_file, struct lr_ctl **out);
/*
 * Before the first step: whether the two ends share a clock, else an estimate of each remote end's
 * clock; @rx_offset_ns, the receiver's clock minus the sender's, goes to the receiver.
 */
int lr_run_clocks_before(struct lr_run *r, int64_t *rx_offset_ns);
/* After the last step: every step's latency judged against the estimates before and after. */
void lr_run_clocks_after(struct lr_run *r);
/* One phase's sender on the [tx] agent: @o for @window_ns; into @s (NULL: a warm-up). 0 or an exit code. */
int lr_run_remote_tx(struct lr_run *r, const struct lr_send_opts *o, uint64_t window_ns, struct lr_step *s);

/* "sweep", "throughput search", "round-trip sweep", "round-trip throughput search" */
const char *lr_run_mode_name(enum lr_run_mode m);

/* run_report.c: the table on stdout (stderr when a file is "-"), the JSON and CSV files. */
void lr_run_print_table(const struct lr_run *r);
int lr_run_write_json(const struct lr_run *r);
int lr_run_write_csv(const struct lr_run *r);
/* The tx mode every step ran in, or "mixed"; "" before the first step. */
const char *lr_run_tx_mode(const struct lr_run *r);

/* `linerate run`: its exit code (0 ok, 1 runtime, 2 usage/env, 3 threshold). */
int lr_cmd_run(const struct lr_run_opts *o);

#endif
