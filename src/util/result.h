/* SPDX-License-Identifier: MIT */
/*
 * The result of a send (tx) and of a receive (rx) as plain structs, and their one JSON codec:
 * send --json, recv --json, run's steps and the messages of the agent protocol all go through it.
 */
#ifndef LINERATE_RESULT_H
#define LINERATE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "linerate/flow.h"

#define LR_TX_MAX_QUEUES	64	/* per_queue entries of a tx result (the workers of a test) */
#define LR_RESULT_PATH_MAX	4096

/* A device's own counters over a test, one direction ("device": {"rx_packets", "rx_dropped", ...}). */
struct lr_dev_result {
	uint64_t packets, dropped;
	uint64_t driver_drops;	/* the driver's ethtool counters named *drops or *errors */
};

struct lr_tx_queue_result {
	unsigned int queue, cpu;
	uint64_t packets;	/* data frames the device completed */
	double pps;
	uint64_t ring_full, kicks, kick_errors;
	bool have_device_packets;	/* the driver keeps a per-queue count (veth does not) */
	uint64_t device_packets;
};

/*
 * The sending workers' CPU over a test (sys/cost.h splits it): what
 * cost_ns_per_packet's sender part is made of. JSON "tx.cpu".
 */
struct lr_tx_cpu {
	uint64_t thread_ns;	/* the workers' CPU time from the start to their end (markers included) */
	uint64_t softirq_ns, softirq_err_ns;	/* of it, interrupt work done in their context (an estimate) */
	uint64_t prog_stat_runs;	/* runs of the engine's own BPF program (live) that bpf_stats counted */
	bool ksoftirqd_seen;	/* ksoftirqd's time on the workers' CPUs was read and left out */
	/*
	 * The kernel keeps interrupt time apart (lr_kconfig_read()): 0 no, 1 yes (then thread time
	 * holds none and softirq_ns is 0), 2 unknown (taken as no).
	 */
	int irqtime;
	unsigned int kernel_hz;	/* its tick rate, which sets the estimate's error; 0 when unknown */
};

struct lr_tx_result {
	uint64_t packets;	/* data frames the device accepted */
	uint64_t queued, completed;
	uint64_t bytes;	/* of those frames, without the FCS */
	double pps;
	uint64_t device_dropped;	/* the interface's tx_dropped over the data phase ("device_tx_dropped") */
	uint64_t eot;	/* end-of-test markers sent ("eot_markers") */
	uint64_t latency_every;	/* a timestamp in one data frame in this many per flow */
	struct lr_dev_result device;	/* the interface's counters over the whole test, markers included */
	unsigned int nqueues;
	struct lr_tx_queue_result queues[LR_TX_MAX_QUEUES];
	bool have_cpu;	/* "cpu" is null without */
	struct lr_tx_cpu cpu;
};

/*
 * bpf_stats of the receiver's XDP program over a test, sampled (sys/bpfstats.h), with the
 * calibration that corrects them. JSON "rx.prog".
 */
struct lr_rx_prog {
	uint64_t run_ns, stat_runs;	/* run time and runs counted while stats were on */
	double stats_reported_ns;	/* what stats put inside each counted run's time (calibrated) */
	double stats_added_ns;	/* what stats added to each counted run's real cost; 0 when not known */
	bool stats_added_known;	/* false: stats were on for the whole test already */
	double stats_error_ns;	/* the calibration's uncertainty, per run */
};

/* latency_ns.clock: how the receiver's clock and the senders' stamps were put on one time line. */
enum lr_lat_clock {
	LR_LAT_CLOCK_SAME_HOST = 0,	/* one host, one stamping clock: exact */
	LR_LAT_CLOCK_ESTIMATED,	/* two hosts: an offset the controller estimated (ctl/clock.h) */
	LR_LAT_CLOCK_NONE,	/* two hosts and no estimate: no latency figure holds */
};

