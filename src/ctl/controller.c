/* SPDX-License-Identifier: MIT */
/*
 * The controller's side of the agent protocol: a connection (TCP to an agent, or run's socketpair),
 * hello and auth, a keepalive that pings while nothing else is asked, and one call per request,
 * each reply checked strictly.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "ctl/net.h"
#include "ctl/request.h"
#include "util/clock.h"
#include "util/jfield.h"
#include "util/log.h"

#define HELLO_MS	5000
#define PREPARE_MS	15000	/* entering a container's namespace may ask its CLI (up to 10 s), ARP 1 s */
#define CALL_MS		5000	/* start (workers pinned), stop, reset, progress, quit (the capture renamed) */
#define WAIT_EXTRA_MS	1000	/* beyond the wait asked for: the endpoint's linger and collection */
#define TICK_NS		50000000L	/* the keepalive thread's look at the clock */
#define LAST_WORD_MS	50	/* a message already sent by an endpoint that closed the stream */

struct lr_ctl {
	int fd;
	char name[LR_HOSTPORT_MAX + 32];	/* "the agent at HOST:PORT" */
	char agent[LR_HOSTPORT_MAX + 8];	/* "HOST:PORT"; "" for an attached stream */
	pthread_mutex_t lock;	/* one request and its reply at a time */
	int64_t last_ms;	/* the last exchange (under lock) */
	int dead;	/* -errno once an exchange failed (under lock) */
	char why[512];
	pthread_t keepalive;
	bool keepalive_on;
	volatile bool stopping;
	struct lr_host host;
	struct json_object *host_json;
};

int lr_ctl_attach(int fd, const char *name, struct lr_ctl **out)
{
	struct lr_ctl *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = fd;
	snprintf(c->name, sizeof(c->name), "%s", name);
	pthread_mutex_init(&c->lock, NULL);
	c->last_ms = lr_now_ms();
	*out = c;
	return 0;
}

const char *lr_ctl_name(const struct lr_ctl *c)
{
	return c->name;
}

const char *lr_ctl_agent(const struct lr_ctl *c)
{
	return c->agent;
}

const struct lr_host *lr_ctl_host(const struct lr_ctl *c)
{
	return &c->host;
}

struct json_object *lr_ctl_host_json(const struct lr_ctl *c)
{
	return c->host_json;
}

/* Under c->lock: one request out (freed here), one message back; a failure kills the connection. */
static int exchange(struct lr_ctl *c, struct json_object *req, int timeout_ms, struct json_object **rep, char *err,
		    size_t errlen)
{
	int ret;

	*rep = NULL;
	if (c->dead) {
		json_object_put(req);
		snprintf(err, errlen, "%s", c->why);
		return c->dead;
	}
	ret = lr_msg_send(c->fd, req, timeout_ms, err, errlen);
	json_object_put(req);
	if (ret == -EPIPE || ret == -ECONNRESET) {
		/* the endpoint closed the stream: its last word, if it left one, says why */
		char why[128];
		bool reset = ret == -ECONNRESET;

		ret = lr_msg_recv(c->fd, LR_MSG_MAX, LAST_WORD_MS, rep, why, sizeof(why)) ? -ECONNRESET : 0;
		if (ret)
			snprintf(err, errlen, "%s", reset ? "the connection was reset" : "the connection was closed");
	} else if (!ret) {
		ret = lr_msg_recv(c->fd, LR_MSG_MAX, timeout_ms, rep, err, errlen);
	}
	if (ret == -EPROTOTYPE) {
		char said[256];

		snprintf(said, sizeof(said), "%s", err);
		snprintf(err, errlen, "%s is not a linerate agent (it answered %s)", c->agent[0] ? c->agent : c->name,
			 said);
	}
	c->last_ms = lr_now_ms();
	if (ret) {
		c->dead = ret;
		snprintf(c->why, sizeof(c->why), "%s", err);
	}
	return ret;
}

struct error_reply {
	unsigned int code;
	char message[1024];
};

