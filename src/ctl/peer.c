/* SPDX-License-Identifier: MIT */
/*
 * send --peer: the agent's receiver (or, --reverse, its sender; or, --rtt, its reflector), the clocks
 * between the two ends, both reports.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "ctl/clock_window.h"
#include "ctl/ctl.h"
#include "ctl/peer.h"
#include "ctl/request.h"
#include "rx/report.h"
#include "rx/rx.h"
#include "summary/summary.h"
#include "sys/netdev.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/report.h"

#define SEND_PREFIX	"linerate send: "
#define EOT_WAIT_NS	(3 * 1000000000ULL)	/* after the sender's end: its markers and late frames */
#define LINGER_US	50000	/* after the markers: their repeats, and late frames of other queues */

struct lr_peer {
	const struct lr_send_opts *o;
	struct lr_ctl *c;
	char where[LR_HOSTPORT_MAX + 16];	/* " (agent HOST:PORT)" */
	struct lr_clock_window clock;	/* the agent's clock and ours */
	bool failed;
	char error[768];	/* why the far end's result is missing */
	/* the far end's result: a recv document (forward), a send document (reverse) or a reflect document (--rtt) */
	struct json_object *doc;
	char *summary;	/* reverse: the agent's sender summary */
	struct lr_rx_context x;	/* forward: the receiver's context and result */
	struct lr_rx_result r;
	struct lr_ctl_reflect f;	/* --rtt: the reflector's counts */
	bool have_result;
	struct json_object *json;	/* the "peer" object */
};

/* The far end failed: one line, once, and the reason kept for the JSON document. */
static void fail(struct lr_peer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct lr_peer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
	lr_fail(LR_EXIT_RUNTIME, "send", "%s", p->error);
}

/* The agent ended the test on its own (@err is its last word): true, said as it said it. */
static bool ended(struct lr_peer *p, const char *err)
{
	if (strncmp(err, LR_CTL_ENDED, strlen(LR_CTL_ENDED)))
		return false;
	fail(p, "--peer %s: %s", lr_ctl_agent(p->c), err);
	return true;
}

/* A call's failure (@ret, @err): the agent ended the test, answered an error, or is gone. */
static void call_failed(struct lr_peer *p, int ret, const char *what, const char *err)
{
	if (ended(p, err))
		return;
	if (ret > 0)
		fail(p, "%s refused %s: %s", lr_ctl_name(p->c), what, err);
	else
		fail(p, "%s failed (%s): %s", lr_ctl_name(p->c), what, err);
}

