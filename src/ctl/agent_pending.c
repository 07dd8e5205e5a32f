/* SPDX-License-Identifier: MIT */
/*
 * The agent's pre-authentication table: every connection from accept to its handshake's end (hello,
 * auth) on a non-blocking socket, bounded in bytes and time, all of them capped so that a flood
 * cannot shut a controller out, each that passes handed to the agent's session through its ops.
 * It lives apart from ctl/agent.c, which forks and watches that session, because all of this runs
 * before any session exists and needs from the agent no more than whether one runs.
 */
#define _GNU_SOURCE	/* accept4() */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sodium.h>
#include "ctl/agent_pending.h"
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "ctl/net.h"
#include "util/clock.h"
#include "util/log.h"

/* Before authentication (docs/protocol.md, "Handshake"): */
#define FIRST_BYTE_MS	1000	/* a new connection's first byte of hello, after accept */
#define HANDSHAKE_MS	3000	/* hello to auth passed, after accept (the controller waits 5 s) */
#define REPLY_MS	1000	/* a "busy" or "error" reply taken by the peer */
#define PRE_AUTH_MAX	4096	/* a message before auth: hello takes 300 bytes */
/*
 * The cap, as sshd's MaxStartups start:rate:full = 10:30:100: past PENDING_START connections, a
 * new one from an address that holds one already is over its share at random, with a chance from
 * PENDING_RATE % rising to 100 % at PENDING_FULL, and always at PENDING_PER_SOURCE (an IPv6
 * address: its /64). Over its share, it takes the place of one of its own address's, so a flood
 * from a controller's own address cannot shut that controller out. An address's first is always
 * taken, a full table making room by closing one of the address that holds the most.
 */
#define PENDING_START	10
#define PENDING_RATE	30
#define PENDING_FULL	LR_PENDING_MAX
#define PENDING_PER_SOURCE	10
#define IDLE_MS		200	/* nothing from a connection this long (none yet): closed first for a newcomer */
#define ACCEPT_BURST	64	/* accepted per turn of the loop, so its other fds get theirs */
#define ACCEPT_PAUSE_MS	100	/* accept() failing (out of fds): the listener left out of poll this long */
#define SUMMARY_MS	10000	/* dropped connections: one line at most this often, with the counts */
#define LOG_BUDGET	40	/* lines about unauthenticated connections per SUMMARY_MS; the rest counted */
#define ENDING_MS	3000	/* a session ending its test, waited for by a new controller */

enum after { AFTER_READ, AFTER_CLOSE, AFTER_SESSION };

/* A connection not yet handed to a session: a small state machine on a non-blocking socket. */
struct pending {
	int fd;	/* -1: a free slot */
	unsigned char src[17];	/* its address for the cap: IPv4 (mapped too) or an IPv6 /64; [16] the family */
	char peer[LR_HOSTPORT_MAX + 8];
	int64_t since_ms, deadline_ms;
	int64_t active_ms;	/* its last byte in or reply out (at first: since_ms) */
	uint64_t seq;	/* the order of acceptance: the oldest is closed first (since_ms ties in a burst) */
	bool spoke;	/* a byte came, or was seen waiting: not an idle socket */
	bool connected;	/* a message came (not a bare TCP probe) */
	bool logged;	/* and "connected" was said: its other lines are too */
	struct lr_msg_reader rd;
	struct lr_ctl_handshake hs;
	struct json_object *held;	/* authenticated while a session ends: its reply, sent once it is gone */
	char *out;	/* a reply on its way, out_off of out_len bytes taken */
	size_t out_len, out_off;
	enum after after;	/* once the reply is out */
};

/* The table: the agent's state before authentication, none of it the session's. */
struct lr_pending {
	struct lr_pending_opts o;
	struct pending pend[PENDING_FULL];
	unsigned int npend;
	uint64_t seq, burst_seq;	/* the next connection's number, and the first one of this accept burst */
	/* the one whose last reply is on its way to become the session */
	struct pending *claimed;
	struct pending *slot[PENDING_FULL];	/* the connections lr_pending_fds() put in the pollfds, in order */
	int64_t accept_at;	/* the listener polled again from then on (accept() failed) */
	/* since the last summary line */
	int64_t sum_at;
	uint64_t sum_full, sum_timeout, sum_unlogged;
	unsigned int log_left;
	bool accept_said;	/* a failing accept() logged */
};

