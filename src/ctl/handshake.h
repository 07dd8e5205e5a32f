/* SPDX-License-Identifier: MIT */
/*
 * The start of every session (docs/protocol.md, "hello" and "auth"): the hello reply and the
 * token's challenge-response, one implementation for the agent's parent, which does it for many
 * connections at once before it forks a session, and for an endpoint serving a stream itself.
 */
#ifndef LINERATE_CTL_HANDSHAKE_H
#define LINERATE_CTL_HANDSHAKE_H

#include <stdbool.h>
#include <json-c/json.h>
#include "ctl/auth.h"

struct lr_ctl_handshake {
	const struct lr_auth_key *key;	/* hello asks for proof of this token; NULL: none */
	bool tx;	/* the roles offered include "tx" (an agent; run's child counts only) */
	bool hello, authed, auth_tried;
	char nonce_c[LR_AUTH_HEX + 1], nonce_e[LR_AUTH_HEX + 1];
};

/* A handshake yet to begin, for an endpoint with @key (may be NULL) that serves senders when @tx. */
void lr_ctl_handshake_init(struct lr_ctl_handshake *h, const struct lr_auth_key *key, bool tx);
/* hello said and, with a token, auth passed: the session's other requests may come. */
bool lr_ctl_handshake_done(const struct lr_ctl_handshake *h);
/*
 * The reply to @req while the handshake is not done, or to a hello or auth after it (refused):
 * the hello reply, "ok" or an "error"; @quit is set when the stream must be closed after the
 * reply (a request before its turn, a failed proof). With @peer, the agent's log lines about it.
 */
struct json_object *lr_ctl_handshake_on(struct lr_ctl_handshake *h, struct json_object *req, const char *peer,
					bool *quit);
/* With @peer: the line of a controller that heard our hello and left without trying a proof. */
void lr_ctl_handshake_left(const struct lr_ctl_handshake *h, const char *peer);

#endif
