/* SPDX-License-Identifier: MIT */
/*
 * The agent's parent: listens, does the handshake (hello, auth) of many connections at once in one
 * poll loop, each bounded in bytes and time and all of them capped, forks one session at a time
 * for an authenticated controller (a session is an endpoint, ctl/endpoint.c), answers "busy"
 * meanwhile, serves --metrics from the same loop, and on SIGTERM ends the session first.
 */
#define _GNU_SOURCE	/* accept4() */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sodium.h>
#include "ctl/agent.h"
#include "ctl/ctl.h"
#include "ctl/exporter.h"
#include "ctl/handshake.h"
#include "ctl/metrics.h"
#include "ctl/msg.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/version.h"

#define DEADMAN_MS	2000	/* a session without a message this long ends its test */
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
#define PENDING_FULL	100
#define PENDING_PER_SOURCE	10
#define IDLE_MS		200	/* nothing from a connection this long (none yet): closed first for a newcomer */
#define ACCEPT_BURST	64	/* accepted per turn of the loop, so its other fds get theirs */
#define ACCEPT_PAUSE_MS	100	/* accept() failing (out of fds): the listener left out of poll this long */
#define SUMMARY_MS	10000	/* dropped connections: one line at most this often, with the counts */
#define LOG_BUDGET	40	/* lines about unauthenticated connections per SUMMARY_MS; the rest counted */
#define TERM_MS		5000	/* a session asked to end gets this long before SIGKILL */
#define POLL_MS		500
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

struct agent {
	const struct lr_agent_opts *o;
	const struct lr_auth_key *key;
	int lfd;
	int64_t accept_at;	/* the listener polled again from then on (accept() failed) */
	pid_t parent;
	pid_t child;	/* the last session's process until it is reaped, 0: none */
	/*
	 * A test runs while its session's status pipe is open: the session closes it once its test
	 * is ended and detached, which may be a moment before its process is gone.
	 */
	bool busy;
	bool ending;	/* it said it is ending its test */
	bool heard;	/* its controller sent a message (else: a TCP probe, kept out of the log) */
	int status_fd;	/* its read end */
	char peer[LR_HOSTPORT_MAX + 8];	/* its controller */
	char test[256];	/* what it runs, as it said */
	time_t since;
	/* --metrics: the listener, the region sessions publish their test in, and the parent's own counts */
	struct lr_exporter *ex;
	struct lr_metrics_shm *shm;
	struct lr_metrics_agent m;
	/* the handshakes under way; claimed: the one whose last reply is on its way to become the session */
	struct pending pend[PENDING_FULL];
	unsigned int npend;
	uint64_t seq, burst_seq;	/* the next connection's number, and the first one of this accept burst */
	struct pending *claimed;
	/* since the last summary line */
	int64_t sum_at;
	uint64_t sum_full, sum_timeout, sum_unlogged;
	unsigned int log_left;
	bool accept_said;	/* a failing accept() logged */
};

static void on_signal(int sig)
{
	lr_stop = sig;
}

/* Only to wake poll(): the loop reaps with waitpid(WNOHANG). */
static void on_child(int sig)
{
	(void)sig;
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa = { .sa_handler = fn };

	/* no SA_RESTART: poll() returns EINTR, so a signal is seen at once */
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* In the forked child: one controller's session, then the child's exit code. */
static int session(struct agent *a, int fd, int status_w, const struct lr_ctl_handshake *hs)
{
	const struct lr_ctl_serve_opts so = {
		.tx = true,
		.deadman_ms = DEADMAN_MS,
		.key = a->key,
		.policy = true,
		.allow = a->o->allow,
		.nallow = a->o->nallow,
		.allow_physical = a->o->allow_physical,
		.capture_fd = a->o->capture_fd,
		.allow_netns = a->o->allow_netns,
		.nallow_netns = a->o->nallow_netns,
		.log = true,
		.peer = a->peer,
		.status_fd = status_w,
		.metrics = a->shm,
		.handshake = hs,
		.parent = a->parent,
	};
	int code;

	close(a->lfd);
	close(a->status_fd);
	/* the parent answers scrapers; this process only publishes into a->shm */
	lr_exporter_close(a->ex);
	a->ex = NULL;
	handle(SIGCHLD, SIG_DFL);
	/*
	 * The agent killed, even by SIGKILL: its session ends its test too, as on SIGTERM. The
	 * endpoint tells the two apart by its parent (so.parent): after the death it is another.
	 */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != a->parent)
		lr_stop = SIGTERM;
	code = lr_ctl_serve(fd, &so);
	close(fd);
	close(status_w);
	return code;
}

