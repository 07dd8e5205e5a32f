/* SPDX-License-Identifier: MIT */
/*
 * The agent protocol (docs/protocol.md): the controller's connection and calls, and the endpoint
 * that serves them over one connected stream: run's receiver child, or a session of an agent.
 */
#ifndef LINERATE_CTL_H
#define LINERATE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "opt/opts.h"
#include "ctl/auth.h"
#include "ctl/clock.h"
#include "ctl/host.h"
#include "ctl/metrics.h"
#include "util/choose.h"
#include "util/result.h"

/* ---- controller side ---------------------------------------------------------------------------- */

struct lr_ctl;

#define LR_CTL_CONNECT_MS	3000	/* a TCP connection to an agent, every address of a name together */
#define LR_CTL_PING_MS		500	/* the keepalive's idle time before a ping */
#define LR_CTL_REPLY_MS		1500	/* a ping unanswered this long: the endpoint is gone (2 s with the idle) */

/*
 * Each call sends one request and waits for its reply, one call at a time on a connection (a
 * mutex; the keepalive thread takes its turn between them). It returns 0; an exit code (1 runtime,
 * 2 bad input or environment) when the endpoint answered with an error, its message in @err; or
 * -errno when the exchange itself failed (no answer in time, the stream closed, a reply out of
 * protocol), said in @err. After such a failure the connection is dead: every later call fails
 * the same way without touching the stream.
 */

/*
 * Connects to the agent at @hostport (HOST[:PORT]), says hello and, when the agent asks for a
 * token, proves it holds @key's (after checking the agent's own proof). 0; else an exit code with
 * one line in @err: 1 for connection refused, no answer, busy (with the running test); 2 for a
 * token needed and not given, authentication failed, another protocol version.
 */
int lr_ctl_connect(const char *hostport, const struct lr_auth_key *key, struct lr_ctl **out, char *err,
		   size_t errlen);
/* A connection over a stream already connected (run's socketpair to its child); @name for messages. */
int lr_ctl_attach(int fd, const char *name, struct lr_ctl **out);
/* hello, and auth when the endpoint asks for it (lr_ctl_connect() does this itself). */
int lr_ctl_hello(struct lr_ctl *c, const struct lr_auth_key *key, char *err, size_t errlen);
/*
 * From now on a thread pings the endpoint whenever no call was made for LR_CTL_PING_MS, so the
 * endpoint's dead-man timer stays quiet, and marks the connection dead when a ping fails. Start it
 * after lr_netns_enter() (threads must not exist then). 0 or -errno.
 */
int lr_ctl_keepalive(struct lr_ctl *c);
/* Whether the connection died (a call or a ping failed): true, with why in @err. */
bool lr_ctl_dead(struct lr_ctl *c, char *err, size_t errlen);
/* Stops the keepalive, closes the stream (an endpoint then ends its test) and frees. NULL is fine. */
void lr_ctl_close(struct lr_ctl *c);
/* "the agent at HOST:PORT", or the name given to lr_ctl_attach(). */
const char *lr_ctl_name(const struct lr_ctl *c);
/* "HOST:PORT" of an agent ("" for an attached stream). */
const char *lr_ctl_agent(const struct lr_ctl *c);
/* The endpoint's host facts, from its hello (zeroed before it). */
const struct lr_host *lr_ctl_host(const struct lr_ctl *c);
/* The hello reply's "host" object, as the endpoint sent it (NULL before hello); the connection's. */
struct json_object *lr_ctl_host_json(const struct lr_ctl *c);

/* What prepare_rx, prepare_tx and prepare_reflect answer. */
struct lr_ctl_ready {
	char line[LR_START_LINE_MAX];	/* the start line: engine, mode, why better ones were not usable */
	char ifname[16];	/* the interface it runs on (found by address, or as asked) */
};

/* A receiver as @o says, on @o->ifname or, that empty, on the interface holding @address. */
int lr_ctl_prepare_rx(struct lr_ctl *c, const struct lr_recv_opts *o, const char *address,
		      struct lr_ctl_ready *rd, char *err, size_t errlen);
/*
 * A sender as @o says, likewise, or with @route (and @o->ifname and @address empty) on the
 * interface the endpoint's routing table sends @o->dst_ip out of; it sends nothing before
 * lr_ctl_start().
 */
