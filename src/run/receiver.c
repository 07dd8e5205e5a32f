/* SPDX-License-Identifier: MIT */
/* run's receiver: an endpoint of the agent protocol in a child process, inside the [rx] namespace. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "ctl/ctl.h"
#include "run/run.h"
#include "rx/rx.h"
#include "util/clock.h"
#include "util/capture.h"
#include "util/log.h"

/* The receiver's options from [rx], as the endpoint is asked to run them. */
static void rx_opts(const struct lr_cfg *cfg, struct lr_recv_opts *ro)
{
	lr_recv_opts_default(ro);
	snprintf(ro->rx.ifname, sizeof(ro->rx.ifname), "%s", cfg->rx_ifname);
	snprintf(ro->netns, sizeof(ro->netns), "%s", cfg->rx_netns);
	ro->rx.engine = cfg->rx_engine;
	ro->rx.xdp_mode = cfg->xdp_mode;
	ro->rx.workers = cfg->rx_workers ? cfg->rx_workers : 1;
	ro->rx.dst_port = cfg->dst_port;
	/* [test] cost: our program's own ns per frame, for the split (sys/cost.h) */
	ro->rx.prog_stats = cfg->cost;
	if (cfg->rx_pcap[0]) {
		snprintf(ro->rx.pcap, sizeof(ro->rx.pcap), "%s", cfg->rx_pcap);
		ro->rx.pcap_every = cfg->rx_pcap_every ? cfg->rx_pcap_every : 1;
		ro->rx.snaplen = cfg->rx_snaplen ? cfg->rx_snaplen : LR_PCAP_DEFAULT_SNAPLEN;
	}
}

/* The reflector's options from [rx], for mode = rtt. */
static void reflect_opts(const struct lr_cfg *cfg, struct lr_reflect_opts *fo)
{
	memset(fo, 0, sizeof(*fo));
	lr_reflect_opts_default(fo);
	snprintf(fo->fx.ifname, sizeof(fo->fx.ifname), "%s", cfg->rx_ifname);
	snprintf(fo->netns, sizeof(fo->netns), "%s", cfg->rx_netns);
	fo->fx.xdp_mode = cfg->xdp_mode;
	fo->fx.dst_port = cfg->dst_port;
	fo->quiet = true;
}

/*
 * The child: Ctrl-C or a SIGTERM to the process group reaches the parent too, which tells us to
 * quit, or its exit (the end of the stream) ends us, with the capture closed properly either way.
 * No dead-man timer: a socketpair's end is reported by the kernel whenever the parent ends, even
 * by SIGKILL, and the parent runs whole trials (a day at most) between two requests.
 */
static int child(int fd)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	return lr_ctl_serve(fd, NULL);
}

/* The endpoint's own reason when it gave one (@ret > 0), else what went wrong in talking to it. */
static void failed(struct lr_run *r, int ret, const char *err, const char *what)
{
	if (r->rx.remote && !strncmp(err, LR_CTL_ENDED, strlen(LR_CTL_ENDED)))
		lr_run_fail(r, LR_EXIT_RUNTIME, "[rx] agent %s: %s", lr_ctl_agent(r->rx.ctl), err);
	else if (ret > 0)
		lr_run_fail(r, ret, "[rx] %s", err);
	else
		lr_run_fail(r, LR_EXIT_RUNTIME, "the receiver %s: %s", what, err);
}

int lr_run_rx_start(struct lr_run *r)
{
	char err[1024];
	int sv[2], ret;

	r->rx.ctl = NULL;
	if (r->cfg->rx_agent[0]) {
		r->rx.remote = true;
		return lr_run_agent_connect("[rx]", r->cfg->rx_agent, r->cfg->rx_token_file, &r->rx.ctl);
	}
	/* a stream, as TCP to a remote agent will be: the protocol frames its own messages */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return lr_fail(LR_EXIT_RUNTIME, "run", "socketpair: %s", strerror(errno));
	fflush(NULL);
	r->rx.child = fork();
	if (r->rx.child < 0) {
		ret = errno;
		r->rx.child = 0;
		close(sv[0]);
		close(sv[1]);
		return lr_fail(LR_EXIT_RUNTIME, "run", "fork: %s", strerror(ret));
	}
	if (r->rx.child == 0) {
		/*
		 * The receiver process ends here, not by unwinding through run's stack: what it printed is
		 * flushed, nothing of the parent's (its files, its pcap) is touched on the way out.
		 */
		close(sv[0]);
		ret = child(sv[1]);
		close(sv[1]);
		fflush(NULL);
		_exit(ret);
	}
	close(sv[1]);
	if (lr_ctl_attach(sv[0], "the receiver", &r->rx.ctl)) {
		close(sv[0]);
		return lr_fail(LR_EXIT_RUNTIME, "run", "out of memory");
	}
	ret = lr_ctl_hello(r->rx.ctl, NULL, err, sizeof(err));
	if (ret) {
		failed(r, ret, err, "did not start");
		return ret > 0 ? ret : LR_EXIT_RUNTIME;
	}
	return 0;
}