int lr_peer_open(const struct lr_send_opts *o, struct lr_peer **out)
{
	struct lr_auth_key key;
	struct lr_peer *p;
	char err[768];
	int ret;

	*out = NULL;
	if (lr_auth_init())
		return lr_fail(LR_EXIT_RUNTIME, "send", "libsodium cannot start (no source of randomness?)");
	if (o->token_file[0] && lr_auth_load(o->token_file, &key, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "send", "--token-file: %s", err);
	p = calloc(1, sizeof(*p));
	if (!p)
		return lr_fail(LR_EXIT_RUNTIME, "send", "out of memory");
	p->o = o;
	ret = lr_ctl_connect(o->peer, o->token_file[0] ? &key : NULL, &p->c, err, sizeof(err));
	if (ret) {
		free(p);
		return lr_fail(ret, "send", "--peer: %s", err);
	}
	snprintf(p->where, sizeof(p->where), " (agent %s)", lr_ctl_agent(p->c));
	*out = p;
	return 0;
}

bool lr_peer_failed(struct lr_peer *p)
{
	char err[512];

	if (!p->failed && lr_ctl_dead(p->c, err, sizeof(err)) && !ended(p, err))
		fail(p, "%s failed: %s", lr_ctl_name(p->c), err);
	return p->failed;
}

/*
 * Before the test: one clock (one boot), or the offset estimated; said in one line. @agent_rx: the
 * agent receives (forward), else this process does (reverse).
 */
static void clock_before(struct lr_peer *p, bool agent_rx)
{
	const struct lr_clock_est *b = agent_rx ? &p->clock.rx_before : &p->clock.tx_before;
	struct lr_ctl *failed;
	char err[512];

	if (lr_clock_window_begin(&p->clock, agent_rx ? p->c : NULL, agent_rx ? NULL : p->c,
				  p->o->clock == LR_CLOCK_ESTIMATE, &failed, err, sizeof(err)))
		fprintf(stderr, "linerate send: clock: no estimate of %s's clock (%s): latency will not be valid\n",
			lr_ctl_name(p->c), err);
	else if (p->clock.state == LR_CLOCK_ESTIMATED && !p->o->quiet)
		fprintf(stderr, "linerate send: clock: %s's clock minus ours is %lld ns, within %llu ns (best of %u exchanges)\n",
			lr_ctl_name(p->c), (long long)b->offset_ns, (unsigned long long)b->bound_ns, b->samples);
}

/* After the test: @r's latency put on one time line (nothing to do on one clock). */
static void clock_after(struct lr_peer *p, struct lr_rx_result *r)
{
	struct lr_clock_report rep;
	struct lr_ctl *failed;
	char err[512];

	if (p->clock.state == LR_CLOCK_SAME)
		return;
	if (lr_clock_window_end(&p->clock, &rep, &failed, err, sizeof(err)))
		lr_clock_apply(r, NULL);
	else
		lr_clock_apply(r, &rep);
}

/* The far end's interface: --peer-interface, else the one that holds --dst-ip (its address as text). */
static const char *peer_address(const struct lr_peer *p, char *buf, size_t len)
{
	if (p->o->peer_ifname[0])
		return "";
	inet_ntop(p->o->tx.dst_family, &p->o->tx.dst_ip, buf, (socklen_t)len);
	return buf;
}

/* The prepare's failure (@ret, @err): the agent's refusal, or the agent gone. */
static int prepare_failed(struct lr_peer *p, int ret, const char *err)
{
	return lr_fail(ret > 0 ? ret : LR_EXIT_RUNTIME, "send", "--peer: %s%s%s", ret > 0 ? "" : lr_ctl_name(p->c),
		       ret > 0 ? "" : ": ", err);
}

/*
 * --rtt: a reflector on the agent's interface that holds --dst-ip (or --peer-interface), sending
 * this side's round-trip frames back from now on. No clock exchange: the round trip is this
 * side's stamp and this side's arrival, one clock, whichever host the reflector is on (the
 * reflector's own one-way figure is meaningful on one host only, and says so).
 */
static int prepare_reflect(struct lr_peer *p)
{
	const struct lr_send_opts *o = p->o;
	struct lr_reflect_opts *fo = malloc(sizeof(*fo));
	struct lr_ctl_ready rd;
	char err[768], addr[INET6_ADDRSTRLEN];
	int ret;

	if (!fo)
		return lr_fail(LR_EXIT_RUNTIME, "send", "out of memory");
	lr_reflect_opts_default(fo);
	snprintf(fo->fx.ifname, sizeof(fo->fx.ifname), "%s", o->peer_ifname);
	snprintf(fo->netns, sizeof(fo->netns), "%s", o->peer_netns);
	fo->fx.dst_port = o->tx.dst_port;
	fo->fx.xdp_mode = LR_XDP_AUTO;
	ret = lr_ctl_prepare_reflect(p->c, fo, peer_address(p, addr, sizeof(addr)), &rd, err, sizeof(err));
	free(fo);
	if (ret)
		return prepare_failed(p, ret, err);
	if (!o->quiet)
		fprintf(stderr, "linerate send: reflector on %s%s: %s\n", rd.ifname, p->where, rd.line);
	ret = lr_ctl_keepalive(p->c);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "send", "cannot start the keepalive thread: %s", strerror(-ret));
	return 0;
}

