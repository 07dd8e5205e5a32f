/* SPDX-License-Identifier: MIT */
/* Options and help of `linerate run`. */
#include <stdio.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"

/* Where each option lands in struct lr_run_opts. */
#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_run_opts, f), __VA_ARGS__ }

static const struct lr_bind run_binds[] = {
	BIND(LR_O_CHECK, check),
	BIND(LR_O_RUN_JSON, json),
	BIND(LR_O_CSV, csv),
	BIND(LR_O_RUN_QUIET, quiet),
	BIND(LR_O_VERBOSE, verbose),
};

static const struct lr_bind run_file = BIND(LR_O_RUN_FILE, file);

static const struct lr_optset run_optset = {
	LR_OPTSET(run_binds, struct lr_run_opts),
};

LR_CLI_ENTRY(run, struct lr_run_opts, lr_cmd_run)

const struct lr_cli lr_run_cli = {
	.cmd = "run",
	.summary = "a whole test from an INI file: sweeps, RFC 2544 throughput search",
	.usage = "FILE.ini [options]",
	.about = "Runs a whole test from an INI file: a receiver and senders on many queues, in their own\n"
		 "namespaces, a sweep of frame sizes and rates or an RFC 2544 zero-loss throughput search.\n"
		 "Every key is listed in linerate(1), and with its default in configs/reference.ini.",
	.opts = &run_optset,
	.arg = &run_file,
	.run = run_run,
};