static bool busy(const struct lr_pending *t)
{
	return t->o.ops->busy(t->o.ctx);
}

static bool ending(const struct lr_pending *t)
{
	return t->o.ops->ending(t->o.ctx);
}

/* Frees @p's slot; its socket closed unless handed on (@close_fd false). */
static void pend_free(struct lr_pending *t, struct pending *p, bool close_fd)
{
	if (close_fd)
		close(p->fd);
	if (t->claimed == p)
		t->claimed = NULL;
	lr_msg_reader_reset(&p->rd);
	json_object_put(p->held);
	free(p->out);
	*p = (struct pending){ .fd = -1 };
	t->npend--;
}

/* The source @ss is counted as for the cap: an IPv4 address (mapped too), or an IPv6 address's /64. */
static void source_of(const struct sockaddr_storage *ss, unsigned char src[17])
{
	const struct sockaddr_in6 *in6 = (const void *)ss;
	const struct sockaddr_in *in = (const void *)ss;

	memset(src, 0, 17);
	if (ss->ss_family == AF_INET) {
		memcpy(src, &in->sin_addr, 4);
		src[16] = 4;
	} else if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
		memcpy(src, &in6->sin6_addr.s6_addr[12], 4);
		src[16] = 4;
	} else if (ss->ss_family == AF_INET6) {
		memcpy(src, &in6->sin6_addr, 8);
		src[16] = 6;
	}
}

static unsigned int from_source(const struct lr_pending *t, const unsigned char src[17])
{
	unsigned int i, n = 0;

	for (i = 0; i < PENDING_FULL; i++)
		n += t->pend[i].fd >= 0 && !memcmp(t->pend[i].src, src, 17);
	return n;
}

/* A line about an unauthenticated connection, within the budget; else only counted. */
static bool may_log(struct lr_pending *t)
{
	if (t->log_left) {
		t->log_left--;
		return true;
	}
	t->sum_unlogged++;
	return false;
}

/*
 * Whether @p sent nothing yet: none read and, asked only once it matters, none waiting. A
 * controller's hello may have come since the loop last read, with a burst of a flood's connections.
 */
static bool silent(struct pending *p)
{
	int n = 0;

	if (!p->spoke && !ioctl(p->fd, FIONREAD, &n) && n > 0) {
		p->spoke = true;
		p->active_ms = lr_now_ms();
	}
	return !p->spoke;
}

/*
 * The connection a newcomer takes the place of: with @src, one of that address's own (the
 * newcomer over its share), else one of the address that holds the most. Then idle ones first
 * (nothing for IDLE_MS), silent ones first among those; then a new one yet to speak; last one
 * that is getting on with its handshake, as a controller does. The oldest first within each, so
 * that a table full of lone talkers still lets a newcomer in. Never an authenticated one, which
 * only waits for its session, nor one accepted in this burst, not read yet (its hello may be on
 * its way): NULL when there is no other.
 */
static struct pending *pick(struct lr_pending *t, const unsigned char *src)
{
	int64_t now = lr_now_ms();
	struct pending *best = NULL;
	unsigned int i, best_n = 0;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *p = &t->pend[i];
		unsigned int n;

		if (p->fd < 0 || lr_ctl_handshake_done(&p->hs) || p->seq >= t->burst_seq ||
		    (src && memcmp(p->src, src, 17)))
			continue;
		n = (src ? 0 : from_source(t, p->src) * 4) + (now - p->active_ms >= IDLE_MS) * 2 + !p->spoke + 1;
		if (n > best_n || (n == best_n && p->seq < best->seq)) {
			best = p;
			best_n = n;
		}
	}
	return best;
}

static struct pending *victim(struct lr_pending *t, const unsigned char *src)
{
	struct pending *v;

	/* each round that finds its choice spoke after all marks it so: at most PENDING_FULL rounds */
	do
		v = pick(t, src);
	while (v && !v->spoke && !silent(v));
	return v;
}

