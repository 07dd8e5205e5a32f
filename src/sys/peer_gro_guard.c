/* SPDX-License-Identifier: MIT */
/* --prepare-peer's guardian: in the peer's namespace, it holds GRO on under the peer's record and puts it back. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* setns(), close_range() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "sys/netdev.h"
#include "sys/peer_gro.h"
#include "sys/peer_gro_impl.h"
#include "util/log.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71	/* Linux 5.14 */
#endif

/* The guardian's files while it holds GRO on. */
struct hold {
	char state[sizeof(LR_PEER_GRO_DIR) + 112], users[sizeof(LR_PEER_GRO_DIR) + 112];
	int users_fd;
	char device[LR_PREP_DEVICE_MAX];
};

/* Closes every descriptor above stderr but the guardian's own, so that it keeps nothing of the test open. */
static void close_others(const struct guard *g)
{
	int keep[] = { g->ctl_fd, g->ans_fd, g->ns_fd, g->self_fd }, n = 4, i, j, lo = 3;

	/* sorted, so the gaps between them are the ranges to close */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (keep[i] < lo)
			continue;
		if (keep[i] > lo)
			close_range((unsigned int)lo, (unsigned int)keep[i] - 1, 0);
		lo = keep[i] + 1;
	}
	close_range((unsigned int)lo, ~0U, 0);
}

/*
 * The device at the peer's ifindex, as this namespace sees it: 0 when it is a veth whose IFLA_LINK
 * is our interface in our namespace, -ESTALE when it is another device, else the query's -errno.
 */
static int query_peer(const struct guard *g, struct lr_if_link *l)
{
	int ours = -1, ret;

	ret = lr_if_link_query(g->peer_ifindex, -1, l);
	if (ret)
		return ret;
	if (g->self_fd >= 0 && lr_netns_id(g->self_fd, &ours))
		ours = -2;	/* no id for ours: nothing can point back at it from here */
	if (strcmp(l->kind, "veth") || l->link != g->ifindex || l->link_nsid != ours)
		return -ESTALE;
	return 0;
}

/* The peer, before anything is changed. */
static int check_peer(const struct guard *g, struct lr_if_link *l, char *msg, size_t len)
{
	int ret = query_peer(g, l);

	if (ret == -ESTALE) {
		snprintf(msg, len, "--prepare-peer: %s (ifindex %d in the peer's namespace) is not %s's veth peer: it "
			 "does not point back; nothing changed", l->name, g->peer_ifindex, g->ifname);
		return LR_EXIT_RUNTIME;
	}
	if (ret) {
		snprintf(msg, len, "--prepare-peer: %s's veth peer (ifindex %d) is gone: %s", g->ifname, g->peer_ifindex,
			 strerror(-ret));
		return LR_EXIT_RUNTIME;
	}
	return 0;
}

/*
 * The mutex of a peer's files: LOCK_EX on its state file, waited for @ms at most (-ETIMEDOUT), so
 * that a stuck holder cannot keep a guardian from its answer. A holder that removes the file (the
 * last user) does so under this lock, so a waiter that then gets it checks that its descriptor
 * still is the file at @path, and opens it again if not.
 */
static int mutex_lock(const char *path, int ms)
{
	const struct timespec nap = { 0, 20 * 1000000L };
	struct timespec t0;
	struct stat a, b;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -errno;
		while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int err = -errno;

			if (err != -EWOULDBLOCK && err != -EINTR) {
				close(fd);
				return err;
			}
			if (since_ms(&t0) >= ms) {
				close(fd);
				return -ETIMEDOUT;
			}
			nanosleep(&nap, NULL);
		}
		if (!fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return fd;
		close(fd);
	}
}

/* Why mutex_lock() failed, for a message. */
static const char *lock_error(int err)
{
	return err == -ETIMEDOUT ? "another process held it too long" : strerror(-err);
}

static int state_read(int fd, struct lr_peer_gro_state *st)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);

	if (n < 0)
		return -errno;
	return lr_peer_gro_state_parse(buf, (size_t)n, st);
}