static const struct lr_jfield error_fields[] = {
	{ "code", LR_J_UINT, offsetof(struct error_reply, code), .min = 1, .max = 255 },
	{ "message", LR_J_STR, offsetof(struct error_reply, message), .size = sizeof(((struct error_reply *)0)->message) },
	{ NULL }
};

/*
 * @m (freed here) is of type @want: 0 and @m in @rep (NULL: freed). An "error" reply: its exit code
 * and message. Another type is out of protocol: the connection is dead then.
 */
static int expect(struct lr_ctl *c, struct json_object *m, const char *req_type, const char *want,
		  struct json_object **rep, char *err, size_t errlen)
{
	struct error_reply e;
	int ret = 0;

	if (!strcmp(lr_msg_type(m), "error")) {
		ret = lr_msg_get(m, error_fields, &e, err, errlen);
		if (!ret)
			snprintf(err, errlen, "%s", e.message);
		ret = ret ? -EBADMSG : (int)e.code;
		/* the endpoint's last word: it ended the test and closes the stream, so no call can follow */
		if (ret > 0 && !strncmp(e.message, LR_CTL_ENDED, strlen(LR_CTL_ENDED))) {
			c->dead = -ECONNABORTED;
			snprintf(c->why, sizeof(c->why), "%s", err);
		}
	} else if (strcmp(lr_msg_type(m), want)) {
		snprintf(err, errlen, "the answer to '%s' was '%.32s', not '%s'", req_type, lr_msg_type(m), want);
		ret = -EBADMSG;
	}
	if (ret < 0) {
		c->dead = ret;
		snprintf(c->why, sizeof(c->why), "%s", err);
	}
	if (!ret && rep)
		*rep = m;
	else
		json_object_put(m);
	return ret;
}

/* Sends @req (freed here), receives the reply: see expect(). */
static int call(struct lr_ctl *c, struct json_object *req, const char *want, int timeout_ms, struct json_object **rep,
		char *err, size_t errlen)
{
	struct json_object *m;
	char type[32];
	int ret;

	snprintf(type, sizeof(type), "%s", lr_msg_type(req));
	pthread_mutex_lock(&c->lock);
	ret = exchange(c, req, timeout_ms, &m, err, errlen);
	if (!ret)
		ret = expect(c, m, type, want, rep, err, errlen);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* A reply out of protocol (said in @err): the connection is dead, the two sides out of step. */
static int broken(struct lr_ctl *c, const char *err)
{
	pthread_mutex_lock(&c->lock);
	c->dead = -EBADMSG;
	snprintf(c->why, sizeof(c->why), "%s", err);
	pthread_mutex_unlock(&c->lock);
	return -EBADMSG;
}

/* A reply's keys into @base by @f, strictly. */
static int reply_get(struct lr_ctl *c, struct json_object *m, const struct lr_jfield *f, void *base, char *err,
		     size_t errlen)
{
	return lr_msg_get(m, f, base, err, errlen) ? broken(c, err) : 0;
}

/* ---- hello and auth ----------------------------------------------------------------------------- */

/* "@what: " before the message in @err. */
static void prefix(char *err, size_t errlen, const char *what)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", err);
	snprintf(err, errlen, "%s: %s", what, why);
}

struct hello_reply {
	char release[64], revision[128];
	char nonce[LR_AUTH_HEX + 1], proof[LR_AUTH_HEX + 1];
	int auth;	/* 0 none, 1 LR_AUTH_MODE */
	bool tx;
};

static const char *const auth_modes[] = { "none", LR_AUTH_MODE, NULL };

static int roles_get(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	struct hello_reply *h = base;
	size_t i, n;

	if (!json_object_is_type(v, json_type_array) || (n = json_object_array_length(v)) < 1 || n > 4) {
		snprintf(err, errlen, "%s: expected an array of 1..4 roles", path);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const char *r = json_object_get_string(json_object_array_get_idx(v, i));

		if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string)) {
			snprintf(err, errlen, "%s[%zu]: expected a string", path, i);
			return -EINVAL;
		}
		h->tx = h->tx || !strcmp(r, "tx");
	}
	return 0;
}

