/* SPDX-License-Identifier: MIT */
/*
 * What this kernel and one interface offer linerate: AF_XDP modes, XDP, AF_PACKET, live frames.
 * Owns the capability record that `linerate probe` prints and the engine choice reads.
 */
#ifndef LINERATE_CAPS_H
#define LINERATE_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <net/if.h>
#include "sys/netdev.h"

enum lr_cap_state {
	LR_CAP_UNKNOWN = 0,	/* could not tell (no privileges, old kernel) */
	LR_CAP_NO,
	LR_CAP_YES,
	LR_CAP_LIKELY,	/* inferred, not tried */
};

/* The order is the order of the table `linerate probe` prints. */
enum lr_cap_id {
	LR_CAP_AFXDP_SOCKET,	/* socket(AF_XDP) opens */
	LR_CAP_AFXDP_ZEROCOPY,	/* a TX-only socket binds to queue 0 with XDP_ZEROCOPY */
	LR_CAP_AFXDP_COPY,	/* ... with XDP_COPY */
	LR_CAP_AFXDP_NEED_WAKEUP,	/* a bind with XDP_USE_NEED_WAKEUP succeeded */
	LR_CAP_XDP_NATIVE,	/* driver advertises NETDEV_XDP_ACT_BASIC */
	LR_CAP_XDP_GENERIC,	/* the kernel loads XDP programs: skb mode works on any device */
	LR_CAP_XDP_NDO_XMIT,	/* driver advertises NETDEV_XDP_ACT_NDO_XMIT (a redirect target) */
	LR_CAP_XSK_ZC_ADVERTISED,	/* driver advertises NETDEV_XDP_ACT_XSK_ZEROCOPY */
	LR_CAP_AF_PACKET,	/* socket(AF_PACKET, SOCK_RAW) opens */
	LR_CAP_LIVE_FRAMES,	/* BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES; by kernel version for now */
	LR_CAP_COUNT
};

struct lr_cap {
	enum lr_cap_state state;
	int err;	/* the -errno behind a "no" or "unknown", 0 if none */
	char detail[192];	/* what was tried and what came of it, for a user to act on */
};

struct lr_caps {
	struct lr_cap cap[LR_CAP_COUNT];
	char kernel[65];	/* uname release */
	struct lr_if_link link;
	bool have_link;
	struct lr_if_channels channels;
	bool have_channels;
	struct lr_if_xdp xdp;
	bool have_xdp;	/* the netdev netlink family answered (Linux >= 6.3) */
	int xdp_err;	/* why not, when !have_xdp */
	int veth_peer_ifindex;	/* in the peer's namespace; 0 when unknown or not a veth */
};

/*
 * Fills @caps for @ifc (which lr_if_open() filled, even if it said the link is
 * down). Binds and closes AF_XDP sockets on queue 0 but attaches nothing.
 * Missing features and privileges are recorded per capability, not returned;
 * returns 0. All but LR_CAP_LIVE_FRAMES, which is left unknown: trying it runs
 * a send engine's program, and the engines sit above sys (see lr_caps_set_live).
 */
int lr_caps_probe(const struct lr_if *ifc, struct lr_caps *caps);
/*
 * Records LR_CAP_LIVE_FRAMES in @caps (after lr_caps_probe()) from a try of
 * live-frames mode by the caller, lr_live_try(): its return @ret (0 or -errno)
 * and its reason @why.
 */
void lr_caps_set_live(struct lr_caps *caps, int ret, const char *why);
/* Stable JSON key ("afxdp_copy"), and the label of the human table ("AF_XDP copy mode"). */
const char *lr_cap_key(enum lr_cap_id id);
const char *lr_cap_label(enum lr_cap_id id);
/* "yes", "no", "likely", "unknown" */
const char *lr_cap_state_name(enum lr_cap_state state);

#endif
