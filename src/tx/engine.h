/* SPDX-License-Identifier: MIT */
/* Send engines behind one ops table, and the per-queue worker state they drive. */
#ifndef LINERATE_ENGINE_H
#define LINERATE_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "tx/spec.h"
#include "sys/netdev.h"
#include "tx/frame.h"
#include "util/capture.h"
#include "util/choose.h"

struct lr_worker;

struct lr_engine_ops {
	const char *name;	/* "afxdp", "packet", ... */
	/*
	 * true: a frame the device drops (tx_dropped) was still completed, so
	 * it is subtracted from what was sent (AF_XDP copy mode; live, whose
	 * redirected frames a full veth ring refuses: veth counts those in
	 * tx_dropped, and in tx_queue_N_xdp_xmit_errors too, so tx_dropped
	 * alone is the count). false: the
	 * engine retries such frames itself (AF_PACKET sets the slot back to
	 * SEND_REQUEST), so tx_dropped counts retries, not losses.
	 */
	bool drops_completed;
	unsigned int batch;	/* frames per tx() at full speed, 0: --batch */
	uint64_t slice_ns;	/* paced: the least time one tx() should cover (bursts of rate x slice) */
	/* Can it run here? 0, or -errno with the reason in @why. */
	int (*probe)(const struct lr_if *ifc, const struct lr_tx_spec *o, char *why, size_t len);
	/* One socket/ring per worker/queue; message in w->errmsg on failure. */
	int (*open)(struct lr_worker *w);
	/*
	 * Optional, in the worker's thread before it is ready, so before the
	 * clock starts: what open could not know yet, as sampling (attached
	 * by lr_tx_sample() after open). 0, or -errno with w->errmsg.
	 */
	int (*arm)(struct lr_worker *w);
	/* Queue up to @budget frames filled by lr_worker_fill(); returns frames queued or -errno. */
	int (*tx)(struct lr_worker *w, unsigned int budget);
	/* Reap completions and kick the device; returns frames still in flight. */
	int (*drain)(struct lr_worker *w);
	void (*close)(struct lr_worker *w);
};

extern const struct lr_engine_ops lr_engine_afxdp;
extern const struct lr_engine_ops lr_engine_packet;
extern const struct lr_engine_ops lr_engine_live;

/*
 * Whether this kernel runs XDP programs in live-frames mode: loads the live
 * program with no flows, so it drops the one frame it is run on, and runs it
 * for real. Sends nothing. 0 if it ran; else -errno and a reason in @why.
 */
int lr_live_try(int ifindex, char *why, size_t len);

/*
 * Shared by a send's workers: the end of the data phase. The last worker
 * to finish its data (all of it completed) calls @snap once, before any
 * end-of-test marker leaves, so device counters read there hold data
 * frames only; the others wait for it (at most 5 s) before their markers.
 */
struct lr_data_end {
	unsigned int n;	/* workers */
	unsigned int arrived;	/* atomic */
	int done;	/* atomic: @snap has run */
	void (*snap)(void *arg);
	void *arg;
};

/* Written by the worker alone; others read with relaxed atomic loads. */
#define LR_STAT_ADD(w, f, n) __atomic_store_n(&(w)->stats.f, (w)->stats.f + (n), __ATOMIC_RELAXED)

struct lr_worker_stats {
	uint64_t queued;	/* frames handed to the ring */
	uint64_t completed;	/* frames the device took (TX completions) */
	uint64_t ring_full;	/* times the ring had no room for the whole batch */
	uint64_t kicks;	/* wake-up syscalls */
	uint64_t kick_errors;
	uint64_t eot;	/* end-of-test markers queued */
} __attribute__((aligned(64)));

struct lr_worker {
	unsigned int index, queue, cpu;
	const struct lr_tx_spec *spec;
	const struct lr_if *ifc;
	const struct lr_tmpl *tmpl;
	const struct lr_engine_ops *ops;

	/* Flows owned: ids first, first + stride, ... (nflows of them). */
	unsigned int flow_first, flow_stride, nflows, flow_cur;
	unsigned int flows_total;
	uint64_t *flow_seq;	/* next sequence == frames stamped, per owned flow */
	bool eot_phase;	/* stamp end-of-test markers instead of data */

	uint64_t limit;	/* data frames to send; 0 = unlimited */
	uint64_t pps;	/* this worker's share of the rate; 0 = unlimited */
	uint64_t end_ns;	/* when the data phase ended (all completed) */
	bool ready;	/* pinned and waiting for *go */
	bool done;
	uint64_t stamp_ns;	/* tx timestamp for the batch being queued */
	uint64_t stamp_mask;	/* --latency-every N, less 1: a timestamp in frames with seq & mask == 0 */
	const volatile uint64_t *deadline_ns;	/* shared; 0 = none */
	const volatile int *go;	/* shared start flag */
	struct lr_data_end *data_end;	/* shared; NULL: no barrier */