int lr_peer_prepare(struct lr_peer *p)
{
	const struct lr_send_opts *o = p->o;
	struct lr_recv_opts *ro;
	struct lr_ctl_ready rd;
	char err[768], addr[INET6_ADDRSTRLEN];
	int ret;

	if (o->tx.rtt)
		return prepare_reflect(p);
	ro = malloc(sizeof(*ro));
	if (!ro)
		return lr_fail(LR_EXIT_RUNTIME, "send", "out of memory");
	clock_before(p, true);
	lr_recv_opts_default(ro);
	snprintf(ro->rx.ifname, sizeof(ro->rx.ifname), "%s", o->peer_ifname);
	snprintf(ro->netns, sizeof(ro->netns), "%s", o->peer_netns);
	ro->rx.dst_port = o->tx.dst_port;
	/* the receiver's clock minus ours: subtracted from every sample, loaded before the first frame */
	ro->rx.clock_offset_ns = lr_clock_window_offset(&p->clock);
	ret = lr_ctl_prepare_rx(p->c, ro, peer_address(p, addr, sizeof(addr)), &rd, err, sizeof(err));
	free(ro);
	if (ret)
		return prepare_failed(p, ret, err);
	if (!o->quiet)
		fprintf(stderr, "linerate send: receiver on %s%s: %s\n", rd.ifname, p->where, rd.line);
	ret = lr_ctl_keepalive(p->c);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "send", "cannot start the keepalive thread: %s", strerror(-ret));
	return 0;
}

/* The agent's quit: its test ended, everything detached, before this process reports. */
static void quit(struct lr_peer *p)
{
	char err[512];
	int ret = lr_ctl_quit(p->c, err, sizeof(err));

	if (ret)
		pr_info("linerate send: %s's quit: %s\n", lr_ctl_name(p->c), err);
}

/* --rtt: the reflector's counts, once this side has its reflected markers (or gave up on them). */
static void collect_reflect(struct lr_peer *p)
{
	char err[512];
	bool complete;
	int ret;

	ret = lr_ctl_wait_reflect(p->c, EOT_WAIT_NS, &complete, &p->f, &p->doc, err, sizeof(err));
	if (ret) {
		call_failed(p, ret, "the reflector's result", err);
		return;
	}
	p->have_result = true;
	quit(p);
}

void lr_peer_collect(struct lr_peer *p)
{
	struct json_object *doc;
	char err[512];
	bool complete;
	int ret;

	if (lr_peer_failed(p))
		return;
	if (p->o->tx.rtt) {
		collect_reflect(p);
		return;
	}
	ret = lr_ctl_wait(p->c, EOT_WAIT_NS, &complete, &p->r, &doc, err, sizeof(err));
	if (!ret && lr_rx_doc_get(doc, &p->x, &p->r, err, sizeof(err)))
		ret = -EBADMSG;
	if (ret) {
		call_failed(p, ret, "the receiver's result", err);
		return;
	}
	json_object_put(doc);
	clock_after(p, &p->r);
	snprintf(p->x.where, sizeof(p->x.where), "%s", p->where);
	/* its document again, with the latency now on one time line */
	p->doc = lr_rx_doc(&p->x, &p->r);
	p->have_result = true;
	quit(p);
}

struct json_object *lr_peer_json(struct lr_peer *p)
{
	struct json_object *host = lr_ctl_host_json(p->c);

	if (p->json)
		return p->json;
	p->json = json_object_new_object();
	json_object_object_add(p->json, "agent", json_object_new_string(lr_ctl_agent(p->c)));
	json_object_object_add(p->json, "host", host ? json_object_get(host) : NULL);
	json_object_object_add(p->json, "result", json_object_get(p->doc));
	json_object_object_add(p->json, "error", p->failed ? json_object_new_string(p->error) : NULL);
	return p->json;
}

/* --rtt: one line of what the reflector did, the forward direction as it saw it. */
static void report_reflect(const struct lr_peer *p)
{
	const struct lr_ctl_reflect *f = &p->f;

	if (!p->have_result) {
		fprintf(stderr, "  peer reflector%s: no result: %s\n", p->where, p->error);
		return;
	}
	fprintf(stderr, "  peer reflector: %llu frame%s and %llu marker%s reflected on %s%s, XDP %s; "
		"forward lost %lld%s, reordered %llu, duplicates %llu as it saw them; its device refused %llu\n",
		(unsigned long long)f->packets, lr_s(f->packets), (unsigned long long)f->eot_markers, lr_s(f->eot_markers),
		f->interface, p->where, f->mode,
		(long long)f->lost, f->settled ? "" : " (open gaps: not every flow's marker came)",
		(unsigned long long)f->reordered, (unsigned long long)f->duplicates,
		(unsigned long long)(f->dev_tx_dropped + f->dev_drv_drops));
}