int lr_ctl_prepare_tx(struct lr_ctl *c, const struct lr_send_opts *o, const char *address, bool route,
		      struct lr_ctl_ready *rd, char *err, size_t errlen);
/*
 * A reflector as @o says (send --peer --rtt's far end), likewise: it sends round-trip frames back
 * from its reply on, until the test ends (quit, the stream's end, the dead-man timer).
 */
int lr_ctl_prepare_reflect(struct lr_ctl *c, const struct lr_reflect_opts *o, const char *address,
			   struct lr_ctl_ready *rd, char *err, size_t errlen);
/* When a sender's workers were released, and how long after the time asked, on its stamping clock. */
struct lr_ctl_started {
	uint64_t at_ns;
	uint64_t late_ns;
};

/*
 * A sender starts at once (@at_ns 0) or at @at_ns on the endpoint's stamping clock, at most
 * LR_CTL_START_AHEAD_NS ahead; @st (may be NULL) says when it did. A receiver counts from its
 * prepare: give 0.
 */
int lr_ctl_start(struct lr_ctl *c, uint64_t at_ns, struct lr_ctl_started *st, char *err, size_t errlen);
/* A sender stops its data and sends its end-of-test markers, as on SIGINT. */
int lr_ctl_stop(struct lr_ctl *c, char *err, size_t errlen);
/* Zero the receiver's counts, between two windows. */
int lr_ctl_reset(struct lr_ctl *c, char *err, size_t errlen);
int lr_ctl_ping(struct lr_ctl *c, char *err, size_t errlen);

/* The counters so far, for live lines. */
struct lr_ctl_progress {
	bool tx;	/* a sender's: packets (data frames completed) and queued; else a receiver's */
	/* a reflector's: packets (data frames reflected), eot_markers, foreign (passed) and refused (by its device) */
	bool reflect;
	uint64_t packets, queued;
	int64_t lost;
	uint64_t reordered, duplicates, foreign;
	uint64_t eot_markers, refused;
};

int lr_ctl_progress(struct lr_ctl *c, struct lr_ctl_progress *p, char *err, size_t errlen);
/*
 * A receiver: waits up to @timeout_ns for every flow's end-of-test marker (in requests of at most
 * LR_CTL_WAIT_MAX_MS, so the endpoint is never kept from its dead-man timer), then the result so
 * far into @r; @complete says whether the markers all came. With @doc, the endpoint's recv
 * document too (the caller's to put).
 */
int lr_ctl_wait(struct lr_ctl *c, uint64_t timeout_ns, bool *complete, struct lr_rx_result *r,
		struct json_object **doc, char *err, size_t errlen);
/*
 * A sender: one wait of at most LR_CTL_WAIT_MAX_MS for its end. Once @complete, @doc is its send
 * document (the caller's to put) and @summary its summary lines (the caller's to free).
 */
int lr_ctl_wait_tx(struct lr_ctl *c, unsigned int timeout_ms, bool *complete, struct json_object **doc,
		   char **summary, char *err, size_t errlen);
/* A reflector's counts, from its result document (`linerate reflect --json`'s, docs/json.md). */
struct lr_ctl_reflect {
	char interface[16];
	char mode[16];	/* "native", "generic" */
	double duration_s;
	uint64_t packets, bytes;	/* data frames reflected */
	uint64_t eot_markers, foreign, bad_flow;
	unsigned int flows, flows_eot;
	bool settled;	/* every flow that sent frames had its marker reflected */
	bool have_sent;
	uint64_t sent;	/* forward, from the markers (have_sent) */
	uint64_t received;
	int64_t lost;	/* forward, as the reflector saw it */
	uint64_t reordered, duplicates;
	uint64_t dev_tx_packets, dev_tx_dropped, dev_drv_drops;	/* its device: sent, refused */
	uint64_t lat_count, lat_min, lat_p50, lat_p99, lat_max;	/* forward one-way, same host only */
	char lat_clock[32];
};

/*
 * A reflector: waits up to @timeout_ns for every flow's end-of-test marker to be reflected (in
 * requests of at most LR_CTL_WAIT_MAX_MS), then its counts so far into @r; @complete says whether
 * the markers all came. With @doc, the endpoint's reflect document too (the caller's to put).
 */
