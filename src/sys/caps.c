/* SPDX-License-Identifier: MIT */
/* Capability probes: each opens, binds or asks, records yes/no and why, and undoes what it did. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include <linux/bpf.h>
#include <linux/if_xdp.h>

#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "sys/caps.h"
#include "util/log.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* The smallest UMEM and rings that bind: the probe sends nothing. */
#define PROBE_FRAMES	64
#define PROBE_RING	64
#define PROBE_FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define PROBE_QUEUE	0

static const struct {
	const char *key;
	const char *label;
} cap_names[LR_CAP_COUNT] = {
	[LR_CAP_AFXDP_SOCKET] = { "afxdp_socket", "AF_XDP sockets" },
	[LR_CAP_AFXDP_ZEROCOPY] = { "afxdp_zerocopy", "AF_XDP zero-copy" },
	[LR_CAP_AFXDP_COPY] = { "afxdp_copy", "AF_XDP copy mode" },
	[LR_CAP_AFXDP_NEED_WAKEUP] = { "afxdp_need_wakeup", "AF_XDP need_wakeup" },
	[LR_CAP_XDP_NATIVE] = { "xdp_native", "XDP native (driver)" },
	[LR_CAP_XDP_GENERIC] = { "xdp_generic", "XDP generic (skb)" },
	[LR_CAP_XDP_NDO_XMIT] = { "xdp_ndo_xmit", "XDP redirect target" },
	[LR_CAP_XSK_ZC_ADVERTISED] = { "xsk_zerocopy_advertised", "XSK zero-copy advertised" },
	[LR_CAP_AF_PACKET] = { "af_packet", "AF_PACKET sockets" },
	[LR_CAP_LIVE_FRAMES] = { "live_frames", "XDP live frames" },
};

static void cap_set(struct lr_caps *caps, enum lr_cap_id id, enum lr_cap_state state, int err, const char *fmt,
		    ...) __attribute__((format(printf, 5, 6)));

