/* SPDX-License-Identifier: MIT */
/*
 * What one stream's sender is to do, and nothing of who asked: the CLI (send), a run file's
 * stream, or a request over the wire fill it through the one option table; tx reads it.
 */
#ifndef LINERATE_TX_SPEC_H
#define LINERATE_TX_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include "util/outfile.h"
#include "util/units.h"

#define LR_MAX_WORKERS 64

enum lr_engine_kind { LR_ENGINE_AUTO = 0, LR_ENGINE_AFXDP, LR_ENGINE_PACKET, LR_ENGINE_LIVE };
enum lr_xsk_mode { LR_XSK_AUTO = 0, LR_XSK_ZEROCOPY, LR_XSK_COPY };

struct lr_tx_spec {
	char ifname[IF_NAMESIZE];
	enum lr_engine_kind engine;
	enum lr_xsk_mode xsk_mode;
	unsigned int nworkers;
	unsigned int queues[LR_MAX_WORKERS];
	unsigned int cpus[LR_MAX_WORKERS];
	bool cpus_set;
	unsigned int ncpus;
	unsigned int size;
	unsigned int flows;
	struct lr_rate rate;
	uint64_t count;	/* 0 = no limit */
	uint64_t duration_ns;	/* 0 = no limit */
	int family;	/* of the addresses; 0 when none is given */
	int src_family, dst_family;	/* of each address, as given */
	struct in6_addr src_ip, dst_ip;
	bool have_src_ip, have_dst_ip;
	uint8_t src_mac[6], dst_mac[6];
	bool have_src_mac, have_dst_mac;
	uint16_t src_port, dst_port;
	bool src_port_set;	/* else the default base, lowered when the flows need room */
	unsigned int batch;
	uint32_t latency_every;	/* timestamp one frame in N per flow (a power of two); 0 = by the rate */
	unsigned int eot_repeat;
	bool allow_physical;
	/* replay the frames of a capture instead of the template */
	char replay[LR_PATH_MAX];
	bool replay_timing;	/* the file's own inter-frame gaps instead of the rate */
	uint64_t loops;	/* times through the file (default 1; 0 = until the duration) */
	bool loops_set;
	bool stamp;	/* write the probe into replayed UDP frames so a receiver counts them */
	bool rtt;	/* round trips: a run id in every frame, for a reflector's counts */
	bool prepare_peer;	/* GRO on at the veth peer for the test (its caller holds it: sys/peer_gro.h) */
	bool sampled;	/* frames are sampled (lr_tx_sample()): live loads its sampling program */
};

/* The engine a name ("live", "afxdp", "packet") stands for; LR_ENGINE_AUTO for any other. */
enum lr_engine_kind lr_engine_kind_of(const char *name);

#endif
