/* SPDX-License-Identifier: MIT */
/* AF_PACKET receive backend: TPACKET_V3 rings, fanout by flow hash, the same parser and accounting as XDP. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include "rx/rx.h"
#include "util/capture.h"
#include "util/choose.h"
#include "util/clock.h"
#include "util/log.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define BLOCK_SIZE	(1U << 18)	/* 256 KiB */
#define BLOCK_NR	64		/* 16 MiB a thread */
#define FRAME_HINT	2048
#define BLOCK_TIMEOUT_MS 4	/* a block is handed over after this even when not full */

#define RT_STEP_NS	2000	/* CLOCK_REALTIME moved this far against the stamping clock: a step */

struct pkt_thread {
	struct lr_rx *rx;
	struct lr_flow_state *flows;
	struct lr_rx_counters *c;	/* this thread's slot of rx->sources */
	int fd;
	uint8_t *ring;
	size_t ring_len;
	int64_t rt_to_mono;	/* the stamping clock - CLOCK_REALTIME, for the kernel's receive stamps */
	int64_t rt_prev;	/* the same, read at the block before: they differ when CLOCK_REALTIME was stepped */
	uint64_t read_ns;	/* the stamping clock when this block was handed over */
	int64_t clock_offset;	/* the receiver's clock minus the sender's (lr_rx_spec.clock_offset_ns) */
	struct lr_sampler *sampler;	/* --pcap: this thread is producer @index of it */
	unsigned int index;
	uint64_t every;	/* one data frame in @every is sampled */
	pthread_t thread;
	bool started;
};

struct pkt_priv {
	struct lr_flow_state *flows;
	struct lr_sampler *sampler;
	struct pkt_thread *t;
	unsigned int n;
	volatile int stop;
};

/* Into this thread's own sampler ring: no lock, no wait; a full ring is a counted drop. */
static void take_sample(struct pkt_thread *t, const struct tpacket3_hdr *h, const uint8_t *data)
{
	/* the kernel's receive stamp is on CLOCK_REALTIME already, as pcap wants it */
	uint64_t ts = (uint64_t)h->tp_sec * 1000000000ULL + h->tp_nsec;

	if (lr_sampler_put(t->sampler, t->index, ts, data, h->tp_snaplen))
		t->c->samples++;
	else
		t->c->sample_drops++;
}

static void count_frame(struct pkt_thread *t, const struct tpacket3_hdr *h)
{
	const uint8_t *data = (const uint8_t *)h + h->tp_mac;
	struct lr_pkt pkt;
	uint64_t now;
	int kind;

	kind = lr_parse(data, data + h->tp_snaplen, t->rx->o->dst_port, &pkt);
	if (kind == LR_PKT_FOREIGN) {
		t->c->foreign++;
		if (t->sampler && t->rx->o->pcap_foreign)
			take_sample(t, h, data);
		return;
	}
	if (pkt.flow >= LR_MAX_FLOWS) {
		t->c->bad_flow++;
		return;
	}
	/* counting never depends on sampling: count first, then maybe sample (the same rule as XDP) */
	if (kind == LR_PKT_EOT) {
		lr_rx_count_eot(t->c, &t->flows[pkt.flow], &pkt);	/* not sampled, as in XDP */
		return;
	}
	if (kind == LR_PKT_BACK_EOT) {
		lr_rx_count_back_eot(t->c, &t->flows[pkt.flow], &pkt);
		return;
	}
	/* the kernel's software receive stamp (CLOCK_REALTIME), moved onto the stamping clock BPF reads */
	now = (uint64_t)((int64_t)h->tp_sec * 1000000000LL + h->tp_nsec + t->rt_to_mono);
	/*
	 * CLOCK_REALTIME stepped since the block before (a VM's clock agent does it every few seconds,
	 * by milliseconds): a frame stamped before the step would be off by the step with the new offset
	 */
	if (t->rt_prev != t->rt_to_mono && pkt.tail && !pkt.rtt)
		now = lr_realtime_pick((uint64_t)h->tp_sec * 1000000000ULL + h->tp_nsec, t->rt_to_mono, t->rt_prev,
				       pkt.tail + (uint64_t)t->clock_offset, t->read_ns);
	lr_rx_count_data(t->c, &t->flows[pkt.flow], &pkt, h->tp_len, LR_RX_MAX_QUEUES, now, t->clock_offset);
	if (t->sampler && t->c->sample_tick++ % t->every == 0)
		take_sample(t, h, data);
}

