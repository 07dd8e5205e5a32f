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
#include "linerate/live.h"
#include "sys/peer_gro.h"
#include "tx/engine.h"
#include "tx/rate.h"
#include "util/choose.h"
#include "util/log.h"
#include "live.skel.h"

/*
 * Every BPF_PROG_RUN with a repeat count above 1 puts the program into the
 * kernel's XDP dispatcher and takes it out again afterwards
 * (bpf_prog_change_xdp), and each change waits for RCU grace periods,
 * whatever the frame count: far more than the frames themselves cost.
 * While the same program is attached to a device it stays in the
 * dispatcher and a run pays no such change (docs/results/ has the
 * figures). So each worker makes a tap device (non-persistent: it vanishes
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
/*
 * --pcap: the program's sample ring, and the most samples one run may
 * take. The worker moves a run's samples into its sampler ring all at
 * once, after the run: one run must not bring more than that ring holds
 * (up to 1024 slots), as the sampler's thread may be asleep meanwhile.
 */
#define LIVE_SAMPLE_RING (4U << 20)
#define LIVE_RUN_SAMPLES 256

struct live_priv {
	struct live *skel;
	int prog_fd;
	bool eot;	/* the program is stamping markers */
	uint64_t ns_per_frame;	/* of the last run, to fit runs before the deadline */
	int tap_fd, link_fd;	/* the holding tap and the program's link to it, -1 when none */
	int hold_ifindex;	/* the tap's, 0 when none */
	bool sampling;	/* the program was loaded able to sample (cfg_sample) */
	struct ring_buffer *rb;	/* its samples, when this worker has a sampler */
	uint64_t drops_seen;	/* of live_st.sample_drops, already added to the sampler's drops */
};

/* The sample ring takes memory only when used: the smallest ring the kernel accepts otherwise. */
static int size_samples(struct live *skel, bool sampling)
{
	return bpf_map__set_max_entries(skel->maps.samples, sampling ? LIVE_SAMPLE_RING : (__u32)sysconf(_SC_PAGESIZE));
}

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
	ret = size_samples(skel, false);
	if (ret) {
		snprintf(why, len, "cannot size the live program's sample ring: %s", strerror(-ret));
		goto out;
	}
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

static int live_probe(const struct lr_if *ifc, const struct lr_tx_spec *o, char *why, size_t len)
{
	struct lr_if_xdp feat = { 0 };
	char at[LR_PREP_DEVICE_MAX + LR_PREP_NETNS_MAX + 16];
	int ret;

	/* (LINERATE_TEST_DISABLE is checked by the engine choice, before any probe) */
	/* the target must take XDP frames (ndo_xdp_xmit); a veth does only while its peer runs XDP or GRO */
	ret = lr_if_xdp_features(ifc->ifindex, &feat);
	if (!ret && !(feat.features & LR_XDP_ACT_NDO_XMIT)) {
		if (!strcmp(ifc->driver, "veth"))
			snprintf(why, len, "live: %s cannot take XDP frames until its veth peer runs XDP or GRO "
				 "(add --prepare-peer, or prepare_peer = yes in a run file, to switch GRO on there for "
				 "the test; or start linerate recv on the peer)", ifc->name);
		else
			snprintf(why, len, "live: %s (%s) does not take XDP frames (no ndo_xdp_xmit)", ifc->name,
				 ifc->driver[0] ? ifc->driver : "driver unknown");
		return -EOPNOTSUPP;
	}
	/*
	 * GRO that another run's --prepare-peer holds on goes off when the last of them ends, and
	 * this run's frames would be dropped from then on: it must hold it too.
	 */
	if (!ret && !o->prepare_peer && !strcmp(ifc->driver, "veth") && lr_peer_gro_holders(ifc, at, sizeof(at))) {
		snprintf(why, len, "live: GRO on at %s is held on only for another linerate run: add --prepare-peer", at);
		return -EOPNOTSUPP;
	}
	ret = lr_live_try(ifc->ifindex, why, len);
	/* "live: " before the reason, in place: no copy through a smaller buffer */
	if (ret && len > sizeof("live: ")) {
		size_t n = strnlen(why, len - sizeof("live: "));

		memmove(why + sizeof("live: ") - 1, why, n);
		memcpy(why, "live: ", sizeof("live: ") - 1);
		why[n + sizeof("live: ") - 1] = '\0';
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
	st->stamp_mask = w->stamp_mask;
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
	w->have_prog = false;
	ring_buffer__free(x->rb);
	hold_release(x);
	live__destroy(x->skel);
	free(x);
	w->engine = NULL;
}

/* Opens, configures and loads a copy of the program for @w, able to sample or not. 0 or -errno with w->errmsg. */
static int prog_load(struct lr_worker *w, bool sampling, struct live **out)
{
	const struct lr_tmpl *t = w->tmpl;
	unsigned int words = t->len / 8 < LR_LIVE_HEAD_WORDS ? t->len / 8 : LR_LIVE_HEAD_WORDS;
	struct live *skel;
	int ret;

	skel = live__open();
	if (!skel) {
		ret = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot open the embedded BPF object: %s", strerror(-ret));
		return ret;
	}
	skel->rodata->cfg_ifindex = (__u32)w->ifc->ifindex;
	skel->rodata->cfg_l4_off = t->l4_off;
	skel->rodata->cfg_csum_base = t->csum_base;
	skel->rodata->cfg_src_port = t->src_port;
	skel->rodata->cfg_rtt = w->spec->rtt;
	skel->rodata->cfg_rtt_id = t->rtt_id;
	memcpy((void *)skel->rodata->cfg_head, t->data, (size_t)words * 8);
	skel->rodata->cfg_head_words = words;
	/* whole frames, as the other engines sample them */
	skel->rodata->cfg_sample = sampling;
	skel->rodata->cfg_snaplen = t->len < LR_LIVE_SNAP_MAX ? t->len : LR_LIVE_SNAP_MAX;
	ret = size_samples(skel, sampling);
	if (ret) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot size the sample ring: %s", strerror(-ret));
		goto fail;
	}
	ret = live__load(skel);
	if (ret) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot load the sender program: %s%s", strerror(-ret),
			 ret == -EPERM ? " (needs root: CAP_BPF, CAP_NET_ADMIN)" : "");
		goto fail;
	}
	*out = skel;
	return 0;
