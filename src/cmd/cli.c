/* SPDX-License-Identifier: MIT */
/* The command table, and the getopt_long driver and help printer over each command's options. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "util/log.h"

#define HELP_ID	(-1000)
#define OPT_VAL	256	/* getopt_long's value for binds[i]: OPT_VAL + i, above every short option */
#define MAX_OPTS	64

const struct lr_cli *const lr_commands[] = {
	&lr_send_cli, &lr_recv_cli, &lr_reflect_cli, &lr_run_cli, &lr_matrix_cli, &lr_probe_cli, &lr_veth_cli,
	&lr_agent_cli, NULL,
};

void lr_cli_help(const struct lr_cli *cli, FILE *out)
{
	char desc[1024];
	unsigned int i;

	fprintf(out, "Usage: linerate %s %s\n\n", cli->cmd, cli->usage);
	if (cli->about)
		fprintf(out, "%s\n\n", cli->about);
	fprintf(out, "Options:\n");
	for (i = 0; i < cli->opts->nbinds; i++) {
		const struct lr_opt *o = &lr_opts[cli->opts->binds[i].id];
		char left[64];

		snprintf(left, sizeof(left), "%c%c%s--%s%s%s", o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->name,
			 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		lr_opt_describe(o, desc, sizeof(desc));
		fprintf(out, "  %-28s %s\n", left, desc);
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}

static int find_bind(const struct lr_cli *cli, int c)
{
	unsigned int i;

	if (c >= OPT_VAL && (unsigned int)(c - OPT_VAL) < cli->opts->nbinds)
		return c - OPT_VAL;
	for (i = 0; i < cli->opts->nbinds; i++)
		if (lr_opts[cli->opts->binds[i].id].short_name == c)
			return (int)i;
	return -1;
}

/* The first required option the user left out, in words; 0 when none is. */
static int missing_required(const struct lr_cli *cli, const bool *seen, bool arg_seen, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < cli->opts->nbinds; i++) {
		const struct lr_opt *o = &lr_opts[cli->opts->binds[i].id];

		if (o->required && !seen[i]) {
			char brief[4] = "";

			/* -i/--interface, or --listen alone */
			if (o->short_name)
				snprintf(brief, sizeof(brief), "-%c/", o->short_name);
			snprintf(err, errlen, "missing %s--%s (see 'linerate %s --help')", brief, o->name, cli->cmd);
			return -EINVAL;
		}
	}
	if (cli->arg && lr_opts[cli->arg->id].required && !arg_seen) {
		snprintf(err, errlen, "missing %s (usage: linerate %s %s)", lr_opts[cli->arg->id].metavar, cli->cmd,
			 cli->usage);
		return -EINVAL;
	}
	return 0;
}

int lr_cli_parse(const struct lr_cli *cli, int argc, char **argv, void *o, FILE *help_out, char *err,
		 size_t errlen)
{
	struct option lopts[MAX_OPTS + 2];
	char sopts[2 * MAX_OPTS + 3];
	bool seen[MAX_OPTS] = { false }, arg_seen = false;
	unsigned int i, s = 0;
	int c, ret;

	if (cli->opts->nbinds > MAX_OPTS)
		return -E2BIG;
	lr_optset_defaults(cli->opts, o);
	sopts[s++] = ':';	/* report a missing argument as ':' */
	for (i = 0; i < cli->opts->nbinds; i++) {
		const struct lr_opt *opt = &lr_opts[cli->opts->binds[i].id];

		lopts[i] = (struct option){ opt->name, opt->metavar ? required_argument : no_argument, NULL,
					    OPT_VAL + (int)i };
		if (opt->short_name) {
			sopts[s++] = opt->short_name;
			if (opt->metavar)
				sopts[s++] = ':';
		}
	}
	lopts[i++] = (struct option){ "help", no_argument, NULL, HELP_ID };
	lopts[i] = (struct option){ 0 };
	sopts[s++] = 'h';
	sopts[s] = '\0';

	optind = 0;	/* full re-initialisation, so the parser can run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		const struct lr_bind *b;
		char name[64];
		int n;

		if (c == 'h' || c == HELP_ID) {
			lr_cli_help(cli, help_out ? help_out : stdout);
			return 1;
		}
		if (c == '?') {
			if (optopt)
				snprintf(err, errlen, "unknown option '-%c' (see 'linerate %s --help')", optopt,
					 cli->cmd);
			else
				snprintf(err, errlen, "unknown option '%s' (see 'linerate %s --help')",
					 argv[optind - 1], cli->cmd);
			return -EINVAL;
		}
		if (c == ':') {
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		}
		n = find_bind(cli, c);
		if (n < 0) {
			snprintf(err, errlen, "internal: option %d has no binding", c);
			return -EINVAL;
		}
		b = &cli->opts->binds[n];
		seen[n] = true;
		snprintf(name, sizeof(name), "--%s", lr_opts[b->id].name);
		ret = lr_opt_set(b, o, name, optarg, err, errlen);
		if (ret)
			return ret;
	}
	if (cli->arg && optind < argc) {
		ret = lr_opt_set(cli->arg, o, lr_opts[cli->arg->id].metavar, argv[optind++], err, errlen);
		if (ret)
			return ret;
		arg_seen = true;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see 'linerate %s --help')", argv[optind], cli->cmd);
		return -EINVAL;
	}
	ret = missing_required(cli, seen, arg_seen, err, errlen);
	if (ret)
		return ret;
	if (cli->opts->check && cli->opts->check(o, err, errlen))
		return -EINVAL;
	return cli->check ? cli->check(o, err, errlen) : 0;
}

int lr_cli_main(const struct lr_cli *cli, int argc, char **argv)
{
	char err[512];
	void *o;
	int ret;

	o = malloc(cli->opts->size);
	if (!o)
		return lr_fail(LR_EXIT_RUNTIME, cli->cmd, "out of memory");
	ret = lr_cli_parse(cli, argc, argv, o, stdout, err, sizeof(err));
	if (ret == 1)
		ret = LR_EXIT_OK;
	else if (ret)
		ret = lr_fail(LR_EXIT_USAGE, cli->cmd, "%s", err);
	else
		ret = cli->run(o);
	free(o);
	return ret;
}
