/* SPDX-License-Identifier: MIT */
/* Per-flow sequence accounting and the latency histogram: one implementation for BPF and user space. */
#ifndef LINERATE_FLOW_H
#define LINERATE_FLOW_H

#include <linux/types.h>
#include "linerate/probe.h"

/*
 * Receiver rule (docs/counting.md): expected = highest_seen + 1. A frame ahead of
 * expected opens a gap (counted lost for now); a frame behind it is late
 * (lost -1, reordered +1) unless the window says it was already seen, in
 * which case it is a duplicate. The window remembers the LR_FLOW_WINDOW
 * sequence numbers below the highest; a frame older than that is counted
 * late without a duplicate check. All sequence arithmetic is modulo 2^48,
 * so a flow survives the wrap of its 48-bit counter.
 */
#define LR_FLOW_WINDOW	64

struct lr_flow_state {
	__u64 next;	/* highest seen + 1, modulo 2^48; valid once packets > 0 */
	__u64 window;	/* bit i set: sequence (next - 1 - i) was seen */
	__u64 packets;	/* test frames received, duplicates included */
	__u64 bytes;
	__u64 gaps;	/* frames skipped over when a sequence jumped ahead */
	__u64 late;	/* frames that arrived after a later one (reordered) */
	__u64 dups;
	__u64 eot_sent;	/* frames the sender says it sent (EOT marker), valid if eot_seen */
	__u32 eot_seen;	/* EOT markers received for this flow */
	__u32 eot_flows;	/* flow count the sender announced */
	/*
	 * Round trips, at the sender: a reflected marker's forward reordered
	 * and duplicate frames (eot_sent holds the frames reflected), as the
	 * reflector counted them, saturating at 2^32 - 1.
	 */
	__u32 fwd_late;
	__u32 fwd_dups;
	/*
	 * At a reflector: the test the flow's counts belong to. At a receiver:
	 * the run id of the first marker on the flow, and another marker's
	 * run id when one differed: two senders on one flow.
	 */
	__u32 test_id;
	__u32 other_id;
};

enum lr_flow_verdict {
	LR_FLOW_IN_ORDER = 0,
	LR_FLOW_GAP = 1,
	LR_FLOW_LATE = 2,
	LR_FLOW_DUP = 3,
};

/* Accounts one data frame; single writer per flow (see docs/counting.md). */
LR_INLINE int lr_flow_update(struct lr_flow_state *st, __u64 seq, __u32 bytes)
{
	__u64 ahead, behind;

	seq &= LR_SEQ_MASK;
	st->packets++;
	st->bytes += bytes;
	if (st->packets == 1) {
		/* sequences start at 0: whatever precedes the first frame is a gap */
		st->gaps += seq;
		st->next = (seq + 1) & LR_SEQ_MASK;
		st->window = 1;
		return seq ? LR_FLOW_GAP : LR_FLOW_IN_ORDER;
	}
	ahead = (seq - st->next) & LR_SEQ_MASK;
	if (ahead < (1ULL << (LR_SEQ_BITS - 1))) {
		st->gaps += ahead;
		st->window = ahead + 1 >= LR_FLOW_WINDOW ? 1 : (st->window << (ahead + 1)) | 1;
		st->next = (seq + 1) & LR_SEQ_MASK;
		return ahead ? LR_FLOW_GAP : LR_FLOW_IN_ORDER;
	}
	behind = (st->next - 1 - seq) & LR_SEQ_MASK;	/* 0 = the highest itself */
	if (behind < LR_FLOW_WINDOW) {
		__u64 bit = 1ULL << behind;

		if (st->window & bit) {
			st->dups++;
			return LR_FLOW_DUP;
		}
		st->window |= bit;
	}
	st->late++;
	return LR_FLOW_LATE;
}

/* Lost frames so far: gaps opened minus those that arrived late after all. */
LR_INLINE __s64 lr_flow_lost(const struct lr_flow_state *st)
{
	return (__s64)st->gaps - (__s64)st->late;
}

