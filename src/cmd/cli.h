/* SPDX-License-Identifier: MIT */
/* Table-driven option parsing: one table per subcommand gives getopt_long and the help text. */
#ifndef LINERATE_CLI_H
#define LINERATE_CLI_H

#include <stddef.h>
#include <stdio.h>

struct lr_opt {
	int id;	/* passed to the setter; unique in the table */
	const char *name;	/* long name, without "--" */
	int short_name;	/* 0 for none */
	const char *metavar;	/* NULL: a flag without argument */
	const char *help;
	const char *def;	/* shown as the default, or NULL */
};

/* Applies one option; 0 or -EINVAL with a message in @err. */
typedef int (*lr_opt_setter)(void *ctx, int id, const char *arg, char *err, size_t errlen);

struct lr_cli {
	const char *cmd;	/* "send" */
	const char *usage;	/* "-i IFACE --dst-ip IP [options]" */
	const char *about;	/* paragraph under the usage line */
	const struct lr_opt *opts;
	unsigned int nopts;
	const char *arg_name;	/* one positional argument ("FILE"), passed to the setter as LR_OPT_ARG; NULL: none */
};

#define LR_OPT_ARG (-1)

/* 0, 1 when --help was printed to @help_out, or -EINVAL with a message. */
int lr_cli_parse(const struct lr_cli *cli, int argc, char **argv, lr_opt_setter set, void *ctx,
		 FILE *help_out, char *err, size_t errlen);
void lr_cli_help(const struct lr_cli *cli, FILE *out);

/* Copies a non-empty string option that fits @len, or says which option is wrong. */
int lr_cli_str(const char *opt, const char *arg, char *dst, size_t len, char *err, size_t errlen);
/*
 * One of a fixed set of words: @names is NULL-terminated, *@out gets the
 * index. The error lists the words the option takes.
 */
int lr_cli_choice(const char *opt, const char *arg, const char *const *names, int *out, char *err, size_t errlen);
/* Shared value parsers that word their errors after the option. */
int lr_cli_mac(const char *opt, const char *arg, unsigned char mac[6], char *err, size_t errlen);

#endif
