/* SPDX-License-Identifier: MIT */
/* Generic getopt_long driver and help printer over an option table. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"

#define HELP_ID (-1000)

void lr_cli_help(const struct lr_cli *cli, FILE *out)
{
	unsigned int i;

	fprintf(out, "Usage: linerate %s %s\n\n", cli->cmd, cli->usage);
	if (cli->about)
		fprintf(out, "%s\n\n", cli->about);
	fprintf(out, "Options:\n");
	for (i = 0; i < cli->nopts; i++) {
		const struct lr_opt *o = &cli->opts[i];
		char left[64];

		snprintf(left, sizeof(left), "%c%c%s--%s%s%s", o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->name,
			 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		fprintf(out, "  %-28s %s", left, o->help);
		if (o->def)
			fprintf(out, " (default: %s)", o->def);
		fputc('\n', out);
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}

int lr_cli_parse(const struct lr_cli *cli, int argc, char **argv, lr_opt_setter set, void *ctx,
		 FILE *help_out, char *err, size_t errlen)
{
	struct option lopts[64];
	char sopts[128];
	unsigned int i, n = 0, s = 0;
	int c, idx, ret = 0;

	if (cli->nopts + 2 > sizeof(lopts) / sizeof(lopts[0]))
		return -E2BIG;
	sopts[s++] = ':';	/* report a missing argument as ':' */
	for (i = 0; i < cli->nopts; i++) {
		const struct lr_opt *o = &cli->opts[i];

		lopts[n++] = (struct option){ o->name, o->metavar ? required_argument : no_argument, NULL, o->id };
		if (o->short_name) {
			sopts[s++] = (char)o->short_name;
			if (o->metavar)
				sopts[s++] = ':';
		}
	}
	lopts[n++] = (struct option){ "help", no_argument, NULL, HELP_ID };
	lopts[n] = (struct option){ 0 };
	sopts[s++] = 'h';
	sopts[s] = '\0';

	optind = 0;	/* full re-initialisation, so the parser can run more than once */
	opterr = 0;
	for (;;) {
		const struct lr_opt *o = NULL;

		idx = -1;
		c = getopt_long(argc, argv, sopts, lopts, &idx);
		if (c == -1)
			break;
		if (c == 'h' || c == HELP_ID) {
			lr_cli_help(cli, help_out ? help_out : stdout);
			return 1;
		}
		if (c == '?') {
			if (optopt)
				snprintf(err, errlen, "unknown option '-%c' (see 'linerate %s --help')", optopt, cli->cmd);
			else
				snprintf(err, errlen, "unknown option '%s' (see 'linerate %s --help')",
					 argv[optind - 1], cli->cmd);
			return -EINVAL;
		}
		if (c == ':') {
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		}
		for (i = 0; i < cli->nopts; i++)
			if (cli->opts[i].id == c || (cli->opts[i].short_name && cli->opts[i].short_name == c))
				o = &cli->opts[i];
		if (!o) {
			snprintf(err, errlen, "unhandled option");
			return -EINVAL;
		}
		ret = set(ctx, o->id, optarg, err, errlen);
		if (ret)
			return ret;
	}
	if (cli->arg_name && optind < argc) {
		ret = set(ctx, LR_OPT_ARG, argv[optind++], err, errlen);
		if (ret)
			return ret;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see 'linerate %s --help')", argv[optind], cli->cmd);
		return -EINVAL;
	}
	return 0;
}

int lr_cli_mac(const char *opt, const char *arg, unsigned char mac[6], char *err, size_t errlen)
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(arg, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6) {
		snprintf(err, errlen, "%s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", opt, arg);
		return -EINVAL;
	}
	for (i = 0; i < 6; i++)
		mac[i] = (unsigned char)b[i];
	if (mac[0] & 1) {
		snprintf(err, errlen, "%s: '%s' is a multicast/broadcast address; test frames need a unicast destination",
			 opt, arg);
		return -EINVAL;
	}
	return 0;
}

int lr_cli_str(const char *opt, const char *arg, char *dst, size_t len, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) >= len) {
		snprintf(err, errlen, "%s: '%s' is empty or too long (at most %zu characters)", opt, arg, len - 1);
		return -EINVAL;
	}
	memcpy(dst, arg, strlen(arg) + 1);
	return 0;
}

int lr_cli_choice(const char *opt, const char *arg, const char *const *names, int *out, char *err, size_t errlen)
{
	size_t off;
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	off = (size_t)snprintf(err, errlen, "%s: '%s' is not one of", opt, arg);
	for (i = 0; names[i] && off < errlen; i++)
		off += (size_t)snprintf(err + off, errlen - off, "%s %s", i ? "," : "", names[i]);
	return -EINVAL;
}
