/* SPDX-License-Identifier: MIT */
/* `linerate send`: its options, the sending loop with live lines, the summary and the capture. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "sys/netdev.h"
#include "tx/frame.h"
#include "tx/rate.h"
#include "tx/tx.h"
#include "util/capture.h"
#include "util/log.h"
#include "util/outfile.h"

#define NS 1000000000ULL

enum {
	O_IFACE = 'i', O_VERBOSE = 'v', O_QUIET = 'q',
	O_ENGINE = 256, O_XSK_MODE, O_QUEUES, O_CPUS, O_SIZE, O_FLOWS, O_RATE, O_DURATION, O_COUNT,
	O_SRC_IP, O_DST_IP, O_SRC_MAC, O_DST_MAC, O_SRC_PORT, O_DST_PORT, O_NETNS, O_JSON, O_BATCH,
	O_ALLOW_PHYS, O_PCAP, O_PCAP_COUNT, O_PCAP_EVERY, O_PCAP_MAX, O_REPLAY, O_REPLAY_TIMING, O_LOOPS, O_STAMP,
};

static const struct lr_opt send_opts[] = {
	{ O_IFACE, "interface", 'i', "IFACE", "interface to send on", NULL },
	{ O_DST_IP, "dst-ip", 0, "IP", "destination IPv4 or IPv6 address", NULL },
	{ O_SRC_IP, "src-ip", 0, "IP", "source address", "the interface's first address, else its bridge's (a bridge port)" },
	{ O_DST_MAC, "dst-mac", 0, "MAC", "destination MAC",
	  "the next hop's: neighbour table, else the veth peer, else resolved now (ARP, ND; up to 1 s)" },
	{ O_SRC_MAC, "src-mac", 0, "MAC", "source MAC", "the interface's MAC" },
	{ O_SRC_PORT, "src-port", 0, "PORT", "UDP source port of flow 0; flow N uses PORT+N",
	  "55000, lower when the flows need the room" },
	{ O_DST_PORT, "dst-port", 0, "PORT", "UDP destination port (the receiver counts this port)", "7447" },
	{ O_SIZE, "size", 0, "BYTES", "Ethernet frame size incl. FCS, 64..MTU+18", "64" },
	{ O_FLOWS, "flows", 0, "N", "flows (UDP source ports), each with its own sequence", "1" },
	{ O_RATE, "rate", 0, "RATE", "total rate: max, N[k|M|G][pps] (at most 1 Gpps), or N[k|M|G]bit (L1 line rate, at most 1 Tbit/s)", "max" },
	{ O_COUNT, "count", 'c', "N", "stop after N frames in all", NULL },
	{ O_DURATION, "duration", 'd', "TIME", "stop after TIME (10s, 500ms, 2m; at most a year)", "10s unless --count" },
	{ O_QUEUES, "queues", 0, "LIST", "TX queues, one pinned worker each (0-3, 0,2)", "0" },
	{ O_CPUS, "cpus", 0, "LIST", "CPU of each worker, same length as --queues", "CPU n for queue n" },
	{ O_ENGINE, "engine", 'e', "NAME",
	  "live (in-kernel frames, BPF_PROG_RUN), afxdp, packet (AF_PACKET mmap ring; the kernel picks "
	  "its TX queue from the CPU), or auto: live, AF_XDP zero-copy, copy, then AF_PACKET", "auto" },
	{ O_XSK_MODE, "xdp-mode", 0, "MODE", "AF_XDP bind mode: auto, zerocopy or copy", "auto" },
	{ O_BATCH, "batch", 0, "N", "frames per ring round, 1..512", "64" },
	{ O_NETNS, "netns", 'n', "NS", "run in network namespace NS (name, pid:PID, container:NAME or path)", NULL },
	{ O_JSON, "json", 'j', "FILE", "write the summary as JSON to FILE (- for stdout)", NULL },
	{ O_QUIET, "quiet", 'q', NULL, "no live lines, summary only", NULL },
	{ O_VERBOSE, "verbose", 'v', NULL, "more detail; twice for libbpf/libxdp debug", NULL },
	{ O_ALLOW_PHYS, "allow-physical", 0, NULL, "allow sending on a physical NIC", NULL },
	{ O_PCAP, "pcap", 0, "FILE", "write samples of the frames sent to FILE (pcap, ns timestamps)", NULL },
	{ O_PCAP_COUNT, "pcap-count", 0, "N", "sample the first N frames", "1000" },
	{ O_PCAP_EVERY, "pcap-every", 0, "K", "sample one frame in K instead", NULL },
	{ O_PCAP_MAX, "pcap-max-bytes", 0, "BYTES", "stop writing samples at this file size (64k, 10M)", "no cap" },
	{ O_REPLAY, "replay", 0, "FILE", "send the frames of a pcap/pcapng capture instead of the template", NULL },
	{ O_REPLAY_TIMING, "replay-timing", 0, NULL, "keep the capture's own frame timing instead of --rate", NULL },
	{ O_LOOPS, "loops", 0, "N", "times through the capture (0: until --duration)", "1" },
	{ O_STAMP, "stamp", 0, NULL, "write the probe into replayed UDP frames to --dst-port so recv counts them", NULL },
};

static const struct lr_cli send_cli = {
	.cmd = "send",
	.usage = "-i IFACE --dst-ip IP [options]",
	.about = "Blasts UDP test frames from pinned per-queue workers through AF_XDP (or AF_PACKET). Every frame carries\n"
		 "a flow id, a sequence number and a timestamp that `linerate recv` checks. Sizes are\n"
		 "Ethernet frame sizes with FCS (RFC 2544); bit rates are L1 line rates (+20 B a frame).",
	.opts = send_opts,
	.nopts = sizeof(send_opts) / sizeof(send_opts[0]),
};

void lr_send_opts_default(struct lr_send_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->engine = LR_ENGINE_AUTO;
	o->nworkers = 1;
	o->size = 64;
	o->flows = 1;
	o->rate.kind = LR_RATE_MAX;
	o->src_port = LR_DEFAULT_SRC_PORT;
	o->dst_port = LR_DEFAULT_DST_PORT;
	o->batch = 64;
	o->eot_repeat = 5;
}

static int parse_ip(struct lr_send_opts *o, const char *opt, const char *arg, struct in6_addr *out,
		    char *err, size_t errlen)
{
	int family = strchr(arg, ':') ? AF_INET6 : AF_INET;

	memset(out, 0, sizeof(*out));
	if (inet_pton(family, arg, out) != 1) {
		snprintf(err, errlen, "%s: '%s' is not an IPv4 or IPv6 address", opt, arg);
		return -EINVAL;
	}
	if (o->family && o->family != family) {
		snprintf(err, errlen, "%s: '%s' mixes IPv4 and IPv6 with the other address", opt, arg);
		return -EINVAL;
	}
	o->family = family;
	return 0;
}

static int parse_port(const char *opt, const char *arg, uint16_t *out, char *err, size_t errlen)
{
	uint64_t v;

	if (lr_parse_count(arg, 1, 65535, &v)) {
		snprintf(err, errlen, "%s: '%s' is not a port (1..65535)", opt, arg);
		return -EINVAL;
	}
	*out = (uint16_t)v;
	return 0;
}

/* In the order of enum lr_engine_kind and enum lr_xsk_mode. */
static const char *const engines[] = { "auto", "afxdp", "packet", "live", NULL };
static const char *const xsk_modes[] = { "auto", "zerocopy", "copy", NULL };