/* "busy" for a controller that authenticated while a session runs. */
static struct json_object *busy_msg(struct agent *a, const char *peer)
{
	struct json_object *m = lr_msg_new("busy");
	char since[64];
	struct tm tm;

	gmtime_r(&a->since, &tm);
	strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(m, "test", json_object_new_string(a->test));
	json_object_object_add(m, "since", json_object_new_string(since));
	json_object_object_add(m, "since_s", json_object_new_int64((int64_t)(time(NULL) - a->since)));
	a->m.refused_busy++;
	lr_ctl_log("%s: refused: busy with %s since %s", peer, a->test, since);
	return m;
}

/* Frees @p's slot; its socket closed unless handed on (@close_fd false). */
static void pend_free(struct agent *a, struct pending *p, bool close_fd)
{
	if (close_fd)
		close(p->fd);
	if (a->claimed == p)
		a->claimed = NULL;
	lr_msg_reader_reset(&p->rd);
	json_object_put(p->held);
	free(p->out);
	*p = (struct pending){ .fd = -1 };
	a->npend--;
}

/* Every pending connection closed but @keep's (a session's child: none of the others is its to hold). */
static void pend_drop_all(struct agent *a, int keep)
{
	unsigned int i;

	for (i = 0; i < PENDING_FULL; i++)
		if (a->pend[i].fd >= 0)
			pend_free(a, &a->pend[i], a->pend[i].fd != keep);
}

/*
 * The session of @p forked, @p's slot freed (in the child: the others' too): 0, or -errno with why
 * in @err, @p kept then, since its controller heard its handshake's last reply and is to be told.
 */
static int start_session(struct agent *a, struct pending *p, char *err, size_t errlen)
{
	struct lr_ctl_handshake h = p->hs;
	char peer[sizeof(p->peer)];
	int sv[2], fd = p->fd, ret;
	pid_t pid;

	if (pipe2(sv, O_CLOEXEC | O_NONBLOCK)) {
		ret = -errno;
		snprintf(err, errlen, "cannot make a status pipe: %s", strerror(-ret));
		return ret;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot fork: %s", strerror(-ret));
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	snprintf(peer, sizeof(peer), "%s", p->peer);
	a->child = pid;
	if (!pid) {
		a->status_fd = sv[0];
		snprintf(a->peer, sizeof(a->peer), "%s", peer);
		pend_drop_all(a, fd);
		/* blocking again, as a session's stream always was: it keeps deadlines of its own */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		/* the session's process ends here, not by unwinding through the agent's loop */
		ret = session(a, fd, sv[1], &h);
		fflush(NULL);
		_exit(ret);
	}
	pend_free(a, p, true);
	close(sv[1]);
	a->status_fd = sv[0];
	a->busy = true;
	a->ending = false;
	a->heard = true;
	a->m.sessions++;
	a->since = time(NULL);
	snprintf(a->peer, sizeof(a->peer), "%s", peer);
	lr_msg(a->test, sizeof(a->test), "a session with %s, not yet prepared", peer);
	return 0;
}

/* The session's status lines: the last one says what it runs; the pipe's end, that it is over. */
static void read_status(struct agent *a)
{
	char buf[512], *line, *save = NULL;
	ssize_t n;

	if (!a->busy)
		return;
	n = read(a->status_fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return;	/* nothing new (EAGAIN) */
	if (!n) {
		if (a->heard)
			lr_ctl_log("%s: session ended", a->peer);
		else if (a->o->verbose)
			lr_ctl_log("%s: closed without a message (a TCP probe?)", a->peer);
		a->busy = false;
		close(a->status_fd);
		a->status_fd = -1;
		return;
	}
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, LR_CTL_STATUS_ENDING)) {
			a->ending = true;
		} else if (!strcmp(line, LR_CTL_STATUS_HEARD)) {
			a->heard = true;
		} else
			lr_msg(a->test, sizeof(a->test), "%s", line);
	}
}

