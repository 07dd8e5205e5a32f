/* SPDX-License-Identifier: MIT */
/* --prepare-peer: a guardian process holds GRO on at the first hop's veth peer and always puts it back. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* setns(), pipe2(), close_range() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
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
#include <sys/wait.h>

#include "sys/netdev.h"
#include "sys/peer_gro.h"
#include "util/log.h"

#define STATE_MAGIC	"linerate-peer-gro 1\n"
#define READY_MS	10000	/* for the guardian's first word: a lock another run holds is held for moments */
#define RELEASE_MS	5000	/* for its last word */
#define TAKE_LOCK_MS	8000	/* the guardian's wait for a peer's mutex, within READY_MS */
#define PUT_LOCK_MS	4000	/* ... and when it lets go, within RELEASE_MS */
#define WATCH_MS	200	/* how often it looks whether its parent is still there */
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71	/* Linux 5.14 */
#endif

/* What the guardian tells its parent: once when it holds GRO on (or found nothing to do), once when done. */
struct word {
	int code;	/* 0, or the exit code of a failure that @msg says */
	bool final;
	struct lr_prep_result r;
	char msg[256];
};

_Static_assert(sizeof(struct word) <= PIPE_BUF, "one word is one atomic write");

/* What the guardian is given: the peer, where it is, and how to tell that it points back at us. */
struct guard {
	pid_t parent;
	int ctl_fd, ans_fd;	/* its end of the parent's socket, the write end of its own pipe */
	int ns_fd;	/* the peer's namespace; -1 when it is ours */
	int self_fd;	/* ours, to ask the peer's namespace what it calls it; -1 when the same */
	int peer_ifindex;	/* in the peer's namespace */
	int ifindex;	/* ours, which the peer's IFLA_LINK must name */
	char key[96];	/* the peer's name in LR_PEER_GRO_DIR: its namespace's device and inode, its ifindex */
	char ifname[IF_NAMESIZE];	/* ours, for messages */
};

/* The guardian's files while it holds GRO on. */
struct hold {
	char state[sizeof(LR_PEER_GRO_DIR) + 112], users[sizeof(LR_PEER_GRO_DIR) + 112];
	int users_fd;
	char device[LR_PREP_DEVICE_MAX];
};

/* ---- the state file (pure: tests/unit/test_peer_gro.c) ---------------------------------------- */

int lr_peer_gro_state_parse(const char *text, size_t len, struct lr_peer_gro_state *st)
{
	char buf[256], dev[LR_PREP_DEVICE_MAX + 1], gro[8], extra;
	size_t m = sizeof(STATE_MAGIC) - 1;
	int n = 0;

	memset(st, 0, sizeof(*st));
	if (!len)
		return -ENODATA;
	if (len >= sizeof(buf) || memchr(text, '\0', len) || len < m || memcmp(text, STATE_MAGIC, m))
		return -EBADMSG;
	memcpy(buf, text + m, len - m);
	buf[len - m] = '\0';
	if (sscanf(buf, "device %16s\nnetns_cookie %" SCNu64 "\ngro %7s\n%n%c", dev, &st->netns_cookie, gro, &n,
		   &extra) != 3 || !n || (size_t)n != len - m || strlen(dev) >= sizeof(st->device))
		return -EBADMSG;
	if (!strcmp(gro, "on"))
		st->gro = true;
	else if (strcmp(gro, "off"))
		return -EBADMSG;
	memcpy(st->device, dev, strlen(dev) + 1);
	return 0;
}

