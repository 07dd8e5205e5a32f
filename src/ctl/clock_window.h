/* SPDX-License-Identifier: MIT */
/*
 * A test's two ends on one time line: the receiver's and the sender's clocks, each this process's
 * or an agent's, compared before the test and again after it. The one place that decides whether
 * two clocks are one (one boot), takes the estimates and turns them into a test's report; `send
 * --peer` and `run` (with the matrix's cells) both use it. Silent: the callers say what happened.
 */
#ifndef LINERATE_CTL_CLOCK_WINDOW_H
#define LINERATE_CTL_CLOCK_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ctl/clock.h"
#include "ctl/ctl.h"

enum lr_clock_state {
	LR_CLOCK_SAME = 0,	/* one clock (both ends on one boot): nothing to estimate */
	LR_CLOCK_ESTIMATED,	/* two clocks, their offset estimated before the test */
	LR_CLOCK_NONE,		/* two clocks, no estimate: latency is not valid */
};

struct lr_clock_window {
	struct lr_ctl *rx, *tx;	/* the ends' agents; NULL: the end runs in this process */
	enum lr_clock_state state;
	/* each agent's clock minus this process's (zero for an end here) */
	struct lr_clock_est rx_before, tx_before;
};

/*
 * Before the test: one clock when both ends run on one boot (unless @estimate asks anyway), else
 * each agent's offset estimated. 0 with w->state set; a failed estimate leaves LR_CLOCK_NONE and
 * returns its -errno, with the end that failed in @failed and why in @err.
 */
int lr_clock_window_begin(struct lr_clock_window *w, struct lr_ctl *rx, struct lr_ctl *tx, bool estimate,
			  struct lr_ctl **failed, char *err, size_t errlen);

/* The receiver's clock minus the sender's, as estimated before (0 unless LR_CLOCK_ESTIMATED). */
int64_t lr_clock_window_offset(const struct lr_clock_window *w);
/* How far that offset may be off: the two estimates' bounds added. */
uint64_t lr_clock_window_bound(const struct lr_clock_window *w);

/*
 * After the test, in LR_CLOCK_ESTIMATED: each agent's clock estimated again and the report of the
 * receiver's clock against the sender's made. 0; else -errno, with the end that failed in @failed
 * (NULL: the estimates could not be joined) and why in @err.
 */
int lr_clock_window_end(struct lr_clock_window *w, struct lr_clock_report *rep, struct lr_ctl **failed,
			char *err, size_t errlen);

#endif