/* A new connection in, or dropped by the cap (counted, not logged). */
static void admit(struct lr_pending *t, int fd, const struct sockaddr_storage *ss)
{
	unsigned char src[17];
	struct pending *p = NULL, *v;
	unsigned int i, mine;
	bool over;

	source_of(ss, src);
	mine = from_source(t, src);
	over = mine >= PENDING_PER_SOURCE;
	if (!over && t->npend >= PENDING_START && mine) {
		uint32_t chance = t->npend >= PENDING_FULL ? 100 :
				  PENDING_RATE + (100 - PENDING_RATE) * (t->npend - PENDING_START) /
				  (PENDING_FULL - PENDING_START);

		over = randombytes_uniform(100) < chance;
	}
	if (over || t->npend >= PENDING_FULL) {
		/* over its share: its own address gives up one; else the table is full */
		v = victim(t, over ? src : NULL);
		if (!v)
			goto drop;
		if (v->logged)
			lr_ctl_log("%s: closed before its handshake ended, for a newer connection (%d at once, %d per "
				   "address)", v->peer, PENDING_FULL, PENDING_PER_SOURCE);
		pend_free(t, v, true);
		t->o.m->refused_full++;
		t->sum_full++;
	}
	for (i = 0; i < PENDING_FULL && !p; i++)
		if (t->pend[i].fd < 0)
			p = &t->pend[i];
	*p = (struct pending){ .fd = fd, .since_ms = lr_now_ms(), .seq = t->seq++ };
	p->active_ms = p->since_ms;
	memcpy(p->src, src, sizeof(p->src));
	lr_ctl_sockaddr_name((const struct sockaddr *)ss, p->peer, sizeof(p->peer));
	p->deadline_ms = p->since_ms + FIRST_BYTE_MS;
	lr_ctl_handshake_init(&p->hs, t->o.key, true);
	t->npend++;
	return;
drop:
	close(fd);
	t->o.m->refused_full++;
	t->sum_full++;
}

static void pend_flush(struct lr_pending *t, struct pending *p);

/* @rep (freed here) on its way to @p, then @after. */
static void pend_reply(struct lr_pending *t, struct pending *p, struct json_object *rep, enum after after)
{
	char err[256];

	if (lr_msg_frame(rep, &p->out, &p->out_len, err, sizeof(err))) {
		json_object_put(rep);
		pend_free(t, p, true);
		return;
	}
	json_object_put(rep);
	p->out_off = 0;
	p->after = after;
	if (after == AFTER_SESSION)
		t->claimed = p;
	pend_flush(t, p);
}

/* What the handshake's last reply @rep leads to: a session, "busy", or a wait while one ends. */
static void pend_done(struct lr_pending *t, struct pending *p, struct json_object *rep)
{
	if (!p->logged) {
		/* a controller: its lines were held back (a flood's budget), not these */
		lr_ctl_log("%s: connected", p->peer);
		if (t->o.key)
			lr_ctl_log("%s: authenticated", p->peer);
		p->logged = true;
	}
	if (busy(t) && ending(t) && !t->claimed) {
		/* it is told once the session is gone, rather than hear "busy" for a moment's teardown */
		p->held = rep;
		p->deadline_ms = lr_now_ms() + ENDING_MS;
		return;
	}
	if (busy(t) || t->claimed) {
		json_object_put(rep);
		p->deadline_ms = lr_now_ms() + REPLY_MS;
		pend_reply(t, p, t->o.ops->busy_msg(t->o.ctx, p->peer), AFTER_CLOSE);
		return;
	}
	pend_reply(t, p, rep, AFTER_SESSION);
}

/* Held ones: a session once the ending one is gone; "busy" if another began, or past their wait. */
static void pend_release(struct lr_pending *t)
{
	int64_t now = lr_now_ms();
	unsigned int i;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *p = &t->pend[i];
		struct json_object *rep = p->held;

		if (p->fd < 0 || !rep)
			continue;
		if (!busy(t) && !t->claimed) {
			p->held = NULL;
			pend_reply(t, p, rep, AFTER_SESSION);
		} else if ((busy(t) && !ending(t)) || now >= p->deadline_ms) {
			p->held = NULL;
			json_object_put(rep);
			p->deadline_ms = now + REPLY_MS;
			pend_reply(t, p, t->o.ops->busy_msg(t->o.ctx, p->peer), AFTER_CLOSE);
		}
	}
}

