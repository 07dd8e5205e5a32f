/* SPDX-License-Identifier: MIT */
/* Subcommand bodies: each returns the process exit code (0 ok, 1 runtime, 2 usage/env, 3 threshold). */
#ifndef LINERATE_CMD_H
#define LINERATE_CMD_H

#include <stdio.h>
#include "cmd/cli.h"
#include "run/matrix.h"
#include "run/run.h"
#include "opt/opts.h"
#include "util/log.h"

/* Each command's options and entry point (src/cmd/cmd_<command>.c). */
extern const struct lr_cli lr_send_cli, lr_recv_cli, lr_run_cli, lr_probe_cli, lr_veth_cli, lr_agent_cli,
	lr_reflect_cli, lr_matrix_cli;

/*
 * Parse argv (argv[0] is the subcommand). Returns 0, 1 when help was printed
 * to @help_out, or -EINVAL with a one-line message in @err.
 */
int lr_cli_parse_send(int argc, char **argv, struct lr_send_opts *o, FILE *help_out, char *err, size_t errlen);
int lr_cli_parse_recv(int argc, char **argv, struct lr_recv_opts *o, FILE *help_out, char *err, size_t errlen);
int lr_cli_parse_probe(int argc, char **argv, struct lr_probe_opts *o, FILE *help_out, char *err, size_t errlen);
int lr_cli_parse_veth(int argc, char **argv, struct lr_veth_opts *o, FILE *help_out, char *err, size_t errlen);

int lr_cli_parse_run(int argc, char **argv, struct lr_run_opts *o, FILE *help_out, char *err, size_t errlen);
int lr_cli_parse_matrix(int argc, char **argv, struct lr_matrix_opts *o, FILE *help_out, char *err, size_t errlen);

int lr_cmd_send(const struct lr_send_opts *o);
int lr_cmd_recv(const struct lr_recv_opts *o);
int lr_cmd_probe(const struct lr_probe_opts *o);
int lr_cmd_veth(const struct lr_veth_opts *o);
int lr_cmd_agent(const struct lr_agent_opts *o);
int lr_cmd_reflect(const struct lr_reflect_opts *o);

#endif