static void cap_set(struct lr_caps *caps, enum lr_cap_id id, enum lr_cap_state state, int err, const char *fmt, ...)
{
	struct lr_cap *c = &caps->cap[id];
	va_list ap;

	c->state = state;
	c->err = err;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static bool is_priv_err(int err)
{
	return err == -EPERM || err == -EACCES;
}

/* Bind a TX-only socket on @queue with @bind_flags, then close it at once; 0 or -errno. */
static int xsk_try_bind(const struct lr_if *ifc, unsigned int queue, uint16_t bind_flags)
{
	struct xsk_umem_config ucfg = {
		.fill_size = PROBE_RING,
		.comp_size = PROBE_RING,
		.frame_size = PROBE_FRAME_SIZE,
	};
	struct xsk_socket_config scfg = {
		.tx_size = PROBE_RING,
		/* no program: a TX-only socket needs none, and the probe must not touch the device's XDP */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = bind_flags,
	};
	size_t len = (size_t)PROBE_FRAMES * PROBE_FRAME_SIZE;
	struct xsk_umem *umem = NULL;
	struct xsk_socket *xsk = NULL;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq;
	void *area;
	int err;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return -errno;
	err = xsk_umem__create(&umem, area, len, &fq, &cq, &ucfg);
	if (err)
		goto out;
	err = xsk_socket__create(&xsk, ifc->name, queue, umem, NULL, &tx, &scfg);
	if (!err)
		xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
out:
	munmap(area, len);
	return err;
}

static void bind_failed(struct lr_caps *caps, enum lr_cap_id id, const struct lr_if *ifc, const char *mode, int err)
{
	if (is_priv_err(err))
		cap_set(caps, id, LR_CAP_UNKNOWN, err, "binding needs root (CAP_NET_RAW)");
	else if (err == -EBUSY)
		cap_set(caps, id, LR_CAP_UNKNOWN, err, "queue %u is already bound by another AF_XDP socket",
			PROBE_QUEUE);
	else if (err == -EOPNOTSUPP && id == LR_CAP_AFXDP_ZEROCOPY)
		cap_set(caps, id, LR_CAP_NO, err, "%s has no zero-copy AF_XDP support (bind: %s)",
			ifc->driver[0] ? ifc->driver : ifc->name, strerror(-err));
	else
		cap_set(caps, id, LR_CAP_NO, err, "bind to queue %u in %s mode: %s", PROBE_QUEUE, mode,
			strerror(-err));
}

static void probe_afxdp(const struct lr_if *ifc, struct lr_caps *caps)
{
	bool wakeup = false;
	int fd, err;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		if (is_priv_err(err))
			cap_set(caps, LR_CAP_AFXDP_SOCKET, LR_CAP_UNKNOWN, err,
				"opening an AF_XDP socket needs root (CAP_NET_RAW)");
		else if (err == -EAFNOSUPPORT)
			cap_set(caps, LR_CAP_AFXDP_SOCKET, LR_CAP_NO, err,
				"this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)");
		else
			cap_set(caps, LR_CAP_AFXDP_SOCKET, LR_CAP_NO, err, "socket(AF_XDP): %s", strerror(-err));
		/* The bind tests would only repeat the same answer. */
		caps->cap[LR_CAP_AFXDP_ZEROCOPY] = caps->cap[LR_CAP_AFXDP_SOCKET];
		caps->cap[LR_CAP_AFXDP_COPY] = caps->cap[LR_CAP_AFXDP_SOCKET];
		caps->cap[LR_CAP_AFXDP_NEED_WAKEUP] = caps->cap[LR_CAP_AFXDP_SOCKET];
		return;
	}
	close(fd);
	cap_set(caps, LR_CAP_AFXDP_SOCKET, LR_CAP_YES, 0, "socket(AF_XDP) opens");

	err = xsk_try_bind(ifc, PROBE_QUEUE, XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP);
	if (!err) {
		cap_set(caps, LR_CAP_AFXDP_ZEROCOPY, LR_CAP_YES, 0, "TX-only socket bound to queue %u", PROBE_QUEUE);
		wakeup = true;
	} else {
		bind_failed(caps, LR_CAP_AFXDP_ZEROCOPY, ifc, "zero-copy", err);
	}

	err = xsk_try_bind(ifc, PROBE_QUEUE, XDP_COPY | XDP_USE_NEED_WAKEUP);
	if (!err) {
		cap_set(caps, LR_CAP_AFXDP_COPY, LR_CAP_YES, 0, "TX-only socket bound to queue %u", PROBE_QUEUE);
		wakeup = true;
	} else if (err == -EINVAL && !xsk_try_bind(ifc, PROBE_QUEUE, XDP_COPY)) {
		/* Before 5.4 the kernel refuses the flag it does not know. */
		cap_set(caps, LR_CAP_AFXDP_COPY, LR_CAP_YES, 0, "TX-only socket bound to queue %u without need_wakeup",
			PROBE_QUEUE);
		cap_set(caps, LR_CAP_AFXDP_NEED_WAKEUP, LR_CAP_NO, err,
			"the kernel refuses XDP_USE_NEED_WAKEUP (before 5.4): every transmit costs a syscall");
		return;
	} else {
		bind_failed(caps, LR_CAP_AFXDP_COPY, ifc, "copy", err);
	}

	if (wakeup)
		cap_set(caps, LR_CAP_AFXDP_NEED_WAKEUP, LR_CAP_YES, 0, "a bind with XDP_USE_NEED_WAKEUP succeeded");
	else
		/* Both binds failed for another reason; the flag itself was never judged. */
		cap_set(caps, LR_CAP_AFXDP_NEED_WAKEUP, LR_CAP_UNKNOWN, caps->cap[LR_CAP_AFXDP_COPY].err,
			"no bind succeeded to try it");
}