/* "host" is read by lr_host_get() (from hello, or with a token from auth's "ok"); here it only has to be there. */
static int host_seen(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	(void)v;
	(void)base;
	(void)path;
	(void)err;
	(void)errlen;
	return 0;
}

#define STR(k, m)	{ k, LR_J_STR, offsetof(struct hello_reply, m), .size = sizeof(((struct hello_reply *)0)->m) }

static const struct lr_jfield hello_version_fields[] = {
	STR("release", release),
	STR("revision", revision),
	{ NULL }
};

static const struct lr_jfield hello_fields[] = {
	{ "version", LR_J_OBJ, 0, .sub = hello_version_fields },
	{ "roles", LR_J_CUSTOM, .get = roles_get },
	{ "host", LR_J_CUSTOM, .get = host_seen },
	{ "auth", LR_J_ENUM, offsetof(struct hello_reply, auth), .names = auth_modes },
	STR("nonce", nonce),
	STR("proof", proof),
	{ NULL }
};

struct busy_reply {
	char test[512], since[64];
	uint64_t since_s;
};

static const struct lr_jfield busy_fields[] = {
	{ "test", LR_J_STR, offsetof(struct busy_reply, test), .size = sizeof(((struct busy_reply *)0)->test) },
	{ "since", LR_J_STR, offsetof(struct busy_reply, since), .size = sizeof(((struct busy_reply *)0)->since) },
	{ "since_s", LR_J_U64, offsetof(struct busy_reply, since_s) },
	{ NULL }
};

/* A "busy" reply in words: exit code 1. */
static int busy(struct lr_ctl *c, struct json_object *m, char *err, size_t errlen)
{
	struct busy_reply b;

	if (lr_msg_get(m, busy_fields, &b, err, errlen))
		return -EBADMSG;
	snprintf(err, errlen, "%s is busy with another test: %s, since %s (%llu s)", c->name, b.test, b.since,
		 (unsigned long long)b.since_s);
	return LR_EXIT_RUNTIME;
}

/* The agent's proof checked, then ours sent: 0 or an exit code (2: the token is not the agent's). */
static int authenticate(struct lr_ctl *c, const struct hello_reply *h, const char *nonce_c,
			const struct lr_auth_key *key, char *err, size_t errlen)
{
	struct json_object *req, *m;
	char proof[LR_AUTH_HEX + 1];
	int ret;

	if (h->auth && !key) {
		snprintf(err, errlen, "%s asks for a token: give --token-file with the agent's token", c->name);
		return LR_EXIT_USAGE;
	}
	if (!h->auth && key) {
		snprintf(err, errlen, "%s asks for no token, so it cannot prove it is the agent meant: give it "
			 "--token-file too, or leave --token-file out here", c->name);
		return LR_EXIT_USAGE;
	}
	if (!h->auth)
		return 0;
	/* never drive an impostor: the agent proves it holds the token before we prove anything */
	if (!lr_auth_check(key, "agent", nonce_c, h->nonce, h->proof)) {
		snprintf(err, errlen, "authentication failed: %s does not hold this token", c->name);
		return LR_EXIT_USAGE;
	}
	lr_auth_proof(key, "controller", h->nonce, nonce_c, proof);
	req = lr_msg_new("auth");
	json_object_object_add(req, "proof", json_object_new_string(proof));
	pthread_mutex_lock(&c->lock);
	ret = exchange(c, req, HELLO_MS, &m, err, errlen);
	/* an agent with a token says "busy" only to a controller that proved it holds it */
	if (!ret && !strcmp(lr_msg_type(m), "busy")) {
		pthread_mutex_unlock(&c->lock);
		ret = busy(c, m, err, errlen);
		json_object_put(m);
		return ret;
	}
	if (!ret)
		ret = expect(c, m, "auth", "ok", &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret > 0)
		prefix(err, errlen, c->name);
	if (ret)
		return ret;
	/* the host's facts, which an agent with a token gives only to whoever proved to hold it */
	ret = lr_host_get(m, &c->host, err, errlen);
	if (!ret) {
		struct json_object *v;

		if (json_object_object_get_ex(m, "host", &v))
			c->host_json = json_object_get(v);
	} else {
		prefix(err, errlen, "ok");
		ret = -EBADMSG;
	}
	json_object_put(m);
	return ret;
}

