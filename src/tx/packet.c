/* SPDX-License-Identifier: MIT */
/* AF_PACKET send engine: one TX-only socket per worker with a TPACKET_V2 ring, frames prebuilt in its slots. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include "tx/engine.h"
#include "util/log.h"

#define RING_FRAMES	4096	/* slots wanted; halved on ENOMEM down to MIN_FRAMES */
#define MIN_FRAMES	64
#define RING_BYTES_MAX	(16U << 20)	/* jumbo frames get fewer slots rather than 64 MiB per worker */
#define MIN_SLOT	2048
#define MIN_BLOCK	(64U << 10)

/* Where a slot's payload starts: the kernel's fixed offset when PACKET_TX_HAS_OFF is off. */
#define SLOT_OFF	(TPACKET2_HDRLEN - sizeof(struct sockaddr_ll))

/* Status bits that mean the kernel owns a slot; the others are timestamp flags. */
#define KERNEL_OWNED	(TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING | TP_STATUS_WRONG_FORMAT)

/* sk_buff, shared info and the linear head per frame in flight, on top of the frame's bytes */
#define SKB_OVERHEAD	1024

struct pkt_priv {
	int fd;
	uint8_t *ring;
	size_t ring_len;
	unsigned int slot_size, nslots;
	unsigned int vnet_len;	/* virtio_net_hdr before each frame, or 0 */
	unsigned int data_off;	/* the frame in a slot: SLOT_OFF + vnet_len */
	unsigned int head;	/* next slot to fill */
	unsigned int tail;	/* oldest slot handed to the kernel and not yet seen completed */
	unsigned int inflight;	/* slots from tail up to head */
};

static int packet_probe(const struct lr_if *ifc, const struct lr_tx_spec *o, char *why, size_t len)
{
	int fd, err;

	/* a frame size above the MTU is refused before any engine is probed */
	(void)ifc;
	(void)o;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		if (err == -EPERM || err == -EACCES)
			snprintf(why, len, "packet: opening an AF_PACKET socket needs root (CAP_NET_RAW)");
		else if (err == -EAFNOSUPPORT)
			snprintf(why, len, "packet: this kernel has no AF_PACKET");
		else
			snprintf(why, len, "packet: cannot open an AF_PACKET socket: %s", strerror(-err));
		return err;
	}
	close(fd);
	return 0;
}

static inline struct tpacket2_hdr *slot(const struct pkt_priv *p, unsigned int i)
{
	return (struct tpacket2_hdr *)(p->ring + (size_t)i * p->slot_size);
}

static inline unsigned int next_slot(const struct pkt_priv *p, unsigned int i)
{
	return ++i == p->nslots ? 0 : i;
}

/*
 * The kernel hands a slot back by storing TP_STATUS_AVAILABLE (in the skb
 * destructor, on whatever CPU frees the skb); acquire so that our next writes
 * into the slot cannot be ordered before that hand-back is seen.
 */
static inline uint32_t slot_status(const struct tpacket2_hdr *h)
{
	return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
}

/* The longest frame this worker sends: the template's, or a replay's longest. */
static unsigned int max_frame_len(const struct lr_worker *w)
{
	unsigned int i, len = w->tmpl->len;

	for (i = 0; w->replay && i < w->replay->fr->n; i++)
		if (w->replay->fr->f[i].len > len)
			len = w->replay->fr->f[i].len;
	return len;
}

/*
 * Slots as large as the longest frame plus the TPACKET_V2 header, a power of two
 * and at least 2 KiB; blocks of whole slots and pages, at least 64 KiB. A
 * block is one kernel allocation; if the kernel cannot find the memory,
 * retry with half the slots (as netsniff-ng does).
 */
