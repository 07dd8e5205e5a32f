/* SPDX-License-Identifier: MIT */
/* Commands: each a list of options of the one table (cmd/opt.h), driven through getopt_long and --help. */
#ifndef LINERATE_CLI_H
#define LINERATE_CLI_H

#include <stddef.h>
#include <stdio.h>
#include "cmd/opt.h"

struct lr_cli {
	const char *cmd;	/* "send" */
	const char *summary;	/* one line, for 'linerate help' and the man page */
	const char *usage;	/* "-i IFACE --dst-ip IP [options]" */
	const char *about;	/* paragraph under the usage line */
	const struct lr_bind *binds;	/* the options it takes, in the order --help lists them */
	unsigned int nbinds;
	const struct lr_bind *arg;	/* its one positional argument, or NULL */
	size_t size;	/* of its options struct */
	void (*init)(void *o);	/* defaults the table cannot give (after the table's); may be NULL */
	int (*check)(void *o, char *err, size_t errlen);	/* what no single option can say; may be NULL */
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

/* In a struct lr_cli initializer: the command's table of bindings. */
#define LR_BINDS(table)	.binds = (table), .nbinds = sizeof(table) / sizeof((table)[0])

/* The commands, in the order 'linerate help' and the man page list them; NULL-terminated. */
extern const struct lr_cli *const lr_commands[];

/* Zeroes @o, then applies the table's defaults and cli->init. */
void lr_cli_defaults(const struct lr_cli *cli, void *o);
/*
 * Defaults, then argv (argv[0] is the command), then cli->check. 0, 1 when
 * --help was printed to @help_out, or -EINVAL with one line in @err.
 */
int lr_cli_parse(const struct lr_cli *cli, int argc, char **argv, void *o, FILE *help_out, char *err,
		 size_t errlen);
void lr_cli_help(const struct lr_cli *cli, FILE *out);
/* Parses and runs a command: its exit code (2 with one line on stderr for a usage error). */
int lr_cli_main(const struct lr_cli *cli, int argc, char **argv);

#endif
