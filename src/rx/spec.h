/* SPDX-License-Identifier: MIT */
/*
 * What a receiver and a reflector are to do, and nothing of who asked: recv's options, a run
 * file's [rx], send --rtt's own receiver or a request over the wire fill them; rx reads them.
 */
#ifndef LINERATE_RX_SPEC_H
#define LINERATE_RX_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include "util/outfile.h"

enum lr_xdp_mode { LR_XDP_AUTO = 0, LR_XDP_NATIVE, LR_XDP_GENERIC };
enum lr_rx_engine_kind { LR_RX_ENGINE_AUTO = 0, LR_RX_ENGINE_XDP, LR_RX_ENGINE_PACKET };

struct lr_rx_spec {
	char ifname[IF_NAMESIZE];
	enum lr_rx_engine_kind engine;
	enum lr_xdp_mode xdp_mode;
	unsigned int workers;	/* AF_PACKET receive threads (fanout) */
	bool workers_set, xdp_mode_set;	/* given by the user, so a contradiction can be refused */
	uint16_t dst_port;
	bool pass;
	/* samples of the frames received, to pcap */
	char pcap[LR_PATH_MAX];
	uint64_t pcap_every;	/* one test frame in K (default 1: all, up to the cap and ring) */
	bool pcap_foreign;	/* also every foreign frame */
	unsigned int snaplen;	/* bytes kept of each sample (default LR_PCAP_DEFAULT_SNAPLEN) */
	uint64_t pcap_max_bytes;
	/*
	 * pcap is a bare file name in the directory @pcap_dirfd (an agent's --capture-dir), created
	 * there and never over an existing file; false: pcap is a path (recv, run's receiver).
	 */
	bool pcap_in_dir;
	int pcap_dirfd;
	bool prog_stats;	/* sample bpf_stats: the program's ns per frame (rx.prog) */
	/*
	 * The receiver's stamping clock minus the sender's, ns, subtracted from every latency
	 * sample: 0 on one host. An agent sets it from prepare_rx.
	 */
	int64_t clock_offset_ns;
};

/* A reflector (send --rtt's far end). */
struct lr_reflect_spec {
	char ifname[IF_NAMESIZE];
	enum lr_xdp_mode xdp_mode;
	uint16_t dst_port;
	bool allow_physical;
};

#endif
