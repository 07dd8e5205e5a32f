/* SPDX-License-Identifier: MIT */
/* `linerate agent`: its options, the token rule, then the listening loop of ctl/agent.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "opt/opts.h"
#include "ctl/agent.h"
#include "ctl/auth.h"
#include "ctl/net.h"
#include "sys/netdev.h"
#include "util/log.h"
#include "util/outfile.h"

/* Where each option lands in struct lr_agent_opts; AT(): a second field. */
#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_agent_opts, f), __VA_ARGS__ }
#define AT(f)			LR_AT(struct lr_agent_opts, f)

static const struct lr_bind agent_binds[] = {
	BIND(LR_O_LISTEN, listen),
	BIND(LR_O_AGENT_TOKEN_FILE, token_file),
	BIND(LR_O_INSECURE, insecure),
	BIND(LR_O_AGENT_NETNS, netns),
	{ LR_O_ALLOW, LR_ELEMS(struct lr_agent_opts, allow), AT(nallow) },
	BIND(LR_O_AGENT_PHYSICAL, allow_physical),
	BIND(LR_O_AGENT_READY_FILE, ready_file),
	BIND(LR_O_METRICS, metrics),
	BIND(LR_O_CAPTURE_DIR, capture_dir),
	{ LR_O_ALLOW_NETNS, LR_ELEMS(struct lr_agent_opts, allow_netns), AT(nallow_netns) },
	BIND(LR_O_VERBOSE, verbose),
};

/* --metrics ADDR:PORT: an IPv4 or [IPv6] address, and a port always (no default to collide with --listen's). */
static int metrics_addr(const char *s, const struct lr_ctl_addr *listen, struct lr_ctl_addr *a, char *err,
			size_t errlen)
{
	const char *colon = strrchr(s, ':');
	char why[256];

	if (lr_ctl_addr_parse(s, true, a, why, sizeof(why))) {
		snprintf(err, errlen, "--metrics: %s", why);
		return -EINVAL;
	}
	/* the port given: after "]" for IPv6, after the only colon for IPv4 */
	if (!colon || (s[0] == '[' && colon[-1] != ']') || (s[0] != '[' && strchr(s, ':') != colon)) {
		snprintf(err, errlen, "--metrics: '%s' has no port: give ADDR:PORT or [IPV6]:PORT", s);
		return -EINVAL;
	}
	if (a->port == listen->port && !strcmp(a->host, listen->host)) {
		snprintf(err, errlen, "--metrics: '%s' is --listen's own address and port: give another port", s);
		return -EINVAL;
	}
	return 0;
}

/* The addresses, and the rule that every agent has a token unless --insecure says otherwise. */
static int agent_check(void *p, char *err, size_t errlen)
{
	struct lr_agent_opts *o = p;
	struct lr_ctl_addr a, m;
	char why[256];

	if (lr_ctl_addr_parse(o->listen, true, &a, why, sizeof(why))) {
		snprintf(err, errlen, "--listen: %s", why);
		return -EINVAL;
	}
	if (o->metrics[0] && metrics_addr(o->metrics, &a, &m, err, errlen))
		return -EINVAL;
	/* loopback too: any local user would otherwise drive a root agent (attach XDP, enter namespaces) */
	if (!o->token_file[0] && !o->insecure) {
		snprintf(err, errlen, "no --token-file: give --token-file FILE, which controllers must prove they hold "
			 "(loopback included: any local user reaches %s), or --insecure to let anyone who reaches it "
			 "run tests", a.host);
		return -EINVAL;
	}
	if (o->token_file[0] && o->insecure) {
		snprintf(err, errlen, "--insecure and --token-file: give one (--insecure means no token)");
		return -EINVAL;
	}
	return 0;
}

/* Everything after the options' own checks: what the host must allow, then the listening loop. */
static int agent_main(struct lr_agent_opts *o, struct lr_auth_key *key, struct lr_ctl_addr *a, struct lr_ctl_addr *m,
		      char *err, size_t errlen)
{
	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	if (lr_auth_init())
		return lr_fail(LR_EXIT_RUNTIME, "agent", "libsodium cannot start (no source of randomness?)");
	if (lr_ctl_addr_parse(o->listen, true, a, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "agent", "--listen: %s", err);
	if (o->metrics[0] && metrics_addr(o->metrics, a, m, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "agent", "%s", err);
	if (o->ready_file[0] && lr_out_check("--ready-file", o->ready_file, false, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "agent", "%s", err);
	if (o->token_file[0] && lr_auth_load(o->token_file, key, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "agent", "--token-file: %s", err);
	/* checked once, then only used through its handle: a path swapped later changes nothing */
	if (o->capture_dir[0] && lr_out_dir_open("--capture-dir", o->capture_dir, &o->capture_fd, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "agent", "%s", err);
	/* before any thread or child: the namespace is the whole process's */
	if (o->netns[0] && lr_netns_enter(o->netns, err, errlen))
		return lr_fail(LR_EXIT_USAGE, "agent", "%s", err);
	/* a session's child _exit()s inside: only the agent returns */
	return lr_agent_serve(o, a, o->metrics[0] ? m : NULL, o->token_file[0] ? key : NULL);
}

static const struct lr_optset agent_optset = {
	LR_OPTSET(agent_binds, struct lr_agent_opts),
	.check = agent_check,
};

LR_CLI_ENTRY(agent, struct lr_agent_opts, lr_cmd_agent)

const struct lr_cli lr_agent_cli = {
	.cmd = "agent",
	.summary = "run receivers and senders on this host for a controller (send --peer)",
	.usage = "--listen ADDR[:PORT] (--token-file FILE | --insecure) [options]",
	.about = "Listens for controllers (linerate send --peer) and runs their receivers and senders on\n"
		 "this host, one test at a time, each in a child process; a second controller is told\n"
		 "which test runs. Logs one line per event to stderr and runs in the foreground (a systemd\n"
		 "service as is); SIGTERM or SIGINT ends a running test, detaches everything and exits.\n"
		 "A test whose controller goes silent for 2 s is ended the same way. With --metrics it\n"
		 "also serves Prometheus metrics over HTTP: its state and the current or last test's\n"
		 "counts, the same numbers the controller's result reports (docs/metrics.md).",
	.opts = &agent_optset,
	.run = agent_run,
};

int lr_cmd_agent(const struct lr_agent_opts *given)
{
	struct lr_agent_opts *o;
	struct lr_auth_key key;
	struct lr_ctl_addr a, m;
	char err[512];
	int ret;

	/* a copy, to hold the capture directory's handle (opened once here) beside the options */
	o = malloc(sizeof(*o));
	if (!o)
		return lr_fail(LR_EXIT_RUNTIME, "agent", "out of memory");
	*o = *given;
	o->capture_fd = -1;
	ret = agent_main(o, &key, &a, &m, err, sizeof(err));
	if (o->capture_fd >= 0)
		close(o->capture_fd);
	free(o);
	return ret;
}
