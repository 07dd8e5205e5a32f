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
};

#endif
