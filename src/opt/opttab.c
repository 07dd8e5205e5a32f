/* SPDX-License-Identifier: MIT */
/* Every option of every command and every key of `linerate run` files: defined here and nowhere else. */
#include <stdint.h>
#include "opt/opt.h"
#include "opt/opts.h"
#include "linerate/flow.h"
#include "linerate/probe.h"
#include "tx/frame.h"
#include "util/capture.h"
#include "util/units.h"

#define STR(x)	#x
#define XSTR(x)	STR(x)
#define NANO	1000000000ULL
#define DAY_NS	(24ULL * 3600 * NANO)

/* ---- kinds of value: their bounds and the words of their messages ------------------------------ */

static const struct lr_kind k_flag = { .type = LR_T_FLAG };
static const struct lr_kind k_counter = { .type = LR_T_COUNTER };
static const struct lr_kind k_path = { .type = LR_T_STRING, .what = "a path" };
static const struct lr_kind k_text = { .type = LR_T_STRING, .what = "a name" };
static const struct lr_kind k_ifname = { .type = LR_T_IFNAME, .what = "an interface name" };
static const struct lr_kind k_netns = {
	.type = LR_T_NETNS, .what = "a network namespace",
	.hint = "a name from 'ip netns', pid:PID, container:NAME or an absolute path",
};
static const struct lr_kind k_ip = { .type = LR_T_IP, .what = "an IPv4 or IPv6 address" };
static const struct lr_kind k_mac = { .type = LR_T_MAC, .what = "a MAC address", .hint = "aa:bb:cc:dd:ee:ff" };
static const struct lr_kind k_port = { .type = LR_T_COUNT, .min = 1, .max = 65535, .what = "a port" };
static const struct lr_kind k_frame_size = {
	.type = LR_T_COUNT, .min = LR_MIN_FRAME, .max = LR_MAX_FRAME, .what = "a frame size", .unit = "bytes",
};
static const struct lr_kind k_flows = { .type = LR_T_COUNT, .min = 1, .max = LR_MAX_FLOWS, .what = "a flow count" };
static const struct lr_kind k_frames = {
	.type = LR_T_COUNT, .min = 1, .max = UINT64_MAX, .what = "a positive frame count", .hint = "1000, 64k, 1M",
};
static const struct lr_kind k_samples = { .type = LR_T_COUNT, .min = 1, .max = UINT32_MAX, .what = "a frame count" };
static const struct lr_kind k_every = {
	.type = LR_T_COUNT, .min = 1, .max = UINT32_MAX, .what = "a sampling interval", .hint = "1 = every frame",
};
static const struct lr_kind k_loops = {
	.type = LR_T_COUNT, .min = 0, .max = UINT32_MAX, .what = "a loop count", .hint = "0 = until --duration",
};
/* a power of two: the sender picks the frames with a mask of the sequence, a modulo per frame would cost more */
static const struct lr_kind k_lat_every = {
	.type = LR_T_COUNT, .min = 1, .max = LR_LAT_EVERY_MAX, .pow2 = true, .what = "a latency interval",
	.hint = "a power of two: 1 = every frame, 64", .unit = "frames",
};
static const struct lr_kind k_batch = { .type = LR_T_COUNT, .min = 1, .max = 512, .what = "a batch size" };
static const struct lr_kind k_threads = { .type = LR_T_COUNT, .min = 1, .max = 64, .what = "a thread count" };
static const struct lr_kind k_snaplen = {
	.type = LR_T_COUNT, .min = LR_RX_SNAP_MIN, .max = LR_RX_SNAP_MAX, .what = "a snap length", .unit = "bytes",
};
/* a cap below 1 KiB would keep a handful of frames: a mistake more likely than a wish */
static const struct lr_kind k_file_size = {
	.type = LR_T_COUNT, .min = 1024, .max = UINT64_MAX, .what = "a file size", .unit = "bytes", .hint = "64k, 10M",
};
static const struct lr_kind k_repeat = { .type = LR_T_COUNT, .min = 1, .max = 100, .what = "a repeat count" };
static const struct lr_kind k_trials = { .type = LR_T_COUNT, .min = 1, .max = 64, .what = "a trial count" };
static const struct lr_kind k_duration = {
	.type = LR_T_DURATION, .min = 1, .max = LR_DURATION_MAX_NS, .what = "a duration", .hint = "10s, 500ms, 2m",
	.limit = "a year",
};
/* 0 is a value here: no limit */
static const struct lr_kind k_idle = {
	.type = LR_T_DURATION, .min = 0, .max = LR_DURATION_MAX_NS, .what = "a duration",
	.hint = "0 = no limit, 10s, 2m", .limit = "a year",
};
/* a step of a `run` file: a test of many steps, each a day at most */
static const struct lr_kind k_window = {
	.type = LR_T_DURATION, .min = 1, .max = DAY_NS, .what = "a duration", .hint = "500ms, 2s, 1m", .limit = "24h",
};
static const struct lr_kind k_warmup = {
	.type = LR_T_DURATION, .min = 0, .max = DAY_NS, .what = "a duration", .hint = "0, 200ms, 2s", .limit = "24h",
};
static const struct lr_kind k_rate = {
	.type = LR_T_RATE, .what = "a rate", .hint = "max, 100k, 1Mpps, 2.5Gbit",
	.limit = "1 Gpps, or 1 Tbit/s as a bit rate",
};
/* queue and CPU numbers below 4096: far more than any NIC or host has, and no wrap-around anywhere */
static const struct lr_kind k_queues = {
	.type = LR_T_IDLIST, .max = 4095, .items = LR_MAX_WORKERS, .what = "a queue list", .unit = "queue",
	.hint = "0-3, 0,2", .unique = true,
};
static const struct lr_kind k_cpus = {
	.type = LR_T_IDLIST, .max = 4095, .items = LR_MAX_WORKERS, .what = "a CPU list", .unit = "CPU",
	.hint = "0-3, 0,2",
};
static const struct lr_kind k_loss = {
	.type = LR_T_PERCENT, .min = 0, .max = 100 * NANO, .what = "a loss percentage", .hint = "0, 0.1%, 1",
};
static const struct lr_kind k_share = {
	.type = LR_T_PERCENT, .min = 1, .max = 100 * NANO, .what = "a share of the rate in percent",
	.hint = "70%, 12.5",
};
static const struct lr_kind k_step = {
	.type = LR_T_STEP, .what = "a resolution",
	.hint = "a percentage of the rate below 100%: 1%, 0.5%; or a step in packets per second: 1000, 5k",
};