/* Collects ended sessions' processes; with @wait_ms, waits that long for the last one to end. */
static void reap(struct agent *a, int wait_ms)
{
	int64_t end = lr_now_ms() + wait_ms;
	int status;
	pid_t p;

	for (;;) {
		p = waitpid(-1, &status, WNOHANG);
		if (p > 0 && p == a->child) {
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
				lr_ctl_log("%s: session killed", a->peer);
			a->child = 0;
			/* the last session's process, so no other writer: what a crash left undone */
			if (a->shm)
				lr_metrics_recover(a->shm);
			read_status(a);
		}
		if (p > 0)
			continue;
		if (!a->child || lr_now_ms() >= end)
			return;
		usleep(20000);
	}
}

/* ---- the handshakes, many at once, none able to block the loop ---------------------------------- */

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

static unsigned int from_source(const struct agent *a, const unsigned char src[17])
{
	unsigned int i, n = 0;

	for (i = 0; i < PENDING_FULL; i++)
		n += a->pend[i].fd >= 0 && !memcmp(a->pend[i].src, src, 17);
	return n;
}

/* A line about an unauthenticated connection, within the budget; else only counted. */
static bool may_log(struct agent *a)
{
	if (a->log_left) {
		a->log_left--;
		return true;
	}
	a->sum_unlogged++;
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
static struct pending *pick(struct agent *a, const unsigned char *src)
{
	int64_t now = lr_now_ms();
	struct pending *best = NULL;
	unsigned int i, best_n = 0;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *p = &a->pend[i];
		unsigned int n;

		if (p->fd < 0 || lr_ctl_handshake_done(&p->hs) || p->seq >= a->burst_seq ||
		    (src && memcmp(p->src, src, 17)))
			continue;
		n = (src ? 0 : from_source(a, p->src) * 4) + (now - p->active_ms >= IDLE_MS) * 2 + !p->spoke + 1;
		if (n > best_n || (n == best_n && p->seq < best->seq)) {
			best = p;
			best_n = n;
		}
	}
	return best;
}

static struct pending *victim(struct agent *a, const unsigned char *src)
{
	struct pending *v;

	/* each round that finds its choice spoke after all marks it so: at most PENDING_FULL rounds */
	do
		v = pick(a, src);
	while (v && !v->spoke && !silent(v));
	return v;
}

/* A new connection in, or dropped by the cap (counted, not logged). */
static void admit(struct agent *a, int fd, const struct sockaddr_storage *ss)
{
	unsigned char src[17];
	struct pending *p = NULL, *v;
	unsigned int i, mine;
	bool over;

	source_of(ss, src);
	mine = from_source(a, src);
	over = mine >= PENDING_PER_SOURCE;
	if (!over && a->npend >= PENDING_START && mine) {
		uint32_t chance = a->npend >= PENDING_FULL ? 100 :
				  PENDING_RATE + (100 - PENDING_RATE) * (a->npend - PENDING_START) /
				  (PENDING_FULL - PENDING_START);

		over = randombytes_uniform(100) < chance;
	}
	if (over || a->npend >= PENDING_FULL) {
		/* over its share: its own address gives up one; else the table is full */
		v = victim(a, over ? src : NULL);
		if (!v)
			goto drop;
		if (v->logged)
			lr_ctl_log("%s: closed before its handshake ended, for a newer connection (%d at once, %d per "
				   "address)", v->peer, PENDING_FULL, PENDING_PER_SOURCE);
		pend_free(a, v, true);
		a->m.refused_full++;
		a->sum_full++;
	}
	for (i = 0; i < PENDING_FULL && !p; i++)
		if (a->pend[i].fd < 0)
			p = &a->pend[i];
	*p = (struct pending){ .fd = fd, .since_ms = lr_now_ms(), .seq = a->seq++ };
	p->active_ms = p->since_ms;
	memcpy(p->src, src, sizeof(p->src));
	lr_ctl_sockaddr_name((const struct sockaddr *)ss, p->peer, sizeof(p->peer));
	p->deadline_ms = p->since_ms + FIRST_BYTE_MS;
	lr_ctl_handshake_init(&p->hs, a->key, true);
	a->npend++;
	return;
drop:
	close(fd);
	a->m.refused_full++;
	a->sum_full++;
}