static void probe_xdp(const struct lr_if *ifc, struct lr_caps *caps)
{
	const bool veth = !strcmp(caps->link.kind, "veth");
	uint64_t f = caps->xdp.features;
	int ret;

	if (!caps->have_xdp) {
		const char *why = caps->xdp_err == -EOPNOTSUPP ? "this kernel does not report XDP features (before 6.3)"
							       : strerror(-caps->xdp_err);

		cap_set(caps, LR_CAP_XDP_NATIVE, LR_CAP_UNKNOWN, caps->xdp_err, "%s", why);
		cap_set(caps, LR_CAP_XDP_NDO_XMIT, LR_CAP_UNKNOWN, caps->xdp_err, "%s", why);
		cap_set(caps, LR_CAP_XSK_ZC_ADVERTISED, LR_CAP_UNKNOWN, caps->xdp_err, "%s", why);
	} else {
		if (f & LR_XDP_ACT_BASIC)
			cap_set(caps, LR_CAP_XDP_NATIVE, LR_CAP_YES, 0, "the driver advertises XDP (basic%s%s)",
				f & LR_XDP_ACT_REDIRECT ? ", redirect" : "", f & LR_XDP_ACT_RX_SG ? ", multi-buffer" : "");
		else
			cap_set(caps, LR_CAP_XDP_NATIVE, LR_CAP_NO, 0,
				"%s does not advertise native XDP; only generic (skb) mode", ifc->name);
		if (f & LR_XDP_ACT_NDO_XMIT)
			cap_set(caps, LR_CAP_XDP_NDO_XMIT, LR_CAP_YES, 0, "other devices can XDP_REDIRECT into %s",
				ifc->name);
		else if (veth)
			cap_set(caps, LR_CAP_XDP_NDO_XMIT, LR_CAP_NO, 0,
				"a veth takes redirected frames only while its peer has an XDP program or GRO on");
		else
			cap_set(caps, LR_CAP_XDP_NDO_XMIT, LR_CAP_NO, 0, "the driver does not take redirected frames");
		if (f & LR_XDP_ACT_XSK_ZEROCOPY)
			cap_set(caps, LR_CAP_XSK_ZC_ADVERTISED, LR_CAP_YES, 0, "up to %u fragments per frame",
				caps->xdp.zc_max_segs ? caps->xdp.zc_max_segs : 1);
		else
			cap_set(caps, LR_CAP_XSK_ZC_ADVERTISED, LR_CAP_NO, 0, "the driver does not advertise it");
	}

	/* Loads a two-instruction XDP program and closes it; nothing is attached. */
	ret = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL);
	if (ret > 0)
		cap_set(caps, LR_CAP_XDP_GENERIC, LR_CAP_YES, 0, "XDP programs load; generic mode works on any device");
	else if (caps->have_xdp)
		cap_set(caps, LR_CAP_XDP_GENERIC, LR_CAP_YES, 0,
			"the kernel has XDP (its netdev netlink family answered%s); generic mode works on any device",
			is_priv_err(ret) ? "; loading a test program needs root" : "");
	else if (ret == 0)
		cap_set(caps, LR_CAP_XDP_GENERIC, LR_CAP_NO, 0, "the kernel refuses XDP programs");
	else if (is_priv_err(ret))
		cap_set(caps, LR_CAP_XDP_GENERIC, LR_CAP_UNKNOWN, ret, "loading a BPF program needs root (CAP_BPF)");
	else
		cap_set(caps, LR_CAP_XDP_GENERIC, LR_CAP_UNKNOWN, ret, "loading a test XDP program: %s",
			strerror(-ret));
}