int lr_peer_report(struct lr_peer *p)
{
	if (p->o->tx.rtt)
		report_reflect(p);
	else if (p->have_result)
		lr_recv_summary(stderr, &p->x, &p->r);
	else
		fprintf(stderr, "\nlinerate recv%s: no result: %s\n", p->where, p->error);
	return p->failed ? LR_EXIT_RUNTIME : LR_EXIT_OK;
}

static void on_signal(int sig)
{
	(void)sig;
	lr_stop = 1;
}

/* --reverse: what this side's receiver and the agent's sender need. */
struct reverse {
	struct lr_if ifc;
	struct lr_recv_opts ro;
	struct lr_rx rx;
	struct lr_rx_context x;
	struct lr_rx_result r;
	struct lr_send_opts t;
	uint64_t start_ns;
};

/* The agent's sender: this command's options, from the far end's interface to -i's address. */
static int reverse_prepare(struct lr_peer *p, struct reverse *v)
{
	const struct lr_send_opts *o = p->o;
	struct lr_ctl_ready rd;
	char err[768], addr[INET6_ADDRSTRLEN];
	int ret;

	v->t = *o;
	snprintf(v->t.tx.ifname, sizeof(v->t.tx.ifname), "%s", o->peer_ifname);
	snprintf(v->t.netns, sizeof(v->t.netns), "%s", o->peer_netns);
	if (lr_if_addr(&v->ifc, o->tx.family, &v->t.tx.dst_ip))
		return lr_fail(LR_EXIT_USAGE, "send", "--reverse: %s has no %s address for the agent to send to",
			       o->tx.ifname, o->tx.family == AF_INET6 ? "IPv6" : "IPv4");
	ret = lr_ctl_prepare_tx(p->c, &v->t, peer_address(p, addr, sizeof(addr)), false, &rd, err, sizeof(err));
	if (ret)
		return prepare_failed(p, ret, err);
	if (!o->quiet)
		fprintf(stderr, "linerate send: sender on %s%s: %s\n", rd.ifname, p->where, rd.line);
	return 0;
}

/* The agent's sender from start to end; a signal here stops it (its markers still go out). */
static void reverse_run(struct lr_peer *p)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct lr_ctl_progress pr;
	uint64_t last = 0;
	bool complete = false, stopped = false;
	char err[512], b1[32];
	int ret;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = lr_ctl_keepalive(p->c);
	if (ret) {
		fail(p, "cannot start the keepalive thread: %s", strerror(-ret));
		return;
	}
	ret = lr_ctl_start(p->c, 0, NULL, err, sizeof(err));
	if (ret) {
		call_failed(p, ret, "to start", err);
		return;
	}
	while (!complete) {
		if (lr_stop && !stopped) {
			stopped = true;
			ret = lr_ctl_stop(p->c, err, sizeof(err));
			if (ret) {
				call_failed(p, ret, "to stop", err);
				return;
			}
		}
		ret = lr_ctl_wait_tx(p->c, LR_CTL_WAIT_MAX_MS, &complete, &p->doc, &p->summary, err, sizeof(err));
		if (ret) {
			call_failed(p, ret, "the sender's result", err);
			return;
		}
		if (complete || p->o->quiet || lr_ctl_progress(p->c, &pr, err, sizeof(err)))
			continue;
		fprintf(stderr, "peer tx %s pps  total %llu\n", lr_fmt_si((double)(pr.packets - last), b1, sizeof(b1)),
			(unsigned long long)pr.packets);
		last = pr.packets;
	}
}