/* where an agent is, or listens: checked in full by ctl/addr.c (lr_ctl_addr_parse) */
static const struct lr_kind k_peer = {
	.type = LR_T_STRING, .what = "a host", .hint = "agent.example, 198.18.0.2, 198.18.0.2:7446, [fd00::2]:7446",
};
static const struct lr_kind k_listen = {
	.type = LR_T_STRING, .what = "an address", .hint = "127.0.0.1, 198.18.0.1:7446, [::1]:7446",
};
static const struct lr_kind k_metrics = {
	.type = LR_T_STRING, .what = "an address and port", .hint = "127.0.0.1:9446, 198.18.0.1:9446, [::1]:9446",
};
static const struct lr_kind k_glob = {
	.type = LR_T_STRING, .what = "an interface pattern", .hint = "veth*, vx0, eth[1-3] (fnmatch)",
};
static const struct lr_kind k_netns_glob = {
	.type = LR_T_STRING, .what = "a namespace pattern",
	.hint = "blue, lab-*, pid:*, container:web*, /run/netns/* (fnmatch; '*' stops at '/')",
};

/* a packet rate a matrix cell must reach */
static const struct lr_kind k_pps = {
	.type = LR_T_COUNT, .min = 1, .max = 1000000000, .what = "a packet rate", .hint = "1000, 50k, 1M",
	.unit = "pps",
};

/* One word of a list; the words in the order of the enums in opts.h and config.h. */
#define CHOICE(w, ...)	{ .type = LR_T_CHOICE, .what = (w), \
			  .choices = (const struct lr_opt_choice[]){ __VA_ARGS__, { NULL } } }

static const struct lr_kind k_tx_engine = CHOICE("an engine",
	{ "auto", "live for --rate max, then AF_XDP zero-copy, AF_XDP copy, then AF_PACKET" },
	{ "afxdp", "an AF_XDP socket per queue" },
	{ "packet", "an AF_PACKET mmap ring; the kernel picks its TX queue from the CPU" },
	{ "live", "in-kernel frames: BPF_PROG_RUN in live-frames mode" });
static const struct lr_kind k_xsk_mode = CHOICE("a mode",
	{ "auto", "zero-copy, else copy" }, { "zerocopy" }, { "copy" });
static const struct lr_kind k_rx_engine = CHOICE("an engine",
	{ "auto", "XDP native, XDP generic, then AF_PACKET" },
	{ "xdp", "an XDP program that counts and drops" },
	{ "packet", "an AF_PACKET TPACKET_V3 ring: counts without dropping" });
static const struct lr_kind k_xdp_mode = CHOICE("a mode",
	{ "auto", "native, else generic" }, { "native" }, { "generic" });
static const struct lr_kind k_reflect_mode = CHOICE("a mode",
	{ "auto", "native where the device's peer can take XDP_TX frames (it runs XDP or has GRO on), else "
		  "generic" },
	{ "native", "the driver's XDP_TX: on a veth the peer must run XDP or have GRO on" },
	{ "generic", "XDP_TX through the device's normal transmit path: works behind bridges and tunnels" });
static const struct lr_kind k_yes_no = CHOICE("yes or no",
	{ "no", "leave the peer as it is" }, { "yes", "as send --prepare-peer" });
