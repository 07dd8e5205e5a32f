/* SPDX-License-Identifier: MIT */
/* linerate: subcommand dispatch. */
#include <stdio.h>
#include <string.h>
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "sys/caps.h"
#include "sys/container.h"
#include "util/log.h"
#include "util/version.h"

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
		"  help   this text; 'linerate COMMAND --help' for a command's options\n"
		"  --version  the release and the git revision this binary was built from\n");
}

/* Each command: parse (0, 1 for help shown, -EINVAL with one line in @err) then run (an exit code). */
#define CMD(name, type, parse, body)                                                                  \
	static int cmd_##name(int argc, char **argv)                                                  \
	{                                                                                             \
		char err[512];                                                                        \
		type o;                                                                               \
		int ret = parse(argc, argv, &o, stdout, err, sizeof(err));                            \
                                                                                                      \
		if (ret == 1)                                                                         \
			return LR_EXIT_OK;                                                            \
		if (ret) {                                                                            \
			lr_err_line("linerate " #name ": ", err);                                     \
			return LR_EXIT_USAGE;                                                         \
		}                                                                                     \
		return body(&o);                                                                      \
	}

CMD(send, struct lr_send_opts, lr_cli_parse_send, lr_cmd_send)
CMD(recv, struct lr_recv_opts, lr_cli_parse_recv, lr_cmd_recv)
CMD(run, struct lr_run_opts, lr_cli_parse_run, lr_cmd_run)
CMD(probe, struct lr_probe_opts, lr_cli_parse_probe, lr_cmd_probe)
CMD(veth, struct lr_veth_opts, lr_cli_parse_veth, lr_cmd_veth)

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "send", cmd_send }, { "recv", cmd_recv }, { "run", cmd_run }, { "probe", cmd_probe }, { "veth", cmd_veth },
};

int main(int argc, char **argv)
{
	char name[128];
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return LR_EXIT_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return LR_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("linerate %s (git %s)\n", lr_release(), lr_revision());
		return LR_EXIT_OK;
	}
	lr_escape(argv[1], name, sizeof(name));
	fprintf(stderr, "linerate: unknown command '%s' (try 'linerate help')\n", name);
	return LR_EXIT_USAGE;
}