/* This side's receiver: the markers waited for, its counts collected, its clock put on the agent's line. */
static int reverse_collect(struct lr_peer *p, struct reverse *v)
{
	uint64_t end = lr_now_ns() + EOT_WAIT_NS;
	int ret;

	while (!p->failed && !lr_rx_complete(&v->rx) && lr_now_ns() < end)
		usleep(5000);
	usleep(LINGER_US);
	v->rx.ops->stop(&v->rx);
	ret = lr_rx_collect(&v->rx, &v->r);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "send", "cannot read the receiver's counters: %s", strerror(-ret));
	lr_rx_context_of(&v->x, &v->rx, p->o->tx.ifname);
	v->x.secs = (double)(lr_now_ns() - v->start_ns) / 1e9;
	if (!p->failed)
		clock_after(p, &v->r);
	return 0;
}

/* Both summaries, the agent's sender first; the recv document with "peer". */
static int reverse_report(struct lr_peer *p, struct reverse *v)
{
	struct json_object *root;
	char err[512];
	int ret = p->failed ? LR_EXIT_RUNTIME : LR_EXIT_OK;

	/* the agent's own lines, said to be the agent's */
	if (p->summary && !strncmp(p->summary, SEND_PREFIX, strlen(SEND_PREFIX)))
		fprintf(stderr, "\nlinerate send%s: %s", p->where, p->summary + strlen(SEND_PREFIX));
	else if (p->summary)
		fprintf(stderr, "\n%s", p->summary);
	else
		fprintf(stderr, "\nlinerate send%s: no result: %s\n", p->where, p->error);
	/* the far end did not finish its test: this document says so too, not only its "peer" */
	if (p->failed)
		snprintf(v->x.error, sizeof(v->x.error), "%.*s", (int)sizeof(v->x.error) - 1, p->error);
	lr_recv_summary(stderr, &v->x, &v->r);
	if (!p->o->json[0])
		return ret;
	root = lr_rx_doc(&v->x, &v->r);
	json_object_object_add(root, "peer", json_object_get(lr_peer_json(p)));
	if (lr_json_write(root, p->o->json, err, sizeof(err)))
		ret = lr_fail(LR_EXIT_RUNTIME, "send", "%s", err);
	json_object_put(root);
	return ret;
}

int lr_peer_reverse(struct lr_peer *p)
{
	struct reverse *v = calloc(1, sizeof(*v));
	char err[LR_RX_LINE_MAX], line[LR_RX_LINE_MAX];
	int ret;

	if (!v)
		return lr_fail(LR_EXIT_RUNTIME, "send", "out of memory");
	ret = lr_if_open(p->o->tx.ifname, &v->ifc, err, sizeof(err));
	if (ret) {
		free(v);
		return lr_fail(LR_EXIT_USAGE, "send", "%s", err);
	}
	clock_before(p, false);
	lr_recv_opts_default(&v->ro);
	snprintf(v->ro.rx.ifname, sizeof(v->ro.rx.ifname), "%s", p->o->tx.ifname);
	v->ro.rx.dst_port = p->o->tx.dst_port;
	v->ro.quiet = true;
	v->ro.verbose = p->o->verbose;
	/* this side's clock minus the agent's, which stamps: the estimate's offset negated */
	v->ro.rx.clock_offset_ns = lr_clock_window_offset(&p->clock);
	ret = lr_rx_begin(&v->ro.rx, &v->rx, line, sizeof(line), err, sizeof(err));
	if (ret) {
		free(v);
		return lr_fail(ret, "send", "--reverse: %s", err);
	}
	v->start_ns = lr_now_ns();
	if (!p->o->quiet)
		fprintf(stderr, "linerate send: receiver on %s: %s\n", p->o->tx.ifname, line);
	ret = reverse_prepare(p, v);
	if (!ret) {
		reverse_run(p);
		ret = reverse_collect(p, v);
		if (!p->failed)
			quit(p);
		if (!ret)
			ret = reverse_report(p, v);
	}
	lr_rx_end(&v->rx);
	free(v);
	return ret;
}

void lr_peer_close(struct lr_peer *p)
{
	if (!p)
		return;
	lr_ctl_close(p->c);
	json_object_put(p->doc);
	json_object_put(p->json);
	free(p->summary);
	free(p);
}
