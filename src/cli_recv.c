/* SPDX-License-Identifier: MIT */
/* Options and help of `linerate recv`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "linerate/capture.h"
#include "linerate/cli.h"
#include "linerate/flow.h"
#include "linerate/probe.h"
#include "linerate/opts.h"

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