fail:
	live__destroy(skel);
	return ret;
}

static int live_open(struct lr_worker *w)
{
	struct live_priv *x;
	char why[256];
	int ret;

	if (w->replay) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: replays a template only, not a capture");
		return -EOPNOTSUPP;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->tap_fd = x->link_fd = -1;
	ret = hold_tap(&x->tap_fd, why, sizeof(why));
	if (ret > 0)
		x->hold_ifindex = ret;
	else
		snprintf(w->note, sizeof(w->note), "live: %s: runs change the XDP dispatcher, so are "
			 "long (50 ms slices if paced)", why);
	/*
	 * send attaches its sampler after open, but says so in the spec (sampled);
	 * run, whose specs do not, gets a sampling program from live_arm().
	 */
	x->sampling = w->spec->sampled || w->sampler;
	ret = prog_load(w, x->sampling, &x->skel);
	if (ret)
		goto fail;
	x->prog_fd = bpf_program__fd(x->skel->progs.xdp_live);
	if (x->tap_fd >= 0) {
		x->link_fd = bpf_link_create(x->prog_fd, x->hold_ifindex, BPF_XDP, NULL);
		if (x->link_fd < 0) {
			snprintf(w->note, sizeof(w->note), "live: cannot attach to the holding tap (%s): runs "
				 "change the XDP dispatcher, so are long (50 ms slices if paced)", strerror(errno));
			close(x->tap_fd);
			x->tap_fd = x->link_fd = -1;
		} else {
			w->batch = LIVE_HELD_BATCH;
			w->slice_ns = LIVE_HELD_SLICE_NS;
		}
	}
	w->engine = x;
	w->have_prog = true;
	w->prog_fd = x->prog_fd;
	set_state(w, x, false);
	w->mode = "prog_run";
	return 0;
fail:
	w->engine = NULL;
	w->batch = 0;
	w->slice_ns = 0;
	hold_release(x);
	free(x);
	return ret;
}

/*
 * A program able to sample in place of one that is not: load it, and swap
 * it in on the holding tap's link (one change of the XDP dispatcher, not
 * two). The state starts afresh, as nothing has been sent yet.
 */