	struct lr_worker_stats stats;
	/* the worker thread's own CPU time when it was released and when it was done (markers sent) */
	uint64_t cpu_ns0, cpu_ns1;
	/* the engine's BPF program (live), whose bpf_stats runs the cost split corrects for */
	bool have_prog;
	int prog_fd;
	void *engine;	/* engine-private */
	pthread_t thread;
	bool started;
	int err;
	char errmsg[LR_WHY_MAX];
	const char *mode;	/* set by open: "zerocopy", "copy", "tpacket_v2", ... */
	/* set by open to override ops->batch and ops->slice_ns for this worker; 0: the ops' */
	unsigned int batch;
	uint64_t slice_ns;
	/* --pcap samples and --replay, when set */
	struct lr_sampler *sampler;
	uint64_t sample_every, sample_left, stamped;
	unsigned int sample_producer;	/* this worker's ring in the sampler */
	int64_t rt_offset;	/* CLOCK_REALTIME - the stamping clock (lr_realtime_offset()) */
	struct lr_replay *replay;
	char note[512];	/* why a better mode was not used, for the start line */
};


/* Replay: the frames of a capture instead of the template. */
struct lr_replay {
	const struct lr_pcap_frames *fr;
	unsigned int pos;	/* next frame */
	unsigned int eot_frame;	/* a frame the probe fits in, for the end-of-test markers */
	bool stamp;	/* write the probe into UDP frames to the test port */
	uint16_t dport;
};

/*
 * Sampling for --pcap: a copy of the frame into this worker's sample ring
 * (no syscall, lock or allocation), the first @left frames or one in @every.
 * Off, it costs the one branch on w->sampler.
 */
static inline void lr_worker_sample(struct lr_worker *w, const uint8_t *pkt, unsigned int len)
{
	if (w->sample_every ? !(w->stamped % w->sample_every) : w->sample_left ? (w->sample_left--, 1) : 0)
		lr_sampler_put(w->sampler, w->sample_producer, w->stamp_ns + (uint64_t)w->rt_offset, pkt, len);
}

/* The frame a replay sends next into @pkt; returns its length. */
static inline unsigned int lr_worker_replay(struct lr_worker *w, uint8_t *pkt)
{
	struct lr_replay *r = w->replay;
	const struct lr_pcap_frame *f;
	unsigned int k = w->flow_cur;
	unsigned int flow = w->flow_first + k * w->flow_stride;

	if (w->eot_phase) {
		/* markers travel in a copy of a stampable frame */
		f = &r->fr->f[r->eot_frame];
		__builtin_memcpy(pkt, f->data, f->len);
		lr_frame_stamp_udp(pkt, f->len, r->dport, LR_MAGIC_EOT, (uint16_t)flow, w->flow_seq[k],
				   ((uint64_t)w->flows_total << 48) | w->tmpl->rtt_id);
		return f->len;
	}
	f = &r->fr->f[r->pos];
	if (++r->pos == r->fr->n)
		r->pos = 0;
	/* a replayed frame is copied whole: frames differ, so no slot keeps a template */
	__builtin_memcpy(pkt, f->data, f->len);
	if (r->stamp && lr_frame_stamp_udp(pkt, f->len, r->dport, LR_MAGIC_DATA, (uint16_t)flow, w->flow_seq[k],
					   w->flow_seq[k] & w->stamp_mask ? 0 : w->stamp_ns))
		w->flow_seq[k]++;
	return f->len;
}

/* Write the next frame of this worker into @pkt (a template copy); returns its length. */
static inline unsigned int lr_worker_fill(struct lr_worker *w, uint8_t *pkt)
{
	unsigned int k = w->flow_cur, len = w->tmpl->len;
	unsigned int flow = w->flow_first + k * w->flow_stride;

	if (w->replay) {
		len = lr_worker_replay(w, pkt);
	} else if (!w->eot_phase) {
		uint64_t seq = w->flow_seq[k]++;

		/* --latency-every: a timestamp in one frame in N of the flow, none (0) in the others */
		if (w->spec->rtt)
			lr_frame_stamp(w->tmpl, pkt, LR_MAGIC_RTT, (uint16_t)flow, seq,
				       (seq & w->stamp_mask ? 0 : lr_rtt_tail(w->stamp_ns)) | w->tmpl->rtt_id);
		else
			lr_frame_stamp(w->tmpl, pkt, LR_MAGIC_DATA, (uint16_t)flow, seq,
				       seq & w->stamp_mask ? 0 : w->stamp_ns);
	} else {
		lr_frame_stamp(w->tmpl, pkt, w->spec->rtt ? LR_MAGIC_RTT_EOT : LR_MAGIC_EOT, (uint16_t)flow,
			       w->flow_seq[k], ((uint64_t)w->flows_total << 48) | w->tmpl->rtt_id);
	}
	if (++w->flow_cur == w->nflows)
		w->flow_cur = 0;
	if (w->sampler && !w->eot_phase) {
		lr_worker_sample(w, pkt, len);
		w->stamped++;
	}
	return len;
}

/*
 * Split @flows flows (ids base .. base + flows - 1, of a test with @total
 * flows) and the frame count over @n workers: flow base + f belongs to
 * worker f % n.
 */
int lr_workers_plan(struct lr_worker *ws, unsigned int n, unsigned int flows, uint64_t count, unsigned int base,
		    unsigned int total);
/* Thread body: pin, wait for *go, send, drain, send end-of-test markers. */
void *lr_worker_run(void *arg);

#endif
