/* SPDX-License-Identifier: MIT */
/* `linerate agent`: the listening process, one session at a time in a child of its own. */
#ifndef LINERATE_CTL_AGENT_H
#define LINERATE_CTL_AGENT_H

#include "cmd/opts.h"
#include "ctl/auth.h"
#include "ctl/net.h"

/*
 * Listens on @addr (already checked against the token rule), in the namespace the process is in,
 * until SIGTERM or SIGINT; each connection is served in a forked child while the parent goes on
 * listening, and a connection that comes while a session runs gets "busy". With @key, hello asks
 * every controller to prove it holds the token. With @metrics, the same loop serves Prometheus
 * scrapers there (docs/metrics.md). Returns the parent's exit code, or in a session's child
 * -1 - its exit code (the caller returns that from main, as run's receiver child does).
 */
int lr_agent_serve(const struct lr_agent_opts *o, const struct lr_ctl_addr *addr, const struct lr_ctl_addr *metrics,
		   const struct lr_auth_key *key);

#endif
