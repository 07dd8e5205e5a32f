/* SPDX-License-Identifier: MIT */
/* Options and help of `linerate run`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"

enum { O_VERBOSE = 'v', O_QUIET = 'q', O_JSON = 'j', O_CHECK = 256, O_CSV };

static const struct lr_opt run_opts[] = {
	{ O_CHECK, "check", 0, NULL, "validate FILE only; touch no interface", NULL },
	{ O_JSON, "json", 'j', "FILE", "write every step (and every search trial) as JSON to FILE (- for stdout)", NULL },
	{ O_CSV, "csv", 0, "FILE", "write one CSV row per step to FILE (- for stdout)", NULL },
	{ O_QUIET, "quiet", 'q', NULL, "no progress lines, the table only", NULL },
	{ O_VERBOSE, "verbose", 'v', NULL, "more detail; twice for libbpf/libxdp debug", NULL },
};

static const struct lr_cli run_cli = {
	.cmd = "run",
	.usage = "FILE.ini [options]",
	.about = "Runs a whole test from an INI file: a receiver and senders on many queues, in their own\n"
		 "namespaces, a sweep of frame sizes and rates or an RFC 2544 zero-loss throughput search.\n"
		 "Every key is listed, with its default, in configs/reference.ini.",
	.opts = run_opts,
	.nopts = sizeof(run_opts) / sizeof(run_opts[0]),
	.arg_name = "FILE",
};

static int run_set(void *ctx, int id, const char *arg, char *err, size_t errlen)
{
	struct lr_run_opts *o = ctx;

	switch (id) {
	case LR_OPT_ARG:
		return lr_cli_str("FILE", arg, o->file, sizeof(o->file), err, errlen);
	case O_CHECK:
		o->check = true;
		return 0;
	case O_JSON:
		return lr_cli_str("--json", arg, o->json, sizeof(o->json), err, errlen);
	case O_CSV:
		return lr_cli_str("--csv", arg, o->csv, sizeof(o->csv), err, errlen);
	case O_QUIET:
		o->quiet = true;
		return 0;
	case O_VERBOSE:
		o->verbose++;
		return 0;
	}
	snprintf(err, errlen, "internal: option %d has no handler", id);
	return -EINVAL;
}

int lr_cli_parse_run(int argc, char **argv, struct lr_run_opts *o, FILE *help_out, char *err, size_t errlen)
{
	int ret;

	memset(o, 0, sizeof(*o));
	ret = lr_cli_parse(&run_cli, argc, argv, run_set, o, help_out, err, errlen);
	if (ret)
		return ret;
	if (!o->file[0]) {
		snprintf(err, errlen, "missing the test file (linerate run FILE.ini; see 'linerate run --help')");
		return -EINVAL;
	}
	return 0;
}
