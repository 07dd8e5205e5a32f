/* SPDX-License-Identifier: MIT */
/*
 * --prepare-peer: GRO switched on at the first hop's veth peer for a test by a guardian process,
 * which puts it back when the test ends or linerate dies; concurrent runs on one peer are counted.
 */
#ifndef LINERATE_PEER_GRO_H
#define LINERATE_PEER_GRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util/result.h"

/* Per peer: NAME.state (the original setting; its lock is the mutex) and NAME.users (a LOCK_SH per holder). */
#define LR_PEER_GRO_DIR "/run/linerate/peer-gro"

struct lr_peer_gro {
	struct lr_prep_result r;
	pid_t pid;	/* the guardian while it holds GRO on; 0 when nothing is held */
	int ctl_fd;	/* our end of its socket: a byte, or its closing, has it let go */
	int ans_fd;	/* its reports */
	char ifname[LR_PREP_DEVICE_MAX];	/* ours, for a new guardian when this one died */
	pid_t stray;	/* one that did not answer in time, to reap (it puts back what it changed) */
};

/*
 * When @ifname is a veth whose peer takes no XDP frames (no driver-mode XDP program, GRO off),
 * forks a guardian that enters the peer's namespace, checks that the peer points back at
 * @ifname, and switches its GRO on until lr_peer_gro_release() or this process's death. Must run
 * before any thread exists. 0 with what was found and done in p->r (nothing, for a peer that takes
 * XDP frames already or an interface that is no veth); else an exit code and one line in @err,
 * with nothing changed (a guardian that did not answer within 10 s is left to finish: it puts
 * back at once whatever it changes, as its parent's ends of their pipes are closed).
 */
int lr_peer_gro_hold(const char *ifname, struct lr_peer_gro *p, char *err, size_t errlen);
/*
 * Lets go: GRO goes back as it was, or stays on while other runs hold it; within 5 s, the outcome
 * in p->r (released, restored, left_on_for, error). Nothing else when nothing is held (a guardian
 * that did not answer lr_peer_gro_hold() in time is reaped if it has ended). A guardian that died
 * first (killed alone, out of memory) raises no SIGPIPE here: a new one is forked, takes over the
 * record it left, puts GRO back, and one line on stderr says so. Its code takes no lock but libc's,
 * which fork() leaves usable, so threads may exist by then.
 */
void lr_peer_gro_release(struct lr_peer_gro *p);

struct lr_if;
/*
 * Runs that hold GRO on now at the veth peer of @ifc (LOCK_SH on its record), counted without a
 * lock of ours; 0 for none, for a peer that runs XDP or when it cannot be told. When not 0, the
 * peer in @at as the lines name it ("vc1 (netns lrlab-bridge-host)"). For live, whose frames that
 * GRO takes only until the last of those runs ends.
 */
unsigned int lr_peer_gro_holders(const struct lr_if *ifc, char *at, size_t len);

/* The line that says what was found and done, for the start of a test ("--prepare-peer: ..."). */
void lr_peer_gro_start_line(const struct lr_prep_result *r, const char *ifname, char *buf, size_t len);
/* What a summary says of it: nothing done, held, put back or left on for others; "" when not asked. */
void lr_peer_gro_end_line(const struct lr_prep_result *r, char *buf, size_t len);

/*
 * A peer's state file: the device, its namespace's cookie (never reused while the host is up,
 * unlike the inode its name is made of; 0 when the kernel has none) and its GRO as its user had it.
 */
struct lr_peer_gro_state {
	char device[LR_PREP_DEVICE_MAX];
	uint64_t netns_cookie;
	bool gro;
};

/*
 * "linerate-peer-gro 1\ndevice NAME\nnetns_cookie N\ngro on|off\n": 0, -ENODATA when empty,
 * -EBADMSG otherwise.
 */
int lr_peer_gro_state_parse(const char *text, size_t len, struct lr_peer_gro_state *st);
/* The same text into @buf: its length, or -ENOSPC. */
int lr_peer_gro_state_format(const struct lr_peer_gro_state *st, char *buf, size_t len);
/*
 * Whether a record no run holds, left by one that died, still says how the peer's user had GRO:
 * of the namespace with @cookie (0: not known, not compared), of the device now called @device,
 * which has GRO on (@gro) and no driver-mode XDP program (@xdp), as that run left it.
 */
bool lr_peer_gro_state_fits(const struct lr_peer_gro_state *st, uint64_t cookie, const char *device, bool gro,
			    bool xdp);
/*
 * Holders of a flock(LOCK_SH) on the file at @dev (major:minor as /proc/locks prints it) and
 * @ino, from /proc/locks text; waiters ("->") are not counted.
 */
unsigned int lr_peer_gro_count_holders(const char *locks, unsigned int major, unsigned int minor,
				       unsigned long ino);

#endif
