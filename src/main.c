/* SPDX-License-Identifier: MIT */
/* linerate: subcommand dispatch. */
#include <stdio.h>
#include <string.h>
#include "linerate/caps.h"
#include "linerate/cmd.h"
#include "linerate/container.h"
#include "linerate/opts.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: linerate COMMAND [options]\n\n"
		"Raw UDP packet-rate tests for container network paths.\n\n"
		"Commands:\n"
		"  send   blast test frames through AF_XDP from pinned per-queue workers\n"
		"  recv   count test frames with XDP: rate, loss, reordering, latency\n"
		"  run    a whole test from an INI file: sweeps, RFC 2544 throughput search\n"
		"  probe  what the kernel and an interface offer: AF_XDP modes, XDP, AF_PACKET\n"
		"  veth   host-side name of a container's veth: send -i $(linerate veth container:NAME)\n"
		"  help   this text; 'linerate COMMAND --help' for a command's options\n");
}

int main(int argc, char **argv)
{
	char err[512];
	int ret;

	if (argc < 2) {
		usage(stderr);
		return LR_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "run")) {
		struct lr_run_opts o;

		ret = lr_cli_parse_run(argc - 1, argv + 1, &o, stdout, err, sizeof(err));
		if (ret == 1)
			return LR_EXIT_OK;
		if (ret) {
			fprintf(stderr, "linerate run: %s\n", err);
			return LR_EXIT_USAGE;
		}
		return lr_cmd_run(&o);
	}
	if (!strcmp(argv[1], "send")) {
		struct lr_send_opts o;

		ret = lr_cli_parse_send(argc - 1, argv + 1, &o, stdout, err, sizeof(err));
		if (ret == 1)
			return LR_EXIT_OK;
		if (ret) {
			fprintf(stderr, "linerate send: %s\n", err);
			return LR_EXIT_USAGE;
		}
		return lr_cmd_send(&o);
	}
	if (!strcmp(argv[1], "recv")) {
		struct lr_recv_opts o;

		ret = lr_cli_parse_recv(argc - 1, argv + 1, &o, stdout, err, sizeof(err));
		if (ret == 1)
			return LR_EXIT_OK;
		if (ret) {
			fprintf(stderr, "linerate recv: %s\n", err);
			return LR_EXIT_USAGE;
		}
		return lr_cmd_recv(&o);
	}
	if (!strcmp(argv[1], "probe")) {
		struct lr_probe_opts o;

		ret = lr_cli_parse_probe(argc - 1, argv + 1, &o, stdout, err, sizeof(err));
		if (ret == 1)
			return LR_EXIT_OK;
		if (ret) {
			fprintf(stderr, "linerate probe: %s\n", err);
			return LR_EXIT_USAGE;
		}
		return lr_cmd_probe(&o);
	}
	if (!strcmp(argv[1], "veth")) {
		struct lr_veth_opts o;

		ret = lr_cli_parse_veth(argc - 1, argv + 1, &o, stdout, err, sizeof(err));
		if (ret == 1)
			return LR_EXIT_OK;
		if (ret) {
			fprintf(stderr, "linerate veth: %s\n", err);
			return LR_EXIT_USAGE;
		}
		return lr_cmd_veth(&o);
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return LR_EXIT_OK;
	}
	fprintf(stderr, "linerate: unknown command '%s' (try 'linerate help')\n", argv[1]);
	return LR_EXIT_USAGE;
}