static void accept_some(struct agent *a)
{
	unsigned int i;

	a->burst_seq = a->seq;
	for (i = 0; i < ACCEPT_BURST; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(a->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0 && (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED))
			return;
		if (fd < 0) {
			/*
			 * EMFILE, ENFILE, ENOBUFS: the connection stays queued and the listener
			 * readable, so polled at once the loop would spin on it until fds are freed
			 */
			if (!a->accept_said)
				lr_ctl_log("accept: %s: new connections wait in the queue (said once per %d s)",
					   strerror(errno), SUMMARY_MS / 1000);
			a->accept_said = true;
			a->accept_at = lr_now_ms() + ACCEPT_PAUSE_MS;
			return;
		}
		admit(a, fd, &ss);
	}
}

static void pend_flush(struct agent *a, struct pending *p);

/* @rep (freed here) on its way to @p, then @after. */
static void pend_reply(struct agent *a, struct pending *p, struct json_object *rep, enum after after)
{
	char err[256];

	if (lr_msg_frame(rep, &p->out, &p->out_len, err, sizeof(err))) {
		json_object_put(rep);
		pend_free(a, p, true);
		return;
	}
	json_object_put(rep);
	p->out_off = 0;
	p->after = after;
	if (after == AFTER_SESSION)
		a->claimed = p;
	pend_flush(a, p);
}

/* What the handshake's last reply @rep leads to: a session, "busy", or a wait while one ends. */
static void pend_done(struct agent *a, struct pending *p, struct json_object *rep)
{
	if (!p->logged) {
		/* a controller: its lines were held back (a flood's budget), not these */
		lr_ctl_log("%s: connected", p->peer);
		if (a->key)
			lr_ctl_log("%s: authenticated", p->peer);
		p->logged = true;
	}
	if (a->busy && a->ending && !a->claimed) {
		/* it is told once the session is gone, rather than hear "busy" for a moment's teardown */
		p->held = rep;
		p->deadline_ms = lr_now_ms() + ENDING_MS;
		return;
	}
	if (a->busy || a->claimed) {
		json_object_put(rep);
		p->deadline_ms = lr_now_ms() + REPLY_MS;
		pend_reply(a, p, busy_msg(a, p->peer), AFTER_CLOSE);
		return;
	}
	pend_reply(a, p, rep, AFTER_SESSION);
}

/* Held ones: a session once the ending one is gone; "busy" if another began, or past their wait. */
static void pend_release(struct agent *a)
{
	int64_t now = lr_now_ms();
	unsigned int i;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *p = &a->pend[i];
		struct json_object *rep = p->held;

		if (p->fd < 0 || !rep)
			continue;
		if (!a->busy && !a->claimed) {
			p->held = NULL;
			pend_reply(a, p, rep, AFTER_SESSION);
		} else if ((a->busy && !a->ending) || now >= p->deadline_ms) {
			p->held = NULL;
			json_object_put(rep);
			p->deadline_ms = now + REPLY_MS;
			pend_reply(a, p, busy_msg(a, p->peer), AFTER_CLOSE);
		}
	}
}

