/* SPDX-License-Identifier: MIT */
/* Live-frames send engine: BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES stamps and redirects in the kernel, no skb. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "linerate/choose.h"
#include "linerate/engine.h"
#include "linerate/live.h"
#include "linerate/log.h"
#include "linerate/rate.h"
#include "live.skel.h"

/*
 * Frames per BPF_PROG_RUN at full speed. Each run sets up and tears down a
 * page pool, about 25 ms here, so a run must be long for that to vanish:
 * 1M frames is about 0.4 s at 2.6 Mpps (runs are trimmed to the deadline).
 */
#define LIVE_BATCH	(1U << 20)
/* Paced: a run carries this much of the rate, the shortest period worth a run's set-up. */
#define LIVE_SLICE_NS	50000000ULL
/* Frames the kernel handles between two checks for a pending signal inside one run. */
#define LIVE_KERNEL_BATCH 64

struct live_priv {
	struct live *skel;
	int prog_fd;
	int ncpus;
	bool eot;	/* the program is stamping markers */
	uint64_t ns_per_frame;	/* of the last run, to fit runs before the deadline */
	struct lr_live_state *st;	/* one lookup's worth: every CPU's state */
};

static int live_probe(const struct lr_if *ifc, const struct lr_send_opts *o, char *why, size_t len)
{
	struct lr_if_xdp feat = { 0 };
	int ret;

	(void)o;
	if (lr_test_disabled("live")) {
		snprintf(why, len, "disabled by LINERATE_TEST_DISABLE");
		return -EPERM;
	}
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
	return 0;
}

static int set_state(struct lr_worker *w, struct live_priv *x, bool eot)
{
	struct lr_live_state *st;
	__u32 key = 0;
	int ret, c;

	st = calloc((size_t)x->ncpus, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ret = bpf_map__lookup_elem(x->skel->maps.live_state, &key, sizeof(key), st, sizeof(*st) * (size_t)x->ncpus, 0);
	if (ret) {
		free(st);
		return -errno;
	}
	c = (int)w->cpu;
	st[c].first = w->flow_first;
	st[c].stride = w->flow_stride;
	st[c].nflows = w->nflows;
	st[c].cur = 0;
	st[c].flows_total = w->flows_total;
	st[c].eot = eot;
	ret = bpf_map__update_elem(x->skel->maps.live_state, &key, sizeof(key), st, sizeof(*st) * (size_t)x->ncpus, 0);
	free(st);
	x->eot = eot;
	return ret ? -errno : 0;
}

/* Frames the program sent on this worker's CPU so far. */
static int read_sent(struct lr_worker *w, struct live_priv *x, uint64_t *out)
{
	__u32 key = 0;

	if (bpf_map__lookup_elem(x->skel->maps.live_state, &key, sizeof(key), x->st,
				 sizeof(*x->st) * (size_t)x->ncpus, 0)) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot read the per-CPU state: %s", strerror(errno));
		return -errno;
	}
	*out = x->st[w->cpu].sent;
	return 0;
}

static void live_close(struct lr_worker *w)
{
	struct live_priv *x = w->engine;

	if (!x)
		return;
	live__destroy(x->skel);
	free(x->st);
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
	if ((int)w->cpu >= libbpf_num_possible_cpus()) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: CPU %u does not exist", w->cpu);
		return -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->ncpus = libbpf_num_possible_cpus();
	x->st = calloc((size_t)x->ncpus, sizeof(*x->st));
	if (!x->st) {
		free(x);
		return -ENOMEM;
	}
	x->skel = live__open();
	if (!x->skel) {
		ret = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot open the embedded BPF object: %s", strerror(-ret));
		free(x->st);
		free(x);
		return ret;
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
	w->engine = x;
	ret = set_state(w, x, false);
	if (ret) {
		snprintf(w->errmsg, sizeof(w->errmsg), "live: cannot set up the per-CPU state: %s", strerror(-ret));
		goto fail;
	}
	w->mode = "prog_run";
	return 0;
fail:
	w->engine = NULL;
	live__destroy(x->skel);
	free(x->st);
	free(x);
	return ret;
}

#define STAT_ADD(w, f, n) __atomic_store_n(&(w)->stats.f, (w)->stats.f + (n), __ATOMIC_RELAXED)

static int live_tx(struct lr_worker *w, unsigned int budget)
{
	struct live_priv *x = w->engine;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = w->tmpl->data,
		.data_size_in = w->tmpl->len,
		.repeat = (int)budget,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		.batch_size = LIVE_KERNEL_BATCH,
	);
	int ret;

	uint64_t before, after, t0;

	/*
	 * An unpaced run is long and not interruptible by the clock: keep it
	 * inside the deadline at the last run's speed. (Paced runs carry one
	 * slice, and the pacer already sized them to the clock.)
	 */
	if (!w->pps && *w->deadline_ns) {
		uint64_t now = lr_now_ns(), left = *w->deadline_ns > now ? *w->deadline_ns - now : 0;

		budget = (unsigned int)lr_run_fit(budget, left, x->ns_per_frame);
	}
	opts.repeat = (int)budget;
	if (!budget)
		return 0;
	if (w->eot_phase != x->eot) {
		ret = set_state(w, x, w->eot_phase);
		if (ret)
			return ret;
	}
	ret = read_sent(w, x, &before);
	if (ret)
		return ret;
	t0 = lr_now_ns();
	/* runs on this CPU: the worker is pinned, so the per-CPU flow state is its own */
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
	 * its xmit error counters at the end (drops_completed).
	 */
	ret = read_sent(w, x, &after);
	if (ret)
		return ret;
	after -= before;
	if (after)
		x->ns_per_frame = (lr_now_ns() - t0) / after + 1;
	if (w->eot_phase) {
		STAT_ADD(w, eot, after);
	} else {
		STAT_ADD(w, queued, after);
	}
	STAT_ADD(w, completed, after);
	return (int)after;
}

static int live_drain(struct lr_worker *w)
{
	(void)w;
	return 0;	/* nothing in flight: a run returns when its frames were handed to the device */
}

/*
 * Redirected frames the device could not take. A veth counts those its
 * peer's ring had no room for in tx_queue_N_xdp_xmit_errors and adds the
 * same frames to its tx_dropped (veth_get_stats64), so on a veth tx_dropped
 * alone is the count; summing both would report every drop twice. Other
 * drivers keep XDP xmit errors apart from tx_dropped where they have them.
 */
static int live_dev_drops(const struct lr_if *ifc, uint64_t *out)
{
	struct lr_ethtool_stats st;
	uint64_t v, sum = 0;
	unsigned int q;

	if (lr_if_stat(ifc->name, "tx_dropped", &sum))
		sum = 0;
	if (strcmp(ifc->driver, "veth") && !lr_if_ethtool_stats(ifc->name, &st)) {
		for (q = 0; q < 4096 && !lr_ethtool_stats_findq(&st, "tx_queue_%u_xdp_xmit_errors", q, &v); q++)
			sum += v;
		lr_ethtool_stats_free(&st);
	}
	*out = sum;
	return 0;
}

const struct lr_engine_ops lr_engine_live = {
	.name = "live",
	.drops_completed = true,
	.batch = LIVE_BATCH,
	.slice_ns = LIVE_SLICE_NS,
	.dev_drops = live_dev_drops,
	.probe = live_probe,
	.open = live_open,
	.tx = live_tx,
	.drain = live_drain,
	.close = live_close,
};