/*
 * --latency-every N: senders put a timestamp in the frames whose sequence
 * is a multiple of N (a power of two), 0 in the others; receivers take a
 * latency sample from every frame with a timestamp. By default N is
 * LR_LAT_EVERY_MAXRATE at --rate max, else the largest power of two that
 * leaves at least LR_LAT_SAMPLES_MIN stamped frames a second, up to that.
 */
#define LR_LAT_EVERY_MAX	65536
#define LR_LAT_EVERY_MAXRATE	64
#define LR_LAT_SAMPLES_MIN	16384

/*
 * Latency histogram: values below 16 ns get a bucket each; above, each power
 * of two is split in 16 linear sub-buckets (relative error under 6.25 %).
 */
#define LR_LAT_SUB_BITS	4
#define LR_LAT_SUB	(1U << LR_LAT_SUB_BITS)
#define LR_LAT_BUCKETS	1024

LR_INLINE __u32 lr_ilog2(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

LR_INLINE __u32 lr_lat_bucket(__u64 ns)
{
	__u32 e;

	if (ns < LR_LAT_SUB)
		return (__u32)ns;
	e = lr_ilog2(ns);
	return (e - LR_LAT_SUB_BITS + 1) * LR_LAT_SUB +
	       (__u32)((ns >> (e - LR_LAT_SUB_BITS)) & (LR_LAT_SUB - 1));
}

/* Smallest value that falls in bucket @b. */
LR_INLINE __u64 lr_lat_bucket_low(__u32 b)
{
	__u32 e;

	if (b < LR_LAT_SUB)
		return b;
	e = b / LR_LAT_SUB + LR_LAT_SUB_BITS - 1;
	return (__u64)(LR_LAT_SUB + b % LR_LAT_SUB) << (e - LR_LAT_SUB_BITS);
}

/* Receiver counters, one copy per CPU, summed in user space. */
#define LR_RX_MAX_QUEUES 64
#define LR_RX_CLOCK_EVERY 64	/* a power of two */

struct lr_rx_counters {
	__u64 packets;	/* test data frames */
	__u64 bytes;	/* their bytes, Ethernet header on, no FCS */
	__u64 foreign;	/* frames that are not ours */
	__u64 eot;	/* end-of-test markers */
	__u64 bad_flow;	/* test frames with a flow id beyond the map */
	__u64 lat_count;
	__u64 lat_sum;
	__u64 lat_min;
	__u64 lat_max;
	__u64 lat_future;	/* tx stamp ahead of the receive clock, offset applied */
	__u64 sample_tick;	/* data frames seen by the sampler: one in cfg_sample_every is taken */
	__u64 samples;	/* frames handed to the capture (ring buffer or sampler) */
	__u64 sample_drops;	/* frames to sample that found the capture ring full */
	/*
	 * Receive times (the stamping clock) of the first data frame and of the
	 * last one the clock was read for, and the data frames counted up to
	 * and including that one: the receive rate is span_packets - 1 frames
	 * over last_ns - first_ns. The XDP program reads the clock only where
	 * lr_rx_wants_clock() says.
	 */
	__u64 first_ns;
	__u64 last_ns;
	__u64 span_packets;
	__u64 queue_packets[LR_RX_MAX_QUEUES];
	__u64 lat_hist[LR_LAT_BUCKETS];
};

/*
 * A sampled frame as the XDP program passes it to user space through the
 * ring buffer: the record is reserved at sizeof(header) + the snap length
 * set before load, of which @caplen bytes are the frame's first.
 */
#define LR_RX_SNAP_MIN	64
#define LR_RX_SNAP_MAX	9018	/* a jumbo frame with its FCS: the largest --snaplen */

struct lr_rx_sample {
	__u64 ts_ns;	/* receive time, the stamping clock (bpf_ktime_get_ns()) */
	__u32 len;	/* the frame's full length */
	__u32 caplen;	/* bytes of it in data[] */
	__u8 data[];
};

/*
 * Whether the receiver reads its clock for this data frame: for every
 * frame with a timestamp (a latency sample), for each of a CPU's first
 * LR_RX_CLOCK_EVERY data frames (a short test's span is exact), and then
 * for one in LR_RX_CLOCK_EVERY, so the span of the arrivals (first_ns,
 * last_ns) is known within that many frames per CPU.
 */
LR_INLINE int lr_rx_wants_clock(const struct lr_rx_counters *c, const struct lr_pkt *pkt)
{
	return pkt->tail || c->packets < LR_RX_CLOCK_EVERY || !(c->packets & (LR_RX_CLOCK_EVERY - 1));
}

/*
 * Counting one test frame, shared by the XDP program and the AF_PACKET
 * receiver: @c is this CPU's or thread's counters, @st the frame's flow,
 * @now the receive time on the stamping clock (the host's CLOCK_MONOTONIC),
 * or 0 when the clock was not read for this frame (lr_rx_wants_clock()),
 * @queue its receive queue (or LR_RX_MAX_QUEUES when unknown), @offset the
 * receiver's clock minus the sender's in ns (0 on one host), which moves
 * @now onto the clock the sender stamped with.
 */
LR_INLINE void lr_rx_count_data(struct lr_rx_counters *c, struct lr_flow_state *st, const struct lr_pkt *pkt,
				__u32 bytes, __u32 queue, __u64 now, __s64 offset)
{
	__u64 lat;

	c->packets++;
	c->bytes += bytes;
	if (queue < LR_RX_MAX_QUEUES)
		c->queue_packets[queue]++;
	lr_flow_update(st, pkt->seq, bytes);
	if (!now)
		return;
	if (!c->first_ns)
		c->first_ns = now;
	c->last_ns = now;
	c->span_packets = c->packets;
	if (!pkt->tail)
		return;
	/*
	 * Modulo 2^64, read as signed: right for any latency within 292 years
	 * either way, so an offset larger than @now cannot wrap into a huge
	 * positive latency. Negative: stamped after it arrived, by the
	 * receiver's clock (another host, or an offset estimated too high).
	 */
	lat = now - (__u64)offset - pkt->tail;
	if (pkt->rtt)	/* a 32-bit stamp: the time since, modulo 2^32 */
		lat = (__u32)lat;
	if ((__s64)lat >= 0) {
		__u32 b = lr_lat_bucket(lat);

		/*
		 * Always true, but the verifier cannot tell, and the compiler
		 * can (a 32-bit round trip's bucket is below 480): hide the
		 * value from the compiler so the check stays for the verifier.
		 */
		__asm__ volatile("" : "+r"(b));
		if (b < LR_LAT_BUCKETS)
			c->lat_hist[b]++;
		if (!c->lat_count || lat < c->lat_min)
			c->lat_min = lat;
		if (lat > c->lat_max)
			c->lat_max = lat;
		c->lat_count++;
		c->lat_sum += lat;
	} else {
		c->lat_future++;
	}
}

/* An end-of-test marker: the sender's total for the flow, and the test's flow count. */
LR_INLINE void lr_rx_count_eot(struct lr_rx_counters *c, struct lr_flow_state *st, const struct lr_pkt *pkt)
{
	c->eot++;
	st->eot_sent = pkt->seq;
	st->eot_flows = lr_eot_flows(pkt->tail);
	if (pkt->tid) {
		if (!st->test_id)
			st->test_id = pkt->tid;
		else if (pkt->tid != st->test_id)
			st->other_id = pkt->tid;
	}
	__sync_fetch_and_add(&st->eot_seen, 1);
}

/* A reflected marker: the reflector's frames reflected on the flow and its forward counts. */
LR_INLINE void lr_rx_count_back_eot(struct lr_rx_counters *c, struct lr_flow_state *st, const struct lr_pkt *pkt)
{
	c->eot++;
	st->eot_sent = pkt->seq;
	st->fwd_late = (__u32)(pkt->tail >> 32);
	st->fwd_dups = (__u32)pkt->tail;
	__sync_fetch_and_add(&st->eot_seen, 1);
}

/* A 64-bit count as 32 bits, saturating. */
LR_INLINE __u32 lr_sat32(__u64 v)
{
	return v > 0xffffffffULL ? 0xffffffffU : (__u32)v;
}

#endif
