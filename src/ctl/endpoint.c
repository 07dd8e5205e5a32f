/* SPDX-License-Identifier: MIT */
/*
 * The endpoint's side of the agent protocol: a receiver, a sender or a reflector run on a
 * controller's requests, ended by quit, by the stream's end, by the dead-man timer or by a signal,
 * whichever comes first.
 */
#define _GNU_SOURCE	/* open_memstream() */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/ctl.h"
#include "ctl/handshake.h"
#include "ctl/msg.h"
#include "ctl/endpoint_metrics.h"
#include "ctl/policy.h"
#include "ctl/request.h"
#include "rx/reflect.h"
#include "rx/rx.h"
#include "session/local.h"
#include "util/clock.h"
#include "util/log.h"

#define SEND_MS		5000
#define POLL_MS		100	/* between requests: how soon a signal or the dead-man's deadline is seen */
#define BODY_MS		2000	/* the rest of a message once its first byte is in */
#define STOP_REQUESTED	LR_LOCAL_STOP_REQUESTED


struct endpoint {
	const struct lr_ctl_serve_opts *so;
	struct lr_ctl_handshake hs;	/* hello and auth, here or done by the agent's parent */
	char what[128];	/* "rx on ul0 in h2": the test, for logs and busy replies */
	struct lr_local l;	/* the test itself: its role, its receiver, sender or reflector */
	/* a request's options, parsed; their specs go to the local endpoint */
	struct lr_recv_opts ro;
	struct lr_send_opts to;
	struct lr_reflect_opts fo;	/* send --peer --rtt's far end */
	int code;	/* why the test could not run, for the exit code */
	/* the agent's --metrics: what was published last, and when and what the counts were last read */
	struct lr_endpoint_metrics m;
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

	m = lr_ctl_check_netns(e->so, netns);
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
	m = lr_ctl_check_iface(e->so, ifname);
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

/* "ready" for a prepared test; the agent's log and busy replies learn what runs. */
static struct json_object *ready(struct endpoint *e, const char *line, const char *ifname)
{
	struct json_object *m = lr_msg_new("ready");
	char what[224];

	lr_endpoint_metrics_begin(&e->m, &e->l, e->what, ifname);
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
	char err[LR_RX_LINE_MAX], address[LR_CTL_ADDR_TEXT];
	struct lr_err le;
	int ret;

	/* before the parse: the options of a running receiver are read from e->ro */
	if (e->l.role != LR_LOCAL_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "a test is prepared already (%s)", e->what);
	if (lr_ctl_prepare_rx_parse(req, &e->ro, address, err, sizeof(err)))
		return refused(e, lr_msg_error(LR_EXIT_USAGE, "%s", err), LR_EXIT_USAGE);
	e->ro.quiet = true;
	e->ro.verbose = lr_log_level();
	m = lr_ctl_check_capture(e->so, &e->ro.rx);
	if (m)
		return refused(e, m, LR_EXIT_USAGE);
	m = prepare_common(e, "rx", e->ro.netns, e->ro.rx.ifname, address, false);
	if (m)
		return refused(e, m, LR_EXIT_USAGE);
	ret = lr_local_prepare_rx(&e->l, &e->ro.rx, &le);
	if (ret)
		return refused(e, lr_msg_error(ret, "%s", le.msg), ret);
	return ready(e, e->l.line, e->ro.rx.ifname);
}

/*
 * A reflector (send --peer --rtt's far end): reflect's XDP program on the interface, sending
 * round-trip frames back from now on, as a receiver counts from its prepare.
 */
static struct json_object *on_prepare_reflect(struct endpoint *e, struct json_object *req)
{
	struct json_object *m;
	char err[LR_RX_LINE_MAX], address[LR_CTL_ADDR_TEXT];
	struct lr_err le;
	int ret;

