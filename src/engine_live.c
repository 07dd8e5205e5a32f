/* SPDX-License-Identifier: MIT */
/* Live-frames send engine: BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES stamps and redirects in the kernel, no skb. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/bpf.h>
#include <linux/if_tun.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "linerate/choose.h"
#include "linerate/engine.h"
#include "linerate/live.h"
#include "linerate/log.h"
#include "linerate/rate.h"
#include "live.skel.h"

/*
 * Every BPF_PROG_RUN with a repeat count above 1 puts the program into the
 * kernel's XDP dispatcher and takes it out again afterwards
 * (bpf_prog_change_xdp), and each change waits for RCU: about 25 ms a run
 * on this 2-core VM, whatever the frame count. While the same program is
 * attached to a device it stays in the dispatcher, and a run costs about
 * 20 us. So each worker makes a tap device (non-persistent: it vanishes
 * with the file descriptor, even on SIGKILL), leaves it down, and attaches
 * its program there through a bpf_link. Runs can then be short: 64k frames
 * at full speed, and paced runs carry 500 us of the rate.
 *
 * Without the tap (no /dev/net/tun, no tun driver), runs must be long for
 * the set-up to vanish: 1M frames at full speed, 50 ms slices when paced.
 */
#define LIVE_BATCH	(1U << 20)
#define LIVE_SLICE_NS	50000000ULL
#define LIVE_HELD_BATCH	(1U << 16)
#define LIVE_HELD_SLICE_NS 500000ULL
/* Frames the kernel handles between two checks for a pending signal inside one run. */
#define LIVE_KERNEL_BATCH 64

struct live_priv {
	struct live *skel;
	int prog_fd;
	bool eot;	/* the program is stamping markers */
	uint64_t ns_per_frame;	/* of the last run, to fit runs before the deadline */
	int tap_fd, link_fd;	/* the holding tap and the program's link to it, -1 when none */
};

/* A down, non-persistent tap: gone when @tap_fd closes. Returns its ifindex, or -errno with @why. */
static int hold_tap(int *tap_fd, char *why, size_t len)
{
	struct ifreq ifr = { 0 };
	int fd, idx, err;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "no /dev/net/tun (%s)", strerror(-err));
		return err;
	}
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lrlive%%d");
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		err = -errno;
		snprintf(why, len, "cannot make a tap device (%s)", strerror(-err));
		close(fd);
		return err;
	}
	idx = (int)if_nametoindex(ifr.ifr_name);
	if (!idx) {
		err = -errno;
		snprintf(why, len, "tap %s has no ifindex (%s)", ifr.ifr_name, strerror(-err));
		close(fd);
		return err;
	}
	*tap_fd = fd;
	return idx;
}

int lr_live_try(int ifindex, char *why, size_t len)
{
	unsigned char frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = sizeof(frame),
		.repeat = 1,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
	);
	struct live *skel;
	int ret;

	skel = live__open();
	if (!skel) {
		ret = -errno;
		snprintf(why, len, "cannot open the embedded live program: %s", strerror(-ret));
		return ret;
	}
	/* no flows in the state: the program aborts on the frame, nothing is redirected */
	skel->rodata->cfg_ifindex = (__u32)ifindex;
	ret = live__load(skel);
	if (ret) {
		snprintf(why, len, "cannot load the live program: %s%s", strerror(-ret),
			 ret == -EPERM ? " (needs root: CAP_BPF, CAP_NET_ADMIN)" : "");
		goto out;
	}
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_live), &opts)) {
		ret = -errno;
		snprintf(why, len, "BPF_PROG_RUN refuses live-frames mode: %s%s", strerror(-ret),
			 ret == -EINVAL ? " (needs Linux 5.18 or later)" : "");
		goto out;
	}
	snprintf(why, len, "a BPF_PROG_RUN in live-frames mode ran (on a frame the program dropped)");
	ret = 0;
