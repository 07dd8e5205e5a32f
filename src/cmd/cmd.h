/* SPDX-License-Identifier: MIT */
/* Subcommand bodies: each returns the process exit code (0 ok, 1 runtime, 2 usage/env, 3 threshold). */
#ifndef LINERATE_CMD_H
#define LINERATE_CMD_H

#include <stdio.h>
#include "cmd/cli.h"
#include "cmd/opts.h"
#include "util/log.h"

struct lr_run_opts {
	char file[LR_PATH_MAX];
	char json[LR_PATH_MAX];
	char csv[LR_PATH_MAX];
	bool check;
	bool quiet;
	int verbose;
};

/* Each command's options and entry point (src/cmd/cmd_<command>.c). */
extern const struct lr_cli lr_send_cli, lr_recv_cli, lr_run_cli, lr_probe_cli, lr_veth_cli, lr_agent_cli,
	lr_reflect_cli, lr_matrix_cli;

int lr_cli_parse_run(int argc, char **argv, struct lr_run_opts *o, FILE *help_out, char *err, size_t errlen);
int lr_cli_parse_matrix(int argc, char **argv, struct lr_matrix_opts *o, FILE *help_out, char *err, size_t errlen);

int lr_cmd_run(const struct lr_run_opts *o);
int lr_cmd_send(const struct lr_send_opts *o);
int lr_cmd_recv(const struct lr_recv_opts *o);
int lr_cmd_probe(const struct lr_probe_opts *o);
int lr_cmd_veth(const struct lr_veth_opts *o);
int lr_cmd_agent(const struct lr_agent_opts *o);
int lr_cmd_reflect(const struct lr_reflect_opts *o);
int lr_cmd_matrix(const struct lr_matrix_opts *o);	/* src/run/matrix_run.c */

#endif