int lr_ctl_wait_reflect(struct lr_ctl *c, uint64_t timeout_ns, bool *complete, struct lr_ctl_reflect *r,
			struct json_object **doc, char *err, size_t errlen);
/* One clock exchange: t1 and t4 on this process's stamping clock, t2 and t3 on the endpoint's. */
int lr_ctl_clock(struct lr_ctl *c, struct lr_clock_sample *s, char *err, size_t errlen);
/* @n exchanges into an estimate (ctl/clock.h); -ENODATA when none could be used. */
int lr_ctl_clock_estimate(struct lr_ctl *c, unsigned int n, struct lr_clock_est *e, char *err, size_t errlen);
/* The endpoint ends its receiver (the capture renamed into place), sender or reflector and says bye. */
int lr_ctl_quit(struct lr_ctl *c, char *err, size_t errlen);

struct lr_ctl_handshake;

/* ---- endpoint side ------------------------------------------------------------------------------ */

/* How an endpoint serves: run's child leaves everything zero but status_fd (-1). */
struct lr_ctl_serve_opts {
	bool tx;	/* serve senders too (an agent); run's child counts only */
	/*
	 * A test ends when no message came for this long (the controller or the link is gone without
	 * a word); 0: only when the stream ends (a socketpair, which ends with its process).
	 */
	int deadman_ms;
	const struct lr_auth_key *key;	/* hello asks for proof of this token; NULL: none */
	/* the agent's rule for every interface it sends or counts on (docs/protocol.md, "Policy") */
	bool policy;
	const char (*allow)[LR_GLOB_MAX];
	unsigned int nallow;
	bool allow_physical;
	/*
	 * With the policy: the agent's --capture-dir, opened (a prepare_rx.pcap is a bare name there),
	 * or -1: a request with a capture is refused. Without it (run's child), pcap is a path.
	 */
	int capture_fd;
	/* With the policy: the namespaces a request may name (--allow-netns, fnmatch); none: only the agent's own */
	const char (*allow_netns)[LR_NETNS_GLOB_MAX];
	unsigned int nallow_netns;
	bool log;	/* a line per event on stderr, "linerate agent: ..." */
	const char *peer;	/* the controller's address, for those lines and the test's description */
	/*
	 * -1, or where the session says what it does, a line at a time: the test's description once
	 * prepared, LR_CTL_STATUS_ENDING once it ends its test; it closes the stream when done.
	 */
	int status_fd;
	/*
	 * The agent's --metrics (ctl/metrics.h): the test's identity and counts go there as they are
	 * read (at least every second), and its result's once the controller has it; NULL: none.
	 */
	struct lr_metrics_shm *metrics;
	/*
	 * The agent's session: hello and auth already done on @fd by its parent, in this state; the
	 * session takes the next request. NULL: the session does them itself (with @key and @tx).
	 */
	const struct lr_ctl_handshake *handshake;
	/*
	 * The agent's main process (0: none): a stop signal seen after it is gone came from its death
	 * (the session asked for one, PR_SET_PDEATHSIG), not from a SIGTERM sent to the agent.
	 */
	pid_t parent;
};

/*
 * How an endpoint's last word begins when it ends a test on its own (a signal, its dead-man timer,
 * the agent's main process gone): the error that says why, sent unasked before the stream closes.
 */
#define LR_CTL_ENDED	"the agent ended the test: "

#define LR_CTL_STATUS_ENDING	"ending"
/*
 * The session's first message arrived: a controller, not a TCP probe (kubelet's readiness check
 * connects and closes without a word, every few seconds; the agent keeps those out of its log).
 */
#define LR_CTL_STATUS_HEARD	"heard"

/*
 * Serves the requests that arrive on @fd until quit, the end of the stream, the dead-man timer or
 * a signal (lr_stop > 0), then ends what it prepared: no XDP program, no tap, no thread is left.
 * Returns an exit code: 0, or why the test could not run.
 */
int lr_ctl_serve(int fd, const struct lr_ctl_serve_opts *so);
/* "linerate agent: " and one line of @fmt on stderr, in one write (sessions log side by side). */
void lr_ctl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
