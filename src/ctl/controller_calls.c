/* SPDX-License-Identifier: MIT */
/* The controller's calls after hello: prepare, start, stop, progress, the results' waits, the clock. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/controller_impl.h"
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "ctl/request.h"
#include "util/clock.h"
#include "util/jfield.h"

#define PREPARE_MS	15000	/* entering a container's namespace may ask its CLI (up to 10 s), ARP 1 s */
#define CALL_MS		5000	/* start (workers pinned), stop, reset, progress, quit (the capture renamed) */
#define WAIT_EXTRA_MS	1000	/* beyond the wait asked for: the endpoint's linger and collection */

static const struct lr_jfield ready_fields[] = {
	{ "line", LR_J_STR, offsetof(struct lr_ctl_ready, line), .size = sizeof(((struct lr_ctl_ready *)0)->line) },
	{ "interface", LR_J_STR, offsetof(struct lr_ctl_ready, ifname), .size = sizeof(((struct lr_ctl_ready *)0)->ifname),
	  .min = 1 },
	{ NULL }
};

static int prepare(struct lr_ctl *c, struct json_object *req, struct lr_ctl_ready *rd, char *err, size_t errlen)
{
	struct json_object *m;
	int ret;

	ret = lr_ctl_call(c, req, "ready", PREPARE_MS, &m, err, errlen);
	if (ret)
		return ret;
	ret = lr_ctl_reply_get(c, m, ready_fields, rd, err, errlen);
	json_object_put(m);
	return ret;
}

int lr_ctl_prepare_rx(struct lr_ctl *c, const struct lr_recv_opts *o, const char *address,
		      struct lr_ctl_ready *rd, char *err, size_t errlen)
{
	return prepare(c, lr_ctl_prepare_rx_msg(o, address), rd, err, errlen);
}

int lr_ctl_prepare_tx(struct lr_ctl *c, const struct lr_send_opts *o, const char *address, bool route,
		      struct lr_ctl_ready *rd, char *err, size_t errlen)
{
	return prepare(c, lr_ctl_prepare_tx_msg(o, address, route), rd, err, errlen);
}

int lr_ctl_prepare_reflect(struct lr_ctl *c, const struct lr_reflect_opts *o, const char *address,
			   struct lr_ctl_ready *rd, char *err, size_t errlen)
{
	return prepare(c, lr_ctl_prepare_reflect_msg(o, address), rd, err, errlen);
}

static const struct lr_jfield started_fields[] = {
	{ "at_ns", LR_J_U64, offsetof(struct lr_ctl_started, at_ns) },
	{ "late_ns", LR_J_U64, offsetof(struct lr_ctl_started, late_ns) },
	{ NULL }
};

int lr_ctl_start(struct lr_ctl *c, uint64_t at_ns, struct lr_ctl_started *st, char *err, size_t errlen)
{
	struct lr_ctl_started dummy;
	struct json_object *m;
	int ret;

	/* the endpoint may wait up to LR_CTL_START_AHEAD_NS before it replies */
	ret = lr_ctl_call(c, lr_ctl_start_msg(at_ns), "started", CALL_MS + (int)(LR_CTL_START_AHEAD_NS / 1000000), &m,
			  err, errlen);
	if (ret)
		return ret;
	ret = lr_ctl_reply_get(c, m, started_fields, st ? st : &dummy, err, errlen);
	json_object_put(m);
	return ret;
}

int lr_ctl_stop(struct lr_ctl *c, char *err, size_t errlen)
{
	return lr_ctl_call(c, lr_msg_new("stop"), "ok", CALL_MS, NULL, err, errlen);
}

int lr_ctl_reset(struct lr_ctl *c, char *err, size_t errlen)
{
	return lr_ctl_call(c, lr_msg_new("reset"), "ok", CALL_MS, NULL, err, errlen);
}

int lr_ctl_ping(struct lr_ctl *c, char *err, size_t errlen)
{
	return lr_ctl_call(c, lr_msg_new("ping"), "pong", LR_CTL_REPLY_MS, NULL, err, errlen);
}

int lr_ctl_quit(struct lr_ctl *c, char *err, size_t errlen)
{
	return lr_ctl_call(c, lr_msg_new("quit"), "bye", CALL_MS, NULL, err, errlen);
}

