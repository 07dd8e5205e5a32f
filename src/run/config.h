/* SPDX-License-Identifier: MIT */
/* `linerate run` test plans: the INI file parsed and validated into one read-only struct. */
#ifndef LINERATE_CONFIG_H
#define LINERATE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <net/if.h>
#include <netinet/in.h>
#include "opt/opts.h"
#include "tx/spec.h"
#include "util/units.h"

#define LR_CFG_MAX_STREAMS	16
#define LR_CFG_NAME_MAX		64

enum lr_run_mode { LR_RUN_SWEEP = 0, LR_RUN_THROUGHPUT, LR_RUN_RTT, LR_RUN_RTT_THROUGHPUT };

/* Round trips: [rx] runs a reflector, the sender counts what comes back. */
static inline bool lr_run_mode_rtt(enum lr_run_mode m)
{
	return m == LR_RUN_RTT || m == LR_RUN_RTT_THROUGHPUT;
}

/* The RFC 2544 search, one way or round trip. */
static inline bool lr_run_mode_search(enum lr_run_mode m)
{
	return m == LR_RUN_THROUGHPUT || m == LR_RUN_RTT_THROUGHPUT;
}

/* One traffic stream: its own template and flows, a share of the step's rate. */
/*
 * A stream of the run file: a sender's spec, filled once from [tx] and its [stream] section with
 * the option table's defaults beneath (tx.size 0: the step's size, for the implicit stream of
 * [tx]); a step sets only its rate, its window and the engine run chose.
 */
struct lr_cfg_stream {
	char name[LR_CFG_NAME_MAX];	/* "" for the implicit stream of [tx] */
	struct lr_tx_spec tx;
	double share;	/* fraction of the step's rate, 0 < share <= 1; shares sum to 1 */
	int line;	/* where the section starts, for later messages */
};

struct lr_cfg {
	char path[LR_PATH_MAX];
	/* [test] */
	char name[LR_CFG_NAME_MAX];
	enum lr_run_mode mode;
	uint64_t duration_ns;	/* measurement window of a sweep step */
	uint64_t warmup_ns;	/* traffic before each window, not counted */
	unsigned int repeat;
	double max_loss;	/* fraction 0..1; sweep steps above it fail the test (exit 3) */
	uint64_t max_p99_ns;	/* 0 = no latency threshold */
	uint64_t max_rtt_p99_ns;	/* round trips: 0 = no threshold */
	/* throughput search (RFC 2544 26.1) */
	uint64_t trial_ns;	/* one trial's window */
	double resolution;	/* stop when (hi - lo) / hi <= resolution */
	uint64_t resolution_pps;	/* or when hi - lo <= this, if set */
	unsigned int max_trials;
	/* [tx] */
	char tx_ifname[IF_NAMESIZE];
	char tx_netns[LR_PATH_MAX];
	enum lr_engine_kind tx_engine;
	enum lr_xsk_mode xsk_mode;
	unsigned int batch;
	uint32_t latency_every;	/* 0: by the rate */
	uint16_t dst_port;
	unsigned int nsizes;
	unsigned int sizes[LR_CFG_MAX_SIZES];
	unsigned int nrates;
	struct lr_rate rates[LR_CFG_MAX_RATES];	/* sweep: one step per rate; search: rates[0] is the upper bound */
	char tx_pcap[LR_PATH_MAX];	/* samples of the frames sent ("" = none) */
	char tx_agent[256];	/* "": the senders run in run's own process; else HOST[:PORT] */
	char tx_token_file[LR_PATH_MAX];
	/* not of the file (the matrix's): the [tx] agent sends from the interface that routes to dst_ip */
	bool tx_route;
	uint64_t count;	/* not of the file (the matrix's): frames per window; 0: the window's duration alone */
	unsigned int tx_pcap_every;	/* one in K; 0: the first LR_PCAP_DEFAULT_COUNT of each step */
	bool prepare_peer;	/* GRO on at the veth peer of tx_ifname for the run (send --prepare-peer) */
	/* [rx] */
	char rx_ifname[IF_NAMESIZE];
	char rx_pcap[LR_PATH_MAX];
	unsigned int rx_pcap_every;	/* 0: every test frame */
	unsigned int rx_snaplen;	/* 0: LR_PCAP_DEFAULT_SNAPLEN */
	char rx_netns[LR_PATH_MAX];
	enum lr_rx_engine_kind rx_engine;
	enum lr_xdp_mode xdp_mode;
	unsigned int rx_workers;
	char rx_agent[256];	/* "": the receiver runs in run's child process; else HOST[:PORT] */
	/* not of the file (the matrix's): with rx_ifname empty, the [rx] agent counts where this address is */
	char rx_address[64];
	char rx_token_file[LR_PATH_MAX];
	int clock;	/* [test] clock: 0 auto, 1 estimate (the order of send's --clock) */
	bool cost;	/* [test] cost: each step's CPU per packet, split (sys/cost.h) */
	/* [test] sender_limited = pass: a sender short of the offered rate does not fail a step */
	bool sender_limited_pass;
	/* streams: [tx] itself is stream 0 unless [stream NAME] sections exist */
	unsigned int nstreams;
	struct lr_cfg_stream streams[LR_CFG_MAX_STREAMS];
};

/*
 * Parses and validates @text (@len bytes, need not be NUL-terminated) read
 * from @path. 0, or -EINVAL with "PATH:LINE: message" in @err. Touches no
 * interface: every check here is on the file alone.
 */
int lr_cfg_parse(const char *path, const char *text, size_t len, struct lr_cfg *cfg, char *err, size_t errlen);
/* Reads @path and parses it; file errors become "PATH: message". */
int lr_cfg_load(const char *path, struct lr_cfg *cfg, char *err, size_t errlen);

/* The fields of @tx that follow from the others (families, the destination given, one CPU a queue). */
void lr_cfg_stream_settle(struct lr_tx_spec *tx);

/* A {key} of a core message (util/err.h) as a run file spells it: the option's key (size: sizes). */
void lr_cfg_spell(const char *key, char *out, size_t len);

#endif
