/* SPDX-License-Identifier: MIT */
/*
 * send --peer: the far end of a send through an agent. Forward, the agent counts what this process
 * sends; with --reverse, the agent sends and this process counts; with --rtt, the agent reflects
 * what this process sends and this process counts what comes back. Both ends' clocks (one with
 * --rtt), both results.
 */
#ifndef LINERATE_CTL_PEER_H
#define LINERATE_CTL_PEER_H

#include <stdbool.h>
#include <json-c/json.h>
#include "opt/opts.h"

struct lr_peer;

/*
 * Connects to --peer and says hello (with --token-file's token): before the namespace is entered,
 * so the agent is reached from where send was started. 0, or an exit code after one line.
 */
int lr_peer_open(const struct lr_send_opts *o, struct lr_peer **out);
/*
 * Forward: the clocks compared, then a receiver on the agent's interface that holds --dst-ip (or
 * --peer-interface), counting from now on; with --rtt, a reflector there instead, reflecting from
 * now on (no clocks: the round trip is timed on this side's). The keepalive starts. 0, or an exit
 * code after one line.
 */
int lr_peer_prepare(struct lr_peer *p);
/* The agent failed (said in one line, once): true; the local sender must stop. */
bool lr_peer_failed(struct lr_peer *p);
/*
 * Forward, once the local sender is done (with --rtt, once its reflected markers are in): the
 * receiver's result and the clocks again, or the reflector's result; quit.
 */
void lr_peer_collect(struct lr_peer *p);
/* The "peer" object of the JSON document (the peer's; NULL: none). */
struct json_object *lr_peer_json(struct lr_peer *p);
/* Forward: the receiver's summary, or the reflector's line; 0, or 1 when the far end failed. */
int lr_peer_report(struct lr_peer *p);
/* --reverse: the whole test, its summaries and its document; the exit code. */
int lr_peer_reverse(struct lr_peer *p);
/* Closes the connection (an agent then ends its test) and frees. NULL is fine. */
void lr_peer_close(struct lr_peer *p);

#endif
