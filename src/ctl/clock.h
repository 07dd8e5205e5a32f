/* SPDX-License-Identifier: MIT */
/*
 * The offset between two endpoints' stamping clocks, from NTP-style exchanges over the control
 * connection, and the rule that says when latency across hosts is valid: arithmetic only, no I/O.
 */
#ifndef LINERATE_CTL_CLOCK_H
#define LINERATE_CTL_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/result.h"

/* Exchanges per estimate, before the test and after it: the fastest of them gives the estimate. */
#define LR_CLOCK_EXCHANGES	32
/*
 * Added to every bound: the granularity of the four clock reads of an exchange (1 ns with the TSC,
 * under 300 ns with the slowest clock sources), the rounding of the offset to whole nanoseconds,
 * and the AF_PACKET receiver's move of its realtime stamps onto the stamping clock.
 */
#define LR_CLOCK_READ_NS	1000
/* Latency across hosts is valid when error_bound_ns <= min / LR_CLOCK_VALID_DIV (docs/counting.md). */
#define LR_CLOCK_VALID_DIV	4

/* One exchange (docs/protocol.md, "clock"), ns: t1, t4 on the controller's stamping clock, t2, t3 on the endpoint's. */
struct lr_clock_sample {
	uint64_t t1;	/* the controller sent the request */
	uint64_t t2;	/* the endpoint received it */
	uint64_t t3;	/* the endpoint sent its reply */
	uint64_t t4;	/* the controller received the reply */
};

/* An estimate of the endpoint's clock minus the controller's; zeroed, it holds no exchange yet. */
struct lr_clock_est {
	int64_t offset_ns;
	uint64_t delay_ns;	/* round trip of the exchange it came from, less the endpoint's own time */
	uint64_t bound_ns;	/* |offset_ns - the true offset| <= bound_ns: delay / 2 + LR_CLOCK_READ_NS */
	uint64_t at_ns;	/* the controller's clock halfway through that exchange, for the drift */
	unsigned int samples;	/* exchanges taken */
	unsigned int refused;	/* exchanges that cannot be (lr_clock_sample_eval()) */
};

/* What a test reports of the clocks: the lr_rx_result keys latency_ns.offset_ns, .error_bound_ns, .drift_ppb. */
struct lr_clock_report {
	int64_t offset_ns;	/* the one loaded into the receiver (clock_offset_ns): the estimate before the test */
	uint64_t error_bound_ns;	/* the estimates' bound, widened by how far the offset moved over the test */
	int64_t drift_ppb;	/* how much faster the endpoint's clock ran than the controller's, per 10^9 */
};

/*
 * One exchange's offset, ((t2 - t1) + (t3 - t4)) / 2, and delay, (t4 - t1) - (t3 - t2), exact for any
 * 64-bit readings. 0; -EINVAL for an exchange that cannot be: the reply before the request
 * (t4 < t1), the endpoint replying before it received (t3 < t2), a negative delay; -ERANGE when
 * the offset does not fit 64 signed bits.
 */
int lr_clock_sample_eval(const struct lr_clock_sample *s, int64_t *offset_ns, uint64_t *delay_ns);
/*
 * Takes one exchange into @e (zeroed before the first): the one of least delay so far makes the
 * estimate. 0, or the error of lr_clock_sample_eval() (the exchange is counted in e->refused).
 */
int lr_clock_est_add(struct lr_clock_est *e, const struct lr_clock_sample *s);
/* The estimate from @n exchanges: 0, or -ENODATA when none could be taken. */
int lr_clock_estimate(const struct lr_clock_sample *s, unsigned int n, struct lr_clock_est *e);

/*
 * The report of a test from the estimates before and after it: the offset before; the bound
 * max(before, after) + |after - before offset|; the drift, that move over the controller's time
 * between the two. 0; -ENODATA when either holds no exchange; -EINVAL when @after is not later
 * than @before; -ERANGE when a figure does not fit.
 */
int lr_clock_report_make(const struct lr_clock_est *before, const struct lr_clock_est *after,
			 struct lr_clock_report *r);
/*
 * The receiver's clock against the sender's, from each one's report against the controller (a
 * zeroed report for an end in the controller's own process): offsets and drifts subtracted,
 * bounds added. 0, or -ERANGE when a figure does not fit.
 */
int lr_clock_report_between(const struct lr_clock_report *rx, const struct lr_clock_report *tx,
			    struct lr_clock_report *r);

/*
 * The rule of docs/counting.md, "Latency across hosts": figures measured with an offset known to
 * @error_bound_ns hold when every figure's error is at most a quarter of it: some latency was
 * measured, no frame came out stamped after its arrival, and error_bound_ns <= min / 4.
 */
bool lr_clock_latency_valid(const struct lr_rx_result *r, uint64_t error_bound_ns);
/*
 * A receiver's result completed by the controller: clock "estimated" with @c's figures and the
 * verdict of lr_clock_latency_valid(); or, @c NULL (two hosts, no estimate), clock "none", not valid.
 */
void lr_clock_apply(struct lr_rx_result *r, const struct lr_clock_report *c);
/*
 * One line for a summary on where @r's latency clock came from (no newline): "" for one host;
 * the estimate and its bound; or, when not valid, why, in place of the figures. Returns @buf.
 */
const char *lr_clock_describe(const struct lr_rx_result *r, char *buf, size_t len);

#endif
