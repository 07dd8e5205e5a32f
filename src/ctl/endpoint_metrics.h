/* SPDX-License-Identifier: MIT */
/*
 * The agent's --metrics for one session: the same numbers the controller is sent, published to
 * the agent's shared page (ctl/metrics.h) as they are read and once a result is taken.
 */
#ifndef LINERATE_CTL_ENDPOINT_METRICS_H
#define LINERATE_CTL_ENDPOINT_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include "ctl/metrics.h"
#include "session/local.h"

struct lr_endpoint_metrics {
	struct lr_metrics_shm *shm;	/* NULL: no --metrics, every call does nothing */
	struct lr_metrics_test mt;	/* what was published last */
	bool final;	/* a result went to the controller: no later read replaces its numbers */
	uint64_t prev, prev_ns, next_ns;	/* the counts read last, when, and when next */
};

/* A new test (@what, on @ifname): its identity, counts from zero, running. */
void lr_endpoint_metrics_begin(struct lr_endpoint_metrics *m, const struct lr_local *l, const char *what,
				const char *ifname);
/* A receiver's or reflector's counts: @result when they are a result's, which no later read replaces. */
void lr_endpoint_metrics_rx(struct lr_endpoint_metrics *m, const struct lr_rx_result *r, bool result);
void lr_endpoint_metrics_reflect(struct lr_endpoint_metrics *m, const struct lr_reflect_result *x, bool result);
/* A finished sender's result: its send document's own numbers, as the controller gets them. */
void lr_endpoint_metrics_tx_result(struct lr_endpoint_metrics *m, const struct lr_local *l);
/* The counts read now, unless a result's numbers stand. */
void lr_endpoint_metrics_read(struct lr_endpoint_metrics *m, struct lr_local *l);
/* A receiver's new window (reset): its counts from zero, read again until its result. */
void lr_endpoint_metrics_reset(struct lr_endpoint_metrics *m, struct lr_local *l);
/* Between requests: the counts read once a second, so a scrape sees a test move whoever drives it. */
void lr_endpoint_metrics_tick(struct lr_endpoint_metrics *m, struct lr_local *l);
/* The test ends: the last counts (unless a result's stand), not running, one more test ended. */
void lr_endpoint_metrics_end(struct lr_endpoint_metrics *m, struct lr_local *l);

#endif