#define P(k, t, m)	{ k, t, offsetof(struct lr_ctl_progress, m) }

static const struct lr_jfield progress_tx_fields[] = {
	P("packets", LR_J_U64, packets),
	P("queued", LR_J_U64, queued),
	{ NULL }
};

static const struct lr_jfield progress_rx_fields[] = {
	P("packets", LR_J_U64, packets),
	P("lost", LR_J_I64, lost),
	P("reordered", LR_J_U64, reordered),
	P("duplicates", LR_J_U64, duplicates),
	P("foreign", LR_J_U64, foreign),
	{ NULL }
};

static const struct lr_jfield progress_reflect_fields[] = {
	P("packets", LR_J_U64, packets),
	P("eot_markers", LR_J_U64, eot_markers),
	P("foreign", LR_J_U64, foreign),
	P("refused", LR_J_U64, refused),
	{ NULL }
};

static const struct lr_jfield progress_tx[] = { { "tx", LR_J_OBJ, 0, .sub = progress_tx_fields }, { NULL } };
static const struct lr_jfield progress_rx[] = { { "rx", LR_J_OBJ, 0, .sub = progress_rx_fields }, { NULL } };
static const struct lr_jfield progress_reflect[] = {
	{ "reflect", LR_J_OBJ, 0, .sub = progress_reflect_fields },
	{ NULL }
};

int lr_ctl_progress(struct lr_ctl *c, struct lr_ctl_progress *p, char *err, size_t errlen)
{
	struct json_object *m, *v;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = lr_ctl_call(c, lr_msg_new("progress"), "progress", LR_CTL_REPLY_MS, &m, err, errlen);
	if (ret)
		return ret;
	p->tx = json_object_object_get_ex(m, "tx", &v);
	p->reflect = !p->tx && json_object_object_get_ex(m, "reflect", &v);
	ret = lr_ctl_reply_get(c, m, p->tx ? progress_tx : p->reflect ? progress_reflect : progress_rx, p, err, errlen);
	json_object_put(m);
	return ret;
}

/* A result reply: complete, the document (null, or an object) and the summary lines. */
struct wait_reply {
	bool complete;
	struct json_object *doc;
	char *summary;
};

static int doc_get(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	struct wait_reply *w = base;

	if (v && !json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "%s: expected an object or null", path);
		return -EINVAL;
	}
	w->doc = json_object_get(v);
	return 0;
}

static int summary_get(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	struct wait_reply *w = base;

	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "%s: expected a string", path);
		return -EINVAL;
	}
	w->summary = strdup(json_object_get_string(v));
	return w->summary ? 0 : -ENOMEM;
}

static const struct lr_jfield result_fields[] = {
	{ "complete", LR_J_BOOL, offsetof(struct wait_reply, complete) },
	{ "document", LR_J_CUSTOM, .get = doc_get },
	{ "summary", LR_J_CUSTOM, .get = summary_get },
	{ NULL }
};

/* One wait of @ms (at most LR_CTL_WAIT_MAX_MS): its reply in @w (the caller puts doc, frees summary). */
static int wait_once(struct lr_ctl *c, unsigned int ms, struct wait_reply *w, char *err, size_t errlen)
{
	struct json_object *req = lr_msg_new("wait"), *m;
	int ret;

	memset(w, 0, sizeof(*w));
	json_object_object_add(req, "timeout_ms", json_object_new_int64(ms));
	ret = lr_ctl_call(c, req, "result", (int)(ms + WAIT_EXTRA_MS), &m, err, errlen);
	if (ret)
		return ret;
	ret = lr_ctl_reply_get(c, m, result_fields, w, err, errlen);
	json_object_put(m);
	if (ret) {
		json_object_put(w->doc);
		free(w->summary);
		memset(w, 0, sizeof(*w));
	}
	return ret;
}

/*
 * wait until the endpoint says complete or @timeout_ns passed, each answer's document read by
 * @get into @out (a receiver's or a reflector's, @what in the message when there is none)
 */
static int wait_doc(struct lr_ctl *c, uint64_t timeout_ns, bool *complete, const char *what,
		    int (*get)(struct json_object *doc, void *out, char *err, size_t errlen), void *out,
		    struct json_object **doc, char *err, size_t errlen)
{
	uint64_t end = lr_now_ns() + timeout_ns;
	struct wait_reply w;
	int ret;

