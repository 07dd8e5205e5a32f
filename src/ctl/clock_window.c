// SPDX-License-Identifier: MIT
/* A test's two clocks on one time line: one boot, or estimated before and after (clock_window.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/clock_window.h"
#include "ctl/host.h"

/* One end's estimate: an agent's clock minus this process's, or zero for an end here. */
static int end_estimate(struct lr_ctl *c, struct lr_clock_est *e, struct lr_ctl **failed, char *err, size_t errlen)
{
	int ret;

	memset(e, 0, sizeof(*e));
	if (!c)
		return 0;
	ret = lr_ctl_clock_estimate(c, LR_CLOCK_EXCHANGES, e, err, errlen);
	if (ret)
		*failed = c;
	return ret;
}

int lr_clock_window_begin(struct lr_clock_window *w, struct lr_ctl *rx, struct lr_ctl *tx, bool estimate,
			  struct lr_ctl **failed, char *err, size_t errlen)
{
	char boot[LR_BOOT_ID_LEN + 1] = "";
	const char *rx_boot, *tx_boot;
	int ret;

	memset(w, 0, sizeof(*w));
	w->rx = rx;
	w->tx = tx;
	*failed = NULL;
	if (!rx && !tx)
		return 0;
	/* this host's boot unknown: the ends cannot be shown to share a clock */
	lr_host_boot_id(boot);
	rx_boot = rx ? lr_ctl_host(rx)->boot_id : boot;
	tx_boot = tx ? lr_ctl_host(tx)->boot_id : boot;
	if (!estimate && boot[0] && !strcmp(rx_boot, tx_boot))
		return 0;
	ret = end_estimate(rx, &w->rx_before, failed, err, errlen);
	if (!ret)
		ret = end_estimate(tx, &w->tx_before, failed, err, errlen);
	w->state = ret ? LR_CLOCK_NONE : LR_CLOCK_ESTIMATED;
	return ret;
}

int64_t lr_clock_window_offset(const struct lr_clock_window *w)
{
	if (w->state != LR_CLOCK_ESTIMATED)
		return 0;
	/* (rx - this) - (tx - this) */
	return w->rx_before.offset_ns - w->tx_before.offset_ns;
}

uint64_t lr_clock_window_bound(const struct lr_clock_window *w)
{
	return w->rx_before.bound_ns + w->tx_before.bound_ns;
}

/* One end's report between its estimate before and now; zero for an end here. */
static int end_report(struct lr_ctl *c, const struct lr_clock_est *before, struct lr_clock_report *rep,
		      struct lr_ctl **failed, char *err, size_t errlen)
{
	struct lr_clock_est after;
	int ret;

	memset(rep, 0, sizeof(*rep));
	if (!c)
		return 0;
	ret = end_estimate(c, &after, failed, err, errlen);
	if (!ret && (ret = lr_clock_report_make(before, &after, rep)))
		snprintf(err, errlen, "the estimates before and after the test cannot be joined: %s", strerror(-ret));
	return ret;
}

int lr_clock_window_end(struct lr_clock_window *w, struct lr_clock_report *rep, struct lr_ctl **failed,
			char *err, size_t errlen)
{
	struct lr_clock_report rx, tx;
	int ret;

	*failed = NULL;
	if (w->state != LR_CLOCK_ESTIMATED) {
		snprintf(err, errlen, "no estimate before the test");
		return -ENODATA;
	}
	ret = end_report(w->rx, &w->rx_before, &rx, failed, err, errlen);
	if (!ret)
		ret = end_report(w->tx, &w->tx_before, &tx, failed, err, errlen);
	if (!ret && (ret = lr_clock_report_between(&rx, &tx, rep))) {
		*failed = NULL;
		snprintf(err, errlen, "the two ends' reports cannot be joined: %s", strerror(-ret));
	}
	return ret;
}
