/* SPDX-License-Identifier: MIT */
/* Commands: each a set of options of the one table (opt/optset.h), driven through getopt_long and --help. */
#ifndef LINERATE_CLI_H
#define LINERATE_CLI_H

#include <stddef.h>
#include <stdio.h>
#include "opt/optset.h"

struct lr_cli {
	const char *cmd;	/* "send" */
	const char *summary;	/* one line, for 'linerate help' and the man page */
	const char *usage;	/* "-i IFACE --dst-ip IP [options]" */
	const char *about;	/* paragraph under the usage line */
	const struct lr_optset *opts;	/* the options it takes, in the order --help lists them */
	const struct lr_bind *arg;	/* its one positional argument, or NULL */
	int (*check)(void *o, char *err, size_t errlen);	/* the command's own, after opts->check; may be NULL */
	int (*run)(const void *o);	/* the command: an exit code */
};

/*
 * What each command file defines the same way, above its struct lr_cli
 * lr_NAME_cli: the run hook NAME_run() that calls @body with the options,
 * and lr_cli_parse_NAME() typed for its options struct @type.
 */
#define LR_CLI_ENTRY(name, type, body)                                                                   \
	static int name##_run(const void *o)                                                             \
	{                                                                                                \
		return body(o);                                                                          \
	}                                                                                                \
	int lr_cli_parse_##name(int argc, char **argv, type *o, FILE *help_out, char *err, size_t errlen) \
	{                                                                                                \
		return lr_cli_parse(&lr_##name##_cli, argc, argv, o, help_out, err, errlen);             \
	}

/* The commands, in the order 'linerate help' and the man page list them; NULL-terminated. */
extern const struct lr_cli *const lr_commands[];

/*
 * Defaults, then argv (argv[0] is the command), then opts->check and cli->check. 0, 1 when
 * --help was printed to @help_out, or -EINVAL with one line in @err.
 */
int lr_cli_parse(const struct lr_cli *cli, int argc, char **argv, void *o, FILE *help_out, char *err,
		 size_t errlen);
void lr_cli_help(const struct lr_cli *cli, FILE *out);
/* Parses and runs a command: its exit code (2 with one line on stderr for a usage error). */
int lr_cli_main(const struct lr_cli *cli, int argc, char **argv);

#endif
