/* SPDX-License-Identifier: MIT */
/*
 * The agent's parent: listens, and in one poll loop has the handshakes (hello, auth) of many
 * connections done at once (ctl/agent_pending.c), forks one session at a time for an authenticated
 * controller (a session is an endpoint, ctl/endpoint.c), answers "busy" meanwhile, serves --metrics
 * from the same loop, and on SIGTERM ends the session first.
 */
#define _GNU_SOURCE	/* pipe2() */
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
#include <sys/wait.h>
#include "ctl/agent.h"
#include "ctl/agent_pending.h"
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
#define TERM_MS		5000	/* a session asked to end gets this long before SIGKILL */
#define POLL_MS		500

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
	/* the handshakes under way, each that passes handed back through pending_ops */
	struct lr_pending *pend;
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

/* ---- what the pre-auth table (ctl/agent_pending.c) asks of the session ------------------------- */

static bool is_busy(void *ctx)
{
	return ((const struct agent *)ctx)->busy;
}

static bool is_ending(void *ctx)
{
	return ((const struct agent *)ctx)->ending;
}

/* "busy" for a controller that authenticated while a session runs. */
static struct json_object *busy_msg(void *ctx, const char *peer)
{
	struct agent *a = ctx;
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

/*
 * The session of @fd forked (in the child: the table's other connections closed): 0, or -errno
 * with why in @err, the table keeping @fd then, since its controller heard its handshake's last
 * reply and is to be told. @peer and @hs are the table's: copied, as the child frees them.
 */
static int start_session(void *ctx, int fd, const char *peer_in, const struct lr_ctl_handshake *hs, char *err,
			 size_t errlen)
{
	struct agent *a = ctx;
	struct lr_ctl_handshake h = *hs;
	char peer[sizeof(a->peer)];
	int sv[2], ret;
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
	snprintf(peer, sizeof(peer), "%s", peer_in);
	a->child = pid;
	if (!pid) {
		a->status_fd = sv[0];
		snprintf(a->peer, sizeof(a->peer), "%s", peer);
		lr_pending_drop_all(a->pend, fd);
		/* blocking again, as a session's stream always was: it keeps deadlines of its own */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		/* the session's process ends here, not by unwinding through the agent's loop */
		ret = session(a, fd, sv[1], &h);
		fflush(NULL);
		_exit(ret);
	}
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

static const struct lr_pending_ops pending_ops = {
	.busy = is_busy,
	.ending = is_ending,
	.busy_msg = busy_msg,
	.start = start_session,
};

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
	const struct lr_pending_opts po = {
		.ops = &pending_ops,
		.ctx = &a,
		.key = key,
		.verbose = o->verbose,
		.m = &a.m,
	};
	size_t off = 0;
	unsigned int i;
	int ret;

	if ((ret = lr_pending_open(&po, &a.pend)))
		return lr_fail(LR_EXIT_RUNTIME, "agent", "cannot make the connection table: %s", strerror(-ret));
	handle(SIGTERM, on_signal);
	handle(SIGINT, on_signal);
	handle(SIGCHLD, on_child);
	signal(SIGPIPE, SIG_IGN);
	if (lr_ctl_listen(addr, &a.lfd, err, sizeof(err))) {
		lr_pending_close(a.pend);
		return lr_fail(LR_EXIT_USAGE, "agent", "--listen: %s", err);
	}
	if (metrics && (ret = metrics_open(&a, metrics))) {
		lr_pending_close(a.pend);
		close(a.lfd);
		return ret;
	}
	if (o->ready_file[0] && lr_out_pidfile(o->ready_file, err, sizeof(err))) {
		lr_pending_close(a.pend);
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
		struct pollfd p[2 + LR_EXPORTER_FDS + LR_PENDING_MAX] = { { .fd = a.lfd, .events = POLLIN },
									  { .fd = a.status_fd, .events = POLLIN } };
		int timeout = POLL_MS, n = 2, nx = 0, np, wait;

		if ((wait = lr_pending_accept_wait(a.pend))) {
			p[0].fd = -1;	/* poll() skips it */
			timeout = wait;
		}
		if (a.ex)
			nx = lr_exporter_fds(a.ex, p + 2, &timeout);
		np = lr_pending_fds(a.pend, p + 2 + nx, &timeout);
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
		lr_pending_serve(a.pend, p + 2 + nx, np);
		if (p[0].revents & POLLIN)
			lr_pending_accept(a.pend, a.lfd);
		lr_pending_expire(a.pend);
	}
	lr_pending_close(a.pend);
	shut_down(&a);
	metrics_close(&a);
	close(a.lfd);
	if (o->ready_file[0])
		unlink(o->ready_file);
	lr_ctl_log("stopped");
	return LR_EXIT_OK;
}
