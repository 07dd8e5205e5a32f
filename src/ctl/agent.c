/* SPDX-License-Identifier: MIT */
/*
 * The agent's parent: listens, logs one line per event, forks one session at a time (a session is
 * an endpoint, ctl/endpoint.c), answers "busy" meanwhile, serves --metrics from the same loop, and
 * on SIGTERM ends the session first.
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "ctl/agent.h"
#include "ctl/ctl.h"
#include "ctl/exporter.h"
#include "ctl/metrics.h"
#include "ctl/msg.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/version.h"

#define DEADMAN_MS	2000	/* a session without a message this long ends its test */
#define BUSY_HELLO_MS	2000	/* a second controller's hello, read to answer it "busy" */
#define BUSY_MSG_MAX	65536
#define TERM_MS		5000	/* a session asked to end gets this long before SIGKILL */
#define POLL_MS		500
#define ENDING_MS	3000	/* a session ending its test, waited for by a new controller */

struct agent {
	const struct lr_agent_opts *o;
	const struct lr_auth_key *key;
	int lfd;
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
static int session(struct agent *a, int fd, int status_w)
{
	const struct lr_ctl_serve_opts so = {
		.tx = true,
		.deadman_ms = DEADMAN_MS,
		.key = a->key,
		.policy = true,
		.allow = a->o->allow,
		.nallow = a->o->nallow,
		.allow_physical = a->o->allow_physical,
		.log = true,
		.peer = a->peer,
		.status_fd = status_w,
		.metrics = a->shm,
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

/* A connection while a session runs: its hello answered with "busy", then closed. */
static void refuse_busy(struct agent *a, int fd, const char *peer)
{
	struct json_object *m;
	char err[256], since[64];
	struct tm tm;
	int ret;

	gmtime_r(&a->since, &tm);
	strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	ret = lr_msg_recv(fd, BUSY_MSG_MAX, BUSY_HELLO_MS, &m, err, sizeof(err));
	if (ret == -ECONNRESET) {
		/* closed without a word: a TCP probe, not a controller turned away */
		if (a->o->verbose)
			lr_ctl_log("%s: closed without a message (a TCP probe?)", peer);
		close(fd);
		return;
	}
	a->m.refused_busy++;
	if (!ret && !strcmp(lr_msg_type(m), "hello")) {
		json_object_put(m);
		m = lr_msg_new("busy");
		json_object_object_add(m, "test", json_object_new_string(a->test));
		json_object_object_add(m, "since", json_object_new_string(since));
		json_object_object_add(m, "since_s", json_object_new_int64((int64_t)(time(NULL) - a->since)));
		lr_msg_send(fd, m, BUSY_HELLO_MS, err, sizeof(err));
	}
	json_object_put(m);
	lr_ctl_log("%s: refused: busy with %s since %s", peer, a->test, since);
	close(fd);
}

static void start_session(struct agent *a, int fd, const char *peer, int *code)
{
	int sv[2];

	if (pipe2(sv, O_CLOEXEC | O_NONBLOCK)) {
		lr_ctl_log("%s: refused: cannot make a status pipe: %s", peer, strerror(errno));
		a->m.refused_error++;
		close(fd);
		return;
	}
	fflush(NULL);
	a->child = fork();
	if (a->child < 0) {
		lr_ctl_log("%s: refused: cannot fork: %s", peer, strerror(errno));
		a->child = 0;
		a->m.refused_error++;
		close(sv[0]);
		close(sv[1]);
		close(fd);
		return;
	}
	if (!a->child) {
		a->status_fd = sv[0];
		snprintf(a->peer, sizeof(a->peer), "%s", peer);
		*code = -1 - session(a, fd, sv[1]);
		return;
	}
	close(sv[1]);
	close(fd);
	a->status_fd = sv[0];
	a->busy = true;
	a->ending = false;
	a->heard = false;
	a->since = time(NULL);
	snprintf(a->peer, sizeof(a->peer), "%s", peer);
	lr_msg(a->test, sizeof(a->test), "a session with %s, not yet prepared", peer);
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
			a->m.sessions++;
		} else
			lr_msg(a->test, sizeof(a->test), "%s", line);
	}
}

/*
 * A new controller while a session ends its test, or while one has heard nothing yet (a TCP probe
 * closing, most likely): it waits (a moment) rather than hear "busy".
 */
static void await_ending(struct agent *a)
{
	int64_t end = lr_now_ms() + ENDING_MS;

	read_status(a);
	while (a->busy && (a->ending || !a->heard) && lr_now_ms() < end) {
		struct pollfd p = { .fd = a->status_fd, .events = POLLIN };

		poll(&p, 1, 50);
		read_status(a);
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

static void accept_one(struct agent *a, int *code)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char peer[LR_HOSTPORT_MAX + 8];
	int fd;

	fd = accept4(a->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
			lr_ctl_log("accept: %s", strerror(errno));
		return;
	}
	lr_ctl_sockaddr_name((struct sockaddr *)&ss, peer, sizeof(peer));
	await_ending(a);
	if (a->busy) {
		refuse_busy(a, fd, peer);
		return;
	}
	/* "connected" is the session's to say, once its controller has said something */
	start_session(a, fd, peer, code);
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

int lr_agent_serve(const struct lr_agent_opts *o, const struct lr_ctl_addr *addr, const struct lr_ctl_addr *metrics,
		   const struct lr_auth_key *key)
{
	struct agent a = { .o = o, .key = key, .parent = getpid(), .status_fd = -1 };
	char err[512], name[LR_HOSTPORT_MAX + 8], allow[512] = "";
	size_t off = 0;
	unsigned int i;
	int code = LR_EXIT_OK, ret;

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
	while (!lr_stop) {
		struct pollfd p[2 + LR_EXPORTER_FDS] = { { .fd = a.lfd, .events = POLLIN },
							 { .fd = a.status_fd, .events = POLLIN } };
		int timeout = POLL_MS, n = 2;

		if (a.ex)
			n += lr_exporter_fds(a.ex, p + 2, &timeout);
		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		reap(&a, 0);
		if (p[1].revents & (POLLIN | POLLHUP))
			read_status(&a);
		if (a.ex) {
			a.m.busy = a.busy;
			lr_exporter_serve(a.ex, p + 2, n - 2, &a.m);
		}
		if (!lr_stop && (p[0].revents & POLLIN)) {
			accept_one(&a, &code);
			if (code < 0)
				return code;	/* the session's child, done */
		}
	}
	shut_down(&a);
	metrics_close(&a);
	close(a.lfd);
	if (o->ready_file[0])
		unlink(o->ready_file);
	lr_ctl_log("stopped");
	return LR_EXIT_OK;
}