int lr_ctl_hello(struct lr_ctl *c, const struct lr_auth_key *key, char *err, size_t errlen)
{
	struct hello_reply h = { 0 };
	struct json_object *m, *v;
	char nonce[LR_AUTH_HEX + 1];
	int ret;

	lr_auth_nonce(nonce);
	pthread_mutex_lock(&c->lock);
	ret = exchange(c, lr_ctl_hello_msg(nonce), HELLO_MS, &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret == -EPROTONOSUPPORT) {
		prefix(err, errlen, "another protocol version");
		prefix(err, errlen, c->name);
		return LR_EXIT_USAGE;
	}
	/* "HOST:PORT is not a linerate agent (it answered ...)": the address is wrong, not the agent */
	if (ret == -EPROTOTYPE)
		return LR_EXIT_USAGE;
	if (ret)
		return ret;
	if (!strcmp(lr_msg_type(m), "busy")) {
		ret = busy(c, m, err, errlen);
		json_object_put(m);
		return ret;
	}
	pthread_mutex_lock(&c->lock);
	ret = expect(c, m, "hello", "hello", &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	ret = reply_get(c, m, hello_fields, &h, err, errlen);
	/* without a token, the facts come with hello; with one, hello's "host" is null (see authenticate) */
	if (!ret && !h.auth)
		ret = lr_host_get(m, &c->host, err, errlen);
	if (!ret && h.auth && (!lr_auth_hex_ok(h.nonce) || !lr_auth_hex_ok(h.proof))) {
		snprintf(err, errlen, "hello: the agent's nonce or proof is not %d hex digits", LR_AUTH_HEX);
		ret = -EBADMSG;
	}
	if (!ret && !h.auth && json_object_object_get_ex(m, "host", &v))
		c->host_json = json_object_get(v);
	json_object_put(m);
	return ret ? (ret > 0 ? ret : -EBADMSG) : authenticate(c, &h, nonce, key, err, errlen);
}

int lr_ctl_connect(const char *hostport, const struct lr_auth_key *key, struct lr_ctl **out, char *err,
		   size_t errlen)
{
	struct lr_ctl_addr a;
	struct lr_ctl *c;
	int fd, ret;

	*out = NULL;
	if (lr_ctl_addr_parse(hostport, false, &a, err, errlen))
		return LR_EXIT_USAGE;
	if (lr_ctl_dial(&a, LR_CTL_CONNECT_MS, &fd, err, errlen))
		return LR_EXIT_RUNTIME;
	if (lr_ctl_attach(fd, "", &c)) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return LR_EXIT_RUNTIME;
	}
	lr_ctl_addr_name(&a, c->agent, sizeof(c->agent));
	snprintf(c->name, sizeof(c->name), "the agent at %s", c->agent);
	ret = lr_ctl_hello(c, key, err, errlen);
	if (ret < 0)
		prefix(err, errlen, c->name);
	if (ret) {
		lr_ctl_close(c);
		return ret < 0 ? LR_EXIT_RUNTIME : ret;
	}
	*out = c;
	return 0;
}

/* ---- the keepalive ------------------------------------------------------------------------------ */

/* Under c->lock: a ping; any failure, an error answered to it too (the agent stopping), kills the connection. */
static void ping_locked(struct lr_ctl *c)
{
	struct json_object *m;
	char err[512];
	int ret;

	ret = exchange(c, lr_msg_new("ping"), LR_CTL_REPLY_MS, &m, err, sizeof(err));
	if (!ret)
		ret = expect(c, m, "ping", "pong", NULL, err, sizeof(err));
	if (ret > 0) {
		c->dead = -ECONNABORTED;
		snprintf(c->why, sizeof(c->why), "%s", err);
	}
}