static int send_set(void *ctx, int id, const char *arg, char *err, size_t errlen)
{
	struct lr_send_opts *o = ctx;
	uint64_t v;
	int n, choice, ret;

	switch (id) {
	case O_IFACE:
		return lr_cli_str("--interface", arg, o->ifname, sizeof(o->ifname), err, errlen);
	case O_DST_IP:
		o->have_dst_ip = true;
		return parse_ip(o, "--dst-ip", arg, &o->dst_ip, err, errlen);
	case O_SRC_IP:
		o->have_src_ip = true;
		return parse_ip(o, "--src-ip", arg, &o->src_ip, err, errlen);
	case O_DST_MAC:
		o->have_dst_mac = true;
		return lr_cli_mac("--dst-mac", arg, o->dst_mac, err, errlen);
	case O_SRC_MAC:
		o->have_src_mac = true;
		return lr_cli_mac("--src-mac", arg, o->src_mac, err, errlen);
	case O_SRC_PORT:
		o->src_port_set = true;
		return parse_port("--src-port", arg, &o->src_port, err, errlen);
	case O_DST_PORT:
		return parse_port("--dst-port", arg, &o->dst_port, err, errlen);
	case O_SIZE:
		if (lr_parse_count(arg, LR_MIN_FRAME, LR_MAX_FRAME, &v)) {
			snprintf(err, errlen, "--size: '%s' is not a frame size in %u..%u bytes", arg,
				 LR_MIN_FRAME, LR_MAX_FRAME);
			return -EINVAL;
		}
		o->size = (unsigned int)v;
		return 0;
	case O_FLOWS:
		if (lr_parse_count(arg, 1, LR_MAX_FLOWS, &v)) {
			snprintf(err, errlen, "--flows: '%s' is not a flow count in 1..%u", arg, LR_MAX_FLOWS);
			return -EINVAL;
		}
		o->flows = (unsigned int)v;
		return 0;
	case O_RATE:
		ret = lr_parse_rate(arg, &o->rate);
		if (ret == -ERANGE) {
			snprintf(err, errlen, "--rate: '%s' is above the limit of 1 Gpps (1 Tbit/s as a bit rate)", arg);
			return -EINVAL;
		}
		if (ret) {
			snprintf(err, errlen, "--rate: '%s' is not a rate (max, 100k, 1Mpps, 2.5Gbit)", arg);
			return -EINVAL;
		}
		return 0;
	case O_COUNT:
		if (lr_parse_count(arg, 1, UINT64_MAX, &o->count)) {
			snprintf(err, errlen, "--count: '%s' is not a positive frame count", arg);
			return -EINVAL;
		}
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
	case O_QUEUES:
		n = lr_parse_list(arg, 4096, o->queues, LR_MAX_WORKERS);
		if (n <= 0) {
			snprintf(err, errlen, "--queues: '%s' is not a queue list (0-3, 0,2; at most %d)", arg,
				 LR_MAX_WORKERS);
			return -EINVAL;
		}
		o->nworkers = (unsigned int)n;
		return 0;
	case O_CPUS:
		n = lr_parse_list(arg, 4096, o->cpus, LR_MAX_WORKERS);
		if (n <= 0) {
			snprintf(err, errlen, "--cpus: '%s' is not a CPU list (0-3, 0,2; at most %d)", arg,
				 LR_MAX_WORKERS);
			return -EINVAL;
		}
		o->cpus_set = true;
		o->ncpus = (unsigned int)n;
		return 0;
	case O_ENGINE:
		if (lr_cli_choice("--engine", arg, engines, &choice, err, errlen))
			return -EINVAL;
		o->engine = choice;
		return 0;
	case O_XSK_MODE:
		if (lr_cli_choice("--xdp-mode", arg, xsk_modes, &choice, err, errlen))
			return -EINVAL;
		o->xsk_mode = choice;
		return 0;
	case O_BATCH:
		if (lr_parse_count(arg, 1, 512, &v)) {
			snprintf(err, errlen, "--batch: '%s' is not a batch size in 1..512", arg);
			return -EINVAL;
		}
		o->batch = (unsigned int)v;
		return 0;
	case O_NETNS:
		return lr_cli_str("--netns", arg, o->netns, sizeof(o->netns), err, errlen);
	case O_JSON:
		return lr_cli_str("--json", arg, o->json, sizeof(o->json), err, errlen);
	case O_QUIET:
		o->quiet = true;
		return 0;
	case O_VERBOSE:
		o->verbose++;
		return 0;
	case O_PCAP:
		return lr_cli_str("--pcap", arg, o->pcap, sizeof(o->pcap), err, errlen);
	case O_PCAP_COUNT:
		if (lr_parse_count(arg, 1, UINT32_MAX, &o->pcap_count)) {
			snprintf(err, errlen, "--pcap-count: '%s' is not a frame count", arg);
			return -EINVAL;
		}
		return 0;
	case O_PCAP_EVERY:
		if (lr_parse_count(arg, 1, UINT32_MAX, &o->pcap_every)) {
			snprintf(err, errlen, "--pcap-every: '%s' is not a count (1 = every frame)", arg);
			return -EINVAL;
		}
		return 0;
	case O_PCAP_MAX:
		if (lr_parse_count(arg, 1024, UINT64_MAX, &o->pcap_max_bytes)) {
			snprintf(err, errlen, "--pcap-max-bytes: '%s' is not a size of at least 1k (64k, 10M)", arg);
			return -EINVAL;
		}
		return 0;
	case O_REPLAY:
		return lr_cli_str("--replay", arg, o->replay, sizeof(o->replay), err, errlen);
	case O_REPLAY_TIMING:
		o->replay_timing = true;
		return 0;
	case O_LOOPS:
		if (lr_parse_count(arg, 0, UINT32_MAX, &o->loops)) {
			snprintf(err, errlen, "--loops: '%s' is not a count (0 = until --duration)", arg);
			return -EINVAL;
		}
		o->loops_set = true;
		return 0;
	case O_STAMP:
		o->stamp = true;
		return 0;
	case O_ALLOW_PHYS:
		o->allow_physical = true;
		return 0;
	}
	snprintf(err, errlen, "internal: option %d has no handler", id);
	return -EINVAL;
}

