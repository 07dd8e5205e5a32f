/* SPDX-License-Identifier: MIT */
/* --prepare-peer: forks the guardian that holds GRO on at the first hop's veth peer, and has it let go. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sys/netdev.h"
#include "sys/peer_gro.h"
#include "sys/peer_gro_impl.h"
#include "util/log.h"

/* A peer's name in LR_PEER_GRO_DIR: its namespace (device and inode of the nsfs file @ns), its ifindex there. */
static void peer_key(const struct stat *ns, int peer_ifindex, char *key, size_t len)
{
	snprintf(key, len, "ns-%llx-%llx-if-%d", (unsigned long long)ns->st_dev, (unsigned long long)ns->st_ino,
		 peer_ifindex);
}

/* One word from the guardian within @ms: 0, or -ETIMEDOUT, or -EPIPE when it ended without one. */
static int hear_guardian(int fd, int ms, struct guard_word *w)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec t0;
	ssize_t n;
	int left = ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int ret = poll(&p, 1, left);

		if (ret > 0)
			break;
		if (ret < 0 && errno != EINTR)
			return -errno;
		left = ms - since_ms(&t0);
		if (left <= 0)
			return -ETIMEDOUT;
	}
	do
		n = read(fd, w, sizeof(*w));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*w) ? 0 : -EPIPE;
}

static void reap_guardian(pid_t pid, bool wait)
{
	while (waitpid(pid, NULL, wait ? 0 : WNOHANG) < 0 && errno == EINTR)
		;
}

