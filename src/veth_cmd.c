/* SPDX-License-Identifier: MIT */
/* `linerate veth`: the host-side name of a container's veth, plain or as JSON. */
/*
 * JSON (--json FILE|-), stable keys:
 *
 *   command        "veth"
 *   container      NAME as given
 *   cli            path of the docker-compatible CLI that answered
 *   pid            the container's PID
 *   netns          "/proc/PID/ns/net"
 *   ifname         the interface inside the container ("eth0" unless the spec names one)
 *   ifindex        its ifindex inside the container
 *   peer_ifname    the host side, in this (or --netns) namespace
 *   peer_ifindex   its ifindex there
 *
 * Exit 0 with the name (one line) or the JSON; 2 for a bad spec, an unknown or stopped
 * container, no CLI, a missing interface, one that is not a veth, or a peer elsewhere.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "linerate/cmd.h"
#include "linerate/container.h"
#include "linerate/log.h"
#include "linerate/netdev.h"
#include "linerate/report.h"

static int write_json(const struct lr_veth_opts *o, const struct lr_container_veth *v)
{
	struct json_object *root = lr_json_doc("veth");
	char err[LR_PATH_MAX + 128];
	int ret;

	json_object_object_add(root, "container", json_object_new_string(v->ctr.name));
	json_object_object_add(root, "cli", json_object_new_string(v->ctr.cli));
	json_object_object_add(root, "pid", json_object_new_int(v->ctr.pid));
	json_object_object_add(root, "netns", json_object_new_string(v->ctr.netns));
	json_object_object_add(root, "ifname", json_object_new_string(v->ifname));
	json_object_object_add(root, "ifindex", json_object_new_int(v->ifindex));
	json_object_object_add(root, "peer_ifname", json_object_new_string(v->peer_ifname));
	json_object_object_add(root, "peer_ifindex", json_object_new_int(v->peer_ifindex));
	ret = lr_json_write(root, o->json, err, sizeof(err));
	json_object_put(root);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "veth", "%s", err);
	return LR_EXIT_OK;
}

int lr_cmd_veth(const struct lr_veth_opts *o)
{
	struct lr_container_spec spec;
	struct lr_container_veth v;
	char err[LR_PATH_MAX + 256];

	lr_log_set_level(o->verbose);
	if (lr_container_spec_parse(o->target, true, &spec, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "veth", "%s", err);
	/* The peer is looked for in the namespace we are in, so enter --netns first. */
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "veth", "%s", err);
	if (o->json[0] && lr_json_check_path(o->json, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "veth", "%s", err);
	if (lr_container_veth_find(&spec, &v, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "veth", "%s", err);
	/* With JSON on stdout the bare name would corrupt it; with JSON in a file both are wanted. */
	if (strcmp(o->json, "-")) {
		printf("%s\n", v.peer_ifname);
		if (fflush(stdout))
			return lr_fail(LR_EXIT_RUNTIME, "veth", "stdout: %s", strerror(errno));
	}
	return o->json[0] ? write_json(o, &v) : LR_EXIT_OK;
}
