/* SPDX-License-Identifier: MIT */
/* `linerate recv`: its options, the counting loop with live lines, the ready file, the exit. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "opt/optset.h"
#include "opt/opts.h"
#include "linerate/flow.h"
#include "linerate/probe.h"
#include "rx/report.h"
#include "rx/rx.h"
#include "summary/summary.h"
#include "sys/netdev.h"
#include "tx/rate.h"
#include "util/capture.h"
#include "util/idle.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"

#define NS 1000000000ULL
#define POLL_NS (100 * 1000000ULL)
#define ONCE_LINGER_NS (50 * 1000000ULL)	/* catch the markers' repeats before leaving */

LR_CLI_ENTRY(recv, struct lr_recv_opts, lr_cmd_recv)

const struct lr_cli lr_recv_cli = {
	.cmd = "recv",
	.summary = "count test frames with XDP: rate, loss, reordering, latency",
	.usage = "-i IFACE [options]",
	.about = "Counts linerate test frames with an XDP program: packets, loss (sequence gaps and the\n"
		 "sender's end-of-test totals), reordering, duplicates and one-way latency (same host).\n"
		 "Other frames are counted as foreign and passed to the stack.",
	.opts = &lr_recv_optset,
	.run = recv_run,
};

struct recv_ctx {
	const struct lr_recv_opts *o;
	struct lr_rx rx;
	struct lr_rx_outcome out;
};

static void on_signal(int sig)
{
	(void)sig;
	lr_stop = 1;
}

static void live_line(struct recv_ctx *c, uint64_t *prev_pkts, uint64_t *prev_bytes, uint64_t dt)
{
	struct lr_rx_result r;
	char b1[32];
	double s = (double)dt / NS;
	uint64_t dp, db;

	if (lr_rx_collect(&c->rx, &r))
		return;
	dp = r.packets - *prev_pkts;
	db = r.bytes - *prev_bytes;
	*prev_pkts = r.packets;
	*prev_bytes = r.bytes;
	fprintf(stderr, "rx %s pps  %.3f Gbit/s L2  %.3f Gbit/s L1  total %llu  lost %lld  reord %llu  dup %llu  foreign %llu\n",
		lr_fmt_si(dp / s, b1, sizeof(b1)), (db + dp * 4.0) * 8.0 / s / 1e9, (db + dp * 24.0) * 8.0 / s / 1e9,
		(unsigned long long)r.packets, (long long)r.lost, (unsigned long long)r.late, (unsigned long long)r.dups,
		(unsigned long long)r.foreign);
}

static int loop(struct recv_ctx *c)
{
	const struct lr_recv_opts *o = c->o;
	uint64_t last, now, deadline, prev_pkts = 0, prev_bytes = 0, complete_at = 0, count;
	struct lr_idle idle;

	c->out.start_ns = lr_now_ns();
	deadline = o->duration_ns ? c->out.start_ns + o->duration_ns : 0;
	last = c->out.start_ns;
	lr_idle_init(&idle, o->idle_ns, o->idle_set, c->out.start_ns);
	c->out.stopped = "signal";
	while (!lr_stop) {
		struct timespec ts = { 0, (long)POLL_NS };

		nanosleep(&ts, NULL);
		now = lr_now_ns();
		if (deadline && now >= deadline) {
			c->out.stopped = "duration";
			break;
		}
		/*
		 * A deleted interface (or a veth whose peer's namespace or
		 * container went away, which takes the pair with it) never
		 * delivers another frame: say so now, not after --duration,
		 * and never wait forever with --once.
		 */
		if (!lr_if_present(&c->rx.ifc)) {
			snprintf(c->out.error, sizeof(c->out.error), "interface %s disappeared %.1f s into the test (deleted, or "
				 "its veth peer's namespace went away); the counts are up to that moment", o->rx.ifname,
				 (double)(now - c->out.start_ns) / NS);
			c->out.stopped = "interface";
			break;
		}
		if (o->once) {
			if (!complete_at && lr_rx_complete(&c->rx))
				complete_at = now;
			if (complete_at && now - complete_at >= ONCE_LINGER_NS) {
				c->out.stopped = "markers";
				break;
			}
			/* the markers never come when the sender failed: --once must not wait for ever */
			if (!complete_at && !lr_rx_activity(&c->rx, &count) && lr_idle_expired(&idle, count, now)) {
				lr_idle_why(&idle, c->out.error, sizeof(c->out.error));
				c->out.stopped = "idle";
				break;
			}
		}
		if (now - last >= NS) {
			if (!o->quiet)
				live_line(c, &prev_pkts, &prev_bytes, now - last);
			last = now;
		}
	}
	c->out.end_ns = lr_now_ns();
	return 0;
}

