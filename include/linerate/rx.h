/* SPDX-License-Identifier: MIT */
/* Receive backends (XDP, AF_PACKET) behind one ops table, and the state the common reporting reads. */
#ifndef LINERATE_RX_H
#define LINERATE_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "linerate/flow.h"
#include "linerate/netdev.h"
#include "linerate/opts.h"

struct lr_rx;

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
	/* Stop counting; counters and flows stay readable until close. */
	void (*stop)(struct lr_rx *rx);
	void (*close)(struct lr_rx *rx);
};

extern const struct lr_rx_ops lr_rx_xdp;
extern const struct lr_rx_ops lr_rx_packet;

struct lr_rx {
	const struct lr_recv_opts *o;
	struct lr_if ifc;
	const struct lr_rx_ops *ops;
	const char *mode;	/* "native", "generic", "tpacket_v3" */
	char note[192];
	const struct lr_flow_state *flows;	/* written by the backend's counting side only */
	struct lr_rx_counters *sources;	/* nsources entries, filled by ops->read */
	int nsources;
	uint64_t ring_drops;	/* frames the receive path lost before counting them (AF_PACKET tp_drops) */
	void *priv;
};

/* Per-source counters folded into one. */
void lr_rx_counters_sum(const struct lr_rx_counters *src, int n, struct lr_rx_counters *sum);

#endif