static void *rx_thread(void *arg)
{
	struct pkt_thread *t = arg;
	struct pkt_priv *p = t->rx->priv;
	unsigned int blk = 0;

	for (;;) {
		struct tpacket_block_desc *b = (void *)(t->ring + (size_t)blk * BLOCK_SIZE);
		const struct tpacket3_hdr *h;
		uint32_t i, n;

		/* acquire: the frames in the block are complete once the kernel hands it over */
		if (!(__atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
			struct pollfd pfd = { .fd = t->fd, .events = POLLIN | POLLERR };

			if (p->stop)
				break;
			poll(&pfd, 1, 50);
			continue;
		}
		/* once per block, so a stepped or slewed CLOCK_REALTIME cannot skew the latencies of a long run */
		t->rt_prev = t->rt_to_mono;
		t->rt_to_mono = -lr_realtime_offset();
		t->read_ns = lr_now_bpf_ns();
		/* the offset's own reading error is tens of ns: only a step is one */
		if (llabs(t->rt_to_mono - t->rt_prev) < RT_STEP_NS)
			t->rt_prev = t->rt_to_mono;
		n = b->hdr.bh1.num_pkts;
		h = (const void *)((uint8_t *)b + b->hdr.bh1.offset_to_first_pkt);
		for (i = 0; i < n; i++) {
			count_frame(t, h);
			h = (const void *)((const uint8_t *)h + h->tp_next_offset);
		}
		/* release: the kernel may refill the block only after we are done reading it */
		__atomic_store_n(&b->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		blk = (blk + 1) % BLOCK_NR;
	}
	return NULL;
}

static int open_socket(struct lr_rx *rx, struct pkt_thread *t, unsigned int n, char *why, size_t len)
{
	struct tpacket_req3 req = {
		.tp_block_size = BLOCK_SIZE,
		.tp_block_nr = BLOCK_NR,
		.tp_frame_size = FRAME_HINT,
		.tp_frame_nr = (BLOCK_SIZE / FRAME_HINT) * BLOCK_NR,
		.tp_retire_blk_tov = BLOCK_TIMEOUT_MS,
	};
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = rx->ifc.ifindex,
	};
	int ver = TPACKET_V3, one = 1, err;

	/* protocol 0: the socket sees nothing until bind() names the interface */
	t->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (t->fd < 0) {
		err = -errno;
		if (err == -EPERM || err == -EACCES)
			snprintf(why, len, "packet: opening an AF_PACKET socket needs root (CAP_NET_RAW)");
		else
			snprintf(why, len, "packet: cannot open an AF_PACKET socket: %s", strerror(-err));
		return err;
	}
	if (setsockopt(t->fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)) ||
	    setsockopt(t->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		err = -errno;
		snprintf(why, len, "packet: cannot set up a TPACKET_V3 receive ring: %s", strerror(-err));
		return err;
	}
	/* frames this host sends out of the interface are not receptions */
	if (setsockopt(t->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)))
		pr_debug("packet: PACKET_IGNORE_OUTGOING unsupported (%s)\n", strerror(errno));
	t->ring_len = (size_t)BLOCK_SIZE * BLOCK_NR;
	t->ring = mmap(NULL, t->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, t->fd, 0);
	if (t->ring == MAP_FAILED)
		t->ring = mmap(NULL, t->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->ring == MAP_FAILED) {
		err = -errno;
		t->ring = NULL;
		snprintf(why, len, "packet: cannot map the receive ring: %s", strerror(-err));
		return err;
	}
	if (bind(t->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		snprintf(why, len, "packet: cannot bind to %s: %s", rx->ifc.name, strerror(-err));
		return err;
	}
	if (n > 1) {
		/* by flow hash: every frame of a flow reaches one thread, the flow's single writer */
		int arg = (int)((getpid() & 0xffff) | (PACKET_FANOUT_HASH << 16));

		if (setsockopt(t->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg))) {
			err = -errno;
			snprintf(why, len, "packet: cannot join the fanout group: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

static void collect_drops(struct lr_rx *rx)
{
	struct pkt_priv *p = rx->priv;
	unsigned int i;

	for (i = 0; i < p->n; i++) {
		struct tpacket_stats_v3 st;
		socklen_t l = sizeof(st);

		/* reading the statistics resets them: accumulate */
		if (p->t[i].fd >= 0 && !getsockopt(p->t[i].fd, SOL_PACKET, PACKET_STATISTICS, &st, &l))
			rx->ring_drops += st.tp_drops;
	}
}

static void packet_stop(struct lr_rx *rx)
{
	struct pkt_priv *p = rx->priv;
	unsigned int i;

	if (!p || p->stop)
		return;
	/* let the kernel retire the block being filled, so its frames are read before the threads leave */
	nanosleep(&(struct timespec){ 0, 3 * BLOCK_TIMEOUT_MS * 1000000L }, NULL);
	p->stop = 1;
	for (i = 0; i < p->n; i++)
		if (p->t[i].started)
			pthread_join(p->t[i].thread, NULL);
	collect_drops(rx);
	/* no producer is left: the sampler drains its rings into rx->pcap and lets go of it */
	if (p->sampler) {
		lr_sampler_close(p->sampler);
		p->sampler = NULL;
	}
}

static void packet_close(struct lr_rx *rx)
{
	struct pkt_priv *p = rx->priv;
	unsigned int i;

	if (!p)
		return;
	packet_stop(rx);
	for (i = 0; i < p->n; i++) {
		if (p->t[i].ring)
			munmap(p->t[i].ring, p->t[i].ring_len);
		if (p->t[i].fd >= 0)
			close(p->t[i].fd);
	}
	free(p->t);
	free(p->flows);
	free(rx->sources);
	free(p);
	rx->priv = NULL;
	rx->sources = NULL;
	rx->flows = NULL;
}

static int packet_open(struct lr_rx *rx, char *why, size_t len)
{
	unsigned int i, n = rx->o->workers ? rx->o->workers : 1;
	struct pkt_priv *p;
	int err;

	if (lr_test_disabled("packet")) {
		snprintf(why, len, "disabled by LINERATE_TEST_DISABLE");
		return -EPERM;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rx->priv = p;
	p->n = n;
	p->t = calloc(n, sizeof(*p->t));
	p->flows = calloc(LR_MAX_FLOWS, sizeof(*p->flows));
	rx->sources = calloc(n, sizeof(*rx->sources));
	if (!p->t || !p->flows || !rx->sources) {
		snprintf(why, len, "out of memory");
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++)
		p->t[i].fd = -1;
	rx->nsources = (int)n;
	rx->flows = p->flows;
	rx->mode = "tpacket_v3";
	if (rx->pcap) {
		err = lr_sampler_open(rx->pcap, n, rx->o->snaplen, &p->sampler);
		if (err) {
			p->sampler = NULL;
			snprintf(why, len, "packet: cannot set up the frame sampler: %s", strerror(-err));
			goto fail;
		}
	}
	for (i = 0; i < n; i++) {
		struct pkt_thread *t = &p->t[i];

		t->rx = rx;
		t->flows = p->flows;
		t->c = &rx->sources[i];
		t->rt_to_mono = -lr_realtime_offset();
		t->rt_prev = t->rt_to_mono;
		t->clock_offset = rx->o->clock_offset_ns;
		t->sampler = p->sampler;
		t->index = i;
		t->every = rx->o->pcap_every ? rx->o->pcap_every : 1;
		err = open_socket(rx, t, n, why, len);
		if (err)
			goto fail;
	}
	/* all sockets are in the group before any thread reads, so no frame is counted twice */
	for (i = 0; i < n; i++) {
		err = -pthread_create(&p->t[i].thread, NULL, rx_thread, &p->t[i]);
		if (err) {
			snprintf(why, len, "packet: cannot start a receive thread: %s", strerror(-err));
			goto fail;
		}
		p->t[i].started = true;
	}
	return 0;
fail:
	packet_close(rx);
	return err;
}

/*
 * The threads write their counters with plain stores; an aligned 64-bit
 * load is atomic on the platforms we run on, so a copy taken meanwhile is
 * at worst a little behind, which only a live line ever sees.
 */
static int packet_read(struct lr_rx *rx)
{
	struct pkt_priv *p = rx->priv;

	/* after the stop the ring still fills with frames nobody counts: those are not the test's drops */
	if (!p->stop)
		collect_drops(rx);
	return 0;
}

/* Between tests the threads only see stray frames; a foreign count lost to the race is harmless. */
static void packet_reset(struct lr_rx *rx)
{
	struct pkt_priv *p = rx->priv;

	collect_drops(rx);
	memset(rx->sources, 0, sizeof(*rx->sources) * (size_t)rx->nsources);
	memset(p->flows, 0, sizeof(*p->flows) * LR_MAX_FLOWS);
}

const struct lr_rx_ops lr_rx_packet = {
	.name = "packet",
	.open = packet_open,
	.read = packet_read,
	.stop = packet_stop,
	.reset = packet_reset,
	.close = packet_close,
};