	/* before the parse: the options of a running reflector are read from e->fo */
	if (e->l.role != LR_LOCAL_NONE)
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
	ret = lr_local_prepare_reflect(&e->l, &e->fo.fx, &le);
	if (ret)
		return refused(e, lr_msg_error(ret, "%s", le.msg), ret);
	return ready(e, e->l.line, e->fo.fx.ifname);
}

static void end_test(struct endpoint *e, const char *why);

/* A line of the sender's lifecycle (the peer's GRO held, then put back) for the agent's log. */
static void on_note(void *arg, enum lr_local_note kind, const char *line)
{
	const struct endpoint *e = arg;

	/* the log keeps the GRO lines; a replay's notice is not for it (the sender's counts say it) */
	if (kind == LR_LOCAL_NOTE_NOTICE)
		return;
	elog(e, "%s: %s", e->so->peer, line);
}

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
	if (e->l.role == LR_LOCAL_TX && e->l.finished) {
		end_test(e, "finished");
		if (lr_stop == STOP_REQUESTED)
			lr_stop = 0;
	}
	if (e->l.role != LR_LOCAL_NONE)
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
	ret = lr_local_prepare_tx(&e->l, &e->to.tx, &le);
	if (!ret)
		ret = lr_local_open_tx(&e->l, &le);
	if (ret)
		return refused(e, tx_error(&le), ret);
	return ready(e, e->l.line, e->to.tx.ifname);
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
	if (e->l.role == LR_LOCAL_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "nothing prepared: prepare_rx, prepare_tx or prepare_reflect first");
	if (e->l.started)
		return lr_msg_error(LR_EXIT_USAGE, "started already");
	now = lr_now_bpf_ns();
	if (e->l.role == LR_LOCAL_RX && at)
		return lr_msg_error(LR_EXIT_USAGE, "start.at_ns: a receiver counts from prepare_rx: give 0");
	if (e->l.role == LR_LOCAL_REFLECT && at)
		return lr_msg_error(LR_EXIT_USAGE, "start.at_ns: a reflector reflects from prepare_reflect: give 0");
	if (at > now + LR_CTL_START_AHEAD_NS)
		return lr_msg_error(LR_EXIT_USAGE, "start.at_ns: %.3f s ahead of this host's clock: at most %.0f s",
				    (double)(at - now) / 1e9, (double)LR_CTL_START_AHEAD_NS / 1e9);
	if (lr_local_start(&e->l, at, &go, &le))
		return tx_error(&le);
	if (e->l.role == LR_LOCAL_TX) {
		late = at && go > at ? go - at : 0;
		if (at)
			elog(e, "%s: %s started, %.1f us after the time asked", e->so->peer, e->what, (double)late / 1e3);
		else
			elog(e, "%s: %s started", e->so->peer, e->what);
	}
	m = lr_msg_new("started");
	json_object_object_add(m, "at_ns", json_object_new_uint64(go));
	json_object_object_add(m, "late_ns", json_object_new_uint64(late));
	return m;
}

static const char *role_name(enum lr_local_role r)
{
	return r == LR_LOCAL_RX ? "receiver" : r == LR_LOCAL_TX ? "sender" : "reflector";
}

/* NULL when the role's test can take the request, else the error to answer with. */
static struct json_object *not_ready(const struct endpoint *e, enum lr_local_role want)
{
	const char *gone;

	if (e->l.role == LR_LOCAL_NONE)
		return lr_msg_error(LR_EXIT_USAGE, "nothing prepared: %s first",
				    want == LR_LOCAL_TX	 ? "prepare_tx" :
				    want == LR_LOCAL_REFLECT ? "prepare_reflect" :
							   "prepare_rx");
	if (want != LR_LOCAL_NONE && e->l.role != want)
		return lr_msg_error(LR_EXIT_USAGE, "the test prepared is a %s", role_name(e->l.role));
	gone = lr_local_gone(&e->l);
	if (gone)
		return lr_msg_error(LR_EXIT_RUNTIME, "interface %s disappeared (deleted, or its veth peer's namespace went away)",
				    gone);
	return NULL;
}

static struct json_object *on_progress(struct endpoint *e)
{
	struct json_object *m = not_ready(e, LR_LOCAL_NONE), *o;
	struct lr_local_counts c;
	struct lr_err le;

	if (m)
		return m;
	if (lr_local_counts(&e->l, &c, &le))
		return lr_msg_error(le.code, "%s", le.msg);
	o = json_object_new_object();
	json_object_object_add(o, "packets", json_object_new_int64((int64_t)c.packets));
	if (e->l.role == LR_LOCAL_REFLECT) {
		json_object_object_add(o, "eot_markers", json_object_new_int64((int64_t)c.eot_markers));
		json_object_object_add(o, "foreign", json_object_new_int64((int64_t)c.foreign));
		json_object_object_add(o, "refused", json_object_new_int64((int64_t)c.refused));
	} else if (e->l.role == LR_LOCAL_TX) {
		json_object_object_add(o, "queued", json_object_new_int64((int64_t)c.queued));
	} else {
		json_object_object_add(o, "lost", json_object_new_int64(c.lost));
		json_object_object_add(o, "reordered", json_object_new_int64((int64_t)c.reordered));
		json_object_object_add(o, "duplicates", json_object_new_int64((int64_t)c.duplicates));
		json_object_object_add(o, "foreign", json_object_new_int64((int64_t)c.foreign));
	}
	lr_endpoint_metrics_read(&e->m, &e->l);
	m = lr_msg_new("progress");
	json_object_object_add(m, e->l.role == LR_LOCAL_TX ? "tx" : e->l.role == LR_LOCAL_REFLECT ? "reflect" : "rx", o);
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
	struct json_object *m = not_ready(e, LR_LOCAL_NONE), *doc;
	struct lr_err le;
	unsigned int ms;
	char err[256];
	bool complete;

