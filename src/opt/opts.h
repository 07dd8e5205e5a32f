/* SPDX-License-Identifier: MIT */
/* Parsed options of each subcommand: filled once by the CLI, read-only afterwards. */
#ifndef LINERATE_OPTS_H
#define LINERATE_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include "rx/spec.h"
#include "tx/spec.h"
#include "util/units.h"

/* send --clock: one clock when the two ends share a boot, else an estimate; or always an estimate */
enum lr_clock_rule { LR_CLOCK_AUTO = 0, LR_CLOCK_ESTIMATE };

/* a run file's lists of sizes and rates: at most this many values */
#define LR_CFG_MAX_SIZES	32
#define LR_CFG_MAX_RATES	32

#define LR_HOSTPORT_MAX 288	/* "[" an IPv6 address or a DNS name (253) "]:65535" */
#define LR_AGENT_MAX_ALLOW 16
#define LR_GLOB_MAX 64
#define LR_AGENT_MAX_ALLOW_NETNS 16
#define LR_NETNS_GLOB_MAX 256	/* a namespace pattern: a name, pid:N, container:NAME or a path */

struct lr_send_opts {
	struct lr_tx_spec tx;	/* what the sender does */
	char netns[LR_PATH_MAX];
	char json[LR_PATH_MAX];
	/* samples of the frames sent, to pcap */
	char pcap[LR_PATH_MAX];
	uint64_t pcap_count;	/* the first N frames (default LR_PCAP_DEFAULT_COUNT) ... */
	uint64_t pcap_every;	/* ... or one in K (0: use the count) */
	uint64_t pcap_max_bytes;	/* 0 = no cap */
	/* --peer: the far end run by an agent */
	char peer[LR_HOSTPORT_MAX];
	char peer_ifname[IF_NAMESIZE];
	char peer_netns[LR_PATH_MAX];
	bool reverse;	/* the agent sends, this side counts */
	char token_file[LR_PATH_MAX];
	enum lr_clock_rule clock;
	bool quiet;	/* no live lines */
	bool silent;	/* no start line either (a library caller reports) */
	int verbose;
};

struct lr_recv_opts {
	struct lr_rx_spec rx;	/* what the receiver does */
	char netns[LR_PATH_MAX];
	char json[LR_PATH_MAX];
	char ready_file[LR_PATH_MAX];
	uint64_t duration_ns;	/* 0 = until a signal (or --once) */
	bool once;	/* stop when every flow's end-of-test marker is in */
	uint64_t idle_ns;	/* --once gives up after this long without a test frame or marker (0: never) */
	bool idle_set;	/* given: else the default of util/idle.h */
	bool quiet;
	int verbose;
};

/* `linerate reflect` */
struct lr_reflect_opts {
	struct lr_reflect_spec fx;	/* what the reflector does */
	char netns[LR_PATH_MAX];
	char json[LR_PATH_MAX];
	char ready_file[LR_PATH_MAX];
	uint64_t duration_ns;	/* 0 = until a signal (or --once) */
	bool once;	/* stop when every flow's end-of-test marker has been reflected */
	uint64_t idle_ns;	/* as recv's */
	bool idle_set;
	bool quiet;
	int verbose;
};

/* `linerate run` */
struct lr_run_opts {
	char file[LR_PATH_MAX];
	char json[LR_PATH_MAX];
	char csv[LR_PATH_MAX];
	bool check;
	bool quiet;
	int verbose;
};

/* `linerate agent` */
struct lr_agent_opts {
	char listen[LR_HOSTPORT_MAX];
	char token_file[LR_PATH_MAX];
	bool insecure;
	char netns[LR_PATH_MAX];
	char allow[LR_AGENT_MAX_ALLOW][LR_GLOB_MAX];
	unsigned int nallow;
	bool allow_physical;
	char ready_file[LR_PATH_MAX];
	char metrics[LR_HOSTPORT_MAX];	/* "" for none */
	char capture_dir[LR_PATH_MAX];	/* "" for none: no request may ask for a capture */
	char allow_netns[LR_AGENT_MAX_ALLOW_NETNS][LR_NETNS_GLOB_MAX];
	unsigned int nallow_netns;	/* 0: a request names no namespace, it tests in the agent's own */
	int verbose;
	int capture_fd;	/* not an option: capture_dir opened by lr_cmd_agent(), -1 for none */
};

/* `linerate matrix` */
#define LR_MATRIX_MAX_ENTRIES	64	/* --agents entries; a name among them may stand for many agents */
#define LR_MATRIX_MAX_SIZES	32
/* --family: which addresses of the agents' names pair up */
enum lr_matrix_family { LR_MATRIX_FAMILY_AUTO = 0, LR_MATRIX_FAMILY_IPV4, LR_MATRIX_FAMILY_IPV6 };

struct lr_matrix_opts {
	char agents[LR_MATRIX_MAX_ENTRIES][LR_HOSTPORT_MAX];	/* "HOST[:PORT]" as given */
	unsigned int nagents;
	char pairs[LR_PATH_MAX];	/* "": every pair */
	unsigned int sizes[LR_MATRIX_MAX_SIZES];
	unsigned int nsizes;
	bool sizes_set;	/* else the smallest frame of the agents' family */
	struct lr_rate rate;
	uint64_t duration_ns;	/* each cell's sending time at most; 0 = no limit (--count alone) */
	bool duration_set;
	uint64_t count;	/* frames a cell; 0 = until the duration */
	unsigned int flows;
	uint16_t dst_port;
	enum lr_engine_kind engine;
	int family;	/* enum lr_matrix_family */
	char token_file[LR_PATH_MAX];
	double max_loss;	/* a fraction */
	bool max_loss_set;
	uint64_t min_pps;
	bool min_pps_set;
	char json[LR_PATH_MAX];
	char csv[LR_PATH_MAX];
	bool quiet;
	int verbose;
};

/* `linerate probe` */
struct lr_probe_opts {
	char ifname[IF_NAMESIZE];
	char netns[LR_PATH_MAX];
	char json[LR_PATH_MAX];	/* "" for none, "-" for stdout */
	int verbose;
};

/* `linerate veth` */
struct lr_veth_opts {
	char target[LR_PATH_MAX];	/* "container:NAME[:IFNAME]" */
	char netns[LR_PATH_MAX];	/* look for the peer there instead of here */
	char json[LR_PATH_MAX];	/* "" for the plain name, "-" for stdout */
	int verbose;
};

/*
 * Each to its defaults: zeroed, the table's defaults for the command's options, then what the
 * table cannot give (opt/optset.c).
 */
void lr_send_opts_default(struct lr_send_opts *o);
void lr_recv_opts_default(struct lr_recv_opts *o);
void lr_reflect_opts_default(struct lr_reflect_opts *o);
/* A sender's spec with the defaults send's options give it (a run file's stream starts from it). */
void lr_tx_spec_default(struct lr_tx_spec *tx);

#endif