/* The summary on stderr and, with --json, the JSON document; the exit code. */
static int report(const struct lr_recv_opts *o, struct lr_rx *rcv, const struct lr_rx_outcome *out)
{
	struct lr_rx_context x = {
		.secs = (double)(out->end_ns - out->start_ns) / NS,
		.pcap = o->rx.pcap, .pcap_lost = out->pcap_lost, .pcap_foreign = o->rx.pcap_foreign,
	};
	struct json_object *root;
	struct lr_rx_result *r;
	char err[256];
	int ret;

	lr_rx_context_of(&x, rcv, o->rx.ifname);
	snprintf(x.error, sizeof(x.error), "%s", out->error);
	snprintf(x.stopped, sizeof(x.stopped), "%s", out->stopped ? out->stopped : "");
	r = malloc(sizeof(*r));
	if (!r)
		return lr_fail(LR_EXIT_RUNTIME, "recv", "out of memory");
	ret = lr_rx_collect(rcv, r);
	if (ret) {
		free(r);
		return lr_fail(LR_EXIT_RUNTIME, "recv", "cannot read counters: %s", strerror(-ret));
	}
	/* a capture that could not be completed was removed: nothing of it is kept */
	if (out->pcap_lost) {
		r->pcap_file[0] = '\0';
		r->pcap_written = 0;
	}
	lr_recv_summary(stderr, &x, r);
	ret = LR_EXIT_OK;
	if (o->json[0]) {
		root = lr_rx_doc(&x, r);
		if (lr_json_write(root, o->json, err, sizeof(err)))
			ret = lr_fail(LR_EXIT_RUNTIME, "recv", "%s", err);
		json_object_put(root);
	}
	free(r);
	return ret;
}

int lr_cmd_recv(const struct lr_recv_opts *o)
{
	struct recv_ctx c;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[LR_RX_LINE_MAX], line[LR_RX_LINE_MAX];
	int ret, cret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	/* every output path before any interface is touched: a bad one is a usage error, not a lost test */
	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->rx.pcap[0] && lr_out_check("--pcap", o->rx.pcap, false, err, sizeof(err))) ||
	    (o->ready_file[0] && lr_out_check("--ready-file", o->ready_file, false, err, sizeof(err))))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);
	memset(&c, 0, sizeof(c));
	c.o = o;
	ret = lr_rx_begin(&o->rx, &c.rx, line, sizeof(line), err, sizeof(err));
	if (ret)
		return lr_fail(ret, "recv", "%s", err);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "linerate recv: %s\n", line);
	if (o->ready_file[0] && lr_out_pidfile(o->ready_file, err, sizeof(err))) {
		ret = lr_fail(LR_EXIT_RUNTIME, "recv", "--ready-file: %s", err);
		goto out;
	}
	loop(&c);
	/* a signal ends the loop too: the capture is renamed into place on this path as well */
	c.rx.ops->stop(&c.rx);
	cret = lr_rx_capture_close(&c.rx, err, sizeof(err));
	c.out.pcap_lost = cret != 0;
	ret = report(o, &c.rx, &c.out);
	if (cret)
		ret = lr_fail(LR_EXIT_RUNTIME, "recv", "--pcap: %s", err);
	if (c.out.error[0])
		ret = lr_fail(LR_EXIT_RUNTIME, "recv", "%s", c.out.error);
out:
	if (ret && c.rx.pcap) {
		c.rx.ops->stop(&c.rx);
		lr_rx_capture_abort(&c.rx);
	}
	lr_rx_end(&c.rx);
	return ret;
}
