/* SPDX-License-Identifier: MIT */
/* The controller's hello and auth: connecting to an agent, proving the token both ways, the host's facts. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ctl/auth.h"
#include "ctl/controller_impl.h"
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "ctl/net.h"
#include "ctl/request.h"
#include "util/jfield.h"
#include "util/log.h"

#define HELLO_MS	5000

/* "@what: " before the message in @err. */
static void prepend_err(char *err, size_t errlen, const char *what)
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
static int busy_err(struct lr_ctl *c, struct json_object *m, char *err, size_t errlen)
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
	ret = lr_ctl_exchange(c, req, HELLO_MS, &m, err, errlen);
	/* an agent with a token says "busy" only to a controller that proved it holds it */
	if (!ret && !strcmp(lr_msg_type(m), "busy")) {
		pthread_mutex_unlock(&c->lock);
		ret = busy_err(c, m, err, errlen);
		json_object_put(m);
		return ret;
	}
	if (!ret)
		ret = lr_ctl_expect(c, m, "auth", "ok", &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret > 0)
		prepend_err(err, errlen, c->name);
	if (ret)
		return ret;
	/* the host's facts, which an agent with a token gives only to whoever proved to hold it */
	ret = lr_host_get(m, &c->host, err, errlen);
	if (!ret) {
		struct json_object *v;

		if (json_object_object_get_ex(m, "host", &v))
			c->host_json = json_object_get(v);
	} else {
		prepend_err(err, errlen, "ok");
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
	ret = lr_ctl_exchange(c, lr_ctl_hello_msg(nonce), HELLO_MS, &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret == -EPROTONOSUPPORT) {
		prepend_err(err, errlen, "another protocol version");
		prepend_err(err, errlen, c->name);
		return LR_EXIT_USAGE;
	}
	/* "HOST:PORT is not a linerate agent (it answered ...)": the address is wrong, not the agent */
	if (ret == -EPROTOTYPE)
		return LR_EXIT_USAGE;
	if (ret)
		return ret;
	if (!strcmp(lr_msg_type(m), "busy")) {
		ret = busy_err(c, m, err, errlen);
		json_object_put(m);
		return ret;
	}
	pthread_mutex_lock(&c->lock);
	ret = lr_ctl_expect(c, m, "hello", "hello", &m, err, errlen);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	ret = lr_ctl_reply_get(c, m, hello_fields, &h, err, errlen);
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
		prepend_err(err, errlen, c->name);
	if (ret) {
		lr_ctl_close(c);
		return ret < 0 ? LR_EXIT_RUNTIME : ret;
	}
	*out = c;
	return 0;
}
