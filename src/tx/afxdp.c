/* SPDX-License-Identifier: MIT */
/* AF_XDP send engine: one UMEM and TX-only socket per worker/queue, frames prebuilt in the UMEM. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>
#include "tx/engine.h"
#include "util/log.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/*
 * Linux >= 6.17: frames one copy-mode sendto() may transmit (default 32).
 * Older kernels refuse the option; the default then stands.
 */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif
#define TX_SKB_BUDGET	256

#define NUM_FRAMES	4096
#define BUSY_RETRIES	40
#define BUSY_WAIT_US	50000
#define FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE
#define RING_SIZE	2048

struct xsk_priv {
	void *map;	/* the mapping, of map_len bytes; area is its 2 MiB-aligned part */
	size_t map_len;
	void *area;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_ring_prod tx;
	uint64_t free[NUM_FRAMES];	/* UMEM frames not in flight (a stack) */
	unsigned int nfree;
	bool zerocopy;
};

static int afxdp_probe(const struct lr_if *ifc, const struct lr_tx_spec *o, char *why, size_t len)
{
	int fd, err;

	if (o->size - LR_FCS_LEN > FRAME_SIZE) {
		snprintf(why, len, "afxdp: frames above %u bytes need multi-buffer AF_XDP, not supported yet",
			 FRAME_SIZE + LR_FCS_LEN);
		return -EMSGSIZE;
	}
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		if (err == -EPERM || err == -EACCES)
			snprintf(why, len, "afxdp: opening an AF_XDP socket needs root (CAP_NET_RAW)");
		else
			snprintf(why, len, "afxdp: this kernel has no AF_XDP sockets (%s)", strerror(-err));
		return err;
	}
	close(fd);
	(void)ifc;
	return 0;
}

#define HUGE_SZ (2UL << 20)

/*
 * Every frame sits in its own 4 KiB page, so with small pages each packet
 * would cost a TLB miss in the kernel's copy. The UMEM is 2 MiB-aligned and
 * advised for transparent huge pages; where THP is off it works the same,
 * only slower. The pages are touched when the template is written.
 */
static int umem_alloc(struct xsk_priv *x)
{
	size_t len = (size_t)NUM_FRAMES * FRAME_SIZE;
	uintptr_t p;

	x->map_len = len + HUGE_SZ;
	x->map = mmap(NULL, x->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->map == MAP_FAILED)
		return -errno;
	p = ((uintptr_t)x->map + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
	x->area = (void *)p;
	if (madvise(x->area, len, MADV_HUGEPAGE))
		pr_debug("afxdp: no transparent huge pages for the UMEM (%s)\n", strerror(errno));
	memset(x->area, 0, len);
	return 0;
}

static int create_socket(struct lr_worker *w, struct xsk_priv *x, bool zerocopy)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.comp_size = RING_SIZE,
		.frame_size = FRAME_SIZE,
		.frame_headroom = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = RING_SIZE,
		/* TX only: no redirect program on the sending interface */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP | (zerocopy ? XDP_ZEROCOPY : XDP_COPY),
	};
	int err;

	err = xsk_umem__create(&x->umem, x->area, (uint64_t)NUM_FRAMES * FRAME_SIZE, &x->fq, &x->cq, &ucfg);
	if (err)
		return err;
	err = xsk_socket__create(&x->xsk, w->ifc->name, w->queue, x->umem, NULL, &x->tx, &scfg);
	if (err) {
		xsk_umem__delete(x->umem);
		x->umem = NULL;
		x->xsk = NULL;
	}
	return err;
}

/*
 * A socket closed a moment ago keeps its queue until the kernel has freed
 * the last of its frames: a busy queue is retried for a while, in the same
 * mode, so a busy zero-copy queue is never taken for one without zero-copy.
 */
static int create_retry(struct lr_worker *w, struct xsk_priv *x, bool zerocopy)
{
	unsigned int i;
	int err = create_socket(w, x, zerocopy);

	for (i = 0; err == -EBUSY && i < BUSY_RETRIES; i++) {
		usleep(BUSY_WAIT_US);
		err = create_socket(w, x, zerocopy);
	}
	return err;
}

static int afxdp_open(struct lr_worker *w)
{
	struct xsk_priv *x;
	unsigned int i;
	int err;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	err = umem_alloc(x);
	if (err) {
		snprintf(w->errmsg, sizeof(w->errmsg), "afxdp: cannot map %u MiB of UMEM: %s",
			 NUM_FRAMES * FRAME_SIZE >> 20, strerror(-err));
		free(x);
		return err;
	}

	err = -EOPNOTSUPP;
	if (w->spec->xsk_mode != LR_XSK_COPY) {
		err = create_retry(w, x, true);
		if (!err)
			x->zerocopy = true;
		else if (w->spec->xsk_mode == LR_XSK_ZEROCOPY || err == -EBUSY)
			goto fail;	/* still busy: another socket holds the queue, in any mode */
		else
			snprintf(w->note, sizeof(w->note), "zero-copy unsupported by %s%s%s (%s); copy mode in use",
				 w->ifc->driver[0] ? w->ifc->driver : w->ifc->name, w->ifc->driver[0] ? " " : "",
				 w->ifc->driver[0] ? w->ifc->name : "", strerror(-err));
	}
	if (err)
		err = create_retry(w, x, false);
	if (err)
		goto fail;
	if (!x->zerocopy) {
		int budget = TX_SKB_BUDGET;

		if (setsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget)))
			pr_debug("afxdp: queue %u: TX budget stays at the kernel default (%s)\n", w->queue,
				 strerror(errno));
	}

	/* The whole frame is written once here; per packet only the probe changes. */
	for (i = 0; i < NUM_FRAMES; i++) {
		memcpy((uint8_t *)x->area + (uint64_t)i * FRAME_SIZE, w->tmpl->data, w->tmpl->len);
		x->free[i] = (uint64_t)i * FRAME_SIZE;
	}
	x->nfree = NUM_FRAMES;
	w->engine = x;
	w->mode = x->zerocopy ? "zerocopy" : "copy";
	return 0;

