/* SPDX-License-Identifier: MIT */
/* hello and auth, the start of a session: the replies, the nonces, the proofs, the log lines. */
#include <stdlib.h>
#include <string.h>
#include "ctl/ctl.h"
#include "ctl/handshake.h"
#include "ctl/host.h"
#include "ctl/msg.h"
#include "ctl/request.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/version.h"

#define HOST_FRESH_MS	200	/* host facts older than this are read again */

#define hlog(peer, ...)                       \
	do {                                  \
		if (peer)                     \
			lr_ctl_log(__VA_ARGS__); \
	} while (0)

void lr_ctl_handshake_init(struct lr_ctl_handshake *h, const struct lr_auth_key *key, bool tx)
{
	*h = (struct lr_ctl_handshake){ .key = key, .tx = tx };
}

bool lr_ctl_handshake_done(const struct lr_ctl_handshake *h)
{
	return h->hello && h->authed;
}

/*
 * This host's facts, read at most every HOST_FRESH_MS: the agent's main process answers every
 * hello, from anyone, before authentication, and a netlink dump per hello would let a flood of
 * them take its loop (and its core). Fresh enough for a controller that just set an address up.
 */
static const struct lr_host *host_facts(void)
{
	static struct lr_host *host;
	static int64_t read_ms;
	int64_t now = lr_now_ms();

	if (host && now - read_ms < HOST_FRESH_MS)
		return host;
	if (!host && !(host = malloc(sizeof(*host))))
		return NULL;
	if (lr_host_read(host)) {
		free(host);
		host = NULL;
		return NULL;
	}
	read_ms = now;
	return host;
}

static struct json_object *on_hello(struct lr_ctl_handshake *hs, struct json_object *req)
{
	struct json_object *m, *v, *roles;
	struct lr_ctl_hello_req h;
	const struct lr_host *host;
	char err[256], proof[LR_AUTH_HEX + 1] = "";

	if (hs->hello)
		return lr_msg_error(LR_EXIT_USAGE, "hello was said already");
	if (lr_ctl_hello_parse(req, &h, err, sizeof(err)))
		return lr_msg_error(LR_EXIT_USAGE, "%s", err);
	/*
	 * The host's facts (its name, kernel, interfaces and addresses) are for a controller that
	 * proved it holds the token: with one, they come with auth's "ok", and hello says null.
	 */
	host = hs->key ? NULL : host_facts();
	if (!hs->key && !host)
		return lr_msg_error(LR_EXIT_RUNTIME, "cannot read this host's facts (boot id, interfaces)");
	hs->hello = true;
	hs->authed = !hs->key;
	memcpy(hs->nonce_c, h.nonce, sizeof(hs->nonce_c));
	lr_auth_nonce(hs->nonce_e);
	if (hs->key)
		lr_auth_proof(hs->key, "agent", hs->nonce_c, hs->nonce_e, proof);
	m = lr_msg_new("hello");
	v = json_object_new_object();
	json_object_object_add(v, "release", json_object_new_string(lr_release()));
	json_object_object_add(v, "revision", json_object_new_string(lr_revision()));
	json_object_object_add(m, "version", v);
	roles = json_object_new_array();
	json_object_array_add(roles, json_object_new_string("rx"));
	if (hs->tx)
		json_object_array_add(roles, json_object_new_string("tx"));
	json_object_array_add(roles, json_object_new_string("reflect"));
	json_object_object_add(m, "roles", roles);
	if (host)
		lr_host_put(m, host);
	else
		json_object_object_add(m, "host", NULL);
	json_object_object_add(m, "auth", json_object_new_string(hs->key ? LR_AUTH_MODE : "none"));
	json_object_object_add(m, "nonce", json_object_new_string(hs->nonce_e));
	json_object_object_add(m, "proof", json_object_new_string(proof));
	return m;
}

static struct json_object *on_auth(struct lr_ctl_handshake *hs, struct json_object *req, const char *peer, bool *quit)
{
	char err[256], proof[LR_AUTH_HEX + 1];
	const struct lr_host *host;
	struct json_object *m;

	if (!hs->key)
		return lr_msg_error(LR_EXIT_USAGE, "this endpoint asks for no token");
	if (hs->authed)
		return lr_msg_error(LR_EXIT_USAGE, "authenticated already");
	*quit = true;
	hs->auth_tried = true;
	if (lr_ctl_auth_parse(req, proof, err, sizeof(err))) {
		hlog(peer, "%s: authentication failed: %s", peer, err);
		return lr_msg_error(LR_EXIT_USAGE, "authentication failed: %s", err);
	}
	if (!lr_auth_check(hs->key, "controller", hs->nonce_e, hs->nonce_c, proof)) {
		hlog(peer, "%s: authentication failed: wrong proof (another token?); closed", peer);
		return lr_msg_error(LR_EXIT_USAGE, "authentication failed: the proof does not match this agent's token");
	}
	host = host_facts();
	if (!host)
		return lr_msg_error(LR_EXIT_RUNTIME, "cannot read this host's facts (boot id, interfaces)");
	*quit = false;
	hs->authed = true;
	hlog(peer, "%s: authenticated", peer);
	m = lr_msg_new("ok");
	lr_host_put(m, host);
	return m;
}

struct json_object *lr_ctl_handshake_on(struct lr_ctl_handshake *h, struct json_object *req, const char *peer,
					bool *quit)
{
	const char *type = lr_msg_type(req);

	if (!strcmp(type, "hello"))
		return on_hello(h, req);
	if (!strcmp(type, "auth") && (h->hello || lr_ctl_handshake_done(h)))
		return on_auth(h, req, peer, quit);
	*quit = true;
	hlog(peer, "%s: '%.32s' before %s: closed", peer, type, h->hello ? "auth" : "hello");
	return lr_msg_error(LR_EXIT_USAGE, "'%.32s' before %s", type, h->hello ? "auth" : "hello");
}

void lr_ctl_handshake_left(const struct lr_ctl_handshake *h, const char *peer)
{
	if (h->key && h->hello && !h->authed && !h->auth_tried)
		hlog(peer, "%s: left without authenticating (its token is not this agent's, or it has none)", peer);
}
