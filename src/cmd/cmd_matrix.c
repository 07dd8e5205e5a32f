/* SPDX-License-Identifier: MIT */
/* `linerate matrix`: its options and how they go together; the run is src/run/matrix_run.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "ctl/net.h"
#include "run/matrix.h"

/* Where each option lands in struct lr_matrix_opts; AT(): a second field. */
#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_matrix_opts, f), __VA_ARGS__ }
#define AT(f)			LR_AT(struct lr_matrix_opts, f)

static const struct lr_bind matrix_binds[] = {
	{ LR_O_MATRIX_AGENTS, LR_ELEMS(struct lr_matrix_opts, agents), AT(nagents) },
	BIND(LR_O_MATRIX_PAIRS, pairs),
	{ LR_O_MATRIX_SIZES, LR_ELEMS(struct lr_matrix_opts, sizes), AT(nsizes), AT(sizes_set) },
	BIND(LR_O_RATE, rate),
	BIND(LR_O_MATRIX_DURATION, duration_ns, 0, AT(duration_set)),
	BIND(LR_O_MATRIX_COUNT, count),
	BIND(LR_O_FLOWS, flows),
	BIND(LR_O_DST_PORT, dst_port),
	BIND(LR_O_TX_ENGINE, engine),
	BIND(LR_O_MATRIX_FAMILY, family),
	BIND(LR_O_MATRIX_TOKEN_FILE, token_file),
	BIND(LR_O_MATRIX_MAX_LOSS, max_loss, 0, AT(max_loss_set)),
	BIND(LR_O_MATRIX_MIN_PPS, min_pps, 0, AT(min_pps_set)),
	BIND(LR_O_MATRIX_JSON, json),
	BIND(LR_O_MATRIX_CSV, csv),
	BIND(LR_O_RUN_QUIET, quiet),
	BIND(LR_O_VERBOSE, verbose),
};

/* What no single option can say: each agent entry in full, one standard output, --count alone. */
static int matrix_check(void *p, char *err, size_t errlen)
{
	struct lr_matrix_opts *o = p;
	struct lr_ctl_addr a;
	unsigned int i;
	char why[512];

	for (i = 0; i < o->nagents; i++)
		if (lr_ctl_addr_parse(o->agents[i], false, &a, why, sizeof(why))) {
			snprintf(err, errlen, "--agents: %s", why);
			return -EINVAL;
		}
	if (!strcmp(o->json, "-") && !strcmp(o->csv, "-")) {
		snprintf(err, errlen, "--json - and --csv -: only one of them can be standard output");
		return -EINVAL;
	}
	/* a count alone is the bound: no duration cuts it short unless one is given */
	if (o->count && !o->duration_set)
		o->duration_ns = 0;
	return 0;
}

static const struct lr_optset matrix_optset = {
	LR_OPTSET(matrix_binds, struct lr_matrix_opts),
	.check = matrix_check,
};

LR_CLI_ENTRY(matrix, struct lr_matrix_opts, lr_cmd_matrix)

const struct lr_cli lr_matrix_cli = {
	.cmd = "matrix",
	.summary = "every pair of a set of agents, both ways, at every size: a node-pair matrix",
	.usage = "--agents HOST[:PORT][,...] [--pairs FILE] [options]",
	.about = "Measures the path between every pair of agents (linerate agent, one per node), in both\n"
		 "directions and at every frame size, one cell at a time: the sending agent sends to the\n"
		 "receiving agent's address (the one it was reached at) from the interface that routes\n"
		 "there, and the receiving agent counts on the interface that holds that address. A name\n"
		 "in --agents stands for all its addresses (a Kubernetes headless Service: every agent\n"
		 "pod). Prints a table, writes JSON and CSV; a cell that cannot run is reported and the\n"
		 "others go on (exit 1), a cell that misses --max-loss or --min-pps fails (exit 3).",
	.opts = &matrix_optset,
	.run = matrix_run,
};
