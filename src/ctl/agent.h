/* SPDX-License-Identifier: MIT */
/* `linerate agent`: the listening process, handshakes many at once, one session at a time in a child of its own. */
#ifndef LINERATE_CTL_AGENT_H
#define LINERATE_CTL_AGENT_H

#include "opt/opts.h"
#include "ctl/auth.h"
#include "ctl/net.h"

/*
 * Listens on @addr (already checked against the token rule), in the namespace the process is in,
 * until SIGTERM or SIGINT; the parent does every connection's hello (and, with @key, its proof of
 * the token) itself, many at once, bounded and capped, and serves each controller that passed in a
 * forked child while it goes on listening; one that passes while a session runs gets "busy". With @metrics, the same loop serves Prometheus
 * scrapers there (docs/metrics.md). Returns the parent's exit code, or in a session's child
 * -1 - its exit code (the caller returns that from main, as run's receiver child does).
 */
int lr_agent_serve(const struct lr_agent_opts *o, const struct lr_ctl_addr *addr, const struct lr_ctl_addr *metrics,
		   const struct lr_auth_key *key);

#endif
