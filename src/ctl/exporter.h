/* SPDX-License-Identifier: MIT */
/*
 * `linerate agent --metrics`: the HTTP listener in the agent's parent, polled with its other
 * descriptors; a few scrapers at a time, each bounded in bytes and time, none able to block it.
 */
#ifndef LINERATE_CTL_EXPORTER_H
#define LINERATE_CTL_EXPORTER_H

#include <poll.h>
#include <stddef.h>
#include "ctl/metrics.h"
#include "ctl/net.h"

#define LR_EXPORTER_CLIENTS	8	/* scrapers served at once; more are closed at once */
#define LR_EXPORTER_FDS		(1 + LR_EXPORTER_CLIENTS)
#define LR_EXPORTER_READ_MS	1000	/* a scraper's request, whole, within this */
#define LR_EXPORTER_WRITE_MS	1000	/* and the response taken within this */

struct lr_exporter;

/* Listens on @addr (numeric) for scrapers of @shm: 0, or -errno with one line in @err. */
int lr_exporter_open(const struct lr_ctl_addr *addr, const struct lr_metrics_shm *shm, struct lr_exporter **out,
		     char *err, size_t errlen);
/*
 * The descriptors to poll into @p (room for LR_EXPORTER_FDS): their count. @timeout_ms is
 * lowered to the nearest scraper's deadline.
 */
int lr_exporter_fds(struct lr_exporter *x, struct pollfd *p, int *timeout_ms);
/* After poll(): accepts, reads, answers and closes what @p (as lr_exporter_fds() filled it) says is ready. */
void lr_exporter_serve(struct lr_exporter *x, const struct pollfd *p, int n, const struct lr_metrics_agent *a);
/* Closes the listener and every scraper's connection (a session's child: without a word). NULL is fine. */
void lr_exporter_close(struct lr_exporter *x);

#endif