int lr_run_rx_prepare(struct lr_run *r, int64_t offset_ns)
{
	struct lr_ctl_ready rd;
	struct lr_recv_opts *ro;
	char err[1024];
	int ret;

	if (lr_run_mode_rtt(r->cfg->mode)) {
		struct lr_reflect_opts fo;

		/* round trips: a reflector there, and no clock to compare (the return is counted here) */
		reflect_opts(r->cfg, &fo);
		ret = lr_ctl_prepare_reflect(r->rx.ctl, &fo, r->cfg->rx_address, &rd, err, sizeof(err));
		goto prepared;
	}
	ro = malloc(sizeof(*ro));
	if (!ro)
		return lr_fail(LR_EXIT_RUNTIME, "run", "out of memory");
	rx_opts(r->cfg, ro);
	ro->rx.clock_offset_ns = offset_ns;
	ret = lr_ctl_prepare_rx(r->rx.ctl, ro, r->cfg->rx_address, &rd, err, sizeof(err));
	free(ro);
prepared:
	if (ret) {
		failed(r, ret, err, "did not start");
		return ret > 0 ? ret : LR_EXIT_RUNTIME;
	}
	snprintf(r->rx.line, sizeof(r->rx.line), "%s", rd.line);
	snprintf(r->rx.ifname, sizeof(r->rx.ifname), "%s", rd.ifname);
	if (!r->o->quiet)
		fprintf(stderr, "linerate run: %s%s%s %s\n", lr_run_mode_rtt(r->cfg->mode) ? "reflector" : "receiver",
			r->rx.remote ? " on " : "",
			r->rx.remote ? lr_ctl_name(r->rx.ctl) : "", r->rx.line);
	return 0;
}

void lr_run_rx_stop(struct lr_run *r)
{
	char err[512];
	int status;

	if (r->rx.child <= 0 && !r->rx.ctl)
		return;
	/* bye comes once the capture is in place; the stream's end stops the child anyway */
	if (r->rx.ctl && lr_ctl_quit(r->rx.ctl, err, sizeof(err)))
		pr_debug("run: the receiver's quit: %s\n", err);
	lr_ctl_close(r->rx.ctl);
	r->rx.ctl = NULL;
	if (r->rx.child > 0)
		waitpid(r->rx.child, &status, 0);
	r->rx.child = 0;
}

int lr_run_rx_reset(struct lr_run *r)
{
	char err[1024];
	int ret = lr_ctl_reset(r->rx.ctl, err, sizeof(err));

	if (ret)
		failed(r, ret, err, "stopped answering");
	return ret ? LR_EXIT_RUNTIME : 0;
}

int lr_run_rx_wait(struct lr_run *r, uint64_t timeout_ns, struct lr_rx_result *res, bool *complete)
{
	char err[1024];
	int ret = lr_ctl_wait(r->rx.ctl, timeout_ns, complete, res, NULL, err, sizeof(err));

	if (ret)
		failed(r, ret, err, "stopped answering");
	return ret ? LR_EXIT_RUNTIME : 0;
}

/* ---- round trips: the return, counted here ---------------------------------------------------- */

int lr_run_back_open(struct lr_run *r)
{
	struct lr_recv_opts *ro = &r->back_opts;
	char err[LR_RX_LINE_MAX];
	int ret;

	r->back = calloc(1, sizeof(*r->back));
	if (!r->back)
		return lr_fail(LR_EXIT_RUNTIME, "run", "out of memory");
	lr_recv_opts_default(ro);
	snprintf(ro->rx.ifname, sizeof(ro->rx.ifname), "%s", r->cfg->tx_ifname);
	ro->rx.dst_port = r->cfg->dst_port;
	ro->quiet = true;
	ro->verbose = r->o->verbose;
	ret = lr_rx_begin(&ro->rx, r->back, r->back_line, sizeof(r->back_line), err, sizeof(err));
	if (ret) {
		free(r->back);
		r->back = NULL;
		return lr_fail(ret, "run", "[tx] the frames that come back cannot be counted: %s", err);
	}
	if (!r->o->quiet)
		fprintf(stderr, "linerate run: the return: %s\n", r->back_line);
	return 0;
}

void lr_run_back_close(struct lr_run *r)
{
	if (!r->back)
		return;
	lr_rx_end(r->back);
	free(r->back);
	r->back = NULL;
}

int lr_run_back_wait(struct lr_run *r, uint64_t timeout_ns, struct lr_rx_result *res, bool *complete)
{
	int ret;

	*complete = lr_rx_wait_back(r->back, r->flows_total, timeout_ns);
	ret = lr_rx_collect(r->back, res);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "run", "the return's counters: %s", strerror(-ret));
	return 0;
}
