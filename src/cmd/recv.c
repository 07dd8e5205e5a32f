/* SPDX-License-Identifier: MIT */
/* `linerate recv`: its options, the counting loop with live lines, the ready file, the exit. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "linerate/flow.h"
#include "linerate/probe.h"
#include "rx/rx.h"
#include "sys/netdev.h"
#include "tx/rate.h"
#include "util/capture.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"

#define NS 1000000000ULL
#define POLL_NS (100 * 1000000ULL)
#define ONCE_LINGER_NS (50 * 1000000ULL)	/* catch the markers' repeats before leaving */

enum {
	O_IFACE = 'i', O_VERBOSE = 'v', O_QUIET = 'q', O_DURATION = 'd',
	O_DST_PORT = 256, O_ONCE, O_PASS, O_XDP_MODE, O_READY, O_NETNS, O_JSON, O_ENGINE, O_WORKERS,
	O_PCAP, O_PCAP_EVERY, O_PCAP_FOREIGN, O_SNAPLEN, O_PCAP_MAX_BYTES,
};

#define STR(x) #x
#define XSTR(x) STR(x)

static const struct lr_opt recv_opts[] = {
	{ O_IFACE, "interface", 'i', "IFACE", "interface to count on (the XDP program attaches here)", NULL },
	{ O_DST_PORT, "dst-port", 0, "PORT", "UDP destination port of the test frames", "7447" },
	{ O_DURATION, "duration", 'd', "TIME", "stop after TIME (10s, 500ms, 2m; at most a year)", "until SIGINT" },
	{ O_ONCE, "once", 0, NULL, "stop once every flow's end-of-test marker has arrived", NULL },
	{ O_PASS, "pass", 0, NULL, "pass test frames on to the stack instead of dropping them", NULL },
	{ O_ENGINE, "engine", 'e', "NAME",
	  "xdp, packet (AF_PACKET TPACKET_V3 ring: counts without dropping), or auto: XDP native, generic, "
	  "then AF_PACKET", "auto" },
	{ O_XDP_MODE, "xdp-mode", 0, "MODE", "XDP attach mode: auto, native or generic; the xdp engine only", "auto" },
	{ O_WORKERS, "workers", 0, "N", "AF_PACKET receive threads (PACKET_FANOUT by flow hash); the packet engine only", "1" },
	{ O_READY, "ready-file", 0, "PATH", "create PATH once the program is attached", NULL },
	{ O_NETNS, "netns", 'n', "NS", "run in network namespace NS (name, pid:PID, container:NAME or path)", NULL },
	{ O_JSON, "json", 'j', "FILE", "write the summary as JSON to FILE (- for stdout)", NULL },
	{ O_PCAP, "pcap", 0, "FILE",
	  "write samples of the frames received to FILE (pcap; renamed into place at the end)", NULL },
	{ O_PCAP_EVERY, "pcap-every", 0, "K",
	  "sample one test data frame in K (end-of-test markers are counted, not sampled)", "1" },
	{ O_PCAP_FOREIGN, "pcap-foreign", 0, NULL, "also sample every foreign frame", NULL },
	{ O_SNAPLEN, "snaplen", 0, "N",
	  "bytes kept of each sample, " XSTR(LR_RX_SNAP_MIN) ".." XSTR(LR_RX_SNAP_MAX), XSTR(LR_PCAP_DEFAULT_SNAPLEN) },
	{ O_PCAP_MAX_BYTES, "pcap-max-bytes", 0, "N", "stop sampling once FILE would exceed N bytes (10M, 1G)",
	  "no limit" },
	{ O_QUIET, "quiet", 'q', NULL, "no live lines, summary only", NULL },
	{ O_VERBOSE, "verbose", 'v', NULL, "more detail; twice for libbpf debug", NULL },
};

static const struct lr_cli recv_cli = {
	.cmd = "recv",
	.usage = "-i IFACE [options]",
	.about = "Counts linerate test frames with an XDP program: packets, loss (sequence gaps and the\n"
		 "sender's end-of-test totals), reordering, duplicates and one-way latency (same host).\n"
		 "Other frames are counted as foreign and passed to the stack.",
	.opts = recv_opts,
	.nopts = sizeof(recv_opts) / sizeof(recv_opts[0]),
};

void lr_recv_opts_default(struct lr_recv_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dst_port = LR_DEFAULT_DST_PORT;
	o->workers = 1;
	o->pcap_every = 1;
	o->snaplen = LR_PCAP_DEFAULT_SNAPLEN;
}