static const struct lr_kind k_clock = CHOICE("a clock rule",
	{ "auto", "one clock when both ends share a boot (equal boot_id), else an estimated offset" },
	{ "estimate", "estimate the offset even on one host, to check the estimate against the truth" });
static const struct lr_kind k_family = CHOICE("an address family",
	{ "auto", "the addresses the agents resolve to; IPv4 and IPv6 among them are refused" },
	{ "ipv4", "only the IPv4 addresses of names" }, { "ipv6", "only the IPv6 addresses of names" });
static const struct lr_kind k_cost = CHOICE("yes or no",
	{ "no", "none: bpf_stats stay off" },
	{ "yes", "each step's CPU ns per packet, split into sender, path and receiver (docs/cost.md)" });
static const struct lr_kind k_sender_limited = CHOICE("fail or pass",
	{ "fail", "the step fails (exit 3), and a search trial counts as failed: the rate offered was not tested" },
	{ "pass", "the step is judged on its loss and latency alone; a search counts a passing trial at the rate "
		  "really sent" });
static const struct lr_kind k_mode = CHOICE("a mode",
	{ "sweep", "every size at every rate, one step each" },
	{ "throughput", "per size, the highest rate up to [tx] rate with loss <= max_loss (RFC 2544 26.1)" },
	{ "rtt", "a sweep of round trips: linerate reflect on [rx] sends every frame back, the sender counts "
		 "them; round-trip time and loss in each direction" },
	{ "rtt-throughput", "the throughput search over round trips: a trial passes with loss both ways <= "
			    "max_loss and p99 round-trip time <= max_rtt_p99" });

/* ---- the options ------------------------------------------------------------------------------- */

#define TX	LR_SEC_TX
#define RX	LR_SEC_RX
#define TEST	LR_SEC_TEST
#define STREAM	LR_SEC_STREAM

const struct lr_ini_section lr_ini_sections[4] = {
	{ TEST, "[test]", "What the test does: its mode, its windows, its thresholds and the throughput search." },
	{ TX, "[tx]", "The sender (required). Its stream keys are the one stream, or the defaults of every [stream]." },
	{ RX, "[rx]", "The receiver (required)." },
	{ STREAM, "[stream NAME]",
	  "Up to 16 concurrent streams, each with its own template, flows and share of the step's rate; NAME is "
	  "letters, digits, '_' and '-'. A key a stream does not give is [tx]'s. Flow ids go to the streams in "
	  "file order, at most 65536 in all." },
};

/* CLI: the command-line spelling; INI: the key and its sections. */
#define CLI(n, s, m)	.name = (n), .short_name = (s), .metavar = (m)
#define INI(k, where)	.key = (k), .secs = (where)

