/* SPDX-License-Identifier: MIT */
/* `linerate veth`: the host side of a container's veth; its options. */
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
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "sys/container.h"
#include "sys/netdev.h"
#include "util/log.h"
#include "util/report.h"

/* Where each option lands in struct lr_veth_opts. */
#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_veth_opts, f), __VA_ARGS__ }

static const struct lr_bind veth_binds[] = {
	BIND(LR_O_VETH_NETNS, netns),
	BIND(LR_O_VETH_JSON, json),
	BIND(LR_O_VETH_VERBOSE, verbose),
};

static const struct lr_bind veth_target = BIND(LR_O_VETH_TARGET, target);

static int veth_check(void *p, char *err, size_t errlen)
{
	const struct lr_veth_opts *o = p;
	struct lr_container_spec spec;

	/* Checked here so that a bad spec is a usage error before anything runs. */
	return lr_container_spec_parse(o->target, true, &spec, err, errlen);
}

static const struct lr_optset veth_optset = {
	LR_OPTSET(veth_binds, struct lr_veth_opts),
	.check = veth_check,
};

LR_CLI_ENTRY(veth, struct lr_veth_opts, lr_cmd_veth)

const struct lr_cli lr_veth_cli = {
	.cmd = "veth",
	.summary = "host-side name of a container's veth: send -i $(linerate veth container:NAME)",
	.usage = "container:NAME[:IFNAME] [options]",
	.about = "Prints the name of the host side of a container's veth: the peer of IFNAME (default eth0)\n"
		 "inside the container's network namespace, so that `linerate send -i $(linerate veth\n"
		 "container:web) ...` sends into the container. The container's PID comes from\n"
		 "$LINERATE_DOCKER, else docker, else podman on PATH (`container inspect`).\n"
		 "Exit 2 when the container is unknown or stopped, IFNAME is not a veth, or the peer\n"
		 "is in another namespace.",
	.opts = &veth_optset,
	.arg = &veth_target,
	.run = veth_run,
};

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