fail:
	if (err == -EPERM || err == -EACCES)
		snprintf(w->errmsg, sizeof(w->errmsg), "afxdp: binding to %s queue %u needs root (CAP_NET_RAW, CAP_BPF)",
			 w->ifc->name, w->queue);
	else if (err == -EBUSY)
		snprintf(w->errmsg, sizeof(w->errmsg), "afxdp: %s queue %u is already bound by another AF_XDP socket",
			 w->ifc->name, w->queue);
	else
		snprintf(w->errmsg, sizeof(w->errmsg), "afxdp: cannot bind to %s queue %u in %s mode: %s",
			 w->ifc->name, w->queue, w->spec->xsk_mode == LR_XSK_ZEROCOPY ? "zero-copy" : "copy",
			 strerror(-err));
	munmap(x->map, x->map_len);
	free(x);
	return err;
}

/* Single writer per stats field: a relaxed store is enough for the reader's snapshot. */
static void reap(struct lr_worker *w, struct xsk_priv *x)
{
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&x->cq, RING_SIZE, &idx);
	if (!n)
		return;
	for (i = 0; i < n; i++)
		x->free[x->nfree++] = *xsk_ring_cons__comp_addr(&x->cq, idx + i);
	xsk_ring_cons__release(&x->cq, n);
	LR_STAT_ADD(w, completed, n);
}

/* Copy mode transmits inside sendto(); zero-copy only needs it when the driver asks. */
static int kick(struct lr_worker *w, struct xsk_priv *x)
{
	int err;

	/* nothing the kernel has not taken yet: a wake-up would be a wasted syscall */
	if (x->tx.cached_prod == __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE))
		return 0;
	if (!xsk_ring_prod__needs_wakeup(&x->tx))
		return 0;
	LR_STAT_ADD(w, kicks, 1);
	if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	err = -errno;
	switch (err) {
	case -EAGAIN:	/* device queue full: the frames stay in the ring, retried next round */
	case -EBUSY:
	case -ENOBUFS:
	case -EINTR:
		LR_STAT_ADD(w, kick_errors, 1);
		return 0;
	}
	snprintf(w->errmsg, sizeof(w->errmsg), "afxdp: transmit on %s queue %u failed: %s", w->ifc->name,
		 w->queue, strerror(-err));
	return err;
}

static int afxdp_tx(struct lr_worker *w, unsigned int budget)
{
	struct xsk_priv *x = w->engine;
	uint32_t idx, n, i, room;
	int err;

	reap(w, x);
	n = budget < x->nfree ? budget : x->nfree;
	/* a reservation is all or nothing: ask only for what the ring has room for now */
	room = n ? xsk_prod_nb_free(&x->tx, n) : 0;
	if (room < n)
		n = room;
	if (n)
		n = xsk_ring_prod__reserve(&x->tx, n, &idx);
	if (n < budget)
		LR_STAT_ADD(w, ring_full, 1);
	for (i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);
		uint64_t addr = x->free[--x->nfree];

		d->addr = addr;
		d->len = lr_worker_fill(w, xsk_umem__get_data(x->area, addr));
		d->options = 0;
	}
	if (n) {
		/* submit publishes the descriptors (store-release on the producer index) */
		xsk_ring_prod__submit(&x->tx, n);
		if (w->eot_phase)
			LR_STAT_ADD(w, eot, n);
		else
			LR_STAT_ADD(w, queued, n);
	}
	err = kick(w, x);
	return err ? err : (int)n;
}

static int afxdp_drain(struct lr_worker *w)
{
	struct xsk_priv *x = w->engine;
	int err;

	err = kick(w, x);
	if (err)
		return err;
	reap(w, x);
	return (int)(NUM_FRAMES - x->nfree);
}

static void afxdp_close(struct lr_worker *w)
{
	struct xsk_priv *x = w->engine;

	if (!x)
		return;
	xsk_socket__delete(x->xsk);
	xsk_umem__delete(x->umem);
	munmap(x->map, x->map_len);
	free(x);
	w->engine = NULL;
}

const struct lr_engine_ops lr_engine_afxdp = {
	.name = "afxdp",
	.drops_completed = true,
	.probe = afxdp_probe,
	.open = afxdp_open,
	.tx = afxdp_tx,
	.drain = afxdp_drain,
	.close = afxdp_close,
};