out:
	live__destroy(skel);
	return ret;
}

static int live_probe(const struct lr_if *ifc, const struct lr_send_opts *o, char *why, size_t len)
{
	struct lr_if_xdp feat = { 0 };
	int ret;

	(void)o;
	/* (LINERATE_TEST_DISABLE is checked by the engine choice, before any probe) */
	/* the target must take XDP frames (ndo_xdp_xmit); a veth does only while its peer runs XDP or GRO */
	ret = lr_if_xdp_features(ifc->ifindex, &feat);
	if (!ret && !(feat.features & LR_XDP_ACT_NDO_XMIT)) {
		if (!strcmp(ifc->driver, "veth"))
			snprintf(why, len, "live: %s cannot take XDP frames until its veth peer runs XDP or GRO "
				 "(start linerate recv on the peer, or ethtool -K PEER gro on)", ifc->name);
		else
			snprintf(why, len, "live: %s (%s) does not take XDP frames (no ndo_xdp_xmit)", ifc->name,
				 ifc->driver[0] ? ifc->driver : "driver unknown");
		return -EOPNOTSUPP;
	}
	ret = lr_live_try(ifc->ifindex, why, len);
	if (ret) {
		char r[200];

		snprintf(r, sizeof(r), "%s", why);
		snprintf(why, len, "live: %s", r);
	}
	return ret;
}

/*
 * The program's state lives in its .bss, which the skeleton maps into this
 * process: set and read with plain memory accesses between runs, no syscall.
 */
static void set_state(struct lr_worker *w, struct live_priv *x, bool eot)
{
	struct lr_live_state *st = &x->skel->bss->live_st;

	st->first = w->flow_first;
	st->stride = w->flow_stride;
	st->nflows = w->nflows;
	st->cur = 0;
	st->flows_total = w->flows_total;
	st->eot = eot;
	x->eot = eot;
}

/* Frames the program stamped and redirected so far. */
static uint64_t read_sent(const struct live_priv *x)
{
	return __atomic_load_n(&x->skel->bss->live_st.sent, __ATOMIC_RELAXED);
}

static void hold_release(struct live_priv *x)
{
	if (x->link_fd >= 0)
		close(x->link_fd);
	if (x->tap_fd >= 0)
		close(x->tap_fd);
	x->link_fd = x->tap_fd = -1;
}

static void live_close(struct lr_worker *w)
{
	struct live_priv *x = w->engine;

	if (!x)
		return;
	hold_release(x);
	live__destroy(x->skel);
	free(x);
	w->engine = NULL;
}

static int live_open(struct lr_worker *w)
{
	const struct lr_tmpl *t = w->tmpl;
	struct live_priv *x;
	int ret;

	if (w->replay) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: replays a template only, not a capture");
		return -EOPNOTSUPP;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->skel = live__open();
	if (!x->skel) {
		ret = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot open the embedded BPF object: %s", strerror(-ret));
		free(x);
		return ret;
	}
	x->tap_fd = x->link_fd = -1;
	{
		char why[128];
		int idx = hold_tap(&x->tap_fd, why, sizeof(why));

		if (idx > 0)
			x->skel->rodata->cfg_hold_ifindex = (__u32)idx;
		else
			snprintf(w->note, sizeof(w->note), "live: %.60s; runs cost ~25 ms of set-up each, so are "
				 "long (50 ms slices when paced)", why);
	}
	x->skel->rodata->cfg_ifindex = (__u32)w->ifc->ifindex;
	x->skel->rodata->cfg_l4_off = t->l4_off;
	x->skel->rodata->cfg_csum_base = t->csum_base;
	x->skel->rodata->cfg_src_port = t->src_port;
	{
		unsigned int words = t->len / 8 < LR_LIVE_HEAD_WORDS ? t->len / 8 : LR_LIVE_HEAD_WORDS;

		memcpy((void *)x->skel->rodata->cfg_head, t->data, (size_t)words * 8);
		x->skel->rodata->cfg_head_words = words;
	}
	ret = live__load(x->skel);
	if (ret) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot load the sender program: %s%s", strerror(-ret),
			 ret == -EPERM ? " (needs root: CAP_BPF, CAP_NET_ADMIN)" : "");
		goto fail;
	}
	x->prog_fd = bpf_program__fd(x->skel->progs.xdp_live);
	if (x->tap_fd >= 0) {
		x->link_fd = bpf_link_create(x->prog_fd, (int)x->skel->rodata->cfg_hold_ifindex, BPF_XDP, NULL);
		if (x->link_fd < 0) {
			snprintf(w->note, sizeof(w->note), "live: cannot attach to the holding tap (%.40s); runs cost "
				 "~25 ms of set-up each, so are long (50 ms slices when paced)", strerror(errno));
			close(x->tap_fd);
			x->tap_fd = x->link_fd = -1;
		} else {
			w->batch = LIVE_HELD_BATCH;
			w->slice_ns = LIVE_HELD_SLICE_NS;
		}
	}
	w->engine = x;
	set_state(w, x, false);
	w->mode = "prog_run";
	return 0;
