/* SPDX-License-Identifier: MIT */
/*
 * The agent's connections before authentication: accepted, their handshakes done many at once in
 * the parent's poll loop, bounded and capped, and each that passed handed to ctl/agent.c's session.
 */
#ifndef LINERATE_CTL_AGENT_PENDING_H
#define LINERATE_CTL_AGENT_PENDING_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "ctl/handshake.h"
#include "ctl/metrics.h"

#define LR_PENDING_MAX	100	/* connections at once: room the loop keeps for them in its pollfds */

struct lr_pending;

/* What the table asks of the agent about its session; @ctx is lr_pending_opts.ctx. */
struct lr_pending_ops {
	/* a session's test runs (its status pipe is open) */
	bool (*busy)(void *ctx);
	/* and it said it is ending that test: a newcomer waits for it rather than hear "busy" */
	bool (*ending)(void *ctx);
	/* the "busy" reply for @peer, which authenticated while a session runs */
	struct json_object *(*busy_msg)(void *ctx, const char *peer);
	/*
	 * The session of @fd (authenticated by @hs, from @peer) forked: 0, the table then closing
	 * its copy of @fd; or -errno with why in @err. In the child, before the session, it calls
	 * lr_pending_drop_all(table, fd): none of the other connections is the session's to hold.
	 */
	int (*start)(void *ctx, int fd, const char *peer, const struct lr_ctl_handshake *hs, char *err, size_t errlen);
};

struct lr_pending_opts {
	const struct lr_pending_ops *ops;
	void *ctx;
	const struct lr_auth_key *key;	/* hello asks for proof of this token; NULL: none */
	bool verbose;	/* TCP probes logged too */
	struct lr_metrics_agent *m;	/* the refused_full, refused_timeout, refused_error counts kept here */
};

/* An empty table: 0, or -ENOMEM. */
int lr_pending_open(const struct lr_pending_opts *o, struct lr_pending **out);
/* Every connection closed, then the table freed. NULL is fine. */
void lr_pending_close(struct lr_pending *t);
/* Every connection closed but @keep's, which is only forgotten (-1: none kept). */
void lr_pending_drop_all(struct lr_pending *t, int keep);

/* How long the listener is to stay out of poll() (accept() failed, as when out of fds): 0 for none. */
int lr_pending_accept_wait(const struct lr_pending *t);
/*
 * The connections to poll into @p (room for LR_PENDING_MAX): their count. @timeout_ms is lowered
 * to the nearest deadline.
 */
int lr_pending_fds(struct lr_pending *t, struct pollfd *p, int *timeout_ms);
/*
 * After poll(): reads and answers what @p (as lr_pending_fds() filled it) says is ready, then
 * gives those held while a session ended their session or "busy".
 */
void lr_pending_serve(struct lr_pending *t, const struct pollfd *p, int n);
/* The listener @lfd polled readable: a burst of new connections in, or dropped by the cap. */
void lr_pending_accept(struct lr_pending *t, int lfd);
/* Connections past their deadlines closed, and now and then one line for what was dropped unsaid. */
void lr_pending_expire(struct lr_pending *t);

#endif