static void pend_flush(struct lr_pending *t, struct pending *p)
{
	while (p->out_off < p->out_len) {
		ssize_t n = send(p->fd, p->out + p->out_off, p->out_len - p->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;	/* the rest on POLLOUT */
		if (n < 0) {
			if (p->logged && p->after == AFTER_SESSION)
				lr_ctl_log("%s: the controller left before its session began", p->peer);
			pend_free(t, p, true);
			return;
		}
		p->out_off += (size_t)n;
	}
	free(p->out);
	p->out = NULL;
	p->active_ms = lr_now_ms();	/* the peer's turn */
	if (p->after == AFTER_CLOSE) {
		pend_free(t, p, true);
	} else if (p->after == AFTER_SESSION) {
		char err[256];

		if (!t->o.ops->start(t->o.ctx, p->fd, p->peer, &p->hs, err, sizeof(err))) {
			/* the session's child holds the socket now; in this process, the slot is free */
			pend_free(t, p, true);
		} else {
			/* it heard "ok" (or, with no token, hello): an error, not a stream closed unsaid */
			lr_ctl_log("%s: refused: %s", p->peer, err);
			t->o.m->refused_error++;
			t->claimed = NULL;
			p->deadline_ms = lr_now_ms() + REPLY_MS;
			pend_reply(t, p, lr_msg_error(LR_EXIT_RUNTIME, "the agent %s", err), AFTER_CLOSE);
		}
	}
}

/* What came on @p: a message answered, or the connection's end. */
static void pend_read(struct lr_pending *t, struct pending *p)
{
	struct json_object *m, *rep;
	bool quit = false;
	char err[512];
	int ret;

	ret = lr_msg_read(&p->rd, p->fd, PRE_AUTH_MAX, &m, err, sizeof(err));
	p->spoke = p->spoke || ret || p->rd.got;
	p->active_ms = lr_now_ms();
	if (!ret) {
		if (p->rd.got)
			p->deadline_ms = p->since_ms + HANDSHAKE_MS;
		return;
	}
	if (ret == -ECONNRESET) {
		/* closed without a word: a TCP probe (kubelet's), not a controller turned away */
		if (!p->connected && t->o.verbose)
			lr_ctl_log("%s: closed without a message (a TCP probe?)", p->peer);
		if (p->logged)
			lr_ctl_handshake_left(&p->hs, p->peer);
		pend_free(t, p, true);
		return;
	}
	p->deadline_ms = p->since_ms + HANDSHAKE_MS;
	if (!p->connected) {
		p->connected = true;
		p->logged = may_log(t);
		if (p->logged)
			lr_ctl_log("%s: connected", p->peer);
	}
	if (ret == -EPROTOTYPE) {
		/* an HTTP or SSH client: a word would be lost on it, the log says what it was */
		if (p->logged)
			lr_ctl_log("%s: not a linerate controller (it sent %s): closed", p->peer, err);
		pend_free(t, p, true);
		return;
	}
	if (ret < 0) {
		/* out of step, or another version: say why, then close */
		if (p->logged)
			lr_ctl_log("%s: %s: closed", p->peer, err);
		pend_reply(t, p, lr_msg_error(LR_EXIT_USAGE, "%s", err), AFTER_CLOSE);
		return;
	}
	rep = lr_ctl_handshake_on(&p->hs, m, p->logged ? p->peer : NULL, &quit);
	json_object_put(m);
	if (quit)
		pend_reply(t, p, rep, AFTER_CLOSE);
	else if (lr_ctl_handshake_done(&p->hs))
		pend_done(t, p, rep);
	else
		pend_reply(t, p, rep, AFTER_READ);
}

/* Connections past their deadline closed: silent ones counted only, the others said too. */
static void expire(struct lr_pending *t)
{
	int64_t now = lr_now_ms();
	unsigned int i;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *p = &t->pend[i];

		if (p->fd < 0 || p->held || now < p->deadline_ms)
			continue;
		if (p->logged && !p->out)
			lr_ctl_log("%s: no %s within %d ms: closed", p->peer, p->hs.hello ? "auth" : "hello",
				   HANDSHAKE_MS);
		else if (p->logged)
			lr_ctl_log("%s: took no reply within %d ms: closed", p->peer, REPLY_MS);
		t->o.m->refused_timeout++;
		t->sum_timeout++;
		pend_free(t, p, true);
	}
}