int lr_cli_parse_send(int argc, char **argv, struct lr_send_opts *o, FILE *help_out, char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	lr_send_opts_default(o);
	ret = lr_cli_parse(&send_cli, argc, argv, send_set, o, help_out, err, errlen);
	if (ret)
		return ret;
	if (!o->ifname[0]) {
		snprintf(err, errlen, "missing -i/--interface (see 'linerate send --help')");
		return -EINVAL;
	}
	if (!o->have_dst_ip && !o->replay[0]) {
		snprintf(err, errlen, "missing --dst-ip (see 'linerate send --help')");
		return -EINVAL;
	}
	if (o->replay[0]) {
		if (o->nworkers != 1) {
			snprintf(err, errlen, "--replay sends the capture in order from one worker: give one queue");
			return -EINVAL;
		}
		if (o->replay_timing && o->rate.kind != LR_RATE_MAX) {
			snprintf(err, errlen, "--replay-timing and --rate both set the pace: give one");
			return -EINVAL;
		}
		if (!o->loops_set)
			o->loops = 1;
	} else if (o->replay_timing || o->loops_set || o->stamp) {
		snprintf(err, errlen, "--%s needs --replay FILE",
			 o->replay_timing ? "replay-timing" : o->loops_set ? "loops" : "stamp");
		return -EINVAL;
	}
	if (o->pcap_every && o->pcap_count) {
		snprintf(err, errlen, "--pcap-count and --pcap-every both choose the samples: give one");
		return -EINVAL;
	}
	if ((o->pcap_every || o->pcap_count || o->pcap_max_bytes) && !o->pcap[0]) {
		snprintf(err, errlen, "--pcap-count, --pcap-every and --pcap-max-bytes need --pcap FILE");
		return -EINVAL;
	}
	if (o->pcap[0] && !o->pcap_every && !o->pcap_count)
		o->pcap_count = LR_PCAP_DEFAULT_COUNT;
	if (o->cpus_set && o->ncpus != o->nworkers) {
		snprintf(err, errlen, "--cpus lists %u CPUs but --queues lists %u queues; give one CPU per queue",
			 o->ncpus, o->nworkers);
		return -EINVAL;
	}
	for (i = 0; i < o->nworkers; i++) {
		unsigned int j;

		for (j = 0; j < i; j++)
			if (o->queues[i] == o->queues[j]) {
				snprintf(err, errlen, "--queues: queue %u is listed twice", o->queues[i]);
				return -EINVAL;
			}
	}
	if (o->size < lr_frame_min_size(o->family)) {
		snprintf(err, errlen, "--size: %u bytes cannot carry the probe over %s; the minimum is %u",
			 o->size, o->family == AF_INET6 ? "IPv6" : "IPv4", lr_frame_min_size(o->family));
		return -EINVAL;
	}
	if (o->flows < o->nworkers) {
		snprintf(err, errlen, "--flows %u is fewer than the %u workers; each worker needs a flow of its own",
			 o->flows, o->nworkers);
		return -EINVAL;
	}
	if (!o->src_port_set)
		o->src_port = lr_src_port_base(o->flows);
	if ((uint32_t)o->src_port + o->flows - 1 > 65535) {
		snprintf(err, errlen, "--src-port %u + --flows %u runs past port 65535", o->src_port, o->flows);
		return -EINVAL;
	}
	/* a replay ends with its last loop; everything else with 10 s unless told */
	if (!o->count && !o->duration_ns && !(o->replay[0] && o->loops))
		o->duration_ns = 10ULL * 1000000000ULL;
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	lr_stop = 1;
}