int lr_peer_gro_state_format(const struct lr_peer_gro_state *st, char *buf, size_t len)
{
	int n = snprintf(buf, len, STATE_MAGIC "device %s\nnetns_cookie %" PRIu64 "\ngro %s\n", st->device,
			 st->netns_cookie, st->gro ? "on" : "off");

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

bool lr_peer_gro_state_fits(const struct lr_peer_gro_state *st, uint64_t cookie, const char *device, bool gro,
			    bool xdp)
{
	if (cookie && st->netns_cookie && st->netns_cookie != cookie)
		return false;
	return !strcmp(st->device, device) && gro && !xdp;
}

unsigned int lr_peer_gro_count_holders(const char *locks, unsigned int major, unsigned int minor,
				       unsigned long ino)
{
	unsigned int n = 0, ma, mi;
	unsigned long in;
	const char *line;

	for (line = locks; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char one[256], id[24], t1[16], t2[16], t3[16], dev[64];
		size_t len = strcspn(line, "\n");
		int pid;

		if (len >= sizeof(one))
			continue;
		memcpy(one, line, len);
		one[len] = '\0';
		/* "1: FLOCK  ADVISORY  READ  1234 00:1a:5678 0 EOF"; a waiter's line has "->" after the id */
		if (sscanf(one, "%23s %15s %15s %15s %d %63s", id, t1, t2, t3, &pid, dev) != 6)
			continue;
		if (strcmp(t1, "FLOCK") || strcmp(t3, "READ"))
			continue;
		if (sscanf(dev, "%x:%x:%lu", &ma, &mi, &in) == 3 && ma == major && mi == minor && in == ino)
			n++;
	}
	return n;
}

/* ---- the lines ------------------------------------------------------------------------------ */

/* "vc1 (netns lrlab-bridge-host)", or "vc1" when it is in the sender's own namespace. */
static void where(const struct lr_prep_result *r, char *buf, size_t len)
{
	if (r->netns[0])
		snprintf(buf, len, "%s (netns %s)", r->device, r->netns);
	else
		snprintf(buf, len, "%s", r->device);
}

void lr_peer_gro_start_line(const struct lr_prep_result *r, const char *ifname, char *buf, size_t len)
{
	char at[LR_PREP_DEVICE_MAX + LR_PREP_NETNS_MAX + 16];

	where(r, at, sizeof(at));
	switch (r->action) {
	case LR_PREP_NOT_VETH:
		snprintf(buf, len, "--prepare-peer has nothing to do: %s is no veth", ifname);
		break;
	case LR_PREP_NONE:
		snprintf(buf, len, "--prepare-peer: nothing to do: %s, the first hop's veth peer, %s; left as it is", at,
			 r->xdp ? "runs an XDP program" : "has GRO on already");
		break;
	case LR_PREP_SWITCHED:
		snprintf(buf, len, "--prepare-peer: GRO switched on at %s, the first hop's veth peer, for this test; it "
			 "was %s", at, r->gro_before ? "on" : "off");
		break;
	case LR_PREP_JOINED:
		snprintf(buf, len, "--prepare-peer: GRO at %s, the first hop's veth peer, is on for another linerate run "
			 "already; held on for this test too (it was %s before them)", at, r->gro_before ? "on" : "off");
		break;
	}
}

void lr_peer_gro_end_line(const struct lr_prep_result *r, char *buf, size_t len)
{
	char at[LR_PREP_DEVICE_MAX + LR_PREP_NETNS_MAX + 16];

	buf[0] = '\0';
	if (!r->asked)
		return;
	where(r, at, sizeof(at));
	if (r->action == LR_PREP_NOT_VETH)
		snprintf(buf, len, "nothing to do: the interface is no veth");
	else if (r->action == LR_PREP_NONE)
		snprintf(buf, len, "nothing to do: %s %s", at, r->xdp ? "runs an XDP program" : "had GRO on already");
	else if (!r->released)
		snprintf(buf, len, "GRO on at %s for this test", at);
	else if (r->restored)
		snprintf(buf, len, "GRO put back %s at %s", r->gro_before ? "on" : "off", at);
	else if (r->error[0])
		snprintf(buf, len, "GRO at %s may still be on: %s", at, r->error);
	else if (r->left_on_for)
		snprintf(buf, len, "GRO left on at %s for %u other linerate run%s; the last one puts it back", at,
			 r->left_on_for, r->left_on_for == 1 ? "" : "s");
	else
		snprintf(buf, len, "GRO left on at %s for other linerate runs; the last one puts it back", at);
}

/* ---- the guardian, in the peer's namespace -------------------------------------------------- */

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

/* Milliseconds since @t0 on CLOCK_MONOTONIC. */
static int since_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
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
static int take(const struct guard *g, struct hold *h, struct lr_prep_result *r, char *msg, size_t len)
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

/* How many others hold the users file (LOCK_SH), from /proc/locks; 0 when it cannot be told. */
static unsigned int others(int fd)
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
		r->left_on_for = others(h->users_fd);
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
static bool say(int fd, const struct word *w)
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

/* The guardian's life: it never returns into the parent's code (its stack is a copy of the parent's). */
static __attribute__((noreturn)) void guardian(const struct guard *g, const struct lr_prep_result *r0)
{
	struct word w = { .r = *r0 };
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
		say(g->ans_fd, &w);
		_exit(0);
	}
	w.code = take(g, &h, &w.r, w.msg, sizeof(w.msg));
	heard = say(g->ans_fd, &w);
	if (w.code || w.r.action == LR_PREP_NONE)
		_exit(0);
	/* a parent that stopped waiting for that word (READY_MS) gave the test up: back at once */
	told = heard && wait_parent(g);
	put_back(g, &h, &w.r);
	w.final = true;
	say(g->ans_fd, &w);
	if (!told) {
		/* no one reports for a parent that died or gave up: one line where its own lines went */
		lr_peer_gro_end_line(&w.r, line, sizeof(line));
		fprintf(stderr, "linerate: --prepare-peer: the run on %s %s: %s\n", g->ifname,
			heard ? "ended without letting go" : "stopped waiting for its guardian", line);
	}
	_exit(0);
}