const struct lr_opt lr_opts[LR_O_COUNT_ALL] = {
	/* send, [tx] and [stream]; some shared with recv and probe */
	[LR_O_TX_IFACE] = { CLI("interface", 'i', "IFACE"), INI("interface", TX), .kind = &k_ifname, .required = true,
			    .help = "interface to send on" },
	[LR_O_NETNS] = { CLI("netns", 'n', "NS"), INI("netns", TX | RX), .kind = &k_netns,
			 .help = "run in network namespace NS", .def_text = "the current one" },
	[LR_O_DST_IP] = { CLI("dst-ip", 0, "IP"), INI("dst_ip", TX | STREAM), .kind = &k_ip,
			  .help = "destination IPv4 or IPv6 address (required, but for --replay)",
			  .ini_note = "Required in [tx] unless every [stream] gives its own" },
	[LR_O_SRC_IP] = { CLI("src-ip", 0, "IP"), INI("src_ip", TX | STREAM), .kind = &k_ip,
			  .help = "source address, of the destination's family",
			  .def_text = "the interface's first address, else its bridge's when it is a bridge port" },
	[LR_O_DST_MAC] = { CLI("dst-mac", 0, "MAC"), INI("dst_mac", TX | STREAM), .kind = &k_mac,
			   .help = "destination MAC",
			   .def_text = "the next hop's, from the neighbour table, else the veth peer, else resolved "
				       "now by ARP or ND within 1 s" },
	[LR_O_SRC_MAC] = { CLI("src-mac", 0, "MAC"), INI("src_mac", TX | STREAM), .kind = &k_mac,
			   .help = "source MAC", .def_text = "the interface's MAC" },
	[LR_O_SRC_PORT] = { CLI("src-port", 0, "PORT"), INI("src_port", TX | STREAM), .kind = &k_port,
			    .help = "UDP source port of flow 0; flow N uses PORT+N, up to 65535",
			    .def = XSTR(LR_DEFAULT_SRC_PORT),
			    .def_text = XSTR(LR_DEFAULT_SRC_PORT) ", lower when the flows need the room" },
	[LR_O_DST_PORT] = { CLI("dst-port", 0, "PORT"), INI("dst_port", TX), .kind = &k_port,
			    .help = "UDP destination port of the test frames: the one the receiver counts",
			    .def = XSTR(LR_DEFAULT_DST_PORT) },
	[LR_O_SIZE] = { CLI("size", 0, "BYTES"), INI("sizes", TX), .alias = "size", .list = LR_CFG_MAX_SIZES,
			.kind = &k_frame_size, .def = XSTR(LR_MIN_FRAME),
			.help = "Ethernet frame size including the FCS, as in RFC 2544: at least 84 for IPv6, at most "
				"MTU+18",
			.ini_note = "A list: every size is a sweep step; beside [stream] sections at most one, "
				    "which is ignored" },
	[LR_O_FLOWS] = { CLI("flows", 0, "N"), INI("flows", TX | STREAM), .kind = &k_flows,
			 .help = "flows (UDP source ports), each with its own sequence; at least one per queue",
			 .def_text = "one per queue" },
	[LR_O_RATE] = { CLI("rate", 0, "RATE"), INI("rates", TX), .alias = "rate", .list = LR_CFG_MAX_RATES,
			.kind = &k_rate, .def = "max",
			.help = "the total rate: max, packets per second, or an L1 line rate in bits where each frame "
				"also costs 20 B of preamble and gap",
			.ini_note = "A list: every rate is a sweep step for every size; mode = throughput takes "
				    "one, the search's upper bound" },
	[LR_O_COUNT] = { CLI("count", 'c', "N"), .kind = &k_frames, .help = "stop after N frames in all" },
	[LR_O_TX_DURATION] = { CLI("duration", 'd', "TIME"), .kind = &k_duration, .help = "stop after TIME",
			       .def_text = "10s unless --count" },
	[LR_O_QUEUES] = { CLI("queues", 0, "LIST"), INI("queues", TX | STREAM), .kind = &k_queues, .def = "0",
			  .help = "TX queues, one pinned worker each" },
	[LR_O_CPUS] = { CLI("cpus", 0, "LIST"), INI("cpus", TX | STREAM), .kind = &k_cpus,
			.help = "the CPU of each worker, one per queue", .def_text = "CPU n for queue n" },
	[LR_O_TX_ENGINE] = { CLI("engine", 'e', "NAME"), INI("engine", TX), .kind = &k_tx_engine, .def = "auto",
			     .help = "the engine that sends" },
	[LR_O_XSK_MODE] = { CLI("xdp-mode", 0, "MODE"), INI("xdp_mode", TX), .kind = &k_xsk_mode, .def = "auto",
			    .help = "AF_XDP bind mode" },
	[LR_O_BATCH] = { CLI("batch", 0, "N"), INI("batch", TX), .kind = &k_batch, .def = "64",
			 .help = "frames per ring round" },
	[LR_O_LATENCY_EVERY] = { CLI("latency-every", 0, "N"), INI("latency_every", TX), .kind = &k_lat_every,
				 .help = "a timestamp for latency in one frame in N of each flow (those whose sequence "
					 "is a multiple of N), none in the others",
				 .def_text = "64 at --rate max, else N for at least 16384 stamped frames a second" },
	[LR_O_RTT] = { CLI("rtt", 0, NULL), .kind = &k_flag,
		       .help = "round trips: a reflector (linerate reflect) at --dst-ip sends every frame back, and "
			       "this side counts them on -i: round-trip time, and loss, reordering and duplicates "
			       "in each direction" },
	[LR_O_PREPARE_PEER] = { CLI("prepare-peer", 0, NULL), .kind = &k_flag,
				.help = "when -i is a veth whose peer takes no XDP frames (no XDP program, GRO off), "
					"switch GRO on at the peer for the test and put it back after, whatever the "
					"engine: live can then send, and AF_XDP sees the same path" },
	[LR_O_JSON] = { CLI("json", 'j', "FILE"), .kind = &k_path,
			.help = "write the summary as JSON to FILE (- for stdout)" },
	[LR_O_QUIET] = { CLI("quiet", 'q', NULL), .kind = &k_flag, .help = "no live lines, the summary only" },
	[LR_O_VERBOSE] = { CLI("verbose", 'v', NULL), .kind = &k_counter,
			   .help = "more detail; twice for libbpf/libxdp debug" },
	[LR_O_ALLOW_PHYSICAL] = { CLI("allow-physical", 0, NULL), .kind = &k_flag,
				  .help = "allow sending on a physical NIC" },
	[LR_O_TX_PCAP] = { CLI("pcap", 0, "FILE"), INI("pcap", TX), .kind = &k_path,
			   .help = "write samples of the frames sent to FILE (pcap, ns timestamps)",
			   .ini_note = "Samples of every measured window" },
	[LR_O_PCAP_COUNT] = { CLI("pcap-count", 0, "N"), .kind = &k_samples, .help = "sample the first N frames",
			      .def_text = XSTR(LR_PCAP_DEFAULT_COUNT) },
	[LR_O_TX_PCAP_EVERY] = { CLI("pcap-every", 0, "K"), INI("pcap_every", TX), .kind = &k_every,
				 .help = "sample one frame in K instead",
				 .def_text = "the first " XSTR(LR_PCAP_DEFAULT_COUNT) " frames",
				 .ini_note = "By default the first " XSTR(LR_PCAP_DEFAULT_COUNT) " frames of each "
					     "step" },
	[LR_O_PCAP_MAX_BYTES] = { CLI("pcap-max-bytes", 0, "BYTES"), .kind = &k_file_size,
				  .help = "stop writing samples once the file would grow past BYTES",
				  .def_text = "no cap" },
	[LR_O_REPLAY] = { CLI("replay", 0, "FILE"), .kind = &k_path,
			  .help = "send the frames of a pcap/pcapng capture instead of the template" },
	[LR_O_REPLAY_TIMING] = { CLI("replay-timing", 0, NULL), .kind = &k_flag,
				 .help = "keep the capture's own frame timing instead of --rate" },
	[LR_O_LOOPS] = { CLI("loops", 0, "N"), .kind = &k_loops, .help = "times through the capture", .def = "1" },
	[LR_O_STAMP] = { CLI("stamp", 0, NULL), .kind = &k_flag,
			 .help = "write the probe into replayed UDP frames to --dst-port so recv counts them" },

	/* recv and [rx] */
	[LR_O_RX_IFACE] = { CLI("interface", 'i', "IFACE"), INI("interface", RX), .kind = &k_ifname, .required = true,
			    .help = "interface to count on: the XDP program attaches here" },
	[LR_O_RX_DURATION] = { CLI("duration", 'd', "TIME"), .kind = &k_duration, .help = "stop after TIME",
			       .def_text = "until SIGINT" },
	[LR_O_ONCE] = { CLI("once", 0, NULL), .kind = &k_flag,
			.help = "stop once every flow's end-of-test marker has arrived" },
	[LR_O_IDLE_TIMEOUT] = { CLI("idle-timeout", 0, "TIME"), .kind = &k_idle,
				.help = "with --once: give up after TIME without a test frame or end-of-test marker "
					"(the sender failed, or sends elsewhere), and exit 1 with what was counted",
				.def_text = "60s before the first, 10s after the last" },
	[LR_O_PASS] = { CLI("pass", 0, NULL), .kind = &k_flag,
			.help = "pass test frames on to the stack instead of dropping them" },
	[LR_O_RX_ENGINE] = { CLI("engine", 'e', "NAME"), INI("engine", RX), .kind = &k_rx_engine, .def = "auto",
			     .help = "the engine that counts" },
	[LR_O_XDP_MODE] = { CLI("xdp-mode", 0, "MODE"), INI("xdp_mode", RX), .kind = &k_xdp_mode, .def = "auto",
			    .help = "XDP attach mode, for the xdp engine only" },
	[LR_O_WORKERS] = { CLI("workers", 0, "N"), INI("workers", RX), .kind = &k_threads, .def = "1",
			   .help = "AF_PACKET receive threads (PACKET_FANOUT by flow hash); the packet engine only" },
	[LR_O_READY_FILE] = { CLI("ready-file", 0, "PATH"), .kind = &k_path,
			      .help = "create PATH, holding our PID, once counting has started" },
	[LR_O_RX_PCAP] = { CLI("pcap", 0, "FILE"), INI("pcap", RX), .kind = &k_path,
			   .help = "write samples of the frames received to FILE (pcap, ns timestamps)" },
	[LR_O_RX_PCAP_EVERY] = { CLI("pcap-every", 0, "K"), INI("pcap_every", RX), .kind = &k_every, .def = "1",
				 .help = "sample one test data frame in K; end-of-test markers are counted, not "
					 "sampled" },
	[LR_O_PCAP_FOREIGN] = { CLI("pcap-foreign", 0, NULL), .kind = &k_flag,
				.help = "also sample every foreign frame" },
	[LR_O_SNAPLEN] = { CLI("snaplen", 0, "N"), INI("snaplen", RX), .kind = &k_snaplen,
			   .def = XSTR(LR_PCAP_DEFAULT_SNAPLEN), .help = "bytes kept of each sample" },
	[LR_O_PROG_STATS] = { CLI("prog-stats", 0, NULL), .kind = &k_flag,
			      .help = "time the XDP program: bpf_stats on for 10 ms in every 320 ms, calibrated, so "
				      "the JSON's rx.prog gives its ns per frame (needs CAP_SYS_ADMIN)" },

	/* run */
	[LR_O_RUN_FILE] = { .metavar = "FILE", .kind = &k_path, .required = true, .help = "the test: an INI file" },
	[LR_O_CHECK] = { CLI("check", 0, NULL), .kind = &k_flag, .help = "validate FILE only; touch no interface" },
	[LR_O_RUN_JSON] = { CLI("json", 'j', "FILE"), .kind = &k_path,
			    .help = "write every step (and every search trial) as JSON to FILE (- for stdout)" },
	[LR_O_CSV] = { CLI("csv", 0, "FILE"), .kind = &k_path,
		       .help = "write one CSV row per step to FILE (- for stdout)" },
	[LR_O_RUN_QUIET] = { CLI("quiet", 'q', NULL), .kind = &k_flag, .help = "no progress lines, the table only" },

	/* probe */
	[LR_O_PROBE_IFACE] = { CLI("interface", 'i', "IFACE"), .kind = &k_ifname, .required = true,
			       .help = "interface to probe" },
	[LR_O_PROBE_JSON] = { CLI("json", 'j', "FILE"), .kind = &k_path,
			      .help = "write the findings as JSON to FILE (- for stdout, instead of the table)" },
	[LR_O_PROBE_VERBOSE] = { CLI("verbose", 'v', NULL), .kind = &k_counter,
				 .help = "also per-queue driver counters; twice for libbpf/libxdp debug" },

	/* veth */
	[LR_O_VETH_TARGET] = { .metavar = "container:NAME[:IFNAME]", .kind = &k_path, .required = true,
			       .help = "the container, and the interface inside it" },
	[LR_O_VETH_NETNS] = { CLI("netns", 'n', "NS"), .kind = &k_netns,
			      .help = "look for the peer in network namespace NS", .def_text = "this one" },
	[LR_O_VETH_JSON] = { CLI("json", 'j', "FILE"), .kind = &k_path,
			     .help = "write container, PID, namespace and both ends as JSON to FILE (- for stdout, "
				     "instead of the name)" },
	[LR_O_VETH_VERBOSE] = { CLI("verbose", 'v', NULL), .kind = &k_counter,
				.help = "say which CLI was asked and what it answered" },

	/* reflect */
	[LR_O_REFLECT_IFACE] = { CLI("interface", 'i', "IFACE"), .kind = &k_ifname, .required = true,
				 .help = "interface to reflect on: the XDP program attaches here and sends test "
					 "frames back out of it" },
	[LR_O_REFLECT_MODE] = { CLI("xdp-mode", 0, "MODE"), .kind = &k_reflect_mode, .def = "auto",
				.help = "XDP attach mode" },
	[LR_O_REFLECT_DURATION] = { CLI("duration", 'd', "TIME"), .kind = &k_duration, .help = "stop after TIME",
				    .def_text = "until SIGINT" },
	[LR_O_REFLECT_ONCE] = { CLI("once", 0, NULL), .kind = &k_flag,
				.help = "stop once every flow's end-of-test marker has been reflected" },

	/* send --peer: the far end through an agent */
	[LR_O_PEER] = { CLI("peer", 0, "HOST[:PORT]"), .kind = &k_peer,
			.help = "the agent (linerate agent) that runs the far end: a receiver on the interface that "
				"holds --dst-ip; port 7446 unless given; reached from where send starts, before --netns" },
	[LR_O_PEER_IFACE] = { CLI("peer-interface", 0, "IFACE"), .kind = &k_ifname,
			      .help = "the far end's interface instead of the one that holds --dst-ip (--peer)" },
	[LR_O_PEER_NETNS] = { CLI("peer-netns", 0, "NS"), .kind = &k_netns,
			      .help = "the network namespace on the agent's host of the far end (--peer)",
			      .def_text = "the agent's own" },
	[LR_O_REVERSE] = { CLI("reverse", 0, NULL), .kind = &k_flag,
			   .help = "the agent sends to -i's address and this side counts on -i (--peer)" },
	[LR_O_TOKEN_FILE] = { CLI("token-file", 0, "FILE"), .kind = &k_path,
			      .help = "the shared secret the agent asks for (mode 0600 or stricter; --peer)" },
	[LR_O_CLOCK] = { CLI("clock", 0, "RULE"), .kind = &k_clock, .def = "auto",
			 .help = "how the two ends' clocks are put on one time line for latency (--peer)" },

	/* agent */
	[LR_O_LISTEN] = { CLI("listen", 0, "ADDR[:PORT]"), .kind = &k_listen, .required = true,
			  .help = "the address to take controllers' connections on; port 7446 unless given" },
	[LR_O_AGENT_TOKEN_FILE] = { CLI("token-file", 0, "FILE"), .kind = &k_path,
				    .help = "the shared secret a controller must prove it holds (owned by root or "
					    "this user, mode 0600 or stricter)",
				    .def_text = "none: the agent refuses to start without it, unless --insecure" },
	[LR_O_INSECURE] = { CLI("insecure", 0, NULL), .kind = &k_flag,
			    .help = "run without --token-file, on any address, loopback included: anyone who reaches "
				    "the port (any local user, on loopback) can run tests as this agent's user" },
	[LR_O_AGENT_NETNS] = { CLI("netns", 'n', "NS"), .kind = &k_netns,
			       .help = "serve from network namespace NS: listen there, and test there unless a "
				       "request names another", .def_text = "the current one" },
	[LR_O_ALLOW] = { CLI("allow", 0, "GLOB"), .kind = &k_glob, .list = LR_AGENT_MAX_ALLOW, .repeat = true,
			 .help = "serve only interfaces whose name matches GLOB (repeatable, or comma-separated)",
			 .def_text = "every interface that is not a physical NIC" },
	[LR_O_AGENT_PHYSICAL] = { CLI("allow-physical", 0, NULL), .kind = &k_flag,
				  .help = "serve physical NICs too (that --allow matches): send and count on them" },
	[LR_O_AGENT_READY_FILE] = { CLI("ready-file", 0, "PATH"), .kind = &k_path,
				    .help = "create PATH, holding our PID, once listening" },
	[LR_O_METRICS] = { CLI("metrics", 0, "ADDR:PORT"), .kind = &k_metrics,
			   .help = "serve Prometheus metrics at http://ADDR:PORT/metrics: the agent's state and the "
				   "current or last test's counts; no auth (they hold no secret): bind where your "
				   "scrapers reach", .def_text = "none" },
	[LR_O_CAPTURE_DIR] = { CLI("capture-dir", 0, "DIR"), .kind = &k_path,
			       .help = "write the captures controllers ask for (a run file's [rx] pcap with [rx] "
				       "agent) into DIR, by a bare file name, never over an existing file; DIR must be this "
				       "user's and writable by no one else",
			       .def_text = "none: a request with a capture is refused" },
	[LR_O_ALLOW_NETNS] = { CLI("allow-netns", 0, "GLOB"), .kind = &k_netns_glob, .list = LR_AGENT_MAX_ALLOW_NETNS,
			       .repeat = true,
			       .help = "let requests name a network namespace whose spelling (a name from 'ip netns', "
				       "pid:PID, container:NAME or an absolute path) matches GLOB (repeatable, or "
				       "comma-separated)",
			       .def_text = "none: requests test in the agent's own namespace only" },

	/* matrix: a node-pair matrix over agents */
	[LR_O_MATRIX_AGENTS] = { CLI("agents", 'a', "HOST[:PORT],..."), .kind = &k_peer, .list = LR_MATRIX_MAX_ENTRIES,
				 .repeat = true, .required = true,
				 .help = "the agents (linerate agent), comma-separated or repeated; a name stands for every "
					 "address it resolves to (a headless Service: every agent pod), duplicates once, "
					 "sorted; port 7446 unless given" },
	[LR_O_MATRIX_PAIRS] = { CLI("pairs", 'p', "FILE"), .kind = &k_path,
				.help = "test only the pairs FILE names, one a line: 'A B', an address or a name each "
					"('#' comments)",
				.def_text = "every pair of agents" },
	[LR_O_MATRIX_SIZES] = { CLI("sizes", 0, "LIST"), .kind = &k_frame_size, .list = LR_MATRIX_MAX_SIZES,
				.def = XSTR(LR_MIN_FRAME), .def_text = XSTR(LR_MIN_FRAME) ", 84 over IPv6",
				.help = "Ethernet frame sizes including the FCS, comma-separated: each pair, each way, at "
					"each size" },
	[LR_O_MATRIX_DURATION] = { CLI("duration", 'd', "TIME"), .kind = &k_duration, .def = "2s",
				   .def_text = "2s unless --count", .help = "each cell sends for TIME at most" },
	[LR_O_MATRIX_COUNT] = { CLI("count", 'c', "N"), .kind = &k_frames,
				.help = "each cell sends N frames (with --duration too, whichever ends first)" },
	[LR_O_MATRIX_FAMILY] = { CLI("family", 0, "FAMILY"), .kind = &k_family, .def = "auto",
				 .help = "which addresses of the agents pair up" },
	[LR_O_MATRIX_TOKEN_FILE] = { CLI("token-file", 0, "FILE"), .kind = &k_path,
				     .help = "the shared secret the agents ask for (mode 0600 or stricter)" },
	[LR_O_MATRIX_MAX_LOSS] = { CLI("max-loss", 0, "PERCENT"), .kind = &k_loss, .def_text = "none",
				   .help = "a cell whose loss is higher, or whose end-of-test markers did not all come, "
					   "fails (exit 3)" },
	[LR_O_MATRIX_MIN_PPS] = { CLI("min-pps", 0, "N"), .kind = &k_pps, .def_text = "none",
				  .help = "a cell that received fewer frames a second fails (exit 3)" },
	[LR_O_MATRIX_JSON] = { CLI("json", 'j', "FILE"), .kind = &k_path,
			       .help = "write the agents, the pairs and every cell as JSON to FILE (- for stdout; the "
				       "table then goes to stderr)" },
	[LR_O_MATRIX_CSV] = { CLI("csv", 0, "FILE"), .kind = &k_path,
			      .help = "write one CSV row per cell to FILE (- for stdout)" },

	/* keys of `linerate run` files only */
	[LR_O_NAME] = { .metavar = "TEXT", INI("name", TEST), .kind = &k_text,
			.help = "shown in the report and the JSON", .def_text = "the file name without .ini" },
	[LR_O_MODE] = { .metavar = "MODE", INI("mode", TEST), .kind = &k_mode, .def = "sweep",
			.help = "what the test does" },
	[LR_O_DURATION] = { .metavar = "TIME", INI("duration", TEST), .kind = &k_window, .def = "2s",
			    .help = "the measured window of each step" },
	[LR_O_WARMUP] = { .metavar = "TIME", INI("warmup", TEST), .kind = &k_warmup, .def = "500ms",
			  .help = "traffic before each window (every step, every search trial), not counted (0 "
				  "for none)" },
	[LR_O_REPEAT] = { .metavar = "N", INI("repeat", TEST), .kind = &k_repeat, .def = "1",
			  .help = "runs of each step (or search)" },
	[LR_O_MAX_LOSS] = { .metavar = "PERCENT", INI("max_loss", TEST), .kind = &k_loss, .def = "0",
			    .help = "loss above which a sweep step fails (exit 3) and a search trial counts as "
				    "failed" },
	[LR_O_MAX_P99] = { .metavar = "TIME", INI("max_p99", TEST), .kind = &k_window, .def_text = "none",
			   .help = "a step whose p99 one-way latency is higher fails (exit 3)" },
	[LR_O_MAX_RTT_P99] = { .metavar = "TIME", INI("max_rtt_p99", TEST), .kind = &k_window, .def_text = "none",
			       .help = "mode = rtt: a step whose p99 round-trip time is higher fails (exit 3), and a "
				       "search trial counts as failed" },
	[LR_O_TRIAL] = { .metavar = "TIME", INI("trial", TEST), .kind = &k_window, .def_text = "duration",
			 .help = "the window of one throughput-search trial" },
	[LR_O_RESOLUTION] = { .metavar = "STEP", INI("resolution", TEST), .kind = &k_step, .def = "1%",
			      .help = "the search stops once the best passing and the lowest failing rate are this "
				      "close" },
	[LR_O_MAX_TRIALS] = { .metavar = "N", INI("max_trials", TEST), .kind = &k_trials, .def = "16",
			      .help = "trials per search at most" },
	[LR_O_STREAM_SIZE] = { .metavar = "BYTES", INI("size", STREAM), .kind = &k_frame_size, .required = true,
			       .help = "this stream's frame size, at least 84 for IPv6" },
	[LR_O_SHARE] = { .metavar = "PERCENT", INI("share", STREAM), .kind = &k_share, .def_text = "equal shares",
			 .help = "its part of the step's rate; the shares add up to 100 (within 0.01): give every "
				 "stream one, or none" },
	[LR_O_RUN_AGENT] = { .metavar = "HOST[:PORT]", INI("agent", TX | RX), .kind = &k_peer,
			     .def_text = "none: this end runs in run's own process (tx) or its child (rx)",
			     .help = "the agent (linerate agent) that runs this end on its host; port 7446 unless "
				     "given; interface and netns then name the agent's. [tx] agent takes one stream "
				     "and no pcap" },
	[LR_O_RUN_TOKEN_FILE] = { .metavar = "FILE", INI("token_file", TX | RX), .kind = &k_path,
				  .help = "the shared secret this end's agent asks for (mode 0600 or stricter)" },
	[LR_O_RUN_CLOCK] = { .metavar = "RULE", INI("clock", TEST), .kind = &k_clock, .def = "auto",
			     .help = "how the two ends' clocks are put on one time line for latency, when an end "
				     "runs on an agent" },
	[LR_O_RUN_PREPARE_PEER] = { .metavar = "yes|no", INI("prepare_peer", TX), .kind = &k_yes_no, .def = "no",
				    .help = "GRO on at the veth peer of [tx] interface for the whole run, put back "
					    "after (with [tx] agent, the agent does it for each phase's sender)" },
	[LR_O_COST] = { .metavar = "YES|NO", INI("cost", TEST), .kind = &k_cost, .def = "yes",
			.help = "measure what each packet costs in CPU, split into sender, path and receiver; the "
				"receiver's part needs CAP_SYS_ADMIN (bpf_stats)" },
	[LR_O_SENDER_LIMITED] = { .metavar = "FAIL|PASS", INI("sender_limited", TEST), .kind = &k_sender_limited,
				  .def = "fail",
				  .help = "what a step whose senders fell more than 2 % short of the offered rate "
					  "counts as" },
};
