/* SPDX-License-Identifier: MIT */
/* The agent's policy for a request: NULL when it may be served, else the error to answer with. */
#ifndef LINERATE_CTL_POLICY_H
#define LINERATE_CTL_POLICY_H

#include <json-c/json.h>
#include "ctl/ctl.h"
#include "rx/spec.h"

/* @ifname, in the namespace entered: the --allow patterns, and a physical NIC only with --allow-physical. */
struct json_object *lr_ctl_check_iface(const struct lr_ctl_serve_opts *so, const char *ifname);
/* A request's namespace, before anything opens it: its spelling must match one of --allow-netns. */
struct json_object *lr_ctl_check_netns(const struct lr_ctl_serve_opts *so, const char *netns);
/* A receiver's capture: a bare new name in the agent's --capture-dir (@rx is pointed there). */
struct json_object *lr_ctl_check_capture(const struct lr_ctl_serve_opts *so, struct lr_rx_spec *rx);

#endif
