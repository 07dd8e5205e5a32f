/* SPDX-License-Identifier: MIT */
/* State shared by the live-frames BPF program and its engine: one per worker (its own program). */
#ifndef LINERATE_LIVE_H
#define LINERATE_LIVE_H

#include <linux/types.h>

/* Template bytes the program restores in every frame: Ethernet, IPv6 and UDP headers with room to spare. */
#define LR_LIVE_HEAD_WORDS 12

struct lr_live_state {
	__u32 first, stride, nflows;	/* this worker's flows: first + k * stride, k < nflows */
	__u32 cur;	/* next k */
	__u32 flows_total;	/* of the test, for the end-of-test markers */
	__u32 eot;	/* stamp end-of-test markers (sequence = frames sent on the flow) */
	__u64 sent;	/* frames stamped and handed to bpf_redirect() */
	__u64 stamp_mask;	/* --latency-every N: N - 1, N a power of two; timestamp when seq & mask == 0 */
	/*
	 * --pcap, read only when the program was loaded with cfg_sample: which
	 * data frames go to the sample ring, chosen as lr_worker_sample() does.
	 */
	__u64 sample_left;	/* the next this many data frames, unless ... */
	__u64 sample_every;	/* ... one in this many, counted from this worker's first (0: by count) */
	__u64 sample_wait;	/* data frames to skip before the next one in K */
	__u64 sample_drops;	/* samples the ring had no room for */
};

/*
 * A sampled data frame as the program passes it to the engine through the
 * ring buffer: reserved at sizeof(header) + the snap length set before load
 * (the template's length: a live frame fits a page), of which @caplen
 * bytes are the frame's first.
 */
#define LR_LIVE_SNAP_MAX 4096

struct lr_live_sample {
	__u64 ts_ns;	/* the probe's tx timestamp, or a clock read in a frame left unstamped; CLOCK_MONOTONIC */
	__u32 len;	/* the frame's length */
	__u32 caplen;	/* bytes of it in data[] */
	__u8 data[];
};

#endif