	for (;;) {
		uint64_t now = lr_now_ns(), left_ms = now < end ? (end - now + 999999) / 1000000 : 0;

		ret = wait_once(c, left_ms > LR_CTL_WAIT_MAX_MS ? LR_CTL_WAIT_MAX_MS : (unsigned int)left_ms, &w, err,
				errlen);
		if (ret)
			return ret;
		free(w.summary);
		if (!w.doc)
			snprintf(err, errlen, "result.document: null, where a %s's result belongs", what);
		if (!w.doc || get(w.doc, out, err, errlen)) {
			json_object_put(w.doc);
			return lr_ctl_broken(c, err);
		}
		*complete = w.complete;
		if (w.complete || lr_now_ns() >= end)
			break;
		json_object_put(w.doc);
	}
	if (doc)
		*doc = w.doc;
	else
		json_object_put(w.doc);
	return 0;
}

static int rx_get(struct json_object *doc, void *out, char *err, size_t errlen)
{
	return lr_rx_result_get(doc, out, err, errlen);
}

int lr_ctl_wait(struct lr_ctl *c, uint64_t timeout_ns, bool *complete, struct lr_rx_result *r,
		struct json_object **doc, char *err, size_t errlen)
{
	return wait_doc(c, timeout_ns, complete, "receiver", rx_get, r, doc, err, errlen);
}

int lr_ctl_wait_tx(struct lr_ctl *c, unsigned int timeout_ms, bool *complete, struct json_object **doc,
		   char **summary, char *err, size_t errlen)
{
	struct wait_reply w;
	int ret;

	*doc = NULL;
	*summary = NULL;
	ret = wait_once(c, timeout_ms > LR_CTL_WAIT_MAX_MS ? LR_CTL_WAIT_MAX_MS : timeout_ms, &w, err, errlen);
	if (ret)
		return ret;
	*complete = w.complete;
	if (w.complete && !w.doc) {
		free(w.summary);
		snprintf(err, errlen, "result.document: null, where a finished sender's document belongs");
		return lr_ctl_broken(c, err);
	}
	if (!w.complete) {
		/* callers poll until complete: what an unfinished sender said is not theirs to free */
		json_object_put(w.doc);
		free(w.summary);
		return 0;
	}
	*doc = w.doc;
	*summary = w.summary;
	return 0;
}

/* A reflector's result document: `linerate reflect --json`'s (src/rx/reflect.c, lr_reflect_result_put()). */
#define R(k, t, m)	{ k, t, offsetof(struct lr_ctl_reflect, m) }
#define RSTR(k, m) \
	{ k, LR_J_STR, offsetof(struct lr_ctl_reflect, m), .size = sizeof(((struct lr_ctl_reflect *)0)->m) }

static const struct lr_jfield reflect_forward_fields[] = {
	{ "sent", LR_J_U64_NULL, offsetof(struct lr_ctl_reflect, sent), offsetof(struct lr_ctl_reflect, have_sent) },
	R("received", LR_J_U64, received),
	R("lost", LR_J_I64, lost),
	R("reordered", LR_J_U64, reordered),
	R("duplicates", LR_J_U64, duplicates),
	{ NULL }
};

static const struct lr_jfield reflect_device_fields[] = {
	R("tx_packets", LR_J_U64, dev_tx_packets),
	R("tx_dropped", LR_J_U64, dev_tx_dropped),
	R("driver_drops", LR_J_U64, dev_drv_drops),
	{ NULL }
};

static const struct lr_jfield reflect_latency_fields[] = {
	R("count", LR_J_U64, lat_count),
	R("min", LR_J_U64, lat_min),
	R("p50", LR_J_U64, lat_p50),
	R("p99", LR_J_U64, lat_p99),
	R("max", LR_J_U64, lat_max),
	RSTR("clock", lat_clock),
	{ NULL }
};