static void probe_packet(struct lr_caps *caps)
{
	int fd, err;

	/* Protocol 0: the socket receives nothing until bound, so opening it is harmless. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		close(fd);
		cap_set(caps, LR_CAP_AF_PACKET, LR_CAP_YES, 0, "socket(AF_PACKET, SOCK_RAW) opens");
		return;
	}
	err = -errno;
	if (is_priv_err(err))
		cap_set(caps, LR_CAP_AF_PACKET, LR_CAP_UNKNOWN, err, "opening a packet socket needs root (CAP_NET_RAW)");
	else if (err == -EAFNOSUPPORT)
		cap_set(caps, LR_CAP_AF_PACKET, LR_CAP_NO, err, "this kernel has no packet sockets (CONFIG_PACKET)");
	else
		cap_set(caps, LR_CAP_AF_PACKET, LR_CAP_NO, err, "socket(AF_PACKET): %s", strerror(-err));
}

static void probe_facts(const struct lr_if *ifc, struct lr_caps *caps)
{
	struct lr_ethtool_stats st;
	uint64_t v;
	int err;

	err = lr_if_link_get(ifc, &caps->link);
	caps->have_link = !err;
	if (err)
		pr_debug("%s: RTM_GETLINK: %s\n", ifc->name, strerror(-err));
	err = lr_if_channels(ifc->name, &caps->channels);
	caps->have_channels = !err;
	if (err)
		pr_debug("%s: ETHTOOL_GCHANNELS: %s\n", ifc->name, strerror(-err));
	err = lr_if_xdp_features(ifc->ifindex, &caps->xdp);
	caps->have_xdp = !err;
	caps->xdp_err = err;
	if (err)
		pr_debug("%s: netdev netlink NETDEV_CMD_DEV_GET: %s\n", ifc->name, strerror(-err));

	/* veth reports its peer as a counter; IFLA_LINK is left out when both ends share an ifindex number. */
	err = lr_if_ethtool_stats(ifc->name, &st);
	if (!err) {
		if (!lr_ethtool_stats_find(&st, "peer_ifindex", &v))
			caps->veth_peer_ifindex = (int)v;
		lr_ethtool_stats_free(&st);
	} else {
		pr_debug("%s: ethtool stats: %s\n", ifc->name, strerror(-err));
	}
	if (!caps->veth_peer_ifindex && !strcmp(caps->link.kind, "veth"))
		caps->veth_peer_ifindex = caps->link.link;
}

const char *lr_cap_key(enum lr_cap_id id)
{
	return id < LR_CAP_COUNT ? cap_names[id].key : "?";
}

const char *lr_cap_label(enum lr_cap_id id)
{
	return id < LR_CAP_COUNT ? cap_names[id].label : "?";
}

const char *lr_cap_state_name(enum lr_cap_state state)
{
	switch (state) {
	case LR_CAP_YES:
		return "yes";
	case LR_CAP_NO:
		return "no";
	case LR_CAP_LIKELY:
		return "likely";
	case LR_CAP_UNKNOWN:
		break;
	}
	return "unknown";
}

int lr_caps_probe(const struct lr_if *ifc, struct lr_caps *caps)
{
	struct utsname u;

	memset(caps, 0, sizeof(*caps));
	caps->link.link_nsid = -1;
	if (!uname(&u))
		snprintf(caps->kernel, sizeof(caps->kernel), "%s", u.release);
	probe_facts(ifc, caps);
	probe_afxdp(ifc, caps);
	probe_xdp(ifc, caps);
	probe_packet(caps);
	return 0;
}

/* A yes notes when this device cannot take the frames yet: live mode needs ndo_xdp_xmit too. */
void lr_caps_set_live(struct lr_caps *caps, int ret, const char *why)
{
	if (!ret)
		cap_set(caps, LR_CAP_LIVE_FRAMES, LR_CAP_YES, 0, "%s%s", why,
			caps->have_xdp && !(caps->xdp.features & LR_XDP_ACT_NDO_XMIT) ?
			"; this device does not take the frames yet (xdp_ndo_xmit)" : "");
	else if (is_priv_err(ret))
		cap_set(caps, LR_CAP_LIVE_FRAMES, LR_CAP_UNKNOWN, ret, "%s", why);
	else
		cap_set(caps, LR_CAP_LIVE_FRAMES, LR_CAP_NO, ret, "%s", why);
}
