/* SPDX-License-Identifier: MIT */
/*
 * Results in words: the summary lines of send (and of its round trips) and of recv, written into a
 * FILE * the caller gives. Above the core, which never prints: a command writes them to stderr,
 * the agent's session into the summary it sends back (send --reverse), the same lines either way.
 */
#ifndef LINERATE_SUMMARY_SUMMARY_H
#define LINERATE_SUMMARY_SUMMARY_H

#include <stdio.h>
#include "rx/report.h"
#include "tx/tx.h"
#include "util/result.h"

/* A sender's summary lines (@a: lr_tx_describe()), with @prep (--prepare-peer; NULL: not asked). */
void lr_send_summary(FILE *f, const struct lr_tx_about *a, const struct lr_tx_result *r, double secs,
		     const struct lr_prep_result *prep);
/* send --rtt: the round trip and each direction, lines after the summary's; @port the test's. */
void lr_rtt_summary(FILE *f, const struct lr_rtt_result *rtt, unsigned int port);
/* recv's summary lines (a blank line first, as a terminal shows them). */
void lr_recv_summary(FILE *f, const struct lr_rx_context *x, const struct lr_rx_result *r);

#endif