static const struct lr_jfield reflect_fields[] = {
	RSTR("mode", mode),
	R("packets", LR_J_U64, packets),
	R("bytes", LR_J_U64, bytes),
	R("eot_markers", LR_J_U64, eot_markers),
	R("foreign", LR_J_U64, foreign),
	R("bad_flow", LR_J_U64, bad_flow),
	R("flows", LR_J_UINT, flows),
	R("flows_eot", LR_J_UINT, flows_eot),
	R("tail_settled", LR_J_BOOL, settled),
	{ "forward", LR_J_OBJ, 0, .sub = reflect_forward_fields },
	{ "device", LR_J_OBJ, 0, .sub = reflect_device_fields },
	{ "forward_latency_ns", LR_J_OBJ, 0, .sub = reflect_latency_fields },
	{ NULL }
};

/* the document's own keys beside these (command, schema, version) are checked by name below or not at all */
static const struct lr_jfield reflect_doc_fields[] = {
	{ "interface", LR_J_STR, offsetof(struct lr_ctl_reflect, interface),
	  .size = sizeof(((struct lr_ctl_reflect *)0)->interface), .min = 1 },
	R("duration_s", LR_J_DOUBLE, duration_s),
	{ "reflect", LR_J_OBJ, 0, .sub = reflect_fields },
	{ NULL }
};

/* @doc as a reflector's result: 0, or -EINVAL with "result.document.KEY: why" in @err. */
static int reflect_result_get(struct json_object *doc, struct lr_ctl_reflect *r, char *err, size_t errlen)
{
	struct json_object *v;

	memset(r, 0, sizeof(*r));
	if (!json_object_object_get_ex(doc, "command", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "reflect")) {
		snprintf(err, errlen, "result.document.command: not \"reflect\", where a reflector's result belongs");
		return -EINVAL;
	}
	return lr_jfield_get(doc, reflect_doc_fields, r, "result.document", false, err, errlen);
}

static int reflect_get(struct json_object *doc, void *out, char *err, size_t errlen)
{
	return reflect_result_get(doc, out, err, errlen);
}

int lr_ctl_wait_reflect(struct lr_ctl *c, uint64_t timeout_ns, bool *complete, struct lr_ctl_reflect *r,
			struct json_object **doc, char *err, size_t errlen)
{
	return wait_doc(c, timeout_ns, complete, "reflector", reflect_get, r, doc, err, errlen);
}

struct clock_reply {
	uint64_t t1, t2, t3;
};

static const struct lr_jfield clock_fields[] = {
	{ "t1", LR_J_U64, offsetof(struct clock_reply, t1) },
	{ "t2", LR_J_U64, offsetof(struct clock_reply, t2) },
	{ "t3", LR_J_U64, offsetof(struct clock_reply, t3) },
	{ NULL }
};

int lr_ctl_clock(struct lr_ctl *c, struct lr_clock_sample *s, char *err, size_t errlen)
{
	struct json_object *req = lr_msg_new("clock"), *m;
	struct clock_reply r;
	int ret;

	pthread_mutex_lock(&c->lock);
	/* t1 as late and t4 as early as can be: what lies outside them only widens the bound */
	s->t1 = lr_now_bpf_ns();
	json_object_object_add(req, "t1", json_object_new_uint64(s->t1));
	ret = lr_ctl_exchange(c, req, LR_CTL_REPLY_MS, &m, err, errlen);
	s->t4 = lr_now_bpf_ns();
	if (!ret)
		ret = lr_ctl_expect(c, m, "clock", "clock", &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	ret = lr_ctl_reply_get(c, m, clock_fields, &r, err, errlen);
	json_object_put(m);
	if (ret)
		return ret;
	if (r.t1 != s->t1) {
		snprintf(err, errlen, "clock: the reply echoes t1 %llu, not %llu", (unsigned long long)r.t1,
			 (unsigned long long)s->t1);
		return lr_ctl_broken(c, err);
	}
	s->t2 = r.t2;
	s->t3 = r.t3;
	return 0;
}

int lr_ctl_clock_estimate(struct lr_ctl *c, unsigned int n, struct lr_clock_est *e, char *err, size_t errlen)
{
	struct lr_clock_sample s;
	unsigned int i;
	int ret;

	*e = (struct lr_clock_est){ 0 };
	for (i = 0; i < n; i++) {
		ret = lr_ctl_clock(c, &s, err, errlen);
		if (ret)
			return ret;
		lr_clock_est_add(e, &s);
	}
	if (!e->samples) {
		snprintf(err, errlen, "none of %u clock exchanges could be used (%u refused)", n, e->refused);
		return -ENODATA;
	}
	return 0;
}
