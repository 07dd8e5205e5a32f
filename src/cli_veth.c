/* SPDX-License-Identifier: MIT */
/* Options and help of `linerate veth`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "linerate/cli.h"
#include "linerate/container.h"

enum {
	O_NETNS = 'n', O_JSON = 'j', O_VERBOSE = 'v',
};

static const struct lr_opt veth_opts[] = {
	{ O_NETNS, "netns", 'n', "NS",
	  "look for the peer in network namespace NS (name, pid:PID, container:NAME or path)", "this one" },
	{ O_JSON, "json", 'j', "FILE", "write container, PID, namespace and both ends as JSON to FILE (- for stdout, "
	  "instead of the name)", NULL },
	{ O_VERBOSE, "verbose", 'v', NULL, "say which CLI was asked and what it answered", NULL },
};

static const struct lr_cli veth_cli = {
	.cmd = "veth",
	.usage = "container:NAME[:IFNAME] [options]",
	.about = "Prints the name of the host side of a container's veth: the peer of IFNAME (default eth0)\n"
		 "inside the container's network namespace, so that `linerate send -i $(linerate veth\n"
		 "container:web) ...` sends into the container. The container's PID comes from\n"
		 "$LINERATE_DOCKER, else docker, else podman on PATH (`container inspect`).\n"
		 "Exit 2 when the container is unknown or stopped, IFNAME is not a veth, or the peer\n"
		 "is in another namespace.",
	.opts = veth_opts,
	.nopts = sizeof(veth_opts) / sizeof(veth_opts[0]),
	.arg_name = "container:NAME[:IFNAME]",
};

static int veth_set(void *ctx, int id, const char *arg, char *err, size_t errlen)
{
	struct lr_veth_opts *o = ctx;

	switch (id) {
	case LR_OPT_ARG:
		return lr_cli_str("container:NAME", arg, o->target, sizeof(o->target), err, errlen);
	case O_NETNS:
		return lr_cli_str("--netns", arg, o->netns, sizeof(o->netns), err, errlen);
	case O_JSON:
		return lr_cli_str("--json", arg, o->json, sizeof(o->json), err, errlen);
	case O_VERBOSE:
		o->verbose++;
		return 0;
	}
	snprintf(err, errlen, "internal: option %d has no handler", id);
	return -EINVAL;
}

int lr_cli_parse_veth(int argc, char **argv, struct lr_veth_opts *o, FILE *help_out, char *err, size_t errlen)
{
	struct lr_container_spec spec;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = lr_cli_parse(&veth_cli, argc, argv, veth_set, o, help_out, err, errlen);
	if (ret)
		return ret;
	if (!o->target[0]) {
		snprintf(err, errlen, "missing container:NAME[:IFNAME] (see 'linerate veth --help')");
		return -EINVAL;
	}
	/* Checked here so that a bad spec is a usage error before anything runs. */
	return lr_container_spec_parse(o->target, true, &spec, err, errlen);
}
