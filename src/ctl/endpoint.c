/* SPDX-License-Identifier: MIT */
/*
 * The endpoint's side of the agent protocol: a receiver, a sender or a reflector run on a
 * controller's requests, ended by quit, by the stream's end, by the dead-man timer or by a signal,
 * whichever comes first.
 */
#define _GNU_SOURCE	/* open_memstream() */
#include <errno.h>
#include <math.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "ctl/ctl.h"
#include "ctl/handshake.h"
#include "ctl/msg.h"
#include "ctl/request.h"
#include "rx/reflect.h"
#include "rx/report.h"
#include "rx/rx.h"
#include "sys/netdev.h"
#include "sys/peer_gro.h"
#include "tx/frame.h"
#include "tx/tx.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"

#define SEND_MS		5000
#define POLL_MS		100	/* between requests: how soon a signal or the dead-man's deadline is seen */
#define BODY_MS		2000	/* the rest of a message once its first byte is in */
#define POLL_US		5000
/* after the markers: they are repeated, and late frames of other queues may still be on their way */
#define LINGER_US	20000
#define READY_NS	(2 * 1000000000ULL)	/* the sender's workers pinned and waiting */
#define STOP_REQUESTED	(-1)	/* lr_stop from a stop request; a signal sets its number */
#define METRICS_EVERY_NS	1000000000ULL	/* --metrics: the counts read between requests this often */
#define RATE_MIN_NS	100000000ULL	/* a rate over a shorter interval than this would only be noise */

_Static_assert(LR_METRICS_RX_QUEUES == LR_RX_MAX_QUEUES, "the metrics keep every queue a receiver counts");

enum role { ROLE_NONE, ROLE_RX, ROLE_TX, ROLE_REFLECT };

struct endpoint {
	const struct lr_ctl_serve_opts *so;
	struct lr_ctl_handshake hs;	/* hello and auth, here or done by the agent's parent */
	enum role role;
	char what[128];	/* "rx on ul0 in h2": the test, for logs and busy replies */
	/* receiver */
	struct lr_recv_opts ro;
	struct lr_rx rx;
	uint64_t rx_start_ns;
	/* sender */
	struct lr_send_opts to;
	struct lr_tx *tx;
	bool started, finished;
	struct json_object *tx_doc;	/* its send document, once finished */
	struct lr_peer_gro pg;	/* prepare_peer: GRO held on at the interface's veth peer until the sender is done */
	char *tx_summary;	/* its summary lines, once finished */
	/* reflector (send --peer --rtt's far end): it reflects from its prepare to the test's end */
	struct lr_reflect_opts fo;
	struct lr_reflector refl;
	int code;	/* why the test could not run, for the exit code */
	/* the agent's --metrics: what was published last, and when and what the counts were last read */
	struct lr_metrics_test mt;
	bool m_final;	/* a result went to the controller: no later read replaces its numbers */
	uint64_t m_prev, m_prev_ns, m_next_ns;
};

static const struct lr_ctl_serve_opts local_child = { .status_fd = -1 };