/* ---- the parent's side ---------------------------------------------------------------------- */

/* A peer's name in LR_PEER_GRO_DIR: its namespace (device and inode of the nsfs file @ns), its ifindex there. */
static void peer_key(const struct stat *ns, int peer_ifindex, char *key, size_t len)
{
	snprintf(key, len, "ns-%llx-%llx-if-%d", (unsigned long long)ns->st_dev, (unsigned long long)ns->st_ino,
		 peer_ifindex);
}

/* One word from the guardian within @ms: 0, or -ETIMEDOUT, or -EPIPE when it ended without one. */
static int hear(int fd, int ms, struct word *w)
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

static void reap(pid_t pid, bool wait)
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
	struct word w;
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
		guardian(&g, &p->r);
	ret = hear(ans[0], READY_MS, &w);
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
		reap(pid, true);
		lr_msg(err, errlen, "--prepare-peer: the guardian process ended without a word");
		code = LR_EXIT_RUNTIME;
		goto out;
	}
	p->r = w.r;
	if (w.code || p->r.action == LR_PREP_NONE) {
		reap(pid, true);
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
	n = others(fd);
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
static int let_go(struct lr_peer_gro *p, struct word *w)
{
	int ret;

	/* a byte says it even while another child holds a copy of our end */
	if (send(p->ctl_fd, "x", 1, MSG_NOSIGNAL) < 0)
		pr_debug("--prepare-peer: the guardian's socket: %s\n", strerror(errno));
	close(p->ctl_fd);
	p->ctl_fd = -1;
	ret = hear(p->ans_fd, RELEASE_MS, w);
	if (!ret && !w->final)
		ret = -EPIPE;
	close(p->ans_fd);
	p->ans_fd = -1;
	/* its end of the pipe closes only when it exits: it is gone, or about to be, unless stuck */
	reap(p->pid, ret != -ETIMEDOUT);
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
	struct word w;
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
	struct word w;
	int ret;

	if (p->stray) {
		reap(p->stray, false);
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
