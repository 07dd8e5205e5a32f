/* SPDX-License-Identifier: MIT */
/*
 * recv's JSON document from an rx result and what surrounds it, for a receiver in this process and
 * for one an agent ran (its document parsed back); its words are summary/'s lr_recv_summary().
 */
#ifndef LINERATE_RX_REPORT_H
#define LINERATE_RX_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>
#include "rx/rx.h"
#include "util/result.h"

/* What a summary and a document say beside the result. */
struct lr_rx_context {
	char engine[16];	/* "xdp", "packet" */
	char mode[16];	/* "native", "generic", "tpacket_v3" */
	char ifname[16];
	double secs;	/* the whole receive, from attach to the end */
	char where[320];	/* "" here; " (agent HOST:PORT)" for a receiver an agent ran */
	char error[512];	/* "" unless the test ended early */
	char stopped[16];	/* recv's own: why it ended (lr_rx_outcome); "" where not known (an agent's) */
	/* --pcap (a local receiver only): the file asked for, whether it was lost, foreign frames too */
	const char *pcap;
	bool pcap_lost, pcap_foreign;
};

/* @x's engine, mode and interface, those of receiver @rx counting on @ifname; the rest untouched. */
void lr_rx_context_of(struct lr_rx_context *x, const struct lr_rx *rx, const char *ifname);
/* The recv document (docs/json.md). */
struct json_object *lr_rx_doc(const struct lr_rx_context *x, const struct lr_rx_result *r);
/* A recv document back into its context (@x->where is left alone) and result: 0 or -EINVAL with @err. */
int lr_rx_doc_get(struct json_object *doc, struct lr_rx_context *x, struct lr_rx_result *r, char *err,
		  size_t errlen);

#endif