fail:
	w->engine = NULL;
	w->batch = 0;
	w->slice_ns = 0;
	hold_release(x);
	live__destroy(x->skel);
	free(x);
	return ret;
}

static int live_tx(struct lr_worker *w, unsigned int budget)
{
	struct live_priv *x = w->engine;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = w->tmpl->data,
		.data_size_in = w->tmpl->len,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		.batch_size = LIVE_KERNEL_BATCH,
	);
	uint64_t before, after, t0;
	int ret;

	/*
	 * An unpaced run is long and not interruptible by the clock: keep it
	 * inside the deadline at the last run's speed. (Paced runs carry one
	 * slice, and the pacer already sized them to the clock. Markers go
	 * after the deadline, all of them.)
	 */
	if (!w->pps && !w->eot_phase && *w->deadline_ns) {
		uint64_t now = lr_now_ns(), left = *w->deadline_ns > now ? *w->deadline_ns - now : 0;

		budget = (unsigned int)lr_run_fit(budget, left, x->ns_per_frame);
	}
	opts.repeat = (int)budget;
	if (!budget)
		return 0;
	if (w->eot_phase != x->eot)
		set_state(w, x, w->eot_phase);
	before = read_sent(x);
	t0 = lr_now_ns();
	if (bpf_prog_test_run_opts(x->prog_fd, &opts)) {
		ret = -errno;
		if (ret != -EINTR) {
			snprintf(w->errmsg, sizeof(w->errmsg), "live: BPF_PROG_RUN in live-frames mode failed: %s%s",
				 strerror(-ret), ret == -EINVAL ? " (needs Linux 5.18 or later)" : "");
			return ret;
		}
	}
	/*
	 * Count what the program stamped and redirected, not what was asked:
	 * a signal ends a run early. What the device then dropped is read from
	 * its tx_dropped at the end (drops_completed).
	 */
	after = read_sent(x) - before;
	if (after)
		x->ns_per_frame = (lr_now_ns() - t0) / after + 1;
	if (w->eot_phase) {
		LR_STAT_ADD(w, eot, after);
	} else {
		LR_STAT_ADD(w, queued, after);
	}
	LR_STAT_ADD(w, completed, after);
	return (int)after;
}

static int live_drain(struct lr_worker *w)
{
	(void)w;
	return 0;	/* nothing in flight: a run returns when its frames were handed to the device */
}

const struct lr_engine_ops lr_engine_live = {
	.name = "live",
	.drops_completed = true,
	.batch = LIVE_BATCH,
	.slice_ns = LIVE_SLICE_NS,
	.probe = live_probe,
	.open = live_open,
	.tx = live_tx,
	.drain = live_drain,
	.close = live_close,
};
