/* SPDX-License-Identifier: MIT */
/*
 * The agent protocol (docs/json.md, "Agent protocol"): the controller's calls and the endpoint
 * that serves them, over one connected stream: run's receiver child today, a TCP agent later.
 */
#ifndef LINERATE_CTL_H
#define LINERATE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "cmd/opts.h"
#include "util/result.h"

/*
 * Controller side: each call sends one request on @fd and waits for its reply. 0; an exit code
 * (1 runtime, 2 bad input or environment) when the endpoint answered with an error, its message
 * in @err; or -errno when the exchange itself failed (no answer in time, the stream closed, a
 * reply out of protocol), said in @err.
 */
int lr_ctl_hello(int fd, char *err, size_t errlen);
/* A receiver as @o says (its netns entered by the endpoint); @line gets its start line. */
int lr_ctl_prepare_rx(int fd, const struct lr_recv_opts *o, char *line, size_t linelen, char *err, size_t errlen);
/* Zero the receiver's counts, between two windows. */
int lr_ctl_reset(int fd, char *err, size_t errlen);
/*
 * Wait up to @timeout_ns for every flow's end-of-test marker, then the result so far into @r;
 * @complete says whether the markers all came.
 */
int lr_ctl_wait(int fd, uint64_t timeout_ns, bool *complete, struct lr_rx_result *r, char *err, size_t errlen);
/* The endpoint ends its receiver (the capture renamed into place) and says bye. */
int lr_ctl_quit(int fd, char *err, size_t errlen);

/* The prepare_rx request for @o, and back: 0, or -EINVAL with the key and why in @err. */
struct json_object *lr_ctl_prepare_rx_msg(const struct lr_recv_opts *o);
int lr_ctl_prepare_rx_parse(struct json_object *msg, struct lr_recv_opts *o, char *err, size_t errlen);

/*
 * Endpoint side: serves the requests that arrive on @fd until quit or the end of the stream,
 * then ends what it prepared. Returns an exit code: 0, or why the receiver could not start.
 */
int lr_ctl_serve(int fd);

#endif
