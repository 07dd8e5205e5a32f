/* SPDX-License-Identifier: MIT */
/* Options and help of `linerate probe`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "linerate/caps.h"
#include "linerate/cli.h"

enum {
	O_IFACE = 'i', O_NETNS = 'n', O_JSON = 'j', O_VERBOSE = 'v',
};

static const struct lr_opt probe_opts[] = {
	{ O_IFACE, "interface", 'i', "IFACE", "interface to probe", NULL },
	{ O_NETNS, "netns", 'n', "NS", "run in network namespace NS (name, pid:PID, container:NAME or path)", NULL },
	{ O_JSON, "json", 'j', "FILE", "write the findings as JSON to FILE (- for stdout, instead of the table)", NULL },
	{ O_VERBOSE, "verbose", 'v', NULL, "also per-queue driver counters; twice for libbpf/libxdp debug", NULL },
};

static const struct lr_cli probe_cli = {
	.cmd = "probe",
	.usage = "-i IFACE [options]",
	.about = "Reports what the kernel and IFACE offer linerate: AF_XDP sockets, zero-copy and copy mode,\n"
		 "need_wakeup, native and generic XDP, AF_PACKET, and the interface's driver, MTU and queues.\n"
		 "The AF_XDP modes are tried for real: a TX-only socket is bound to queue 0 for a moment\n"
		 "(zero-copy may make a NIC driver reconfigure that queue). No XDP program is attached.",
	.opts = probe_opts,
	.nopts = sizeof(probe_opts) / sizeof(probe_opts[0]),
};

static int probe_set(void *ctx, int id, const char *arg, char *err, size_t errlen)
{
	struct lr_probe_opts *o = ctx;

	switch (id) {
	case O_IFACE:
		return lr_cli_str("--interface", arg, o->ifname, sizeof(o->ifname), err, errlen);
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

int lr_cli_parse_probe(int argc, char **argv, struct lr_probe_opts *o, FILE *help_out, char *err, size_t errlen)
{
	int ret;

	memset(o, 0, sizeof(*o));
	ret = lr_cli_parse(&probe_cli, argc, argv, probe_set, o, help_out, err, errlen);
	if (ret)
		return ret;
	if (!o->ifname[0]) {
		snprintf(err, errlen, "missing -i/--interface (see 'linerate probe --help')");
		return -EINVAL;
	}
	return 0;
}