int lr_peer_gro_hold(const char *ifname, struct lr_peer_gro *p, char *err, size_t errlen)
{
	struct guard g = { .ns_fd = -1, .self_fd = -1 };
	int ctl[2] = { -1, -1 }, ans[2] = { -1, -1 }, code = 0, ret;
	struct lr_if_link self;
	struct lr_if ifc;
	struct guard_word w;
	struct stat st;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->ctl_fd = p->ans_fd = -1;
	p->r.asked = true;
	if (lr_if_open(ifname, &ifc, err, errlen))
		return LR_EXIT_USAGE;
	ret = lr_if_link_get(&ifc, &self);
	if (ret) {
		lr_msg(err, errlen, "--prepare-peer: cannot read %s's link (RTM_GETLINK): %s", ifname, strerror(-ret));
		return LR_EXIT_RUNTIME;
	}
	if (strcmp(self.kind, "veth") || self.link <= 0) {
		p->r.action = LR_PREP_NOT_VETH;
		return 0;
	}
	/* switching a device's GRO and the records' directory are root's */
	if (geteuid()) {
		lr_msg(err, errlen, "--prepare-peer needs root: it switches GRO at %s's veth peer and keeps its records "
		       "in " LR_PEER_GRO_DIR "; nothing changed", ifname);
		return LR_EXIT_USAGE;
	}
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	g.parent = getpid();
	g.peer_ifindex = self.link;
	g.ifindex = ifc.ifindex;
	snprintf(g.ifname, sizeof(g.ifname), "%s", ifname);
	if (self.link_nsid >= 0) {
		if (lr_netns_find(self.link_nsid, &g.ns_fd, p->r.netns, sizeof(p->r.netns))) {
			lr_msg(err, errlen, "--prepare-peer: the network namespace of %s's veth peer (ifindex %d, netns id "
			       "%d here) is none that /run/netns, /run/docker/netns or /proc/PID/ns/net names; nothing "
			       "changed", ifname, self.link, self.link_nsid);
			return LR_EXIT_USAGE;
		}
		g.self_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (g.self_fd < 0 || fstat(g.ns_fd, &st)) {
			lr_msg(err, errlen, "--prepare-peer: cannot open our own network namespace: %s", strerror(errno));
			code = LR_EXIT_RUNTIME;
			goto out;
		}
	} else if (stat("/proc/thread-self/ns/net", &st)) {
		lr_msg(err, errlen, "--prepare-peer: cannot look at our own network namespace: %s", strerror(errno));
		return LR_EXIT_RUNTIME;
	}
	peer_key(&st, self.link, g.key, sizeof(g.key));
	/* a socket, not a pipe, toward it: send(MSG_NOSIGNAL) to one that died is EPIPE, not SIGPIPE */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) || pipe2(ans, O_CLOEXEC)) {
		lr_msg(err, errlen, "--prepare-peer: socketpair, pipe: %s", strerror(errno));
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	g.ctl_fd = ctl[0];
	g.ans_fd = ans[1];
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		lr_msg(err, errlen, "--prepare-peer: fork: %s", strerror(errno));
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	if (!pid)
		lr_peer_gro_guardian(&g, &p->r);
	ret = hear_guardian(ans[0], READY_MS, &w);
	if (ret == -ETIMEDOUT) {
		/*
		 * Slow, not known to have changed nothing: GRO may go on just after this. It is not
		 * killed between the two: our ends of its socket and pipe close below, so once it has
		 * taken the peer its wait sees them closed and it puts GRO back. Reaped without waiting.
		 */
		p->stray = pid;
		lr_msg(err, errlen, "--prepare-peer: the guardian process (PID %d) did not answer within 10 s; "
		       "what it may still switch on it puts back at once", (int)pid);
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	if (ret) {
		reap_guardian(pid, true);
		lr_msg(err, errlen, "--prepare-peer: the guardian process ended without a word");
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	p->r = w.r;
	if (w.code || p->r.action == LR_PREP_NONE) {
		reap_guardian(pid, true);
		if (w.code)
			lr_msg(err, errlen, "%s", w.msg);
		code = w.code;
		goto out;
	}
	p->pid = pid;
	p->ctl_fd = ctl[1];
	p->ans_fd = ans[0];
	ctl[1] = ans[0] = -1;
out:
	if (ctl[0] >= 0)
		close(ctl[0]);
	if (ctl[1] >= 0)
		close(ctl[1]);
	if (ans[0] >= 0)
		close(ans[0]);
	if (ans[1] >= 0)
		close(ans[1]);
	if (g.ns_fd >= 0)
		close(g.ns_fd);
	if (g.self_fd >= 0)
		close(g.self_fd);
	return code;
}

unsigned int lr_peer_gro_holders(const struct lr_if *ifc, char *at, size_t len)
{
	char key[96], path[sizeof(LR_PEER_GRO_DIR) + 112], netns[LR_PREP_NETNS_MAX] = "";
	struct lr_if_link self, peer;
	unsigned int n = 0;
	struct stat st;
	int fd, ret;

	if (lr_if_link_get(ifc, &self) || strcmp(self.kind, "veth") || self.link <= 0)
		return 0;
	/* a peer that runs XDP takes the frames whatever its GRO */
	if (lr_if_veth_peer(ifc, &peer) || peer.xdp_native)
		return 0;
	if (self.link_nsid >= 0) {
		if (lr_netns_find(self.link_nsid, &fd, netns, sizeof(netns)))
			return 0;
		ret = fstat(fd, &st);
		close(fd);
		if (ret)
			return 0;
	} else if (stat("/proc/thread-self/ns/net", &st)) {
		return 0;
	}
	peer_key(&st, self.link, key, sizeof(key));
	snprintf(path, sizeof(path), LR_PEER_GRO_DIR "/%s.users", key);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* counted, not locked: a lock taken here, even for a moment, would be one more holder to them */
	n = lr_peer_gro_other_users(fd);
	close(fd);
	if (n && netns[0])
		snprintf(at, len, "%s (netns %s)", peer.name, netns);
	else if (n)
		snprintf(at, len, "%s", peer.name);
	return n;
}

/*
 * The byte that has it let go, then its last word within RELEASE_MS: 0, -ETIMEDOUT, or -EPIPE
 * when it ended without one (it died). Never waits on a dead one; p->pid reaped unless stuck.
 */
static int let_go(struct lr_peer_gro *p, struct guard_word *w)
{
	int ret;

	/* a byte says it even while another child holds a copy of our end */
	if (send(p->ctl_fd, "x", 1, MSG_NOSIGNAL) < 0)
		pr_debug("--prepare-peer: the guardian's socket: %s\n", strerror(errno));
	close(p->ctl_fd);
	p->ctl_fd = -1;
	ret = hear_guardian(p->ans_fd, RELEASE_MS, w);
	if (!ret && !w->final)
		ret = -EPIPE;
	close(p->ans_fd);
	p->ans_fd = -1;
	/* its end of the pipe closes only when it exits: it is gone, or about to be, unless stuck */
	reap_guardian(p->pid, ret != -ETIMEDOUT);
	return ret;
}

/*
 * The guardian died before its last word (killed alone, out of memory): its LOCK_SH went with it,
 * and its record, held by no one now, still says how the peer's user had GRO. A new guardian takes
 * that record over and lets go at once: GRO goes back, or stays on for the runs that hold it still.
 */
static void take_over(struct lr_peer_gro *p)
{
	char err[LR_PREP_ERROR_MAX], line[512];
	pid_t dead = p->pid;
	struct lr_peer_gro q;
	struct guard_word w;
	int ret;

	p->r.released = true;
	ret = lr_peer_gro_hold(p->ifname, &q, err, sizeof(err));
	if (!ret && q.pid) {
		ret = let_go(&q, &w);
		if (!ret) {
			p->r.restored = w.r.restored;
			p->r.left_on_for = w.r.left_on_for;
			snprintf(p->r.error, sizeof(p->r.error), "%s", w.r.error);
		} else {
			snprintf(p->r.error, sizeof(p->r.error), "its guardian (PID %d) died, and the new one (PID %d) %s",
				 (int)dead, (int)q.pid, ret == -ETIMEDOUT ? "did not answer within 5 s" : "died too");
		}
	} else if (!ret) {
		/* the record was not taken: the peer takes XDP frames by another's hand, or is no veth's now */
		snprintf(p->r.error, sizeof(p->r.error), "its guardian (PID %d) died, and %s is no longer as this "
			 "run left it; left as it is", (int)dead, p->r.device);
	} else {
		/* its line without its "--prepare-peer: " (ours is said once), and cut where it must be */
		lr_msg(p->r.error, sizeof(p->r.error), "its guardian (PID %d) died, and a new one could not take over: %s",
		       (int)dead, strncmp(err, "--prepare-peer: ", 16) ? err : err + 16);
	}
	lr_peer_gro_end_line(&p->r, line, sizeof(line));
	pr_warn("linerate: --prepare-peer: the guardian (PID %d) holding GRO on for the run on %s died before "
		"the end: %s\n", (int)dead, p->ifname, line);
}

void lr_peer_gro_release(struct lr_peer_gro *p)
{
	struct guard_word w;
	int ret;

	if (p->stray) {
		reap_guardian(p->stray, false);
		p->stray = 0;
	}
	if (!p->pid)
		return;
	ret = let_go(p, &w);
	if (!ret) {
		p->r = w.r;
	} else if (ret == -EPIPE) {
		take_over(p);
	} else {
		p->r.released = true;
		snprintf(p->r.error, sizeof(p->r.error), "its guardian (PID %d) did not answer within 5 s",
			 (int)p->pid);
	}
	p->pid = 0;
}