	if (m)
		return m;
	if (lr_ctl_wait_parse(req, &ms, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	if (lr_local_wait(&e->l, (uint64_t)ms * 1000000, &complete, &le))
		return lr_msg_error(le.code, "%s", le.msg);
	if (e->l.role == LR_LOCAL_TX) {
		if (complete)
			lr_endpoint_metrics_tx_result(&e->m, &e->l);
		return result(complete, complete ? json_object_get(e->l.tx_doc) : NULL,
			      complete ? e->l.tx_summary : "");
	}
	if (e->l.role == LR_LOCAL_REFLECT) {
		struct lr_reflect_result x;

		doc = lr_local_reflect_doc(&e->l, &x, &le);
		if (doc)
			lr_endpoint_metrics_reflect(&e->m, &x, true);
	} else {
		struct lr_rx_result *r = malloc(sizeof(*r));

		if (!r)
			return lr_msg_error(LR_EXIT_RUNTIME, "out of memory");
		doc = lr_local_rx_doc(&e->l, r, &le);
		if (doc)
			lr_endpoint_metrics_rx(&e->m, r, true);
		free(r);
	}
	return doc ? result(complete, doc, "") : lr_msg_error(le.code, "%s", le.msg);
}

static struct json_object *on_stop(struct endpoint *e)
{
	struct json_object *m = not_ready(e, LR_LOCAL_NONE);

	if (m)
		return m;
	lr_local_stop(&e->l);
	return lr_msg_new("ok");
}

static struct json_object *on_reset(struct endpoint *e)
{
	struct json_object *m = not_ready(e, LR_LOCAL_RX);

	if (m)
		return m;
	lr_local_reset(&e->l);
	lr_endpoint_metrics_reset(&e->m, &e->l);
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

	if (!e->so->log || e->l.role == LR_LOCAL_NONE)
		return;
	if (e->l.role == LR_LOCAL_REFLECT) {
		struct lr_reflect_result x;

		if (!lr_reflector_collect(&e->l.refl, &x))
			lr_ctl_log("%s: test %s ended (%s): %llu frame%s and %llu marker%s reflected, forward %lld lost, "
				   "%llu reordered, %llu duplicates%s; the device refused %llu",
				   e->so->peer, e->what, why, (unsigned long long)x.packets, lr_s(x.packets),
				   (unsigned long long)x.eot, lr_s(x.eot),
				   (long long)x.lost, (unsigned long long)x.late, (unsigned long long)x.dups,
				   x.settled ? "" : " (not every end-of-test marker came)",
				   (unsigned long long)(x.dev_tx_dropped + x.dev_drv_drops));
		return;
	}
	if (e->l.role == LR_LOCAL_TX) {
		uint64_t sent = 0;

		if (e->l.tx_doc && json_object_object_get_ex(e->l.tx_doc, "tx", &tx) &&
		    json_object_object_get_ex(tx, "packets", &v))
			sent = json_object_get_uint64(v);
		lr_ctl_log("%s: test %s ended (%s): %llu frame%s sent", e->so->peer, e->what, why, (unsigned long long)sent,
			   lr_s(sent));
		return;
	}
	r = malloc(sizeof(*r));
	if (r && !lr_rx_collect(&e->l.rx, r))
		lr_ctl_log("%s: test %s ended (%s): %llu frame%s received, %lld lost, %llu reordered, %llu duplicates%s",
			   e->so->peer, e->what, why, (unsigned long long)r->packets, lr_s(r->packets), (long long)r->lost,
			   (unsigned long long)r->late, (unsigned long long)r->dups,
			   r->settled ? "" : " (not every end-of-test marker came)");
	free(r);
}

/* Ends what was prepared, whatever way the session ends: no XDP program, no tap, no thread is left. */
static void end_test(struct endpoint *e, const char *why)
{
	lr_local_finish(&e->l);
	lr_endpoint_metrics_end(&e->m, &e->l);
	log_end(e, why);
	lr_local_end(&e->l);
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

		lr_endpoint_metrics_tick(&e->m, &e->l);
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
	lr_local_init(&e->l, on_note, e);
	e->m.shm = e->so->metrics;
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
		if (quit && e->l.role != LR_LOCAL_NONE)
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