static int prog_swap_sampling(struct lr_worker *w, struct live_priv *x)
{
	struct live *skel;
	int ret;

	ret = prog_load(w, true, &skel);
	if (ret)
		return ret;
	if (x->link_fd >= 0 && bpf_link_update(x->link_fd, bpf_program__fd(skel->progs.xdp_live), NULL)) {
		ret = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot swap in the sampling program: %s",
			 strerror(-ret));
		live__destroy(skel);
		return ret;
	}
	live__destroy(x->skel);
	x->skel = skel;
	x->prog_fd = bpf_program__fd(skel->progs.xdp_live);
	w->prog_fd = x->prog_fd;
	x->sampling = true;
	set_state(w, x, false);
	return 0;
}

/* One sample the program took: into this worker's sampler ring, on CLOCK_REALTIME. */
static int on_sample(void *ctx, void *data, size_t size)
{
	struct lr_worker *w = ctx;
	const struct lr_live_sample *rec = data;

	if (size < sizeof(*rec) || rec->caplen > size - sizeof(*rec))
		return 0;
	/* a full sampler ring counts the drop itself */
	lr_sampler_put(w->sampler, w->sample_producer, rec->ts_ns + (uint64_t)w->rt_offset, rec->data, rec->caplen);
	return 0;
}

/*
 * Sampling is attached now (lr_tx_sample() runs after open): give the
 * program the choice of frames, and open its ring on this side.
 */
static int live_arm(struct lr_worker *w)
{
	struct live_priv *x = w->engine;
	struct lr_live_state *st;
	int ret;

	if (!w->sampler)
		return 0;
	if (!x->sampling) {
		ret = prog_swap_sampling(w, x);
		if (ret)
			return ret;
	}
	st = &x->skel->bss->live_st;
	st->sample_left = w->sample_left;
	st->sample_every = w->sample_every;
	/* one in K counts this worker's data frames from its first, as w->stamped does */
	st->sample_wait = 0;
	x->drops_seen = st->sample_drops;
	x->rb = ring_buffer__new(bpf_map__fd(x->skel->maps.samples), on_sample, w, NULL);
	if (!x->rb) {
		ret = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot open the sample ring buffer: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/*
 * Moves what the program sampled into the sampler's ring, from the mapped
 * ring buffer with no syscall, and passes on the samples it had no room for.
 */
static void take_samples(struct lr_worker *w, struct live_priv *x)
{
	uint64_t drops;

	if (!x->rb)
		return;
	ring_buffer__consume(x->rb);
	drops = __atomic_load_n(&x->skel->bss->live_st.sample_drops, __ATOMIC_RELAXED);
	if (drops != x->drops_seen) {
		lr_sampler_add_dropped(w->sampler, w->sample_producer, drops - x->drops_seen);
		x->drops_seen = drops;
	}
}

/* At most LIVE_RUN_SAMPLES samples in one run. */
static unsigned int sample_budget(const struct live_priv *x, unsigned int budget)
{
	const struct lr_live_state *st = &x->skel->bss->live_st;

	if (st->sample_every) {
		if (budget / st->sample_every >= LIVE_RUN_SAMPLES)
			return (unsigned int)(st->sample_every * LIVE_RUN_SAMPLES);
	} else if (st->sample_left > LIVE_RUN_SAMPLES && budget > LIVE_RUN_SAMPLES) {
		return LIVE_RUN_SAMPLES;
	}
	return budget;
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
	int ret = 0;

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
	if (x->rb && !w->eot_phase)
		budget = sample_budget(x, budget);
	opts.repeat = (int)budget;
	if (!budget)
		return 0;
	if (w->eot_phase != x->eot)
		set_state(w, x, w->eot_phase);
	before = read_sent(x);
	t0 = lr_now_ns();
	if (bpf_prog_test_run_opts(x->prog_fd, &opts))
		ret = -errno;
	/* between runs, while the program is idle: what it sampled leaves the ring at once */
	take_samples(w, x);
	if (ret && ret != -EINTR) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: BPF_PROG_RUN in live-frames mode failed: %s%s",
			 strerror(-ret), ret == -EINVAL ? " (needs Linux 5.18 or later)" : "");
		return ret;
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
	/* the worker's last call after its data: nothing sampled stays behind in the ring */
	take_samples(w, w->engine);
	return 0;	/* nothing in flight: a run returns when its frames were handed to the device */
}

const struct lr_engine_ops lr_engine_live = {
	.name = "live",
	.drops_completed = true,
	.batch = LIVE_BATCH,
	.slice_ns = LIVE_SLICE_NS,
	.probe = live_probe,
	.open = live_open,
	.arm = live_arm,
	.tx = live_tx,
	.drain = live_drain,
	.close = live_close,
};