static int ring_setup(struct lr_worker *w, struct pkt_priv *p)
{
	unsigned int page = (unsigned int)sysconf(_SC_PAGESIZE);
	unsigned int slot = MIN_SLOT, block, per_block, want = RING_FRAMES;
	struct tpacket_req req;
	int err;

	while (slot < p->data_off + max_frame_len(w))
		slot <<= 1;
	block = slot > page ? slot : page;
	while (block < MIN_BLOCK)
		block <<= 1;
	per_block = block / slot;
	while (want > MIN_FRAMES && (size_t)want * slot > RING_BYTES_MAX)
		want /= 2;

	for (;;) {
		memset(&req, 0, sizeof(req));
		req.tp_block_size = block;
		req.tp_frame_size = slot;
		req.tp_block_nr = want > per_block ? want / per_block : 1;
		req.tp_frame_nr = req.tp_block_nr * per_block;
		if (setsockopt(p->fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req))) {
			err = -errno;
		} else {
			p->ring_len = (size_t)req.tp_block_nr * block;
			p->ring = mmap(NULL, p->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
			if (p->ring != MAP_FAILED)
				break;
			err = -errno;
			p->ring = NULL;
			/* a zero request frees the ring, so a smaller one may be set */
			memset(&req, 0, sizeof(req));
			setsockopt(p->fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req));
		}
		if (err != -ENOMEM || want / 2 < MIN_FRAMES) {
			snprintf(w->errmsg, sizeof(w->errmsg), "packet: cannot set up a TX ring of %u frames on %s: %s",
				 want, w->ifc->name, strerror(-err));
			return err;
		}
		want /= 2;
	}
	p->slot_size = slot;
	p->nslots = req.tp_frame_nr;
	pr_debug("packet: %s worker %u: TX ring of %u slots of %u bytes in %u blocks of %u KiB\n", w->ifc->name,
		 w->index, p->nslots, slot, req.tp_block_nr, block >> 10);
	return 0;
}

/*
 * The socket's send buffer bounds the frames in flight (each skb is charged
 * with its bytes): by default about 250 small frames or 20 jumbo ones, well
 * below the ring. Raise it to cover the ring, so the ring is the limit. Only
 * this socket is changed, never the system-wide defaults.
 */
static void sndbuf_setup(struct lr_worker *w, struct pkt_priv *p)
{
	int want = (int)(p->nslots * (max_frame_len(w) + SKB_OVERHEAD)), have = 0;
	socklen_t len = sizeof(have);

	if (!getsockopt(p->fd, SOL_SOCKET, SO_SNDBUF, &have, &len) && have >= want)
		return;
	/* the kernel doubles the value given: half of it is accounted as overhead */
	want /= 2;
	if (!setsockopt(p->fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof(want)))
		return;
	if (setsockopt(p->fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want)))
		pr_debug("packet: send buffer stays at %d bytes (%s)\n", have, strerror(errno));
}

/* 1 if @cpu is in the XPS map of @ifname's TX queue @q, 0 if not, -errno if there is no map to read. */
static int xps_has_cpu(const char *ifname, unsigned int q, unsigned int cpu)
{
	char path[128], buf[512];
	unsigned int digit = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues/tx-%u/xps_cpus", ifname, q);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* hex words separated by commas, most significant first: walk from the low end */
	while (n--) {
		int c = buf[n], v;

		if (c >= '0' && c <= '9')
			v = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = (c | 0x20) - 'a' + 10;
		else if (c == ',' || c == '\n')
			continue;
		else
			return -EINVAL;
		if (digit++ == cpu / 4)
			return (v >> (cpu % 4)) & 1;
	}
	return 0;
}

/*
 * AF_PACKET cannot bind to a TX queue: packet_pick_tx_queue() records the
 * sending CPU, and without an XPS map for that CPU skb_tx_hash() turns it
 * into queue cpu % real TX queues; with one, XPS decides (by flow hash when
 * the map lists several queues). Drivers with their own ndo_select_queue may
 * still choose otherwise. Say so when the worker's queue is not where its
 * frames will go.
 */
static void queue_note(struct lr_worker *w)
{
	unsigned int nq = w->ifc->tx_queues ? w->ifc->tx_queues : 1;
	unsigned int q, first = 0, nmapped = 0;
	bool mine = false;

	for (q = 0; q < nq; q++) {
		if (xps_has_cpu(w->ifc->name, q, w->cpu) <= 0)
			continue;
		if (!nmapped++)
			first = q;
		if (q == w->queue)
			mine = true;
	}
	if (!nmapped) {
		q = w->cpu % nq;
		if (q != w->queue)
			snprintf(w->note, sizeof(w->note),
				 "packet: the kernel picks TX queues by CPU: worker on cpu %u lands on queue %u, not %u",
				 w->cpu, q, w->queue);
	} else if (nmapped == 1 && !mine) {
		snprintf(w->note, sizeof(w->note), "packet: XPS sends cpu %u's frames to queue %u, not %u", w->cpu,
			 first, w->queue);
	} else if (nmapped > 1) {
		snprintf(w->note, sizeof(w->note), "packet: XPS spreads cpu %u's frames over %u queues by flow hash%s",
			 w->cpu, nmapped, mine ? "" : ", not onto the worker's queue");
	}
}

