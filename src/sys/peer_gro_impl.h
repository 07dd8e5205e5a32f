/* SPDX-License-Identifier: MIT */
/* --prepare-peer's guardian and its parent: what they tell each other, shared by sys/peer_gro*.c only. */
#ifndef LINERATE_PEER_GRO_IMPL_H
#define LINERATE_PEER_GRO_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <time.h>
#include <net/if.h>
#include <sys/types.h>
#include "sys/peer_gro.h"

#define READY_MS	10000	/* for the guardian's first word: a lock another run holds is held for moments */
#define RELEASE_MS	5000	/* for its last word */
#define TAKE_LOCK_MS	8000	/* the guardian's wait for a peer's mutex, within READY_MS */
#define PUT_LOCK_MS	4000	/* ... and when it lets go, within RELEASE_MS */
#define WATCH_MS	200	/* how often it looks whether its parent is still there */

/* What the guardian tells its parent: once when it holds GRO on (or found nothing to do), once when done. */
struct guard_word {
	int code;	/* 0, or the exit code of a failure that @msg says */
	bool final;
	struct lr_prep_result r;
	char msg[256];
};

_Static_assert(sizeof(struct guard_word) <= PIPE_BUF, "one word is one atomic write");

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

/* Milliseconds since @t0 on CLOCK_MONOTONIC. */
static inline int since_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* How many others hold a peer's users file (LOCK_SH) open at @fd, from /proc/locks; 0 when it cannot be told. */
unsigned int lr_peer_gro_other_users(int fd);

/*
 * The guardian's life, forked by lr_peer_gro_hold(): it never returns into the parent's code (its
 * stack is a copy of the parent's).
 */
__attribute__((noreturn)) void lr_peer_gro_guardian(const struct guard *g, const struct lr_prep_result *r0);

#endif