static int send_loop(struct lr_tx *c, const struct lr_send_opts *o)
{
	uint64_t prev[LR_MAX_WORKERS] = { 0 }, last, now;
	struct sigaction sa = { .sa_handler = on_signal };
	int ret;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = lr_tx_start(c);
	if (ret)
		return ret;
	lr_tx_ready(c, 2 * NS);
	lr_tx_go(c, lr_now_ns());
	last = lr_tx_start_ns(c);
	for (;;) {
		struct timespec ts = { 0, 50 * 1000000L };

		nanosleep(&ts, NULL);
		if (lr_tx_done(c))
			break;
		now = lr_now_ns();
		if (now - last >= NS) {
			if (!o->quiet)
				lr_tx_live_line(c, prev, now - last);
			last = now;
		}
	}
	lr_tx_join(c);
	return 0;
}

int lr_cmd_send(const struct lr_send_opts *o)
{
	struct lr_pcap_writer *pw = NULL;
	struct lr_sampler *smp = NULL;
	struct lr_tx *c = NULL;
	char err[512];
	int ret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	/* outputs and CPUs before any interface is touched: a bad one is a usage error, not a lost test */
	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->pcap[0] && lr_out_check("--pcap", o->pcap, false, err, sizeof(err))) ||
	    (lr_tx_check_cpus(o, err + 8, sizeof(err) - 8) && (memcpy(err, "--cpus: ", 8), 1)))
		return lr_fail(LR_EXIT_USAGE, "send", "%s", err);
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "send", "%s", err);
	/* the capture file first: an unwritable path fails before any interface is touched */
	if (o->pcap[0] && lr_pcap_open(o->pcap, o->pcap_max_bytes, 0, &pw, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "send", "--pcap: %s", err);
	ret = lr_tx_open(o, 0, o->flows, &c);
	if (ret)
		goto fail;
	if (pw) {
		ret = lr_sampler_open(pw, o->nworkers, lr_tx_snaplen(c), &smp);
		if (ret) {
			ret = lr_fail(LR_EXIT_RUNTIME, "send", "--pcap: cannot start the sampler: %s", strerror(-ret));
			goto fail;
		}
		lr_tx_sample(c, smp, 0, o->pcap_every, o->pcap_count);
	}
	ret = send_loop(c, o);
	if (!ret)
		ret = lr_tx_report(c);
	if (smp) {
		uint64_t dropped = lr_sampler_dropped(smp);

		lr_sampler_close(smp);
		fprintf(stderr, "  pcap      %s: %llu frames written, %llu skipped by the size cap, %llu dropped (sample ring full)\n",
			o->pcap, (unsigned long long)lr_pcap_records(pw), (unsigned long long)lr_pcap_capped(pw),
			(unsigned long long)dropped);
		if (lr_pcap_close(pw, err, sizeof(err)) && !ret)
			ret = lr_fail(LR_EXIT_RUNTIME, "send", "--pcap: %s", err);
		pw = NULL;
	}
	lr_tx_close(c);
	if (pw && lr_pcap_close(pw, err, sizeof(err)) && !ret)
		ret = lr_fail(LR_EXIT_RUNTIME, "send", "--pcap: %s", err);
	return ret;
fail:
	if (smp)
		lr_sampler_close(smp);
	if (pw)
		lr_pcap_abort(pw);
	lr_tx_close(c);
	return ret;
}