static int packet_open(struct lr_worker *w)
{
	/*
	 * Protocol 0: bound to the device but registered for no ethertype, so
	 * the socket receives nothing. The kernel reads the ethertype of each
	 * frame from its Ethernet header.
	 */
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = 0,
		.sll_ifindex = w->ifc->ifindex,
	};
	/*
	 * V2, not V3: V3's variable-sized blocks exist for receiving; a TX
	 * ring gains nothing from them, while V2 gives each frame its own
	 * status word and length.
	 */
	int version = TPACKET_V2, one = 1;
	struct pkt_priv *p;
	unsigned int i;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		err = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "packet: cannot open an AF_PACKET socket: %s", strerror(-err));
		goto out_free;
	}
	if (setsockopt(p->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version))) {
		err = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "packet: this kernel has no TPACKET_V2 rings: %s",
			 strerror(-err));
		goto out_close;
	}
	/*
	 * Hand frames straight to the driver, as AF_XDP copy mode does: no
	 * qdisc enqueue/dequeue and its lock per frame, and a full device
	 * queue pushes back on the ring instead of a qdisc dropping or
	 * buffering. veth has noqueue anyway; elsewhere this is the faster path.
	 */
	if (setsockopt(p->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
		pr_debug("packet: %s: frames go through the qdisc (%s)\n", w->ifc->name, strerror(errno));
	/*
	 * Without a virtio_net_hdr the kernel copies only the Ethernet header
	 * into the skb and attaches the rest as a zero-copy fragment of the
	 * ring page; a device that forwards the skb (veth, and any tap) must
	 * then copy that into a freshly allocated page (skb_copy_ubufs()). A
	 * header whose hdr_len covers the frame makes the kernel copy the
	 * whole frame into the skb head once instead: on veth that is 30-60%
	 * more frames per second. With it the kernel skips its per-frame MTU
	 * check; frame sizes are checked against the MTU before any engine opens.
	 */
	if (!setsockopt(p->fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		p->vnet_len = sizeof(struct virtio_net_hdr);
	else
		pr_debug("packet: %s: no virtio_net_hdr, frames stay zero-copy fragments (%s)\n", w->ifc->name,
			 strerror(errno));
	p->data_off = SLOT_OFF + p->vnet_len;
	/*
	 * PACKET_LOSS stays off: when the driver refuses a frame, the kernel
	 * sets its slot back to TP_STATUS_SEND_REQUEST and the next kick sends
	 * it again, so the engine retries, never silently loses frames.
	 */
	err = ring_setup(w, p);
	if (err)
		goto out_close;
	sndbuf_setup(w, p);
	if (bind(p->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		snprintf(w->errmsg, sizeof(w->errmsg), "packet: cannot bind to %s: %s", w->ifc->name, strerror(-err));
		goto out_unmap;
	}

	/* The whole frame is written once here; per packet only the probe changes. */
	for (i = 0; i < p->nslots; i++) {
		struct tpacket2_hdr *h = slot(p, i);

		if (p->vnet_len) {
			/* no offloads; hdr_len: bytes to copy into the skb head (native endian, as in legacy virtio) */
			struct virtio_net_hdr vh = { .hdr_len = (uint16_t)w->tmpl->len };

			memcpy((uint8_t *)h + SLOT_OFF, &vh, sizeof(vh));
		}
		memcpy((uint8_t *)h + p->data_off, w->tmpl->data, w->tmpl->len);
		h->tp_len = p->vnet_len + w->tmpl->len;
	}
	queue_note(w);
	w->engine = p;
	w->mode = "tpacket_v2";
	return 0;

out_unmap:
	munmap(p->ring, p->ring_len);
out_close:
	close(p->fd);
out_free:
	free(p);
	return err;
}

/*
 * A slot we set to SEND_REQUEST is completed once it reads AVAILABLE again:
 * the skb destructor stores that when the driver has freed the frame.
 * Completions are counted in ring order, stopping at the first slot not back
 * yet even if later ones are (skbs may be freed out of order). Inside
 * sendto() the kernel may set a slot AVAILABLE and then SEND_REQUEST again
 * (driver push-back); only this thread calls sendto() on the socket, and not
 * while it reaps, so AVAILABLE seen here is final.
 */
static int reap(struct lr_worker *w, struct pkt_priv *p)
{
	unsigned int n = 0;
	uint32_t status;

	while (p->inflight) {
		const struct tpacket2_hdr *h = slot(p, p->tail);

		status = slot_status(h);
		if (status & KERNEL_OWNED) {
			if (status & TP_STATUS_WRONG_FORMAT) {
				/* the slot's own length: a replay's frames differ from the template */
				snprintf(w->errmsg, sizeof(w->errmsg),
					 "packet: the kernel refused a %u-byte frame on %s as malformed",
					 h->tp_len - p->vnet_len, w->ifc->name);
				return -EINVAL;
			}
			break;
		}
		p->tail = next_slot(p, p->tail);
		p->inflight--;
		n++;
	}
	if (n)
		LR_STAT_ADD(w, completed, n);
	return 0;
}

/* One syscall sends every queued frame; none if the kernel has taken them all. */
static int kick(struct lr_worker *w, struct pkt_priv *p)
{
	unsigned int last;
	int err;

	if (!p->inflight)
		return 0;
	/* the kernel takes slots in ring order: once the newest is taken, so are all before it */
	last = p->head ? p->head - 1 : p->nslots - 1;
	if ((slot_status(slot(p, last)) & KERNEL_OWNED) != TP_STATUS_SEND_REQUEST)
		return 0;
	LR_STAT_ADD(w, kicks, 1);
	if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	err = -errno;
	switch (err) {
	case -EAGAIN:	/* send buffer full: the frames stay queued, sent by the next kick */
	case -ENOBUFS:	/* the driver pushed back: that slot is SEND_REQUEST again */
	case -EBUSY:
	case -EINTR:
		LR_STAT_ADD(w, kick_errors, 1);
		return 0;
	}
	snprintf(w->errmsg, sizeof(w->errmsg), "packet: transmit on %s failed: %s", w->ifc->name, strerror(-err));
	return err;
}

static int packet_tx(struct lr_worker *w, unsigned int budget)
{
	struct pkt_priv *p = w->engine;
	unsigned int n = 0, len;
	struct tpacket2_hdr *h;
	int err;

	err = reap(w, p);
	if (err)
		return err;
	for (; n < budget; n++) {
		h = slot(p, p->head);
		/*
		 * A full ring shows as a head slot not AVAILABLE. The count is
		 * checked too: the tail slot may turn AVAILABLE at any moment
		 * (destructors run on any CPU), and refilling it before reap()
		 * sees it would lose that completion.
		 */
		if (p->inflight == p->nslots || (slot_status(h) & KERNEL_OWNED)) {
			LR_STAT_ADD(w, ring_full, 1);
			break;
		}
		len = lr_worker_fill(w, (uint8_t *)h + p->data_off);
		if (p->vnet_len && w->replay) {
			/* hdr_len may not exceed the frame, and replayed frames differ in length (a template's is prefilled) */
			struct virtio_net_hdr *vh = (struct virtio_net_hdr *)((uint8_t *)h + SLOT_OFF);

			vh->hdr_len = (uint16_t)len;
		}
		h->tp_len = p->vnet_len + len;
		/* release: the kernel must see the frame's bytes before the status that hands it over */
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		p->head = next_slot(p, p->head);
		p->inflight++;
	}
	if (n) {
		if (w->eot_phase)
			LR_STAT_ADD(w, eot, n);
		else
			LR_STAT_ADD(w, queued, n);
	}
	err = kick(w, p);
	return err ? err : (int)n;
}

static int packet_drain(struct lr_worker *w)
{
	struct pkt_priv *p = w->engine;
	int err;

	err = kick(w, p);
	if (err)
		return err;
	err = reap(w, p);
	if (err)
		return err;
	return (int)p->inflight;
}

static void packet_close(struct lr_worker *w)
{
	struct pkt_priv *p = w->engine;

	if (!p)
		return;
	munmap(p->ring, p->ring_len);
	close(p->fd);
	free(p);
	w->engine = NULL;
}

const struct lr_engine_ops lr_engine_packet = {
	.name = "packet",
	.drops_completed = false,
	.probe = packet_probe,
	.open = packet_open,
	.tx = packet_tx,
	.drain = packet_drain,
	.close = packet_close,
};