static void pend_flush(struct agent *a, struct pending *p)
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
			pend_free(a, p, true);
			return;
		}
		p->out_off += (size_t)n;
	}
	free(p->out);
	p->out = NULL;
	p->active_ms = lr_now_ms();	/* the peer's turn */
	if (p->after == AFTER_CLOSE) {
		pend_free(a, p, true);
	} else if (p->after == AFTER_SESSION) {
		char err[256];

		if (start_session(a, p, err, sizeof(err))) {
			/* it heard "ok" (or, with no token, hello): an error, not a stream closed unsaid */
			lr_ctl_log("%s: refused: %s", p->peer, err);
			a->m.refused_error++;
			a->claimed = NULL;
			p->deadline_ms = lr_now_ms() + REPLY_MS;
			pend_reply(a, p, lr_msg_error(LR_EXIT_RUNTIME, "the agent %s", err), AFTER_CLOSE);
		}
	}
}

/* What came on @p: a message answered, or the connection's end. */
static void pend_read(struct agent *a, struct pending *p)
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
		if (!p->connected && a->o->verbose)
			lr_ctl_log("%s: closed without a message (a TCP probe?)", p->peer);
		if (p->logged)
			lr_ctl_handshake_left(&p->hs, p->peer);
		pend_free(a, p, true);
		return;
	}
	p->deadline_ms = p->since_ms + HANDSHAKE_MS;
	if (!p->connected) {
		p->connected = true;
		p->logged = may_log(a);
		if (p->logged)
			lr_ctl_log("%s: connected", p->peer);
	}
	if (ret == -EPROTOTYPE) {
		/* an HTTP or SSH client: a word would be lost on it, the log says what it was */
		if (p->logged)
			lr_ctl_log("%s: not a linerate controller (it sent %s): closed", p->peer, err);
		pend_free(a, p, true);
		return;
	}
	if (ret < 0) {
		/* out of step, or another version: say why, then close */
		if (p->logged)
			lr_ctl_log("%s: %s: closed", p->peer, err);
		pend_reply(a, p, lr_msg_error(LR_EXIT_USAGE, "%s", err), AFTER_CLOSE);
		return;
	}
	rep = lr_ctl_handshake_on(&p->hs, m, p->logged ? p->peer : NULL, &quit);
	json_object_put(m);
	if (quit)
		pend_reply(a, p, rep, AFTER_CLOSE);
	else if (lr_ctl_handshake_done(&p->hs))
		pend_done(a, p, rep);
	else
		pend_reply(a, p, rep, AFTER_READ);
}

/* Connections past their deadline closed: silent ones counted only, the others said too. */
static void pend_expire(struct agent *a)
{
	int64_t now = lr_now_ms();
	unsigned int i;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *p = &a->pend[i];

		if (p->fd < 0 || p->held || now < p->deadline_ms)
			continue;
		if (p->logged && !p->out)
			lr_ctl_log("%s: no %s within %d ms: closed", p->peer, p->hs.hello ? "auth" : "hello",
				   HANDSHAKE_MS);
		else if (p->logged)
			lr_ctl_log("%s: took no reply within %d ms: closed", p->peer, REPLY_MS);
		a->m.refused_timeout++;
		a->sum_timeout++;
		pend_free(a, p, true);
	}
}