static void *keepalive(void *arg)
{
	struct lr_ctl *c = arg;
	struct timespec tick = { 0, TICK_NS };

	while (!c->stopping) {
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&c->lock);
		if (!c->dead && lr_now_ms() - c->last_ms >= LR_CTL_PING_MS)
			ping_locked(c);
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

int lr_ctl_keepalive(struct lr_ctl *c)
{
	int ret = pthread_create(&c->keepalive, NULL, keepalive, c);

	c->keepalive_on = !ret;
	return -ret;
}

bool lr_ctl_dead(struct lr_ctl *c, char *err, size_t errlen)
{
	bool dead;

	pthread_mutex_lock(&c->lock);
	dead = c->dead != 0;
	if (dead)
		snprintf(err, errlen, "%s", c->why);
	pthread_mutex_unlock(&c->lock);
	return dead;
}

void lr_ctl_close(struct lr_ctl *c)
{
	if (!c)
		return;
	c->stopping = true;
	if (c->keepalive_on)
		pthread_join(c->keepalive, NULL);
	close(c->fd);
	json_object_put(c->host_json);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- the calls ---------------------------------------------------------------------------------- */

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

	ret = call(c, req, "ready", PREPARE_MS, &m, err, errlen);
	if (ret)
		return ret;
	ret = reply_get(c, m, ready_fields, rd, err, errlen);
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
	ret = call(c, lr_ctl_start_msg(at_ns), "started", CALL_MS + (int)(LR_CTL_START_AHEAD_NS / 1000000), &m, err,
		   errlen);
	if (ret)
		return ret;
	ret = reply_get(c, m, started_fields, st ? st : &dummy, err, errlen);
	json_object_put(m);
	return ret;
}

int lr_ctl_stop(struct lr_ctl *c, char *err, size_t errlen)
{
	return call(c, lr_msg_new("stop"), "ok", CALL_MS, NULL, err, errlen);
}

int lr_ctl_reset(struct lr_ctl *c, char *err, size_t errlen)
{
	return call(c, lr_msg_new("reset"), "ok", CALL_MS, NULL, err, errlen);
}

int lr_ctl_ping(struct lr_ctl *c, char *err, size_t errlen)
{
	return call(c, lr_msg_new("ping"), "pong", LR_CTL_REPLY_MS, NULL, err, errlen);
}

int lr_ctl_quit(struct lr_ctl *c, char *err, size_t errlen)
{
	return call(c, lr_msg_new("quit"), "bye", CALL_MS, NULL, err, errlen);
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
	ret = call(c, lr_msg_new("progress"), "progress", LR_CTL_REPLY_MS, &m, err, errlen);
	if (ret)
		return ret;
	p->tx = json_object_object_get_ex(m, "tx", &v);
	p->reflect = !p->tx && json_object_object_get_ex(m, "reflect", &v);
	ret = reply_get(c, m, p->tx ? progress_tx : p->reflect ? progress_reflect : progress_rx, p, err, errlen);
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
	ret = call(c, req, "result", (int)(ms + WAIT_EXTRA_MS), &m, err, errlen);
	if (ret)
		return ret;
	ret = reply_get(c, m, result_fields, w, err, errlen);
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
			return broken(c, err);
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
		return broken(c, err);
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
	ret = exchange(c, req, LR_CTL_REPLY_MS, &m, err, errlen);
	s->t4 = lr_now_bpf_ns();
	if (!ret)
		ret = expect(c, m, "clock", "clock", &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	ret = reply_get(c, m, clock_fields, &r, err, errlen);
	json_object_put(m);
	if (ret)
		return ret;
	if (r.t1 != s->t1) {
		snprintf(err, errlen, "clock: the reply echoes t1 %llu, not %llu", (unsigned long long)r.t1,
			 (unsigned long long)s->t1);
		return broken(c, err);
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