static int state_write(int fd, const struct lr_peer_gro_state *st)
{
	char buf[256];
	int n = lr_peer_gro_state_format(st, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		return -errno ? -errno : -EIO;
	return 0;
}

/*
 * The records' directory, made if missing (/run/linerate as scripts/lib.sh makes it for its locks),
 * and taken only as a real directory of ours that no one else can write: nothing planted there
 * is ever followed.
 */
static int make_dir(char *msg, size_t len)
{
	struct stat st;

	if ((mkdir("/run/linerate", 0755) < 0 && errno != EEXIST) ||
	    (mkdir(LR_PEER_GRO_DIR, 0700) < 0 && errno != EEXIST) || lstat(LR_PEER_GRO_DIR, &st) < 0) {
		snprintf(msg, len, "--prepare-peer: cannot make %s: %s; nothing changed", LR_PEER_GRO_DIR,
			 strerror(errno));
		return LR_EXIT_RUNTIME;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022)) {
		snprintf(msg, len, "--prepare-peer: %s must be a directory of root's that no one else can write; "
			 "nothing changed", LR_PEER_GRO_DIR);
		return LR_EXIT_RUNTIME;
	}
	return 0;
}

/* The current namespace's cookie: unique while the host is up; 0 before Linux 5.14. */
static uint64_t netns_cookie(void)
{
	socklen_t len = sizeof(uint64_t);
	uint64_t c = 0;
	int fd;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len) < 0)
		c = 0;
	close(fd);
	return c;
}

/*
 * Under the peer's mutex: join the runs that hold GRO on, or switch it on and record how it was,
 * or find nothing to do. Holding, its LOCK_SH on the users file stays taken until put_back().
 */