/* At most one line per SUMMARY_MS for what was dropped unsaid, and the log budget renewed. */
static void pend_summary(struct agent *a)
{
	int64_t now = lr_now_ms();
	char line[512];
	size_t n = 0;

	if (now - a->sum_at < SUMMARY_MS)
		return;
	if (a->sum_full)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%llu over the cap (%d at once, %d per address)",
				      (unsigned long long)a->sum_full, PENDING_FULL, PENDING_PER_SOURCE);
	if (a->sum_timeout && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "%s%llu past the handshake's deadline (%d ms to the first byte, %d ms to auth)",
				      n ? ", " : "", (unsigned long long)a->sum_timeout, FIRST_BYTE_MS, HANDSHAKE_MS);
	if (a->sum_unlogged && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%llu not logged one by one", n ? "; " : "",
				      (unsigned long long)a->sum_unlogged);
	if (n)
		lr_ctl_log("unauthenticated connections closed in the last %d s: %s", (int)((now - a->sum_at) / 1000),
			   line);
	a->sum_at = now;
	a->sum_full = a->sum_timeout = a->sum_unlogged = 0;
	a->log_left = LOG_BUDGET;
	a->accept_said = false;
}

/* The pending connections to poll into @p (their slots into @slot), @timeout_ms lowered to the nearest deadline. */
static int pend_fds(struct agent *a, struct pollfd *p, struct pending **slot, int *timeout_ms)
{
	int64_t now = lr_now_ms();
	unsigned int i;
	int n = 0;

	for (i = 0; i < PENDING_FULL; i++) {
		struct pending *q = &a->pend[i];
		int64_t left;

		if (q->fd < 0)
			continue;
		left = q->deadline_ms - now;
		if (left < *timeout_ms)
			*timeout_ms = left < 0 ? 0 : (int)left;
		if (q->held)
			continue;
		p[n] = (struct pollfd){ .fd = q->fd, .events = q->out ? POLLOUT : POLLIN };
		slot[n++] = q;
	}
	return n;
}

static void pend_serve(struct agent *a, const struct pollfd *p, struct pending *const *slot, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct pending *q = slot[i];

		/* a slot freed by an earlier one's eviction, or already served */
		if (!p[i].revents || q->fd != p[i].fd)
			continue;
		if (q->out)
			pend_flush(a, q);
		else
			pend_read(a, q);
	}
}

/* The end: a running session is told to end its test (SIGTERM) and waited for, then killed. */
static void shut_down(struct agent *a)
{
	lr_ctl_log("stopping (%s)%s", lr_stop == SIGINT ? "SIGINT" : "SIGTERM",
		   a->busy ? ": ending the running test first" : "");
	if (a->child) {
		kill(a->child, SIGTERM);
		reap(a, TERM_MS);
	}
	if (a->child) {
		lr_ctl_log("%s: the session did not end within %d ms: killed", a->peer, TERM_MS);
		kill(a->child, SIGKILL);
		reap(a, TERM_MS);
	}
}