/* Everything a receive reports, settled: the sum of the counting sources and the flows. */
struct lr_rx_result {
	uint64_t packets, bytes, foreign, ring_drops;
	uint64_t eot;	/* end-of-test markers received ("eot_markers") */
	uint64_t bad_flow;	/* test frames whose flow id is out of range */
	uint64_t sent;	/* from end-of-test markers: valid when flows_eot > 0, else 0 and "sent" is null */
	uint64_t late, dups;	/* "reordered", "duplicates" */
	/* round trips: the forward reordered and duplicate frames reflected markers carried (not in "rx") */
	uint64_t fwd_late, fwd_dups;
	int64_t lost;	/* markers settle it; else open sequence gaps */
	unsigned int flows, flows_eot, flows_announced;
	bool settled;	/* "tail_settled": every flow's marker is in */
	/* "shared_flows" (null when 0): flows whose markers carried two run ids, the first such pair */
	/*
	 * "unseen" (null without an XDP program or device counters): frames
	 * the interface counted received that the program never ran on
	 */
	bool have_unseen;
	uint64_t unseen;
	bool have_shared;
	unsigned int flows_shared;
	uint32_t run_ids[2];
	double active_s;	/* first to last data frame */
	double pps;	/* over active_s */
	uint64_t lat_count, lat_min, lat_p50, lat_p90, lat_p99, lat_p999, lat_max, lat_mean;
	uint64_t lat_sum;	/* of every sample, ns: not in the JSON (the agent's --metrics has it) */
	uint64_t lat_future;	/* frames stamped ahead of this clock */
	enum lr_lat_clock lat_clock;
	int64_t lat_offset_ns;	/* subtracted from every sample: the receiver's clock minus the sender's */
	uint64_t lat_error_bound_ns;	/* how far every latency figure can be off by the offset's error */
	int64_t lat_drift_ppb;	/* the receiver's clock against the sender's over the test */
	bool lat_valid;	/* the figures hold: one clock, or a bound within the rule of docs/counting.md */
	uint64_t queue_packets[LR_RX_MAX_QUEUES];
	struct lr_dev_result device;	/* the receiving interface's counters over the same span */
	/* --pcap: the file ("" when writing failed and nothing was kept), what was written, lost, capped */
	bool pcap;
	char pcap_file[LR_RESULT_PATH_MAX];
	uint64_t pcap_written, pcap_dropped, pcap_capped, pcap_every;
	unsigned int pcap_snaplen;
	bool have_prog;	/* --prog-stats: "prog" is null without */
	struct lr_rx_prog prog;
};

/* Fewer runs counted than this and a program's mean time per run is not worth a figure. */
#define LR_PROG_MIN_RUNS 100

/*
 * The program's own ns per frame: the mean over the runs bpf_stats counted, less what stats put
 * inside each run's time; NaN with fewer than LR_PROG_MIN_RUNS counted.
 */
double lr_rx_prog_ns_per_run(const struct lr_rx_prog *p);

/*
 * The summary warns of unseen frames above this margin: more than
 * LR_RX_UNSEEN_MIN and more than one in LR_RX_UNSEEN_PER of what the
 * interface received (frames arriving between detach and the last counter
 * read, on a busy interface).
 */
#define LR_RX_UNSEEN_MIN 16
#define LR_RX_UNSEEN_PER 1000
bool lr_rx_unseen_warn(const struct lr_rx_result *r);

/* Frames the receiver's program ran on: test frames, markers, foreign and out-of-range ones. */
uint64_t lr_rx_result_runs(const struct lr_rx_result *r);

/*
 * A round trip (send --rtt), settled from the sender's own counts and the
 * frames that came back: forward = sender to reflector, return = back.
 */
struct lr_rtt_dir {
	uint64_t sent, received, late, dups;
	int64_t lost;
};

struct lr_rtt_result {
	bool settled;	/* every flow's reflected marker came back: both directions exact */
	unsigned int flows, flows_eot;
	struct lr_rtt_dir fwd, ret;
	uint64_t count, min, p50, p90, p99, p999, max, mean;	/* round-trip time, ns (rtt_ns) */
};

