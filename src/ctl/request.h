/* SPDX-License-Identifier: MIT */
/*
 * The requests of the agent protocol as messages and back, each parsed as strictly as the command
 * line: prepare_rx, prepare_tx and prepare_reflect carry recv's, send's and reflect's options through
 * the option table itself.
 */
#ifndef LINERATE_CTL_REQUEST_H
#define LINERATE_CTL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "opt/opts.h"
#include "ctl/auth.h"

#define LR_CTL_ADDR_TEXT	64	/* an IPv4 or IPv6 address as text */
#define LR_CTL_WAIT_MAX_MS	1000	/* a wait never keeps the endpoint from its dead-man timer longer */

/*
 * prepare_rx for @o, on @o->ifname or, with @o->ifname empty, on the interface that holds
 * @address; and back: 0, or -EINVAL with "prepare_rx.KEY: why" in @err, as the CLI words it.
 */
struct json_object *lr_ctl_prepare_rx_msg(const struct lr_recv_opts *o, const char *address);
int lr_ctl_prepare_rx_parse(struct json_object *msg, struct lr_recv_opts *o, char address[LR_CTL_ADDR_TEXT],
			    char *err, size_t errlen);
/*
 * The same for a sender: send's options, then send's own checks of how they go together. With
 * @route (protocol version 4), neither an interface nor an address: the endpoint sends from the
 * interface its routing table sends @o->dst_ip out of.
 */
struct json_object *lr_ctl_prepare_tx_msg(const struct lr_send_opts *o, const char *address, bool route);
int lr_ctl_prepare_tx_parse(struct json_object *msg, struct lr_send_opts *o, char address[LR_CTL_ADDR_TEXT],
			    bool *route, char *err, size_t errlen);
/*
 * The same for a reflector (send --peer --rtt's far end): reflect's interface, namespace, test port
 * and XDP mode, or the address its interface holds.
 */
struct json_object *lr_ctl_prepare_reflect_msg(const struct lr_reflect_opts *o, const char *address);
int lr_ctl_prepare_reflect_parse(struct json_object *msg, struct lr_reflect_opts *o,
				 char address[LR_CTL_ADDR_TEXT], char *err, size_t errlen);

/* hello's request: the controller's version and nonce. */
struct lr_ctl_hello_req {
	char release[64], revision[128];
	char nonce[LR_AUTH_HEX + 1];
};

struct json_object *lr_ctl_hello_msg(const char *nonce);
int lr_ctl_hello_parse(struct json_object *msg, struct lr_ctl_hello_req *h, char *err, size_t errlen);
/* wait {timeout_ms}: at most LR_CTL_WAIT_MAX_MS. */
int lr_ctl_wait_parse(struct json_object *msg, unsigned int *timeout_ms, char *err, size_t errlen);
/*
 * start {at_ns}: 0, at once; else a time on the endpoint's stamping clock, at most
 * LR_CTL_START_AHEAD_NS ahead of it.
 */
#define LR_CTL_START_AHEAD_NS	1000000000ULL
struct json_object *lr_ctl_start_msg(uint64_t at_ns);
int lr_ctl_start_parse(struct json_object *msg, uint64_t *at_ns, char *err, size_t errlen);
/* clock {t1}. */
int lr_ctl_clock_parse(struct json_object *msg, uint64_t *t1, char *err, size_t errlen);
/* auth {proof}: LR_AUTH_HEX hex digits. */
int lr_ctl_auth_parse(struct json_object *msg, char proof[LR_AUTH_HEX + 1], char *err, size_t errlen);

/* A {key} of a sender's message (util/err.h) as the wire names it: prepare_tx.size. */
void lr_ctl_spell_tx(const char *key, char *out, size_t len);

#endif
