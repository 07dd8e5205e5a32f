/* SPDX-License-Identifier: MIT */
/* Receive backends (XDP, AF_PACKET) behind one ops table, and the state the common reporting reads. */
#ifndef LINERATE_RX_H
#define LINERATE_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rx/spec.h"
#include "linerate/flow.h"
#include "sys/cost.h"
#include "sys/counters.h"
#include "sys/netdev.h"
#include "util/choose.h"
#include "util/result.h"

struct lr_rx;
struct lr_bpf_sampler;

struct lr_rx_ops {
	const char *name;	/* "xdp", "packet" */
	/*
	 * Start counting on rx->ifc: set rx->flows (LR_MAX_FLOWS states),
	 * rx->nsources, rx->mode, and rx->note if a better mode was not
	 * usable. 0, or -errno with one line for the user in @why.
	 */
	int (*open)(struct lr_rx *rx, char *why, size_t len);
	/* Copy each source's counters (per CPU, per worker) into rx->sources. */
	int (*read)(struct lr_rx *rx);
	/*
	 * Stop counting and sampling; counters and flows stay readable until
	 * close. Every sample taken is in rx->pcap when it returns. Idempotent.
	 */
	void (*stop)(struct lr_rx *rx);
	/* Zero every counter and flow, between two tests (no test traffic in flight). */
	void (*reset)(struct lr_rx *rx);
	void (*close)(struct lr_rx *rx);
};

extern const struct lr_rx_ops lr_rx_xdp;
extern const struct lr_rx_ops lr_rx_packet;

/* What holds @ifindex's XDP hook, in words ("linerate's receiver (program xdp_count, id 42, pid 7 linerate)"). */
void lr_rx_xdp_holder(int ifindex, char *buf, size_t len);

/* The start line (and the error) lr_rx_begin() writes at most: its words, the notes and two reasons. */
#define LR_RX_NOTE_MAX		192
#define LR_RX_UNUSED_MAX	160
#define LR_RX_STATS_NOTE_MAX	320
#define LR_RX_LINE_MAX	LR_START_LINE_MAX
_Static_assert(128 + IF_NAMESIZE + LR_RX_NOTE_MAX + LR_CHOICE_WHY_MAX(2) + LR_RX_UNUSED_MAX + LR_RX_STATS_NOTE_MAX <=
	       LR_RX_LINE_MAX, "lr_rx_begin's start line has room for all its parts");

struct lr_rx {
	const struct lr_rx_spec *o;
	struct lr_if ifc;
	const struct lr_rx_ops *ops;
	const char *mode;	/* "native", "generic", "tpacket_v3" */
	char note[LR_RX_NOTE_MAX];
	struct lr_flow_state *flows;	/* written by the backend's counting side (and reset) only */
	struct lr_rx_counters *sources;	/* nsources entries, filled by ops->read */
	int nsources;
	uint64_t ring_drops;	/* frames the receive path lost before counting them (AF_PACKET tp_drops) */
	/*
	 * Samples of the frames received (--pcap): rx.c opens the writer before
	 * a backend is chosen and closes it after ops->stop; the backend's own
	 * consumer is its only writer in between.
	 */
	struct lr_pcap_writer *pcap;
	int pcap_err;	/* first error of the backend's consumer writing to pcap */
	uint64_t pcap_written, pcap_capped;	/* settled when the writer closes */
	struct lr_dev_counters dev0;	/* the interface's counters at the start or the last reset */
	/*
	 * --prog-stats: the backend's XDP program (-1: none), the sampler that
	 * turns bpf_stats on a short window at a time, its calibration, and the
	 * program's stats at the start or the last reset.
	 */
	int prog_fd;
	bool timed;	/* calibrated, and stats sampled (or on already) */
	struct lr_bpf_sampler *stats;
	struct lr_stats_cal cal;
	uint64_t prog_ns0, prog_runs0;
	void *priv;
};

/* Totals over a table of LR_MAX_FLOWS flow states, with the end-of-test markers' totals settled in. */
struct lr_flow_totals {
	uint64_t packets, unique, lost_gap, late, dups, sent, fwd_late, fwd_dups;
	int64_t lost;	/* markers settle a flow's loss; open gaps stand for it until then */
	unsigned int flows, flows_eot, flows_announced;
	bool settled;	/* every flow with frames has its marker, and every flow announced */
	/* flows whose markers carried two run ids (two senders), and the first such flow's two ids */
	unsigned int flows_shared;
	uint32_t run_ids[2];
};

void lr_flow_totals(const struct lr_flow_state *flows, struct lr_flow_totals *t);

/* Per-source counters folded into one. */
void lr_rx_counters_sum(const struct lr_rx_counters *src, int n, struct lr_rx_counters *sum);

/*
 * The receiver as a library (`linerate run` drives it from another
 * process): open with the engine choice of @o on @o->ifname (namespace
 * already entered), zero, test for completeness, collect, close. begin
 * returns an exit code and leaves one line in @err on failure; @line gets
 * the start line (engine, mode, why better ones were not usable). With
 * @o->pcap, begin opens the capture file before anything is attached, reset
 * leaves it alone and end renames it into place.
 */
int lr_rx_begin(const struct lr_rx_spec *o, struct lr_rx *rx, char *line, size_t linelen, char *err, size_t errlen);
/* The result so far (struct lr_rx_result, util/result.h): counts, flows, device counters, capture. */
int lr_rx_collect(struct lr_rx *rx, struct lr_rx_result *r);
/* Test frames and markers counted so far (foreign frames aside): what an idle limit watches. */
int lr_rx_activity(struct lr_rx *rx, uint64_t *count);
/* Every flow the sender announced has its end-of-test marker in. */
bool lr_rx_complete(const struct lr_rx *rx);
/* The same, of a table of LR_MAX_FLOWS flow states (a receiver's or a reflector's). */
bool lr_flows_complete(const struct lr_flow_state *flows);
/*
 * Round trips: waits until flows 0 .. @flows - 1 all have a reflected marker in, at most
 * @timeout_ns (or until a signal), then 50 ms more for the repeats. Whether they all came.
 */
bool lr_rx_wait_back(struct lr_rx *rx, unsigned int flows, uint64_t timeout_ns);
void lr_rx_reset(struct lr_rx *rx);
void lr_rx_end(struct lr_rx *rx);
/* The capture renamed into place (after ops->stop), or removed (error paths). */
int lr_rx_capture_close(struct lr_rx *rx, char *err, size_t errlen);
void lr_rx_capture_abort(struct lr_rx *rx);

/* How a recv went, for its report: its window, and why it ended early. */
struct lr_rx_outcome {
	uint64_t start_ns, end_ns;
	bool pcap_lost;	/* the capture could not be completed and was removed */
	char error[512];	/* "" unless the test ended early (the interface disappeared, the idle limit) */
	const char *stopped;	/* why it ended: "markers", "duration", "signal", "idle", "interface" */
};

#endif