/* At most one line per SUMMARY_MS for what was dropped unsaid, and the log budget renewed. */
static void summary(struct lr_pending *t)
{
	int64_t now = lr_now_ms();
	char line[512];
	size_t n = 0;

	if (now - t->sum_at < SUMMARY_MS)
		return;
	if (t->sum_full)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%llu over the cap (%d at once, %d per address)",
				      (unsigned long long)t->sum_full, PENDING_FULL, PENDING_PER_SOURCE);
	if (t->sum_timeout && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "%s%llu past the handshake's deadline (%d ms to the first byte, %d ms to auth)",
				      n ? ", " : "", (unsigned long long)t->sum_timeout, FIRST_BYTE_MS, HANDSHAKE_MS);
	if (t->sum_unlogged && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%llu not logged one by one", n ? "; " : "",
				      (unsigned long long)t->sum_unlogged);
	if (n)
		lr_ctl_log("unauthenticated connections closed in the last %d s: %s", (int)((now - t->sum_at) / 1000),
			   line);
	t->sum_at = now;
	t->sum_full = t->sum_timeout = t->sum_unlogged = 0;
	t->log_left = LOG_BUDGET;
	t->accept_said = false;
}

int lr_pending_open(const struct lr_pending_opts *o, struct lr_pending **out)
{
	struct lr_pending *t = calloc(1, sizeof(*t));
	unsigned int i;

	if (!t)
		return -ENOMEM;
	t->o = *o;
	for (i = 0; i < PENDING_FULL; i++)
		t->pend[i].fd = -1;
	t->sum_at = lr_now_ms();
	t->log_left = LOG_BUDGET;
	*out = t;
	return 0;
}

/* Every pending connection closed but @keep's (a session's child: none of the others is its to hold). */
void lr_pending_drop_all(struct lr_pending *t, int keep)
{
	unsigned int i;

	for (i = 0; i < PENDING_FULL; i++)
		if (t->pend[i].fd >= 0)
			pend_free(t, &t->pend[i], t->pend[i].fd != keep);
}

void lr_pending_close(struct lr_pending *t)
{
	if (!t)
		return;
	lr_pending_drop_all(t, -1);
	free(t);
}

int lr_pending_accept_wait(const struct lr_pending *t)
{
	int64_t left = t->accept_at - lr_now_ms();

	return left > 0 ? (int)left : 0;
}

int lr_pending_fds(struct lr_pending *t, struct pollfd *p, int *timeout_ms)
{
	int64_t now = lr_now_ms();
	unsigned int i;
	int n = 0;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *q = &t->pend[i];
		int64_t left;

		if (q->fd < 0)
			continue;
		left = q->deadline_ms - now;
		if (left < *timeout_ms)
			*timeout_ms = left < 0 ? 0 : (int)left;
		if (q->held)
			continue;
		p[n] = (struct pollfd){ .fd = q->fd, .events = q->out ? POLLOUT : POLLIN };
		t->slot[n++] = q;
	}
	return n;
}

void lr_pending_serve(struct lr_pending *t, const struct pollfd *p, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct pending *q = t->slot[i];

		/* a slot freed by an earlier one's eviction, or already served */
		if (!p[i].revents || q->fd != p[i].fd)
			continue;
		if (q->out)
			pend_flush(t, q);
		else
			pend_read(t, q);
	}
	pend_release(t);
}

void lr_pending_accept(struct lr_pending *t, int lfd)
{
	unsigned int i;

	t->burst_seq = t->seq;
	for (i = 0; i < ACCEPT_BURST; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0 && (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED))
			return;
		if (fd < 0) {
			/*
			 * EMFILE, ENFILE, ENOBUFS: the connection stays queued and the listener
			 * readable, so polled at once the loop would spin on it until fds are freed
			 */
			if (!t->accept_said)
				lr_ctl_log("accept: %s: new connections wait in the queue (said once per %d s)",
					   strerror(errno), SUMMARY_MS / 1000);
			t->accept_said = true;
			t->accept_at = lr_now_ms() + ACCEPT_PAUSE_MS;
			return;
		}
		admit(t, fd, &ss);
	}
}

void lr_pending_expire(struct lr_pending *t)
{
	expire(t);
	summary(t);
}