/* In the order of enum lr_rx_engine_kind and enum lr_xdp_mode. */
static const char *const engines[] = { "auto", "xdp", "packet", NULL };
static const char *const xdp_modes[] = { "auto", "native", "generic", NULL };

static int recv_set(void *ctx, int id, const char *arg, char *err, size_t errlen)
{
	struct lr_recv_opts *o = ctx;
	uint64_t v;
	int choice, ret;

	switch (id) {
	case O_IFACE:
		return lr_cli_str("--interface", arg, o->ifname, sizeof(o->ifname), err, errlen);
	case O_DST_PORT:
		if (lr_parse_count(arg, 1, 65535, &v)) {
			snprintf(err, errlen, "--dst-port: '%s' is not a port (1..65535)", arg);
			return -EINVAL;
		}
		o->dst_port = (uint16_t)v;
		return 0;
	case O_DURATION:
		ret = lr_parse_duration(arg, &o->duration_ns);
		if (ret == -ERANGE) {
			snprintf(err, errlen, "--duration: '%s' is longer than the limit of a year", arg);
			return -EINVAL;
		}
		if (ret || !o->duration_ns) {
			snprintf(err, errlen, "--duration: '%s' is not a duration (10s, 500ms, 2m)", arg);
			return -EINVAL;
		}
		return 0;
	case O_ONCE:
		o->once = true;
		return 0;
	case O_PASS:
		o->pass = true;
		return 0;
	case O_XDP_MODE:
		if (lr_cli_choice("--xdp-mode", arg, xdp_modes, &choice, err, errlen))
			return -EINVAL;
		o->xdp_mode = choice;
		o->xdp_mode_set = true;
		return 0;
	case O_ENGINE:
		if (lr_cli_choice("--engine", arg, engines, &choice, err, errlen))
			return -EINVAL;
		o->engine = choice;
		return 0;
	case O_WORKERS:
		if (lr_parse_count(arg, 1, 64, &v)) {
			snprintf(err, errlen, "--workers: '%s' is not a thread count in 1..64", arg);
			return -EINVAL;
		}
		o->workers = (unsigned int)v;
		o->workers_set = true;
		return 0;
	case O_READY:
		return lr_cli_str("--ready-file", arg, o->ready_file, sizeof(o->ready_file), err, errlen);
	case O_NETNS:
		return lr_cli_str("--netns", arg, o->netns, sizeof(o->netns), err, errlen);
	case O_JSON:
		return lr_cli_str("--json", arg, o->json, sizeof(o->json), err, errlen);
	case O_PCAP:
		return lr_cli_str("--pcap", arg, o->pcap, sizeof(o->pcap), err, errlen);
	case O_PCAP_EVERY:
		if (lr_parse_count(arg, 1, UINT32_MAX, &v)) {
			snprintf(err, errlen, "--pcap-every: '%s' is not a count in 1..%u", arg, UINT32_MAX);
			return -EINVAL;
		}
		o->pcap_every = v;
		return 0;
	case O_PCAP_FOREIGN:
		o->pcap_foreign = true;
		return 0;
	case O_SNAPLEN:
		if (lr_parse_count(arg, LR_RX_SNAP_MIN, LR_RX_SNAP_MAX, &v)) {
			snprintf(err, errlen, "--snaplen: '%s' is not a length in %u..%u bytes", arg, LR_RX_SNAP_MIN,
				 LR_RX_SNAP_MAX);
			return -EINVAL;
		}
		o->snaplen = (unsigned int)v;
		return 0;
	case O_PCAP_MAX_BYTES:
		if (lr_parse_count(arg, 1, 1ULL << 50, &v)) {
			snprintf(err, errlen, "--pcap-max-bytes: '%s' is not a size (10M, 1G)", arg);
			return -EINVAL;
		}
		o->pcap_max_bytes = v;
		return 0;
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

int lr_cli_parse_recv(int argc, char **argv, struct lr_recv_opts *o, FILE *help_out, char *err, size_t errlen)
{
	int ret;

	lr_recv_opts_default(o);
	ret = lr_cli_parse(&recv_cli, argc, argv, recv_set, o, help_out, err, errlen);
	if (ret)
		return ret;
	if (!o->ifname[0]) {
		snprintf(err, errlen, "missing -i/--interface (see 'linerate recv --help')");
		return -EINVAL;
	}
	/* options of one engine given with the other: refused, not silently ignored */
	if (o->engine == LR_RX_ENGINE_XDP && o->workers_set) {
		snprintf(err, errlen, "--workers sets AF_PACKET receive threads, but --engine xdp has none (XDP counts "
			 "in the softirq of every CPU that receives); drop one of the two");
		return -EINVAL;
	}
	if (o->engine == LR_RX_ENGINE_PACKET && o->xdp_mode_set) {
		snprintf(err, errlen, "--xdp-mode is an XDP attach mode, but --engine packet uses no XDP; drop one of the two");
		return -EINVAL;
	}
	if (!o->pcap[0] && (o->pcap_every != 1 || o->pcap_foreign || o->snaplen != LR_PCAP_DEFAULT_SNAPLEN ||
			    o->pcap_max_bytes)) {
		snprintf(err, errlen, "--pcap-every, --pcap-foreign, --snaplen and --pcap-max-bytes need --pcap FILE");
		return -EINVAL;
	}
	return 0;
}

struct recv_ctx {
	struct lr_rx rx;
	struct lr_rx_outcome out;
};

static void on_signal(int sig)
{
	(void)sig;
	lr_stop = 1;
}

/* The ready file appears whole, under its name, once counting has started: our PID. */
static int write_ready(const char *path, char *err, size_t errlen)
{
	struct lr_out out;
	char pid[32];
	int ret;

	ret = lr_out_open(path, LR_OUT_MODE, &out, err, errlen);
	if (ret)
		return ret;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	ret = lr_out_write(&out, pid, strlen(pid));
	if (ret) {
		lr_msg(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		lr_out_abort(&out);
		return ret;
	}
	return lr_out_commit(&out, err, errlen);
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
	const struct lr_recv_opts *o = c->rx.o;
	uint64_t last, now, deadline, prev_pkts = 0, prev_bytes = 0, complete_at = 0;

	c->out.start_ns = lr_now_ns();
	deadline = o->duration_ns ? c->out.start_ns + o->duration_ns : 0;
	last = c->out.start_ns;
	while (!lr_stop) {
		struct timespec ts = { 0, (long)POLL_NS };

		nanosleep(&ts, NULL);
		now = lr_now_ns();
		if (deadline && now >= deadline)
			break;
		/*
		 * A deleted interface (or a veth whose peer's namespace or
		 * container went away, which takes the pair with it) never
		 * delivers another frame: say so now, not after --duration,
		 * and never wait forever with --once.
		 */
		if (!lr_if_present(&c->rx.ifc)) {
			snprintf(c->out.error, sizeof(c->out.error), "interface %s disappeared %.1f s into the test (deleted, or "
				 "its veth peer's namespace went away); the counts are up to that moment", o->ifname,
				 (double)(now - c->out.start_ns) / NS);
			break;
		}
		if (o->once) {
			if (!complete_at && lr_rx_complete(&c->rx))
				complete_at = now;
			if (complete_at && now - complete_at >= ONCE_LINGER_NS)
				break;
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

int lr_cmd_recv(const struct lr_recv_opts *o)
{
	struct recv_ctx c;
	struct sigaction sa = { .sa_handler = on_signal };
	char err[512], line[768];
	int ret, cret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	/* every output path before any interface is touched: a bad one is a usage error, not a lost test */
	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->pcap[0] && lr_out_check("--pcap", o->pcap, false, err, sizeof(err))) ||
	    (o->ready_file[0] && lr_out_check("--ready-file", o->ready_file, false, err, sizeof(err))))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "recv", "%s", err);
	memset(&c, 0, sizeof(c));
	ret = lr_rx_begin(o, &c.rx, line, sizeof(line), err, sizeof(err));
	if (ret)
		return lr_fail(ret, "recv", "%s", err);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "linerate recv: %s\n", line);
	if (o->ready_file[0] && write_ready(o->ready_file, err, sizeof(err))) {
		ret = lr_fail(LR_EXIT_RUNTIME, "recv", "--ready-file: %s", err);
		goto out;
	}
	loop(&c);
	/* a signal ends the loop too: the capture is renamed into place on this path as well */
	c.rx.ops->stop(&c.rx);
	cret = lr_rx_capture_close(&c.rx, err, sizeof(err));
	c.out.pcap_lost = cret != 0;
	ret = lr_rx_report(&c.rx, &c.out);
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