/*
 * From what the sender stamped (@stamped: the frames the markers announce,
 * data only), its flow count and the result of counting the frames that
 * came back: forward lost = stamped - (reflected - forward duplicates),
 * return lost = reflected - (returned - return duplicates), once every
 * flow's reflected marker is in. Without them, the return direction's open
 * gaps stand for its loss and the forward direction gets the rest.
 */
void lr_rtt_compute(uint64_t stamped, unsigned int flows, const struct lr_rx_result *rx, struct lr_rtt_result *out);
/* Adds "rtt_ns", "forward", "return" and "rtt_settled" to @parent. */
void lr_rtt_result_put(struct json_object *parent, const struct lr_rtt_result *r);
/* Reads them back: 0, or -EINVAL with the key and the reason in @err. */
int lr_rtt_result_get(struct json_object *parent, struct lr_rtt_result *r, char *err, size_t errlen);

/* --prepare-peer: what was found and done at the first hop's veth peer ("prepare_peer"). */
enum lr_prep_action {
	LR_PREP_NOT_VETH = 0,	/* the interface is no veth: nothing to do */
	LR_PREP_NONE,	/* the peer takes XDP frames already (its XDP program, or GRO its user set): left alone */
	LR_PREP_SWITCHED,	/* this run switched GRO on */
	LR_PREP_JOINED,	/* another linerate run held it on already; this one held it too */
};

#define LR_PREP_DEVICE_MAX	16	/* IF_NAMESIZE */
#define LR_PREP_NETNS_MAX	128
#define LR_PREP_ERROR_MAX	256

struct lr_prep_result {
	bool asked;	/* false: "prepare_peer" is null */
	enum lr_prep_action action;
	char device[LR_PREP_DEVICE_MAX];	/* the peer; "" when the interface is no veth */
	char netns[LR_PREP_NETNS_MAX];	/* its namespace as --netns takes it; "" for the sender's own */
	bool xdp;	/* the peer runs a driver-mode XDP program */
	bool gro_before;	/* the peer's GRO as its user had it (a joined run: as the first run found it) */
	bool switched_on;	/* GRO was on for this test because of --prepare-peer (SWITCHED or JOINED) */
	bool released;	/* this run let go of it (the test is over) */
	bool restored;	/* ... and put GRO back as it was */
	unsigned int left_on_for;	/* ... or left it on for this many other runs (0: unknown or none) */
	char error[LR_PREP_ERROR_MAX];	/* why it could not be put back; "" */
};

/* Adds "prepare_peer" to @parent: null unless asked. */
void lr_prep_result_put(struct json_object *parent, const struct lr_prep_result *r);
/* Reads it back: 0, or -EINVAL with the key and the reason in @err. */
int lr_prep_result_get(struct json_object *parent, struct lr_prep_result *r, char *err, size_t errlen);

/* Mean bytes per frame received, without the FCS; 0 before the first frame. */
double lr_rx_result_frame_bytes(const struct lr_rx_result *r);
/*
 * Bit rates from the frames really counted: pps x (their mean bytes + @extra) x 8, @extra 4 for L2
 * (the FCS), 24 for L1 (and preamble, start delimiter, gap). What bps_l2 and bps_l1 hold, so a
 * report that prints one shows the JSON's own figure.
 */
double lr_tx_result_bps(const struct lr_tx_result *r, unsigned int extra);
double lr_rx_result_bps(const struct lr_rx_result *r, unsigned int extra);

/* Adds "tx" to @parent. */
void lr_tx_result_put(struct json_object *parent, const struct lr_tx_result *r);
/* Reads "tx" of @parent into @r: 0, or -EINVAL with the key and the reason in @err. */
int lr_tx_result_get(struct json_object *parent, struct lr_tx_result *r, char *err, size_t errlen);
/* Adds "active_s", "rx" and "latency_ns" to @parent. */
void lr_rx_result_put(struct json_object *parent, const struct lr_rx_result *r);
/* Reads them back into @r: 0, or -EINVAL with the key and the reason in @err. */
int lr_rx_result_get(struct json_object *parent, struct lr_rx_result *r, char *err, size_t errlen);

#endif
