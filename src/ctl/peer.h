/* SPDX-License-Identifier: MIT */
/*
 * send --peer: the far end of a send through an agent. Forward, the agent counts what this process
 * sends; with --reverse, the agent sends and this process counts. Both ends' clocks, both results.
 */
#ifndef LINERATE_CTL_PEER_H
#define LINERATE_CTL_PEER_H

#include <stdbool.h>
#include <json-c/json.h>
#include "cmd/opts.h"

struct lr_peer;

/*
 * Connects to --peer and says hello (with --token-file's token): before the namespace is entered,
 * so the agent is reached from where send was started. 0, or an exit code after one line.
 */
int lr_peer_open(const struct lr_send_opts *o, struct lr_peer **out);
/*
 * Forward: the clocks compared, then a receiver on the agent's interface that holds --dst-ip (or
 * --peer-interface), counting from now on; the keepalive starts. 0, or an exit code after one line.
 */
int lr_peer_prepare_rx(struct lr_peer *p);
/* The agent failed (said in one line, once): true; the local sender must stop. */
bool lr_peer_failed(struct lr_peer *p);
/* Forward, once the local sender is done: the receiver's result, the clocks again, quit. */
void lr_peer_collect_rx(struct lr_peer *p);
/* The "peer" object of the JSON document (the peer's; NULL: none). */
struct json_object *lr_peer_json(struct lr_peer *p);
/* Forward: the receiver's summary; 0, or 1 when the far end failed. */
int lr_peer_report_rx(struct lr_peer *p);
/* --reverse: the whole test, its summaries and its document; the exit code. */
int lr_peer_reverse(struct lr_peer *p);
/* Closes the connection (an agent then ends its test) and frees. NULL is fine. */
void lr_peer_close(struct lr_peer *p);

#endif
