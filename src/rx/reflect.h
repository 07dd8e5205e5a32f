/* SPDX-License-Identifier: MIT */
/* The reflector as a library: the XDP program that sends round-trip frames back, its mode and its counts. */
#ifndef LINERATE_RX_REFLECT_H
#define LINERATE_RX_REFLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "rx/spec.h"
#include "linerate/flow.h"
#include "sys/counters.h"
#include "sys/netdev.h"

struct reflect;

struct lr_reflector {
	const struct lr_reflect_spec *o;
	struct lr_if ifc;
	const char *mode;	/* "native", "generic" */
	char why[512];	/* why that mode */
	struct reflect *skel;
	int link_fd;
	struct lr_flow_state *flows;	/* mmap of the program's flow array */
	size_t flows_len;
	struct lr_rx_counters *sources;	/* per CPU */
	int nsources;
	struct lr_dev_counters dev0;	/* the interface's counters when reflecting started */
	uint64_t start_ns;
};

/* What a reflector did: frames in and back out, the forward direction as it saw it, what its device refused. */
struct lr_reflect_result {
	const char *mode;
	uint64_t packets, bytes;	/* data frames reflected */
	uint64_t eot;	/* markers reflected */
	uint64_t foreign;	/* frames passed untouched */
	uint64_t bad_flow;
	unsigned int flows, flows_eot;
	/* the latest test on each flow (a new test starts a flow's counts over), unlike packets above */
	uint64_t fwd_received;
	uint64_t sent;	/* the senders' totals from the markers, over the flows with one */
	int64_t lost;	/* forward: the markers settle it, else open gaps */
	uint64_t late, dups;	/* forward reordered and duplicate frames */
	bool settled;	/* every flow that sent frames has its marker in */
	/* the device: frames it sent, and refused (tx_dropped and the driver's *drops / *errors, none on a veth) */
	uint64_t dev_tx_packets, dev_tx_dropped, dev_drv_drops;
	/* forward one-way latency, modulo 2^32 ns: meaningful only with the sender on this host */
	uint64_t lat_count, lat_min, lat_p50, lat_p99, lat_max;
	double duration_s;
};

/*
 * Loads and attaches the reflector on @o->ifname (namespace already
 * entered). @line gets the start line (mode and why). An exit code, with
 * one line in @err on failure; nothing stays attached then.
 */
int lr_reflector_open(const struct lr_reflect_spec *o, struct lr_reflector *r, char *line, size_t linelen, char *err,
		      size_t errlen);
int lr_reflector_collect(struct lr_reflector *r, struct lr_reflect_result *out);
/* Round-trip frames and markers reflected so far: what an idle limit watches. */
int lr_reflector_activity(struct lr_reflector *r, uint64_t *count);
/* Every flow a sender announced has had its marker reflected. */
bool lr_reflector_complete(const struct lr_reflector *r);
/* Detaches (from then on frames pass); the counts stay readable until close. */
void lr_reflector_stop(struct lr_reflector *r);
void lr_reflector_close(struct lr_reflector *r);
/* Adds the reflector's document members ("reflect": {...}) to @parent. */
void lr_reflect_result_put(struct json_object *parent, const struct lr_reflect_result *r);

#endif
