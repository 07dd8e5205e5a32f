/* SPDX-License-Identifier: MIT */
/* linerate: subcommand dispatch over the command table. */
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "util/log.h"
#include "util/version.h"

static void usage(FILE *out)
{
	const struct lr_cli *const *c;

	fprintf(out, "Usage: linerate COMMAND [options]\n\n"
		     "Raw UDP packet-rate tests for container network paths.\n\n"
		     "Commands:\n");
	for (c = lr_commands; *c; c++)
		fprintf(out, "  %-6s %s\n", (*c)->cmd, (*c)->summary);
	fprintf(out, "  help   this text; 'linerate COMMAND --help' for a command's options\n"
		     "  --version  the release and the git revision this binary was built from\n"
		     "The manual: man linerate.\n");
}

int main(int argc, char **argv)
{
	const struct lr_cli *const *c;
	char name[128];

	/* the core only logs through a sink: the commands' is stderr */
	lr_log_set_sink(lr_log_stderr, NULL);
	if (argc < 2) {
		usage(stderr);
		return LR_EXIT_USAGE;
	}
	for (c = lr_commands; *c; c++)
		if (!strcmp(argv[1], (*c)->cmd))
			return lr_cli_main(*c, argc - 1, argv + 1);
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
