/* SPDX-License-Identifier: MIT */
/* XDP receive backend: loads the embedded program, attaches it by bpf_link, reads its maps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "linerate/choose.h"
#include "linerate/log.h"
#include "linerate/rx.h"
#include "recv.skel.h"

struct xdp_priv {
	struct recv *skel;
	int link_fd;
	void *flows;	/* mmap of the shared flow array */
	size_t flows_len;
};

static void xdp_close(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;

	if (!x)
		return;
	if (x->link_fd >= 0)
		close(x->link_fd);
	if (x->flows)
		munmap(x->flows, x->flows_len);
	recv__destroy(x->skel);
	free(rx->sources);
	free(x);
	rx->sources = NULL;
	rx->flows = NULL;
	rx->priv = NULL;
}

/* bpf_link in native mode, else generic; a killed process leaves nothing attached. */
static int attach(struct lr_rx *rx, struct xdp_priv *x, char *why, size_t len)
{
	const struct lr_recv_opts *o = rx->o;
	int prog_fd = bpf_program__fd(x->skel->progs.xdp_count);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	int err = 0;

	if (o->xdp_mode != LR_XDP_GENERIC) {
		lopts.flags = XDP_FLAGS_DRV_MODE;
		x->link_fd = bpf_link_create(prog_fd, rx->ifc.ifindex, BPF_XDP, &lopts);
		if (x->link_fd >= 0) {
			rx->mode = "native";
			return 0;
		}
		err = -errno;
		if (o->xdp_mode == LR_XDP_NATIVE || err == -EBUSY || err == -EEXIST || err == -EPERM)
			goto fail;
		snprintf(rx->note, sizeof(rx->note), "native XDP unavailable on %s (%s); generic mode in use",
			 o->ifname, strerror(-err));
	}
	lopts.flags = XDP_FLAGS_SKB_MODE;
	x->link_fd = bpf_link_create(prog_fd, rx->ifc.ifindex, BPF_XDP, &lopts);
	if (x->link_fd >= 0) {
		rx->mode = "generic";
		return 0;
	}
	err = -errno;
fail:
	if (err == -EBUSY || err == -EEXIST)
		snprintf(why, len, "%s already has an XDP program attached; detach it first (ip link set dev %s xdp off)",
			 o->ifname, o->ifname);
	else if (err == -EPERM)
		snprintf(why, len, "attaching XDP to %s needs root (CAP_NET_ADMIN, CAP_BPF)", o->ifname);
	else
		snprintf(why, len, "cannot attach XDP (%s mode) to %s: %s",
			 o->xdp_mode == LR_XDP_NATIVE ? "native" : "generic", o->ifname, strerror(-err));
	return err;
}

static int xdp_open(struct lr_rx *rx, char *why, size_t len)
{
	const struct lr_recv_opts *o = rx->o;
	struct xdp_priv *x;
	int ret, ncpus;

	if (lr_test_disabled("xdp")) {
		snprintf(why, len, "disabled by LINERATE_TEST_DISABLE");
		return -EPERM;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		snprintf(why, len, "cannot count CPUs");
		return ncpus < 0 ? ncpus : -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	rx->sources = calloc((size_t)ncpus, sizeof(*rx->sources));
	if (!x || !rx->sources) {
		free(x);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	x->link_fd = -1;
	rx->priv = x;
	rx->nsources = ncpus;

	x->skel = recv__open();
	if (!x->skel) {
		ret = -errno;
		snprintf(why, len, "cannot open the embedded BPF object: %s", strerror(-ret));
		goto fail;
	}
	x->skel->rodata->cfg_dport = o->dst_port;
	x->skel->rodata->cfg_pass_test = o->pass;
	ret = recv__load(x->skel);
	if (ret) {
		if (ret == -EPERM || ret == -EACCES)
			snprintf(why, len, "loading the XDP program needs root (CAP_BPF, CAP_NET_ADMIN)");
		else
			snprintf(why, len, "cannot load the XDP program: %s (run with -vv for the verifier log)",
				 strerror(-ret));
		goto fail;
	}
	x->flows_len = sizeof(struct lr_flow_state) * LR_MAX_FLOWS;
	/* writable only for reset between tests; counting writes happen in the program */
	x->flows = mmap(NULL, x->flows_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(x->skel->maps.flows), 0);
	if (x->flows == MAP_FAILED) {
		ret = -errno;
		x->flows = NULL;
		snprintf(why, len, "cannot map the flow table: %s", strerror(-ret));
		goto fail;
	}
	rx->flows = x->flows;
	ret = attach(rx, x, why, len);
	if (ret)
		goto fail;
	return 0;
fail:
	xdp_close(rx);
	return ret;
}

static int xdp_read(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;
	__u32 key = 0;

	if (bpf_map__lookup_elem(x->skel->maps.rx_counters, &key, sizeof(key), rx->sources,
				 sizeof(*rx->sources) * (size_t)rx->nsources, 0))
		return -errno;
	return 0;
}

/* Detaching first makes the numbers read afterwards final. */
static void xdp_stop(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;

	if (x->link_fd >= 0) {
		close(x->link_fd);
		x->link_fd = -1;
	}
}

static void xdp_reset(struct lr_rx *rx)
{
	struct xdp_priv *x = rx->priv;
	__u32 key = 0;

	memset(rx->sources, 0, sizeof(*rx->sources) * (size_t)rx->nsources);
	if (bpf_map__update_elem(x->skel->maps.rx_counters, &key, sizeof(key), rx->sources,
				 sizeof(*rx->sources) * (size_t)rx->nsources, BPF_ANY))
		pr_warn("recv: cannot zero the XDP counters: %s\n", strerror(errno));
	memset(x->flows, 0, x->flows_len);
}

const struct lr_rx_ops lr_rx_xdp = {
	.name = "xdp",
	.open = xdp_open,
	.read = xdp_read,
	.stop = xdp_stop,
	.reset = xdp_reset,
	.close = xdp_close,
};