void lr_ctl_log(const char *fmt, ...)
{
	char msg[1024], line[1200];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* what a controller sent is quoted in some lines: escaped, it cannot forge a line of its own */
	n = (size_t)snprintf(line, sizeof(line), "linerate agent: ");
	n += lr_escape(msg, line + n, sizeof(line) - n - 1);
	line[n++] = '\n';
	/* one write: lines of sessions running side by side do not mix */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

#define elog(e, ...)                          \
	do {                                  \
		if ((e)->so->log)             \
			lr_ctl_log(__VA_ARGS__); \
	} while (0)

/* The sender's error as the agent's reply says it: settings named by their prepare_tx keys. */
static struct json_object *tx_error(const struct lr_err *le)
{
	char msg[LR_ERR_MAX + 256];

	lr_err_render(le, lr_ctl_spell_tx, msg, sizeof(msg));
	return lr_msg_error(le->code, "%s", msg[0] ? msg : "the sender could not start (no reason given)");
}

/* The agent's rule for @ifname (here, in the namespace entered): NULL when it may be served. */
static struct json_object *check_policy(const struct endpoint *e, const char *ifname)
{
	const struct lr_ctl_serve_opts *so = e->so;
	char err[256], list[512] = "";
	struct lr_if ifc;
	bool match = !so->nallow;
	size_t off = 0;
	unsigned int i;

	if (!so->policy)
		return NULL;
	if (lr_if_open(ifname, &ifc, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	for (i = 0; i < so->nallow; i++) {
		match = match || !fnmatch(so->allow[i], ifname, 0);
		if (off < sizeof(list))
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", so->allow[i]);
	}
	if (!match)
		return lr_msg_error(LR_EXIT_USAGE, "interface %s is not served here: it matches none of the agent's --allow patterns (%s)",
				    ifname, list);
	if (ifc.physical && !so->allow_physical)
		return lr_msg_error(LR_EXIT_USAGE, "interface %s is a physical NIC: this agent serves one only with --allow-physical on its own command line",
				    ifname);
	return NULL;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* An absolute path with no empty, '.' or '..' component: what a pattern matched is where it leads. */
static bool plain_path(const char *p)
{
	return !strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../") &&
	       !ends_with(p, "/.") && !ends_with(p, "/..") && !ends_with(p, "/");
}

/*
 * The agent's rule for a request's namespace, before anything opens it: its spelling must match
 * one of --allow-netns, with FNM_PATHNAME (a star stops at a slash, so a directory's pattern
 * holds no path that leaves it, and no '..' passes plain_path()). NULL when it may be entered.
 */
static struct json_object *check_netns(const struct endpoint *e, const char *netns)
{
	const struct lr_ctl_serve_opts *so = e->so;
	char list[512] = "";
	bool match = false;
	size_t off = 0;
	unsigned int i;

	if (!so->policy || !netns[0])
		return NULL;
	if (!so->nallow_netns)
		return lr_msg_error(LR_EXIT_USAGE, "network namespace '%.256s' is not served here: this agent tests only "
				    "in its own namespace (its --allow-netns GLOB lets requests name others)", netns);
	if (netns[0] == '/' && !plain_path(netns))
		return lr_msg_error(LR_EXIT_USAGE, "network namespace '%.256s': not a plain absolute path (an empty, '.' "
				    "or '..' component), which --allow-netns patterns cannot vouch for", netns);
	for (i = 0; i < so->nallow_netns; i++) {
		match = match || !fnmatch(so->allow_netns[i], netns, FNM_PATHNAME);
		if (off < sizeof(list))
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", so->allow_netns[i]);
	}
	if (!match)
		return lr_msg_error(LR_EXIT_USAGE, "network namespace '%.256s' is not served here: it matches none of the "
				    "agent's --allow-netns patterns (%s)", netns, list);
	return NULL;
}

/*
 * A receiver's capture through an agent: a bare name in its --capture-dir, else refused (no
 * controller names a path on this host). NULL, or the error to answer with.
 */
static struct json_object *check_capture(const struct endpoint *e, struct lr_recv_opts *o)
{
	struct stat st;

	if (!e->so->policy || !o->rx.pcap[0])
		return NULL;
	if (e->so->capture_fd < 0)
		return lr_msg_error(LR_EXIT_USAGE, "prepare_rx.pcap: this agent writes no captures: start it with "
				    "--capture-dir DIR to take them there, by a bare file name");
	if (!lr_out_name_ok(o->rx.pcap))
		return lr_msg_error(LR_EXIT_USAGE, "prepare_rx.pcap: '%.64s' is not a bare file name: the capture goes "
				    "into the agent's --capture-dir, named by 1..%d letters, digits, '.', '_', '-' or "
				    "'+', not starting with '.'", o->rx.pcap, LR_OUT_NAME_MAX);
	if (!fstatat(e->so->capture_fd, o->rx.pcap, &st, AT_SYMLINK_NOFOLLOW))
		return lr_msg_error(LR_EXIT_USAGE, "prepare_rx.pcap: '%s' exists already in the agent's --capture-dir: "
				    "a capture never replaces a file; choose another name", o->rx.pcap);
	o->rx.pcap_in_dir = true;
	o->rx.pcap_dirfd = e->so->capture_fd;
	return NULL;
}

/*
 * A sender's interface by its route (prepare_tx.route): the one the routing table sends its
 * destination out of, in the namespace entered, and, unless the request names one, the source
 * address the kernel would pick there. NULL, or the error to answer with.
 */
static struct json_object *route_iface(struct endpoint *e, char *ifname)
{
	struct lr_send_opts *o = &e->to;
	struct lr_if_nexthop nh;
	char err[512];

	if (lr_if_route_to(o->tx.family, &o->tx.dst_ip, ifname, &nh, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	if (!o->tx.have_src_ip && nh.have_src) {
		o->tx.src_ip = nh.src;
		o->tx.src_family = o->tx.family;
		o->tx.have_src_ip = true;
	}
	return NULL;
}

/*
 * What every prepare does, once its request parsed, before its role's own start: the namespace,
 * the interface found by its address (or, a sender, by its route), the policy. NULL, or the error
 * to answer with. @ifname is the options' field.
 */
static struct json_object *prepare_common(struct endpoint *e, const char *role, const char *netns, char *ifname,
					  const char *address, bool route)
{
	struct json_object *m;
	char err[512];

	m = check_netns(e, netns);
	if (m)
		return m;
	/* one process, one namespace: the endpoint is still single-threaded here (no worker yet) */
	if (netns[0] && lr_netns_enter(netns, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	if (address[0] && lr_host_iface_of(address, ifname, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	if (route && (m = route_iface(e, ifname)))
		return m;
	snprintf(e->what, sizeof(e->what), "%s on %s%s%s", role, ifname, netns[0] ? " in " : "", netns);
	m = check_policy(e, ifname);
	return m;
}

/* One line to the agent's parent (ctl.h, status_fd): what runs, or LR_CTL_STATUS_ENDING. */
static void status(const struct endpoint *e, const char *line)
{
	char buf[256];
	int n;

	if (e->so->status_fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%s\n", line);
	if (write(e->so->status_fd, buf, (size_t)n) < 0)
		pr_debug("endpoint: status: %s\n", strerror(errno));
}

/* ---- the agent's --metrics: the same numbers the controller is sent -------------------------- */

/* A new test: its identity, counts from zero, running; the tests ended and the last number carried over. */
static void metrics_begin(struct endpoint *e, const char *ifname)
{
	struct lr_metrics_test *t = &e->mt;
	struct lr_metrics_test last = { 0 };
	struct timespec ts;

	if (!e->so->metrics)
		return;
	if (lr_metrics_read(e->so->metrics, &last)) {
		/* a session before this one died in the middle of a write: there is no writer but us */
		lr_metrics_recover(e->so->metrics);
		lr_metrics_read(e->so->metrics, &last);
	}
	memset(t, 0, sizeof(*t));
	t->cost_sender_ns = t->cost_sender_err_ns = t->cost_receiver_ns = t->cost_receiver_err_ns = NAN;
	t->tests = last.tests;
	t->id = last.id + 1;
	t->role = e->role == ROLE_RX ? LR_METRICS_RX : e->role == ROLE_TX ? LR_METRICS_TX : LR_METRICS_REFLECT;
	t->running = 1;
	snprintf(t->name, sizeof(t->name), "%s", e->what);
	snprintf(t->interface, sizeof(t->interface), "%s", ifname);
	snprintf(t->engine, sizeof(t->engine), "%s",
		 e->role == ROLE_RX ? e->rx.ops->name : e->role == ROLE_TX ? lr_tx_ops(e->tx)->name : "xdp");
	clock_gettime(CLOCK_REALTIME, &ts);
	t->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	e->m_final = false;
	e->m_prev = 0;
	e->m_prev_ns = lr_now_ns();
	e->m_next_ns = e->m_prev_ns + METRICS_EVERY_NS;
	lr_metrics_publish(e->so->metrics, t);
}

/* Packets per second since the last read, when that is long enough ago to mean something. */
static double metrics_rate(struct endpoint *e, uint64_t packets, double last)
{
	uint64_t now = lr_now_ns(), dt = now - e->m_prev_ns;
	double pps;

	if (dt < RATE_MIN_NS)
		return last;
	/* fewer than before: the counts were reset (run's windows) */
	pps = (double)(packets >= e->m_prev ? packets - e->m_prev : packets) * 1e9 / (double)dt;
	e->m_prev = packets;
	e->m_prev_ns = now;
	return pps;
}

/* A receiver's counts: @result when they are a result's, which no later read replaces. */
static void metrics_rx(struct endpoint *e, const struct lr_rx_result *r, bool result)
{
	struct lr_metrics_test *t = &e->mt;

	if (!e->so->metrics || (e->m_final && !result))
		return;
	t->rx_packets = r->packets;
	t->rx_bytes = r->bytes;
	t->rx_sent = r->sent;
	t->rx_flows_eot = r->flows_eot;
	memcpy(t->rx_queue_packets, r->queue_packets, sizeof(t->rx_queue_packets));
	t->rx_lost = r->lost;
	t->rx_reordered = r->late;
	t->rx_duplicates = r->dups;
	t->rx_pps = result ? r->pps : metrics_rate(e, r->packets, t->rx_pps);
	t->lat_count = r->lat_count;
	t->lat_sum_ns = r->lat_sum;
	t->lat_ns[0] = r->lat_min;
	t->lat_ns[1] = r->lat_p50;
	t->lat_ns[2] = r->lat_p90;
	t->lat_ns[3] = r->lat_p99;
	t->lat_ns[4] = r->lat_p999;
	t->lat_ns[5] = r->lat_max;
	/* the program's calibrated ns per frame, once bpf_stats counted enough runs */
	if (r->have_prog && !isnan(lr_rx_prog_ns_per_run(&r->prog))) {
		t->cost_receiver_ns = lr_rx_prog_ns_per_run(&r->prog);
		t->cost_receiver_err_ns = r->prog.stats_error_ns;
	}
	e->m_final = e->m_final || result;
	lr_metrics_publish(e->so->metrics, t);
}

static void metrics_tx(struct endpoint *e, const struct lr_tx_result *r, bool result)
{
	struct lr_metrics_test *t = &e->mt;
	unsigned int i;

	if (!e->so->metrics || (e->m_final && !result))
		return;
	t->tx_packets = r->packets;
	t->tx_bytes = r->bytes;
	t->tx_pps = result ? r->pps : metrics_rate(e, r->packets, t->tx_pps);
	t->nqueues = r->nqueues < LR_METRICS_QUEUES ? r->nqueues : LR_METRICS_QUEUES;
	for (i = 0; i < t->nqueues; i++)
		t->queues[i] = (struct lr_metrics_queue){ r->queues[i].queue, r->queues[i].packets };
	/* the workers' own time per frame sent, interrupt work served inside them left out */
	if (r->have_cpu && r->packets && r->cpu.thread_ns >= r->cpu.softirq_ns) {
		t->cost_sender_ns = (double)(r->cpu.thread_ns - r->cpu.softirq_ns) / (double)r->packets;
		t->cost_sender_err_ns = (double)r->cpu.softirq_err_ns / (double)r->packets;
	}
	e->m_final = e->m_final || result;
	lr_metrics_publish(e->so->metrics, t);
}

static void metrics_reflect(struct endpoint *e, const struct lr_reflect_result *x, bool result)
{
	struct lr_metrics_test *t = &e->mt;

	if (!e->so->metrics || (e->m_final && !result))
		return;
	t->reflect_packets = x->packets;
	t->reflect_bytes = x->bytes;
	e->m_final = e->m_final || result;
	lr_metrics_publish(e->so->metrics, t);
}

/* A finished sender's result: its send document's own numbers, as the controller gets them. */
static void metrics_tx_result(struct endpoint *e)
{
	struct lr_tx_result *r;
	char err[256];

	if (!e->so->metrics || !e->tx_doc || !(r = malloc(sizeof(*r))))
		return;
	if (!lr_tx_result_get(e->tx_doc, r, err, sizeof(err)))
		metrics_tx(e, r, true);
	else
		pr_debug("endpoint: metrics: the send document: %s\n", err);
	free(r);
}

/* The counts read now, unless a result's numbers stand. */
static void metrics_read(struct endpoint *e)
{
	if (!e->so->metrics || e->m_final || e->role == ROLE_NONE)
		return;
	if (e->role == ROLE_RX) {
		struct lr_rx_result *r = malloc(sizeof(*r));

		if (r && !lr_rx_collect(&e->rx, r))
			metrics_rx(e, r, false);
		free(r);
	} else if (e->role == ROLE_TX && e->started) {
		/*
		 * The workers' completions only, read atomically as progress reads them: the device's
		 * counters that settle a result are a worker's to snapshot while it runs.
		 */
		struct lr_tx_result *r = calloc(1, sizeof(*r));
		const struct lr_worker *ws;
		unsigned int n, i;

		if (!r)
			return;
		ws = lr_tx_workers(e->tx, &n);
		for (i = 0; i < n && i < LR_TX_MAX_QUEUES; i++) {
			r->queues[i].queue = ws[i].queue;
			r->queues[i].packets = lr_tx_worker_done(&ws[i]);
			r->packets += r->queues[i].packets;
		}
		r->nqueues = i;
		/* an agent's sender sends its template, never a capture: every frame is --size */
		r->bytes = r->packets * (e->to.tx.size - LR_FCS_LEN);
		metrics_tx(e, r, false);
		free(r);
	} else if (e->role == ROLE_REFLECT) {
		struct lr_reflect_result x;

		if (!lr_reflector_collect(&e->refl, &x))
			metrics_reflect(e, &x, false);
	}
}

/* Between requests: the counts read once a second, so a scrape sees a test move whoever drives it. */
static void metrics_tick(struct endpoint *e)
{
	uint64_t now;

	if (!e->so->metrics || e->role == ROLE_NONE || e->m_final)
		return;
	now = lr_now_ns();
	if (now < e->m_next_ns)
		return;
	e->m_next_ns = now + METRICS_EVERY_NS;
	metrics_read(e);
}

/* The test ends: the last counts (unless a result's stand), not running, one more test ended. */
static void metrics_end(struct endpoint *e)
{
	if (!e->so->metrics || e->role == ROLE_NONE)
		return;
	if (e->role == ROLE_TX)
		metrics_tx_result(e);
	metrics_read(e);
	e->mt.running = 0;
	e->mt.tests++;
	lr_metrics_publish(e->so->metrics, &e->mt);
}

/* "ready" for a prepared test; the agent's log and busy replies learn what runs. */
static struct json_object *ready(struct endpoint *e, enum role role, const char *line, const char *ifname)
{
	struct json_object *m = lr_msg_new("ready");
	char what[224];

	e->role = role;
	metrics_begin(e, ifname);
	json_object_object_add(m, "line", json_object_new_string(line));
	json_object_object_add(m, "interface", json_object_new_string(ifname));
	elog(e, "%s: test %s: %s", e->so->peer, e->what, line);
	snprintf(what, sizeof(what), "%s for %s", e->what, e->so->peer ? e->so->peer : "?");
	status(e, what);
	return m;
}

static struct json_object *refused(struct endpoint *e, struct json_object *m, int code)
{
	struct json_object *msg;

	e->code = code;
	if (json_object_object_get_ex(m, "message", &msg))
		elog(e, "%s: refused %s: %s", e->so->peer, e->what[0] ? e->what : "a test", json_object_get_string(msg));
	e->what[0] = '\0';
	return m;
}

static struct json_object *on_prepare_rx(struct endpoint *e, struct json_object *req)
{
	struct json_object *m;
	char err[LR_RX_LINE_MAX], line[LR_RX_LINE_MAX], address[LR_CTL_ADDR_TEXT];
	int ret;

	/* before the parse: the options of a running receiver are read from e->ro */
	if (e->role != ROLE_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "a test is prepared already (%s)", e->what);
	if (lr_ctl_prepare_rx_parse(req, &e->ro, address, err, sizeof(err)))
		return refused(e, lr_msg_error(LR_EXIT_USAGE, "%s", err), LR_EXIT_USAGE);
	e->ro.quiet = true;
	e->ro.verbose = lr_log_level();
	m = check_capture(e, &e->ro);
	if (m)
		return refused(e, m, LR_EXIT_USAGE);
	m = prepare_common(e, "rx", e->ro.netns, e->ro.rx.ifname, address, false);
	if (m)
		return refused(e, m, LR_EXIT_USAGE);
	ret = lr_rx_begin(&e->ro.rx, &e->rx, line, sizeof(line), err, sizeof(err));
	if (ret)
		return refused(e, lr_msg_error(ret, "%s", err), ret);
	e->rx_start_ns = lr_now_ns();
	return ready(e, ROLE_RX, line, e->ro.rx.ifname);
}

/*
 * A reflector (send --peer --rtt's far end): reflect's XDP program on the interface, sending
 * round-trip frames back from now on, as a receiver counts from its prepare.
 */
static struct json_object *on_prepare_reflect(struct endpoint *e, struct json_object *req)
{
	struct json_object *m;
	char err[LR_RX_LINE_MAX], line[LR_RX_LINE_MAX], address[LR_CTL_ADDR_TEXT];
	int ret;

	/* before the parse: the options of a running reflector are read from e->fo */
	if (e->role != ROLE_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "a test is prepared already (%s)", e->what);
	if (lr_ctl_prepare_reflect_parse(req, &e->fo, address, err, sizeof(err)))
		return refused(e, lr_msg_error(LR_EXIT_USAGE, "%s", err), LR_EXIT_USAGE);
	e->fo.quiet = true;
	e->fo.verbose = lr_log_level();
	m = prepare_common(e, "reflect", e->fo.netns, e->fo.fx.ifname, address, false);
	if (m)
		return refused(e, m, LR_EXIT_USAGE);
	/*
	 * An agent's policy said yes to this interface: the library's own check must not say no again.
	 * run's child has no policy: the library refuses a physical NIC, as run's own sender does.
	 */
	e->fo.fx.allow_physical = e->so->policy;
	ret = lr_reflector_open(&e->fo.fx, &e->refl, line, sizeof(line), err, sizeof(err));
	if (ret)
		return refused(e, lr_msg_error(ret, "%s", err), ret);
	return ready(e, ROLE_REFLECT, line, e->fo.fx.ifname);
}

static void end_test(struct endpoint *e, const char *why);

static struct json_object *on_prepare_tx(struct endpoint *e, struct json_object *req)
{
	struct json_object *m;
	char err[512], address[LR_CTL_ADDR_TEXT];
	struct lr_err le;
	bool route;
	int ret;

	if (!e->so->tx)
		return lr_msg_error(LR_EXIT_USAGE, "this endpoint counts only: it takes no prepare_tx");
	/*
	 * A sender that finished (its result was taken by wait) makes way for the next: run prepares
	 * one per phase on the same session. A stop request ended only that sender.
	 */
	if (e->role == ROLE_TX && e->finished) {
		end_test(e, "finished");
		if (lr_stop == STOP_REQUESTED)
			lr_stop = 0;
	}
	if (e->role != ROLE_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "a test is prepared already (%s)", e->what);
	if (lr_ctl_prepare_tx_parse(req, &e->to, address, &route, err, sizeof(err)))
		return refused(e, lr_msg_error(LR_EXIT_USAGE, "%s", err), LR_EXIT_USAGE);
	m = prepare_common(e, "tx", e->to.netns, e->to.tx.ifname, address, route);
	if (m)
		return refused(e, m, LR_EXIT_USAGE);
	/* the policy said yes to this interface; the library's own check must not say no again */
	e->to.tx.allow_physical = true;
	e->to.quiet = true;
	e->to.verbose = lr_log_level();
	/* the interface, the size, the queues, the addresses: bad input is refused before the peer is touched */
	ret = lr_tx_prepare(&e->to.tx, 0, e->to.tx.flows, &e->tx, &le);
	if (ret)
		return refused(e, tx_error(&le), ret);
	/* before the sender's engine is chosen, and before it has a thread: the guardian is forked */
	if (e->to.tx.prepare_peer) {
		char line[512];

		ret = lr_peer_gro_hold(e->to.tx.ifname, &e->pg, err, sizeof(err));
		if (ret) {
			lr_tx_close(e->tx);
			e->tx = NULL;
			return refused(e, lr_msg_error(ret, "%s", err), ret);
		}
		lr_peer_gro_start_line(&e->pg.r, e->to.tx.ifname, line, sizeof(line));
		elog(e, "%s: %s", e->so->peer, line);
	}
	ret = lr_tx_engine_open(e->tx, &le);
	if (ret) {
		lr_peer_gro_release(&e->pg);
		lr_tx_close(e->tx);
		e->tx = NULL;
		return refused(e, tx_error(&le), ret);
	}
	return ready(e, ROLE_TX, lr_tx_engine_line(e->tx), e->to.tx.ifname);
}

/*
 * Sleeps until @at on CLOCK_MONOTONIC (lr_now_ns()), the last stretch spun for a start within
 * microseconds; a signal that stops the endpoint cuts it short.
 */
static void sleep_until(uint64_t at)
{
	const uint64_t spin = 200000;	/* the usual lateness of a timer's wake-up, with margin */
	uint64_t now;

	while ((now = lr_now_ns()) + spin < at && !lr_stop) {
		struct timespec ts = { .tv_sec = (time_t)((at - spin) / 1000000000ULL),
				       .tv_nsec = (long)((at - spin) % 1000000000ULL) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	while (lr_now_ns() < at && !lr_stop)
		;
}

/*
 * start {at_ns}: a sender's workers released at once (0) or at @at_ns on the stamping clock (so a
 * controller that knows this host's clock offset can start two senders together); a receiver has
 * counted since its prepare. Reply started {at_ns, late_ns}: when the workers were released, on the
 * stamping clock, and how long after the time asked.
 */
static struct json_object *on_start(struct endpoint *e, struct json_object *req)
{
	uint64_t at = 0, go, now, late = 0;
	struct json_object *m;
	struct lr_err le;
	char err[256];

	if (lr_ctl_start_parse(req, &at, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	if (e->role == ROLE_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "nothing prepared: prepare_rx, prepare_tx or prepare_reflect first");
	if (e->started)
		return lr_msg_error(LR_EXIT_USAGE, "started already");
	now = lr_now_bpf_ns();
	if (e->role == ROLE_RX && at)
		return lr_msg_error(LR_EXIT_USAGE, "start.at_ns: a receiver counts from prepare_rx: give 0");
	if (e->role == ROLE_REFLECT && at)
		return lr_msg_error(LR_EXIT_USAGE, "start.at_ns: a reflector reflects from prepare_reflect: give 0");
	if (at > now + LR_CTL_START_AHEAD_NS)
		return lr_msg_error(LR_EXIT_USAGE, "start.at_ns: %.3f s ahead of this host's clock: at most %.0f s",
				    (double)(at - now) / 1e9, (double)LR_CTL_START_AHEAD_NS / 1e9);
	go = now;
	if (e->role == ROLE_TX) {
		if (lr_tx_start(e->tx, &le))
			return tx_error(&le);
		lr_tx_ready(e->tx, READY_NS);
		/* the stamping clock is CLOCK_MONOTONIC less this namespace's offset */
		if (at)
			sleep_until(at + (uint64_t)lr_timens_offset_ns());
		now = lr_now_ns();
		lr_tx_go(e->tx, now);
		go = now - (uint64_t)lr_timens_offset_ns();
		late = at && go > at ? go - at : 0;
		if (at)
			elog(e, "%s: %s started, %.1f us after the time asked", e->so->peer, e->what, (double)late / 1e3);
		else
			elog(e, "%s: %s started", e->so->peer, e->what);
	}
	e->started = true;
	m = lr_msg_new("started");
	json_object_object_add(m, "at_ns", json_object_new_uint64(go));
	json_object_object_add(m, "late_ns", json_object_new_uint64(late));
	return m;
}

/* The sender's end: its workers joined, its summary and document kept for wait and the log. */
static void finish_tx(struct endpoint *e)
{
	const struct lr_prep_result *prep;
	char error[LR_WHY_MAX + 32] = "", line[LR_WHY_MAX + 32];
	struct lr_tx_result r;
	unsigned int i, n;
	size_t len = 0;
	double secs;
	char *text = NULL;
	FILE *f;

	/* a receiver or a reflector is started too (start at_ns 0): it has no sender to finish */
	if (e->role != ROLE_TX || !e->tx || e->finished || !e->started)
		return;
	lr_tx_join(e->tx);
	/* the test is over for the peer: put back before the report, which says how it went */
	if (e->pg.pid) {
		char pline[512];

		lr_peer_gro_release(&e->pg);
		lr_peer_gro_end_line(&e->pg.r, pline, sizeof(pline));
		elog(e, "%s: --prepare-peer: %s", e->so->peer, pline);
	}
	prep = e->to.tx.prepare_peer ? &e->pg.r : NULL;
	lr_tx_collect(e->tx, &r, &secs);
	/* the lines `linerate send` would print: the workers' failures, then the summary */
	f = open_memstream(&text, &len);
	lr_tx_workers(e->tx, &n);
	for (i = 0; i < n; i++) {
		if (!lr_tx_worker_error(e->tx, i, line, sizeof(line)))
			continue;
		if (f)
			fprintf(f, "linerate send: %s\n", line);
		if (!error[0])
			snprintf(error, sizeof(error), "%s", line);
	}
	if (f) {
		lr_tx_summary(f, e->tx, &r, secs, prep);
		fclose(f);
	}
	e->tx_summary = text ? text : strdup("");
	e->tx_doc = lr_tx_doc(e->tx, &r, secs, error, NULL, prep);
	e->finished = true;
}

static const char *role_name(enum role r)
{
	return r == ROLE_RX ? "receiver" : r == ROLE_TX ? "sender" : "reflector";
}

/* NULL when the role's test can take the request, else the error to answer with. */
static struct json_object *not_ready(const struct endpoint *e, enum role want)
{
	if (e->role == ROLE_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "nothing prepared: %s first",
				    want == ROLE_TX	 ? "prepare_tx" :
				    want == ROLE_REFLECT ? "prepare_reflect" :
							   "prepare_rx");
	if (want != ROLE_NONE && e->role != want)
		return lr_msg_error(LR_EXIT_USAGE, "the test prepared is a %s", role_name(e->role));
	if ((e->role == ROLE_RX && !lr_if_present(&e->rx.ifc)) ||
	    (e->role == ROLE_REFLECT && !lr_if_present(&e->refl.ifc)))
		return lr_msg_error(LR_EXIT_RUNTIME, "interface %s disappeared (deleted, or its veth peer's namespace went away)",
				    e->role == ROLE_RX ? e->ro.rx.ifname : e->fo.fx.ifname);
	return NULL;
}

/* The reflector's counts as a document: `linerate reflect --json`'s, or NULL after an error (in *m). */
static struct json_object *reflect_doc(struct endpoint *e, struct json_object **m)
{
	struct lr_reflect_result x;
	struct json_object *doc;
	int ret = lr_reflector_collect(&e->refl, &x);

	if (ret) {
		*m = lr_msg_error(LR_EXIT_RUNTIME, "cannot read the reflector's counters: %s", strerror(-ret));
		return NULL;
	}
	doc = lr_json_doc("reflect");
	json_object_object_add(doc, "interface", json_object_new_string(e->fo.fx.ifname));
	json_object_object_add(doc, "duration_s", json_object_new_double(x.duration_s));
	json_object_object_add(doc, "error", NULL);
	lr_reflect_result_put(doc, &x);
	metrics_reflect(e, &x, true);
	return doc;
}

/* The receiver's recv document so far, or NULL after an error (in *m). */
static struct json_object *rx_doc(struct endpoint *e, struct lr_rx_result *r, struct json_object **m)
{
	struct lr_rx_context x = { .secs = (double)(lr_now_ns() - e->rx_start_ns) / 1e9 };
	int ret = lr_rx_collect(&e->rx, r);

	if (ret) {
		*m = lr_msg_error(LR_EXIT_RUNTIME, "cannot read the receiver's counters: %s", strerror(-ret));
		return NULL;
	}
	snprintf(x.engine, sizeof(x.engine), "%s", e->rx.ops->name);
	snprintf(x.mode, sizeof(x.mode), "%s", e->rx.mode);
	snprintf(x.ifname, sizeof(x.ifname), "%s", e->ro.rx.ifname);
	metrics_rx(e, r, true);
	return lr_rx_doc(&x, r);
}

static struct json_object *on_progress(struct endpoint *e)
{
	struct json_object *m = not_ready(e, ROLE_NONE), *o;
	const struct lr_worker *ws;
	struct lr_rx_result *r;
	uint64_t done = 0, queued = 0;
	unsigned int n, i;
	int ret;

	if (m)
		return m;
	o = json_object_new_object();
	if (e->role == ROLE_REFLECT) {
		struct lr_reflect_result x;

		ret = lr_reflector_collect(&e->refl, &x);
		if (ret) {
			json_object_put(o);
			return lr_msg_error(LR_EXIT_RUNTIME, "cannot read the reflector's counters: %s",
					    strerror(-ret));
		}
		json_object_object_add(o, "packets", json_object_new_int64((int64_t)x.packets));
		json_object_object_add(o, "eot_markers", json_object_new_int64((int64_t)x.eot));
		json_object_object_add(o, "foreign", json_object_new_int64((int64_t)x.foreign));
		json_object_object_add(o, "refused",
				       json_object_new_int64((int64_t)(x.dev_tx_dropped + x.dev_drv_drops)));
		metrics_reflect(e, &x, false);
	} else if (e->role == ROLE_TX) {
		ws = lr_tx_workers(e->tx, &n);
		for (i = 0; e->started && i < n; i++) {
			done += lr_tx_worker_done(&ws[i]);
			queued += __atomic_load_n(&ws[i].stats.queued, __ATOMIC_RELAXED);
		}
		json_object_object_add(o, "packets", json_object_new_int64((int64_t)done));
		json_object_object_add(o, "queued", json_object_new_int64((int64_t)queued));
		metrics_read(e);
	} else {
		r = malloc(sizeof(*r));
		ret = r ? lr_rx_collect(&e->rx, r) : -ENOMEM;
		if (ret) {
			free(r);
			json_object_put(o);
			return lr_msg_error(LR_EXIT_RUNTIME, "cannot read the receiver's counters: %s", strerror(-ret));
		}
		json_object_object_add(o, "packets", json_object_new_int64((int64_t)r->packets));
		json_object_object_add(o, "lost", json_object_new_int64(r->lost));
		json_object_object_add(o, "reordered", json_object_new_int64((int64_t)r->late));
		json_object_object_add(o, "duplicates", json_object_new_int64((int64_t)r->dups));
		json_object_object_add(o, "foreign", json_object_new_int64((int64_t)r->foreign));
		metrics_rx(e, r, false);
		free(r);
	}
	m = lr_msg_new("progress");
	json_object_object_add(m, e->role == ROLE_TX ? "tx" : e->role == ROLE_REFLECT ? "reflect" : "rx", o);
	return m;
}

static struct json_object *result(bool complete, struct json_object *doc, const char *summary)
{
	struct json_object *m = lr_msg_new("result");

	json_object_object_add(m, "complete", json_object_new_boolean(complete));
	json_object_object_add(m, "document", doc);
	json_object_object_add(m, "summary", json_object_new_string(summary ? summary : ""));
	return m;
}

static struct json_object *on_wait(struct endpoint *e, struct json_object *req)
{
	struct json_object *m = not_ready(e, ROLE_NONE), *doc;
	struct lr_rx_result *r;
	unsigned int ms;
	uint64_t end;
	char err[256];
	bool complete;

	if (m)
		return m;
	if (lr_ctl_wait_parse(req, &ms, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	end = lr_now_ns() + (uint64_t)ms * 1000000;
	if (e->role == ROLE_TX) {
		if (!e->started)
			return lr_msg_error(LR_EXIT_USAGE, "the sender has not started: start first");
		while (!(complete = lr_tx_done(e->tx)) && lr_now_ns() < end)
			usleep(POLL_US);
		if (complete) {
			finish_tx(e);
			metrics_tx_result(e);
		}
		return result(complete, complete ? json_object_get(e->tx_doc) : NULL, complete ? e->tx_summary : "");
	}
	if (e->role == ROLE_REFLECT) {
		/* every flow's marker reflected; then their repeats */
		while (!(complete = lr_reflector_complete(&e->refl)) && lr_now_ns() < end)
			usleep(POLL_US);
		usleep(LINGER_US);
		doc = reflect_doc(e, &m);
		return doc ? result(complete, doc, "") : m;
	}
	while (!(complete = lr_rx_complete(&e->rx)) && lr_now_ns() < end)
		usleep(POLL_US);
	usleep(LINGER_US);
	r = malloc(sizeof(*r));
	if (!r)
		return lr_msg_error(LR_EXIT_RUNTIME, "out of memory");
	doc = rx_doc(e, r, &m);
	free(r);
	return doc ? result(complete, doc, "") : m;
}

static struct json_object *on_stop(struct endpoint *e)
{
	struct json_object *m = not_ready(e, ROLE_NONE);

	if (m)
		return m;
	/* the workers' own stop: they end their data and send their markers, as on SIGINT */
	if (e->role == ROLE_TX && e->started && !lr_stop)
		lr_stop = STOP_REQUESTED;
	return lr_msg_new("ok");
}

static struct json_object *on_reset(struct endpoint *e)
{
	struct json_object *m = not_ready(e, ROLE_RX);

	if (m)
		return m;
	lr_rx_reset(&e->rx);
	/* a new window: its counts from zero, read again until its result */
	e->m_final = false;
	e->m_prev = 0;
	e->m_prev_ns = lr_now_ns();
	metrics_read(e);
	return lr_msg_new("ok");
}

static struct json_object *on_clock(struct json_object *req, uint64_t t2)
{
	struct json_object *m;
	char err[256];
	uint64_t t1;

	if (lr_ctl_clock_parse(req, &t1, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	m = lr_msg_new("clock");
	json_object_object_add(m, "t1", json_object_new_uint64(t1));
	json_object_object_add(m, "t2", json_object_new_uint64(t2));
	/* t3 is added as the reply leaves */
	return m;
}

/* The test ended (@why): one line for the log, from what it did. */
static void log_end(struct endpoint *e, const char *why)
{
	struct json_object *tx, *v;
	struct lr_rx_result *r;

	if (!e->so->log || e->role == ROLE_NONE)
		return;
	if (e->role == ROLE_REFLECT) {
		struct lr_reflect_result x;

		if (!lr_reflector_collect(&e->refl, &x))
			lr_ctl_log("%s: test %s ended (%s): %llu frame%s and %llu marker%s reflected, forward %lld lost, "
				   "%llu reordered, %llu duplicates%s; the device refused %llu",
				   e->so->peer, e->what, why, (unsigned long long)x.packets, lr_s(x.packets),
				   (unsigned long long)x.eot, lr_s(x.eot),
				   (long long)x.lost, (unsigned long long)x.late, (unsigned long long)x.dups,
				   x.settled ? "" : " (not every end-of-test marker came)",
				   (unsigned long long)(x.dev_tx_dropped + x.dev_drv_drops));
		return;
	}
	if (e->role == ROLE_TX) {
		uint64_t sent = 0;

		if (e->tx_doc && json_object_object_get_ex(e->tx_doc, "tx", &tx) &&
		    json_object_object_get_ex(tx, "packets", &v))
			sent = json_object_get_uint64(v);
		lr_ctl_log("%s: test %s ended (%s): %llu frame%s sent", e->so->peer, e->what, why, (unsigned long long)sent,
			   lr_s(sent));
		return;
	}
	r = malloc(sizeof(*r));
	if (r && !lr_rx_collect(&e->rx, r))
		lr_ctl_log("%s: test %s ended (%s): %llu frame%s received, %lld lost, %llu reordered, %llu duplicates%s",
			   e->so->peer, e->what, why, (unsigned long long)r->packets, lr_s(r->packets), (long long)r->lost,
			   (unsigned long long)r->late, (unsigned long long)r->dups,
			   r->settled ? "" : " (not every end-of-test marker came)");
	free(r);
}

/* Ends what was prepared, whatever way the session ends: no XDP program, no tap, no thread is left. */
static void end_test(struct endpoint *e, const char *why)
{
	if (e->role == ROLE_TX && e->started && !e->finished && !lr_tx_done(e->tx) && !lr_stop)
		lr_stop = STOP_REQUESTED;
	finish_tx(e);
	metrics_end(e);
	log_end(e, why);
	if (e->role == ROLE_RX)
		lr_rx_end(&e->rx);
	if (e->role == ROLE_REFLECT) {
		/* detached first (frames pass from then on), then its maps and program freed */
		lr_reflector_stop(&e->refl);
		lr_reflector_close(&e->refl);
	}
	lr_tx_close(e->tx);
	e->tx = NULL;
	/* a sender that never started (or a session cut short): its hold goes too */
	lr_peer_gro_release(&e->pg);
	json_object_put(e->tx_doc);
	e->tx_doc = NULL;
	free(e->tx_summary);
	e->tx_summary = NULL;
	e->role = ROLE_NONE;
	e->started = e->finished = false;
}

/* The reply to @req, which arrived at @t2 on the stamping clock; @quit is set when the session ends. */
static struct json_object *dispatch(struct endpoint *e, struct json_object *req, uint64_t t2, bool *quit)
{
	const char *type = lr_msg_type(req);

	if (!strcmp(type, "hello") || !strcmp(type, "auth") || !lr_ctl_handshake_done(&e->hs))
		return lr_ctl_handshake_on(&e->hs, req, e->so->log ? e->so->peer : NULL, quit);
	if (!strcmp(type, "ping"))
		return lr_msg_new("pong");
	if (!strcmp(type, "clock"))
		return on_clock(req, t2);
	if (!strcmp(type, "prepare_rx"))
		return on_prepare_rx(e, req);
	if (!strcmp(type, "prepare_tx"))
		return on_prepare_tx(e, req);
	if (!strcmp(type, "prepare_reflect"))
		return on_prepare_reflect(e, req);
	if (!strcmp(type, "start"))
		return on_start(e, req);
	if (!strcmp(type, "progress"))
		return on_progress(e);
	if (!strcmp(type, "wait"))
		return on_wait(e, req);
	if (!strcmp(type, "stop"))
		return on_stop(e);
	if (!strcmp(type, "reset"))
		return on_reset(e);
	if (!strcmp(type, "quit")) {
		*quit = true;
		return lr_msg_new("bye");
	}
	return lr_msg_error(LR_EXIT_USAGE, "unknown message type '%.32s'", type);
}

/*
 * Why a signal stops the session, as it happened: the agent's main process gone (the session's
 * parent-death signal, which is SIGTERM whatever killed the parent), or a signal sent to it.
 */
static const char *stopping(const struct endpoint *e)
{
	if (e->so->parent && getppid() != e->so->parent)
		return "the agent's main process died";
	return lr_stop == SIGINT ? "the agent is stopping (SIGINT)" : "the agent is stopping (SIGTERM)";
}

/*
 * The last word of a test the endpoint ends on its own (@ret: -EINTR a signal, -ETIMEDOUT its
 * dead-man timer), in the controller's words: it is printed there as it is.
 */
static struct json_object *last_word(const struct endpoint *e, int ret)
{
	if (ret == -ETIMEDOUT)
		return lr_msg_error(LR_EXIT_RUNTIME, LR_CTL_ENDED "nothing from this side for %d ms",
				    e->so->deadman_ms);
	return lr_msg_error(LR_EXIT_RUNTIME, LR_CTL_ENDED "%s", stopping(e));
}

/*
 * Waits until a request starts to arrive (meanwhile, --metrics gets the counts once a second): 0;
 * or -ETIMEDOUT when the dead-man's @deadline_ms passed, -EINTR on a signal (lr_stop > 0), with
 * why in @why.
 */
static int await_request(int fd, struct endpoint *e, int64_t deadline_ms, char *why, size_t whylen)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = POLL_MS;

		metrics_tick(e);
		if (lr_stop > 0) {
			snprintf(why, whylen, "%s", stopping(e));
			return -EINTR;
		}
		if (e->so->deadman_ms) {
			left = deadline_ms - lr_now_ms();
			if (left <= 0) {
				snprintf(why, whylen, "no message from the controller for %d ms", e->so->deadman_ms);
				return -ETIMEDOUT;
			}
			if (left > POLL_MS)
				left = POLL_MS;
		}
		if (poll(&p, 1, (int)left) > 0)
			return 0;
	}
}

int lr_ctl_serve(int fd, const struct lr_ctl_serve_opts *so)
{
	struct endpoint *e = calloc(1, sizeof(*e));
	char why[128] = "quit";
	bool quit = false, heard = false;
	int code;

	if (!e)
		return LR_EXIT_RUNTIME;
	e->so = so ? so : &local_child;
	if (e->so->handshake) {
		/* the agent's parent said hello, checked the proof and said "connected": not again */
		e->hs = *e->so->handshake;
		heard = true;
	} else {
		lr_ctl_handshake_init(&e->hs, e->so->key, e->so->tx);
	}
	while (!quit) {
		struct json_object *req, *rep;
		char err[512];
		uint64_t t2;
		int ret;

		ret = await_request(fd, e, lr_now_ms() + e->so->deadman_ms, why, sizeof(why));
		if (ret) {
			/* best effort: the controller, if it still listens, learns why its test ended */
			rep = last_word(e, ret);
			lr_msg_send(fd, rep, POLL_MS, err, sizeof(err));
			json_object_put(rep);
			break;
		}
		ret = lr_msg_recv(fd, LR_MSG_MAX, BODY_MS, &req, err, sizeof(err));
		t2 = lr_now_bpf_ns();
		if (!heard && ret != -ECONNRESET) {
			/* bytes came: a controller (or something speaking out of turn), not a bare probe */
			heard = true;
			status(e, LR_CTL_STATUS_HEARD);
			elog(e, "%s: connected", e->so->peer ? e->so->peer : "?");
		}
		if (ret == -ECONNRESET) {
			snprintf(why, sizeof(why), "the controller closed the connection");
			break;	/* the controller is gone: end what it started */
		}
		if (ret == -EPROTOTYPE) {
			char said[sizeof(err)];

			snprintf(said, sizeof(said), "%s", err);
			snprintf(err, sizeof(err), "not a linerate controller (it sent %.200s)", said);
		}
		if (ret) {
			/* out of step, or another version: say why, then stop */
			rep = lr_msg_error(LR_EXIT_USAGE, "%s", err);
			snprintf(why, sizeof(why), "a message out of protocol");
			elog(e, "%s: %s: closed", e->so->peer ? e->so->peer : "?", err);
			quit = true;
		} else {
			rep = dispatch(e, req, t2, &quit);
			json_object_put(req);
		}
		/*
		 * A signal while the request ran (a wait, most often): the test was cut short, whatever
		 * the reply would say. A sender stopped by it finishes as on SIGINT, and its result
		 * would look like a test that ran to its end: the controller hears why instead.
		 */
		if (lr_stop > 0 && !quit) {
			json_object_put(rep);
			rep = last_word(e, -EINTR);
			snprintf(why, sizeof(why), "%s", stopping(e));
			quit = true;
		}
		/* the capture is in place before bye, so the controller may read it at once */
		if (quit && e->role != ROLE_NONE)
			end_test(e, why);
		/*
		 * And the agent knows the session is ending before bye leaves: a controller that
		 * connects again the moment it has bye (the matrix's next cell) is then held until the
		 * session is gone, not told "busy".
		 */
		if (quit)
			status(e, LR_CTL_STATUS_ENDING);
		if (!strcmp(lr_msg_type(rep), "clock"))
			json_object_object_add(rep, "t3", json_object_new_uint64(lr_now_bpf_ns()));
		ret = lr_msg_send(fd, rep, SEND_MS, err, sizeof(err));
		json_object_put(rep);
		if (ret) {
			snprintf(why, sizeof(why), "the controller stopped reading");
			break;
		}
	}
	/* tearing a test down takes a moment: a new controller waits for it rather than hear "busy" */
	status(e, LR_CTL_STATUS_ENDING);
	end_test(e, why);
	/* a controller that checked our proof and found it wrong leaves without a word: say so */
	lr_ctl_handshake_left(&e->hs, e->so->log ? e->so->peer : NULL);
	code = e->code;
	free(e);
	return code;
}