/* --metrics: the region sessions publish in (before any fork, so every session shares it), the listener. */
static int metrics_open(struct agent *a, const struct lr_ctl_addr *addr)
{
	struct lr_metrics_test t = { 0 };
	struct timespec ts;
	char err[512], name[LR_HOSTPORT_MAX + 8];
	void *p;

	p = mmap(NULL, sizeof(*a->shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return lr_fail(LR_EXIT_RUNTIME, "agent", "--metrics: cannot map a shared region: %s", strerror(errno));
	a->shm = p;
	t.cost_sender_ns = t.cost_sender_err_ns = t.cost_receiver_ns = t.cost_receiver_err_ns = NAN;
	lr_metrics_publish(a->shm, &t);
	if (lr_exporter_open(addr, a->shm, &a->ex, err, sizeof(err))) {
		munmap(a->shm, sizeof(*a->shm));
		a->shm = NULL;
		return lr_fail(LR_EXIT_USAGE, "agent", "--metrics: %s", err);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	a->m = (struct lr_metrics_agent){
		.release = lr_release(),
		.revision = lr_revision(),
		.start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
	};
	lr_ctl_addr_name(addr, name, sizeof(name));
	lr_ctl_log("metrics on http://%s/metrics (no auth: counts and state only)", name);
	return 0;
}

static void metrics_close(struct agent *a)
{
	lr_exporter_close(a->ex);
	a->ex = NULL;
	if (a->shm)
		munmap(a->shm, sizeof(*a->shm));
	a->shm = NULL;
}

/* What a controller may ask beyond interfaces: captures, namespaces (docs/protocol.md). */
static void log_grants(const struct lr_agent_opts *o)
{
	char list[1024] = "";
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < o->nallow_netns && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", o->allow_netns[i]);
	lr_ctl_log("requests may capture %s%s; enter %s%s", o->capture_dir[0] ? "into " : "nothing (no --capture-dir)",
		   o->capture_dir, o->nallow_netns ? "the namespaces matching " : "no other namespace (no --allow-netns)",
		   list);
}

int lr_agent_serve(const struct lr_agent_opts *o, const struct lr_ctl_addr *addr, const struct lr_ctl_addr *metrics,
		   const struct lr_auth_key *key)
{
	struct agent a = { .o = o, .key = key, .parent = getpid(), .status_fd = -1 };
	char err[512], name[LR_HOSTPORT_MAX + 8], allow[512] = "";
	size_t off = 0;
	unsigned int i;
	int ret;

	for (i = 0; i < PENDING_FULL; i++)
		a.pend[i].fd = -1;
	a.sum_at = lr_now_ms();
	a.log_left = LOG_BUDGET;
	handle(SIGTERM, on_signal);
	handle(SIGINT, on_signal);
	handle(SIGCHLD, on_child);
	signal(SIGPIPE, SIG_IGN);
	if (lr_ctl_listen(addr, &a.lfd, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "agent", "--listen: %s", err);
	if (metrics && (ret = metrics_open(&a, metrics))) {
		close(a.lfd);
		return ret;
	}
	if (o->ready_file[0] && lr_out_pidfile(o->ready_file, err, sizeof(err))) {
		metrics_close(&a);
		close(a.lfd);
		return lr_fail(LR_EXIT_RUNTIME, "agent", "--ready-file: %s", err);
	}
	for (i = 0; i < o->nallow && off < sizeof(allow); i++)
		off += (size_t)snprintf(allow + off, sizeof(allow) - off, "%s%s", i ? ", " : "", o->allow[i]);
	lr_ctl_addr_name(addr, name, sizeof(name));
	lr_ctl_log("listening on %s (%s); serving %s%s", name,
		   key ? "a token is required" : "no token: anyone who reaches this address may run tests",
		   o->nallow ? allow : "every interface but physical NICs",
		   o->nallow && o->allow_physical ? ", physical NICs included" :
		   o->nallow ? ", never a physical NIC" : "");
	log_grants(o);
	while (!lr_stop) {
		struct pollfd p[2 + LR_EXPORTER_FDS + PENDING_FULL] = { { .fd = a.lfd, .events = POLLIN },
									{ .fd = a.status_fd, .events = POLLIN } };
		struct pending *slot[PENDING_FULL];
		int timeout = POLL_MS, n = 2, nx = 0, np;
		int64_t now = lr_now_ms();

		if (now < a.accept_at) {
			p[0].fd = -1;	/* poll() skips it */
			timeout = (int)(a.accept_at - now);
		}
		if (a.ex)
			nx = lr_exporter_fds(a.ex, p + 2, &timeout);
		np = pend_fds(&a, p + 2 + nx, slot, &timeout);
		n += nx + np;
		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		reap(&a, 0);
		if (p[1].revents & (POLLIN | POLLHUP))
			read_status(&a);
		if (a.ex) {
			a.m.busy = a.busy;
			lr_exporter_serve(a.ex, p + 2, nx, &a.m);
		}
		if (lr_stop)
			break;
		pend_serve(&a, p + 2 + nx, slot, np);
		pend_release(&a);
		if (p[0].revents & POLLIN)
			accept_some(&a);
		pend_expire(&a);
		pend_summary(&a);
	}
	pend_drop_all(&a, -1);
	shut_down(&a);
	metrics_close(&a);
	close(a.lfd);
	if (o->ready_file[0])
		unlink(o->ready_file);
	lr_ctl_log("stopped");
	return LR_EXIT_OK;
}