static int hold_gro(const struct guard *g, struct hold *h, struct lr_prep_result *r, char *msg, size_t len)
{
	uint64_t cookie = netns_cookie();
	struct lr_peer_gro_state st;
	struct lr_if_link l;
	int mfd, code, ret;
	bool on = false, fresh = false, alone;

	h->users_fd = -1;
	code = check_peer(g, &l, msg, len);
	if (code)
		return code;
	snprintf(r->device, sizeof(r->device), "%s", l.name);
	snprintf(h->device, sizeof(h->device), "%s", l.name);
	r->xdp = l.xdp_native;
	code = make_dir(msg, len);
	if (code)
		return code;
	snprintf(h->state, sizeof(h->state), LR_PEER_GRO_DIR "/%s.state", g->key);
	snprintf(h->users, sizeof(h->users), LR_PEER_GRO_DIR "/%s.users", g->key);
	mfd = mutex_lock(h->state, TAKE_LOCK_MS);
	if (mfd < 0) {
		snprintf(msg, len, "--prepare-peer: cannot lock %s: %s; nothing changed", h->state, lock_error(mfd));
		return LR_EXIT_RUNTIME;
	}
	h->users_fd = open(h->users, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (h->users_fd < 0) {
		snprintf(msg, len, "--prepare-peer: cannot open %s: %s; nothing changed", h->users, strerror(errno));
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	ret = lr_if_gro(h->device, &on);
	if (ret) {
		snprintf(msg, len, "--prepare-peer: cannot read GRO of %s: %s; nothing changed", h->device,
			 strerror(-ret));
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	/* no run holds it now (its LOCK_EX turns into our LOCK_SH below): a record is a dead run's */
	alone = !flock(h->users_fd, LOCK_EX | LOCK_NB);
	ret = state_read(mfd, &st);
	/*
	 * A record no one holds says how the user had GRO only while the device is the one a run
	 * that died left (lr_peer_gro_state_fits()): the namespace, whose inode the file's name is
	 * made of, may be another's now, the ifindex another device's, or its user may have set it
	 * since. Then it is dropped, and the device taken as it is.
	 */
	if (!ret && alone && !lr_peer_gro_state_fits(&st, cookie, h->device, on, l.xdp_native)) {
		pr_debug("--prepare-peer: %s is a dead run's record of %s, GRO %s, which is %s now, GRO %s%s; "
			 "dropped\n", h->state, st.device, st.gro ? "on" : "off", h->device, on ? "on" : "off",
			 l.xdp_native ? ", XDP" : "");
		ret = -ENODATA;
	}
	if (!ret) {
		/*
		 * A record: runs hold GRO on now, or the last of them died without putting it back.
		 * Either way the record, not the device, says how its user had it.
		 */
		r->gro_before = st.gro;
		r->action = alone ? LR_PREP_SWITCHED : LR_PREP_JOINED;
		/* the start line says "it was" as the record says: one line, at -v more */
		if (r->action == LR_PREP_SWITCHED)
			pr_debug("--prepare-peer: %s: a run that died left GRO on; its record says it was %s\n",
				 h->device, st.gro ? "on" : "off");
	} else {
		if (ret != -ENODATA)
			pr_debug("--prepare-peer: %s holds no valid record; taken as none\n", h->state);
		r->gro_before = on;
		if (on || l.xdp_native) {
			/* it takes XDP frames already: leave it, and leave no file behind (others' are theirs) */
			r->action = LR_PREP_NONE;
			if (alone) {
				unlink(h->users);
				unlink(h->state);
			}
			goto out;
		}
		st = (struct lr_peer_gro_state){ .netns_cookie = cookie, .gro = false };
		snprintf(st.device, sizeof(st.device), "%s", h->device);
		ret = state_write(mfd, &st);
		if (ret) {
			snprintf(msg, len, "--prepare-peer: cannot write %s: %s; nothing changed", h->state, strerror(-ret));
			code = LR_EXIT_RUNTIME;
			goto out;
		}
		r->action = LR_PREP_SWITCHED;
		fresh = true;
	}
	/* a joined run may have found it switched off behind the holders' backs: on again */
	ret = on ? 0 : lr_if_set_gro(h->device, true);
	if (ret) {
		snprintf(msg, len, "--prepare-peer: cannot switch GRO on at %s: %s%s", h->device, strerror(-ret),
			 r->action == LR_PREP_SWITCHED ? "; nothing changed" : "");
		/* only a record this run just wrote goes: an older one still holds the truth */
		if (fresh) {
			unlink(h->users);
			unlink(h->state);
		}
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	flock(h->users_fd, LOCK_SH);
	r->switched_on = true;
out:
	if (code || r->action == LR_PREP_NONE) {
		if (h->users_fd >= 0)
			close(h->users_fd);
		h->users_fd = -1;
	}
	close(mfd);
	return code;
}

unsigned int lr_peer_gro_other_users(int fd)
{
	size_t cap = 65536, n = 0, got;
	unsigned int k = 0;
	struct stat st;
	char *buf;
	FILE *f;

	if (fstat(fd, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	buf = malloc(cap);
	/* the file is generated as it is read: read to its end, growing the buffer */
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				free(buf);
			buf = b;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		k = lr_peer_gro_count_holders(buf, major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino);
	}
	free(buf);
	return k;
}

/* Under the mutex: the last holder puts GRO back as its record says and removes the files. */
static void put_back(const struct guard *g, struct hold *h, struct lr_prep_result *r)
{
	struct lr_peer_gro_state st;
	struct lr_if_link l;
	bool gone = false;
	int mfd, ret;

	mfd = mutex_lock(h->state, PUT_LOCK_MS);
	if (mfd < 0) {
		snprintf(r->error, sizeof(r->error), "cannot lock %s: %s", h->state, lock_error(mfd));
		goto out;
	}
	/* a conversion that fails has dropped our LOCK_SH: then only the others' remain */
	if (flock(h->users_fd, LOCK_EX | LOCK_NB)) {
		r->left_on_for = lr_peer_gro_other_users(h->users_fd);
		goto out;
	}
	if (state_read(mfd, &st))
		st.gro = r->gro_before;	/* the record went missing: what this run found */
	/*
	 * The device GRO was switched on at, and no other: the one at its ifindex must still be a
	 * veth that points back at our interface, under the same name. A device deleted since, whose
	 * ifindex another took, or renamed, is gone for us: nothing of ours is left to put back.
	 */
	ret = query_peer(g, &l);
	if (!ret && strcmp(l.name, h->device))
		ret = -ESTALE;
	if (ret == -ESTALE) {
		gone = true;
		snprintf(r->error, sizeof(r->error), "%s is gone: ifindex %d is %s now, %s; nothing switched off",
			 h->device, g->peer_ifindex, l.name, strcmp(l.name, h->device) ? "another name" :
			 "no veth peer of ours");
	} else if (ret) {
		gone = ret == -ENODEV;
		snprintf(r->error, sizeof(r->error), "%s is gone: %s", h->device, strerror(-ret));
	} else if (!st.gro && (ret = lr_if_set_gro(h->device, false))) {
		snprintf(r->error, sizeof(r->error), "cannot switch it off (%s); do it with: ethtool -K %s gro off%s%s",
			 strerror(-ret), h->device, r->netns[0] ? " in netns " : "", r->netns);
	} else {
		r->restored = true;
	}
	if (r->restored || gone) {
		unlink(h->users);
		unlink(h->state);
	}
out:
	close(h->users_fd);
	h->users_fd = -1;
	if (mfd >= 0)
		close(mfd);
	r->released = true;
}

/* false when no one reads: the parent died, or stopped waiting for the first word (EPIPE, ignored) */
static bool tell_parent(int fd, const struct guard_word *w)
{
	return write(fd, w, sizeof(*w)) == (ssize_t)sizeof(*w);
}

/*
 * Until the parent lets go (a byte: true) or dies (its end of the pipe closed, or, while another
 * child holds a copy of that end, getppid() no longer the parent's: false).
 */
static bool wait_parent(const struct guard *g)
{
	for (;;) {
		struct pollfd p = { .fd = g->ctl_fd, .events = POLLIN };
		ssize_t n;
		char c;

		if (getppid() != g->parent)
			return false;
		if (poll(&p, 1, WATCH_MS) <= 0)
			continue;
		n = read(g->ctl_fd, &c, 1);
		if (n >= 0 || errno != EINTR)
			return n == 1;
	}
}

void lr_peer_gro_guardian(const struct guard *g, const struct lr_prep_result *r0)
{
	struct guard_word w = { .r = *r0 };
	struct hold h = { .users_fd = -1 };
	char line[512];
	bool heard, told;
	int fd;

	/* out of the test's session and process group: a terminal's or a group's signal is not for it */
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* stdout may be a pipe a reader waits on to close: not held open; stderr stays for its last line */
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	close_others(g);
	if (g->ns_fd >= 0 && setns(g->ns_fd, CLONE_NEWNET) < 0) {
		int err = errno;

		/* without the privilege the user must run it otherwise: a usage error, as --netns's */
		w.code = err == EPERM ? LR_EXIT_USAGE : LR_EXIT_RUNTIME;
		snprintf(w.msg, sizeof(w.msg), "--prepare-peer: cannot enter the peer's network namespace %s: %s%s",
			 r0->netns, strerror(err), err == EPERM ? " (needs root: CAP_SYS_ADMIN)" : "");
		tell_parent(g->ans_fd, &w);
		_exit(0);
	}
	w.code = hold_gro(g, &h, &w.r, w.msg, sizeof(w.msg));
	heard = tell_parent(g->ans_fd, &w);
	if (w.code || w.r.action == LR_PREP_NONE)
		_exit(0);
	/* a parent that stopped waiting for that word (READY_MS) gave the test up: back at once */
	told = heard && wait_parent(g);
	put_back(g, &h, &w.r);
	w.final = true;
	tell_parent(g->ans_fd, &w);
	if (!told) {
		/* no one reports for a parent that died or gave up: one line through its log sink */
		lr_peer_gro_end_line(&w.r, line, sizeof(line));
		pr_warn("linerate: --prepare-peer: the run on %s %s: %s\n", g->ifname,
			heard ? "ended without letting go" : "stopped waiting for its guardian", line);
	}
	_exit(0);
}
