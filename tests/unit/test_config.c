/* SPDX-License-Identifier: MIT */
/* Unit tests for the `linerate run` INI parser: every shipped config, defaults, and one case per error. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "linerate/probe.h"
#include "run/config.h"

#ifndef LR_SOURCE_DIR
#error "tests/CMakeLists.txt passes LR_SOURCE_DIR"
#endif

#define NS 1000000000ULL
#define MS 1000000ULL

/* A valid minimal file: [tx] on lines 1-3, [rx] on lines 4-5 when used as TX RX. */
#define TX "[tx]\ninterface = v0\ndst_ip = 198.18.0.2\n"
#define RX "[rx]\ninterface = v1\n"

/* static: struct lr_cfg is tens of kilobytes */
static struct lr_cfg cfg;
static char err[1024];

static int parse_len(const char *text, size_t len)
{
	memset(err, 0, sizeof(err));
	return lr_cfg_parse("x.ini", text, len, &cfg, err, sizeof(err));
}

static int parse(const char *text)
{
	return parse_len(text, strlen(text));
}

static void assert_parses(const char *text)
{
	int ret = parse(text);

	if (ret)
		fail_msg("expected success, got %d: %s\n--- input ---\n%s", ret, err, text);
}

/* ---- every file in configs/ ---- */

static void test_shipped_configs(void **state)
{
	const char *dir = LR_SOURCE_DIR "/configs";
	unsigned int n = 0;
	struct dirent *de;
	DIR *d;

	(void)state;
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[4096];
		int ret;

		if (len < 5 || strcmp(de->d_name + len - 4, ".ini"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ret = lr_cfg_load(path, &cfg, err, sizeof(err));
		if (ret)
			fail_msg("%s: %s", de->d_name, err);
		/* durations stay short: the e2e test runs every file */
		assert_true(cfg.duration_ns <= 2 * NS);
		assert_true(cfg.warmup_ns <= NS / 2);
		assert_true(cfg.tx_ifname[0] && cfg.rx_ifname[0]);
		n++;
	}
	closedir(d);
	assert_true(n >= 8);
}

static void load(const char *name)
{
	char path[4096];
	int ret;

	snprintf(path, sizeof(path), "%s/configs/%s", LR_SOURCE_DIR, name);
	ret = lr_cfg_load(path, &cfg, err, sizeof(err));
	if (ret)
		fail_msg("%s: %s", name, err);
}

static void test_shipped_details(void **state)
{
	(void)state;
	load("multi-stream.ini");
	assert_int_equal(cfg.nstreams, 2);
	assert_string_equal(cfg.streams[0].name, "bulk");
	assert_string_equal(cfg.streams[1].name, "small");
	assert_int_equal(cfg.streams[0].tx.size, 1518);
	assert_int_equal(cfg.streams[1].tx.size, 64);
	assert_true(cfg.streams[0].share > 0.6999 && cfg.streams[0].share < 0.7001);
	assert_true(cfg.streams[1].share > 0.2999 && cfg.streams[1].share < 0.3001);
	assert_int_equal(cfg.streams[0].tx.queues[0], 0);
	assert_int_equal(cfg.streams[1].tx.queues[0], 1);
	assert_int_equal(cfg.streams[1].tx.src_port, 8000);
	/* the one step size is the share-weighted mean: 0.7 * 1518 + 0.3 * 64 = 1081.8 */
	assert_int_equal(cfg.nsizes, 1);
	assert_int_equal(cfg.sizes[0], 1082);
	assert_int_equal(cfg.nrates, 2);

	load("rfc2544-throughput.ini");
	assert_int_equal(cfg.mode, LR_RUN_THROUGHPUT);
	assert_int_equal(cfg.nrates, 1);
	assert_int_equal(cfg.rates[0].kind, LR_RATE_PPS);
	assert_int_equal(cfg.rates[0].value, 10000000);
	assert_int_equal(cfg.trial_ns, NS);
	assert_true(cfg.resolution > 0.0499 && cfg.resolution < 0.0501);
	assert_int_equal(cfg.max_trials, 12);
	assert_int_equal(cfg.nsizes, 2);

	load("size-sweep.ini");
	assert_int_equal(cfg.nsizes, 7);
	assert_int_equal(cfg.sizes[6], 1518);

	load("veth-2queue.ini");
	assert_int_equal(cfg.streams[0].tx.nworkers, 2);
	assert_true(cfg.streams[0].tx.cpus_set);
	assert_int_equal(cfg.streams[0].tx.cpus[1], 1);
	assert_int_equal(cfg.streams[0].tx.flows, 4);

	load("reference.ini");
	assert_string_equal(cfg.name, "reference");
	assert_string_equal(cfg.tx_netns, "lrlab-veth-host");
	assert_string_equal(cfg.rx_netns, "lrlab-veth-c1");
}

/* ---- defaults and what the success path fills in ---- */

static void test_defaults(void **state)
{
	const struct lr_cfg_stream *s = &cfg.streams[0];
	struct in_addr dst;

	(void)state;
	memset(err, 0, sizeof(err));
	assert_int_equal(lr_cfg_parse("some/dir/my-test.ini", TX RX, strlen(TX RX), &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.path, "some/dir/my-test.ini");
	assert_string_equal(cfg.name, "my-test");
	assert_int_equal(cfg.mode, LR_RUN_SWEEP);
	assert_int_equal(cfg.duration_ns, 2 * NS);
	assert_int_equal(cfg.warmup_ns, 500 * MS);
	assert_int_equal(cfg.repeat, 1);
	assert_true(cfg.max_loss == 0);
	assert_int_equal(cfg.max_p99_ns, 0);
	assert_int_equal(cfg.trial_ns, 2 * NS);
	assert_true(cfg.resolution > 0.00999 && cfg.resolution < 0.01001);
	assert_int_equal(cfg.resolution_pps, 0);
	assert_int_equal(cfg.max_trials, 16);
	/* a sender short of the offered rate fails the step unless the file says otherwise */
	assert_false(cfg.sender_limited_pass);
	assert_string_equal(cfg.tx_ifname, "v0");
	assert_string_equal(cfg.tx_netns, "");
	assert_int_equal(cfg.tx_engine, LR_ENGINE_AUTO);
	assert_int_equal(cfg.xsk_mode, LR_XSK_AUTO);
	assert_int_equal(cfg.batch, 64);
	assert_int_equal(cfg.dst_port, LR_DEFAULT_DST_PORT);
	assert_int_equal(cfg.nsizes, 1);
	assert_int_equal(cfg.sizes[0], 64);
	assert_int_equal(cfg.nrates, 1);
	assert_int_equal(cfg.rates[0].kind, LR_RATE_MAX);
	assert_string_equal(cfg.rx_ifname, "v1");
	assert_int_equal(cfg.rx_engine, LR_RX_ENGINE_AUTO);
	assert_int_equal(cfg.xdp_mode, LR_XDP_AUTO);
	assert_int_equal(cfg.rx_workers, 1);
	/* the implicit stream 0 is [tx] */
	assert_int_equal(cfg.nstreams, 1);
	assert_string_equal(s->name, "");
	assert_int_equal(s->tx.size, 0);
	assert_true(s->share == 1.0);
	assert_int_equal(s->tx.flows, 1);
	assert_int_equal(s->tx.nworkers, 1);
	assert_int_equal(s->tx.queues[0], 0);
	assert_false(s->tx.cpus_set);
	assert_int_equal(s->tx.src_port, LR_DEFAULT_SRC_PORT);
	assert_int_equal(s->tx.family, AF_INET);
	assert_false(s->tx.have_src_ip);
	assert_false(s->tx.have_src_mac);
	assert_false(s->tx.have_dst_mac);
	inet_pton(AF_INET, "198.18.0.2", &dst);
	assert_memory_equal(&s->tx.dst_ip, &dst, 4);
	assert_int_equal(s->line, 1);
}

/* Many flows and no src_port: the base moves down so every flow's port fits; a given src_port is kept. */
static void test_src_port_base(void **state)
{
	(void)state;
	assert_parses(TX "flows = 20000\n" RX);
	assert_int_equal(cfg.streams[0].tx.src_port, 65536 - 20000);
	assert_parses(TX "flows = 8\n" RX);
	assert_int_equal(cfg.streams[0].tx.src_port, LR_DEFAULT_SRC_PORT);
	assert_int_not_equal(parse(TX "flows = 20000\nsrc_port = 55000\n" RX), 0);
	assert_non_null(strstr(err, "runs past port 65535"));
}

/* No flows key: one flow per queue, each worker's own; a stream takes its own queues' count. */
static void test_flows_default(void **state)
{
	(void)state;
	assert_parses(TX "queues = 0-1\n" RX);
	assert_int_equal(cfg.streams[0].tx.flows, 2);
	assert_parses(TX "queues = 0-3\n" RX "[stream a]\nsize = 64\nqueues = 0-2\n[stream b]\nsize = 64\n");
	assert_int_equal(cfg.streams[0].tx.flows, 3);
	assert_int_equal(cfg.streams[1].tx.flows, 4);
	assert_parses(TX "queues = 0-1\nflows = 8\n" RX);
	assert_int_equal(cfg.streams[0].tx.flows, 8);
}

/* Each receive engine's own options, with that engine (the contradictions are in the bad inputs). */
static void test_rx_engine_options(void **state)
{
	(void)state;
	assert_parses(TX RX "engine = xdp\nxdp_mode = generic\n");
	assert_int_equal(cfg.xdp_mode, LR_XDP_GENERIC);
	assert_parses(TX RX "engine = auto\nxdp_mode = native\nworkers = 4\n");
	assert_int_equal(cfg.xdp_mode, LR_XDP_NATIVE);
	assert_int_equal(cfg.rx_workers, 4);
}

static void test_values(void **state)
{
	const struct lr_cfg_stream *s = &cfg.streams[0];

	(void)state;
	assert_parses("[test]\nname = night run\nmode = throughput\nduration = 3s\nwarmup = 0\nrepeat = 3\n"
		      "max_loss = 0.1%\nmax_p99 = 250us\nresolution = 1k\nmax_trials = 64\nsender_limited = pass\n"
		      "[tx]\ninterface = v0\nnetns = pid:42\nengine = afxdp\nxdp_mode = copy\nqueues = 0-1, 3\n"
		      "cpus = 4,5,6\nbatch = 512\nsizes = 84, 1518\nrate = 2.5Gbit\nflows = 64\n"
		      "src_ip = fd00::1\ndst_ip = fd00::2\nsrc_mac = 02:00:00:00:00:01\ndst_mac = 02:00:00:00:00:02\n"
		      "src_port = 9000\ndst_port = 9001\n"
		      "[rx]\ninterface = v1\nnetns = /run/netns/x\nengine = packet\nworkers = 64\n");
	assert_string_equal(cfg.name, "night run");
	assert_int_equal(cfg.mode, LR_RUN_THROUGHPUT);
	assert_int_equal(cfg.duration_ns, 3 * NS);
	assert_int_equal(cfg.trial_ns, 3 * NS);	/* trial defaults to duration, wherever it stands */
	assert_int_equal(cfg.warmup_ns, 0);
	assert_true(cfg.sender_limited_pass);
	assert_int_equal(cfg.repeat, 3);
	assert_true(cfg.max_loss > 0.000999 && cfg.max_loss < 0.001001);
	assert_int_equal(cfg.max_p99_ns, 250000);
	assert_int_equal(cfg.resolution_pps, 1000);
	assert_true(cfg.resolution == 0);
	assert_int_equal(cfg.max_trials, 64);
	assert_string_equal(cfg.tx_netns, "pid:42");
	assert_int_equal(cfg.tx_engine, LR_ENGINE_AFXDP);
	assert_int_equal(cfg.xsk_mode, LR_XSK_COPY);
	assert_int_equal(cfg.batch, 512);
	assert_int_equal(cfg.nsizes, 2);
	assert_int_equal(cfg.sizes[0], 84);
	assert_int_equal(cfg.rates[0].kind, LR_RATE_BPS);
	assert_int_equal(cfg.rates[0].value, 2500000000ULL);
	assert_int_equal(cfg.dst_port, 9001);
	assert_string_equal(cfg.rx_netns, "/run/netns/x");
	assert_int_equal(cfg.rx_engine, LR_RX_ENGINE_PACKET);
	assert_int_equal(cfg.xdp_mode, LR_XDP_AUTO);
	assert_int_equal(cfg.rx_workers, 64);
	assert_int_equal(s->tx.family, AF_INET6);
	assert_true(s->tx.have_src_ip && s->tx.have_src_mac && s->tx.have_dst_mac);
	assert_int_equal(s->tx.dst_mac[5], 2);
	assert_int_equal(s->tx.nworkers, 3);
	assert_int_equal(s->tx.queues[2], 3);
	assert_true(s->tx.cpus_set);
	assert_int_equal(s->tx.cpus[2], 6);
	assert_int_equal(s->tx.src_port, 9000);
	assert_int_equal(s->tx.flows, 64);

	/* percentages: "5", "5%" and fractions */
	assert_parses("[test]\nmax_loss = 5\n" TX RX);
	assert_true(cfg.max_loss > 0.04999 && cfg.max_loss < 0.05001);
	assert_parses("[test]\nmax_loss = 100%\nresolution = 0.5%\ntrial = 700ms\n" TX RX);
	assert_true(cfg.max_loss == 1.0);
	assert_true(cfg.resolution > 0.004999 && cfg.resolution < 0.005001);
	assert_int_equal(cfg.resolution_pps, 0);
	assert_int_equal(cfg.trial_ns, 700 * MS);
	assert_parses("[test]\nresolution = 5kpps\n" TX RX);
	assert_int_equal(cfg.resolution_pps, 5000);
	assert_parses(TX "rates = max, 20k, 1Mpps, 100Mbit\n" RX);
	assert_int_equal(cfg.nrates, 4);
	assert_int_equal(cfg.rates[0].kind, LR_RATE_MAX);
	assert_int_equal(cfg.rates[2].value, 1000000);
	assert_int_equal(cfg.rates[3].kind, LR_RATE_BPS);
}

static void test_streams(void **state)
{
	const struct lr_cfg_stream *a = &cfg.streams[0], *b = &cfg.streams[1];

	(void)state;
	/* [tx] gives the defaults; streams may come before [tx] */
	assert_parses("[stream a]\nsize = 128\nqueues = 1\n"
		      "[tx]\ninterface = v0\nsrc_ip = 198.18.0.1\ndst_ip = 198.18.0.2\ndst_mac = 02:00:00:00:00:02\n"
		      "queues = 0-1\ncpus = 2-3\nflows = 2\nsrc_port = 8000\nsize = 64\n"
		      "[stream b]\nsize = 1518\ndst_ip = 198.18.0.9\nflows = 8\n" RX);
	assert_int_equal(cfg.nstreams, 2);
	assert_string_equal(a->name, "a");
	assert_int_equal(a->line, 1);
	assert_int_equal(a->tx.size, 128);
	assert_int_equal(a->tx.nworkers, 1);
	assert_int_equal(a->tx.queues[0], 1);
	assert_false(a->tx.cpus_set);	/* own queues: [tx]'s CPUs belong to [tx]'s queues */
	assert_int_equal(a->tx.flows, 2);	/* from [tx] */
	assert_int_equal(a->tx.src_port, 8000);
	assert_true(a->tx.have_src_ip && a->tx.have_dst_mac && !a->tx.have_src_mac);
	assert_int_equal(b->tx.nworkers, 2);
	assert_true(b->tx.cpus_set);
	assert_int_equal(b->tx.cpus[1], 3);
	assert_int_equal(b->tx.flows, 8);
	assert_int_equal(((uint8_t *)&b->tx.dst_ip)[3], 9);
	/* no share anywhere: equal shares */
	assert_true(a->share == 0.5 && b->share == 0.5);
	assert_int_equal(cfg.nsizes, 1);
	assert_int_equal(cfg.sizes[0], 823);	/* (128 + 1518) / 2 */

	/* shares as fractions, within 0.01 of 100 and normalised to sum to 1 */
	assert_parses(TX RX "[stream a]\nsize = 64\nshare = 33.333\n[stream b]\nsize = 64\nshare = 66.67%\n");
	assert_true(a->share + b->share > 0.9999999 && a->share + b->share < 1.0000001);
	assert_true(a->share > 0.3333 && a->share < 0.3334);

	/* two streams on one queue: fine unless the engine is afxdp */
	assert_parses(TX "engine = packet\n" RX "[stream a]\nsize = 64\n[stream b]\nsize = 64\n");
	assert_parses(TX "engine = auto\n" RX "[stream a]\nsize = 64\n[stream b]\nsize = 64\n");
	assert_parses(TX "engine = afxdp\n" RX "[stream a]\nsize = 64\nqueues = 0\n[stream b]\nsize = 64\nqueues = 1\n");

	/* one [tx] size beside streams is allowed (and ignored) */
	assert_parses(TX "size = 512\n" RX "[stream a]\nsize = 64\n");
	assert_int_equal(cfg.sizes[0], 64);

	/* throughput with streams */
	assert_parses("[test]\nmode = throughput\n" TX "rate = 1M\n" RX "[stream a]\nsize = 64\nshare = 100\n");

	/* 16 streams, the most */
	{
		char text[4096];
		size_t off = 0;
		int i;

		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s", TX "engine = packet\n" RX);
		for (i = 0; i < LR_CFG_MAX_STREAMS; i++)
			off += (size_t)snprintf(text + off, sizeof(text) - off, "[stream s%d]\nsize = 64\n", i);
		assert_parses(text);
		assert_int_equal(cfg.nstreams, LR_CFG_MAX_STREAMS);
		snprintf(text + off, sizeof(text) - off, "[stream s%d]\nsize = 64\n", LR_CFG_MAX_STREAMS);
		assert_int_equal(parse(text), -EINVAL);
		assert_string_equal(err, "x.ini:39: [stream s16]: more than 16 streams");
	}
}

/* ---- text that is fine ---- */

static void test_valid_edges(void **state)
{
	char line[512];

	(void)state;
	/* a container's namespace */
	assert_parses(TX "netns = container:web-1\n" RX);
	assert_string_equal(cfg.tx_netns, "container:web-1");
	/* CRLF */
	assert_parses("[tx]\r\ninterface = v0\r\ndst_ip = 198.18.0.2\r\nrate = 10k\r\n[rx]\r\ninterface = v1\r\n");
	assert_string_equal(cfg.tx_ifname, "v0");
	assert_int_equal(cfg.rates[0].value, 10000);
	/* inline comments, trailing blanks, tabs */
	assert_parses("[tx] ; the sender\ninterface = v0   ; like this\ndst_ip\t=\t198.18.0.2 \t\n"
		      "rate = 10k ; comment\n[rx]\ninterface = v1   \n# a comment\n; another\n");
	assert_int_equal(cfg.rates[0].value, 10000);
	assert_string_equal(cfg.rx_ifname, "v1");
	/* a UTF-8 BOM, and UTF-8 in comments and the name */
	assert_parses("\xef\xbb\xbf[test]\nname = d\xc3\xa9j\xc3\xa0 vu ; \xe2\x80\x94 ok\n" TX RX);
	assert_string_equal(cfg.name, "d\xc3\xa9j\xc3\xa0 vu");
	/* an indented key is a key, not a continuation of the previous value */
	assert_parses(TX "    rate = 10k\n\tflows = 3\n" RX);
	assert_int_equal(cfg.rates[0].value, 10000);
	assert_int_equal(cfg.streams[0].tx.flows, 3);
	/* no final newline */
	assert_parses(TX "[rx]\ninterface = v1");
	assert_string_equal(cfg.rx_ifname, "v1");
	/* blank lines, blanks inside lists */
	assert_parses("\n\n" TX "\nqueues = 0 - 1 , 3\nflows = 3\nsizes = 64 ,128\n\n" RX "\n");
	assert_int_equal(cfg.streams[0].tx.nworkers, 3);
	assert_int_equal(cfg.nsizes, 2);
	/* a 199-character line is the longest */
	memset(line, 0, sizeof(line));
	line[0] = ';';
	memset(line + 1, 'x', 198);
	{
		char text[1024];

		snprintf(text, sizeof(text), "%s\n" TX RX, line);
		assert_parses(text);
	}
	/* IPv6 from 84 bytes */
	assert_parses("[tx]\ninterface = v0\ndst_ip = fd00::2\nsize = 84\n" RX);
	assert_int_equal(cfg.streams[0].tx.family, AF_INET6);
	/* [ section ] with blanks inside the brackets; [stream  name] with two blanks */
	assert_parses("[ tx ]\ninterface = v0\ndst_ip = 198.18.0.2\n" RX "[stream  Big_one-2]\nsize = 64\n");
	assert_string_equal(cfg.streams[0].name, "Big_one-2");
	/* a value may hold '=' and ':' after the first '=' */
	assert_parses("[test]\nname = a=b: c\n" TX RX);
	assert_string_equal(cfg.name, "a=b: c");
}

/* ---- text that is not: exact PATH:LINE prefix and one telling word ---- */

struct bad {
	const char *what;
	const char *text;
	size_t len;	/* 0: strlen(text) */
	const char *prefix;	/* the message starts with this */
	const char *word;	/* and contains this */
};

#define LONG50 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

static const struct bad bad_inputs[] = {
	/* structure */
	{ "unknown section", TX RX "[foo]\n", 0, "x.ini:6: unknown section [foo]", "[stream NAME]" },
	{ "section names are case-sensitive", "[TX]\n", 0, "x.ini:1: unknown section [TX]", "sections" },
	{ "unknown key in [test]", "[test]\nfoo = 1\n" TX RX, 0, "x.ini:2: [test] unknown key 'foo'", "max_trials" },
	{ "unknown key in [tx]", TX "bogus = 1\n" RX, 0, "x.ini:4: [tx] unknown key 'bogus'", "dst_port" },
	{ "unknown key in [rx]", TX RX "bogus = 1\n", 0, "x.ini:6: [rx] unknown key 'bogus'", "workers" },
	{ "unknown key in [stream]", TX RX "[stream a]\nsize = 64\nbogus = 1\n", 0,
	  "x.ini:8: [stream a] unknown key 'bogus'", "share" },
	{ "[rx] takes no rate", TX RX "rate = 1k\n", 0, "x.ini:6: [rx] unknown key 'rate'", "interface" },
	{ "[stream] takes no sizes", TX RX "[stream a]\nsizes = 64\n", 0, "x.ini:7: [stream a] unknown key 'sizes'",
	  "size" },
	{ "keys are case-sensitive", TX "Rate = 1k\n" RX, 0, "x.ini:4: [tx] unknown key 'Rate'", "case-sensitive" },
	{ "key outside any section", "name = x\n" TX RX, 0, "x.ini:1: 'name' is outside any section", "[test]" },
	{ "duplicate key", TX "interface = v2\n" RX, 0, "x.ini:4: [tx] interface: given twice (first at line 2)",
	  "twice" },
	{ "duplicate section", TX RX "[tx]\n", 0, "x.ini:6: section [tx] given twice (first at line 1)", "twice" },
	{ "duplicate [test]", "[test]\n[test]\n" TX RX, 0, "x.ini:2: section [test] given twice (first at line 1)",
	  "twice" },
	{ "duplicate stream name", TX RX "[stream a]\nsize = 64\n[stream a]\n", 0,
	  "x.ini:8: section [stream a] given twice (first at line 6)", "twice" },
	{ "stream without a name", TX RX "[stream]\n", 0, "x.ini:6: stream name '' is not valid", "[stream NAME]" },
	{ "stream name with a dot", TX RX "[stream a.b]\n", 0, "x.ini:6: stream name 'a.b' is not valid", "letters" },
	{ "stream name too long", TX RX "[stream " LONG50 "xxxxxxxxxxxxxx]\n", 0, "x.ini:6: stream name", "63" },
	{ "unterminated section header", "[test\n" TX RX, 0, "x.ini:1: syntax error: section header '[test'",
	  "']'" },
	{ "unterminated header later on", TX RX "[stream a\n", 0, "x.ini:6: syntax error", "']'" },
	{ "text after a header", "[tx] x\n", 0, "x.ini:1: syntax error: 'x' after the section header", "comment" },
	{ "a line with no '='", TX "justaword\n" RX, 0,
	  "x.ini:4: syntax error: expected 'key = value' or '[section]'", "key" },
	{ "configparser's key: value", TX "rate: 10k\n" RX, 0, "x.ini:4: syntax error: expected 'key = value'", "=" },
	{ "no key before '='", TX "= 10k\n" RX, 0, "x.ini:4: syntax error", "key" },
	{ "an inline comment hides the '='", TX "rate ; = 10k\n" RX, 0, "x.ini:4: syntax error", "key" },
	{ "empty value", TX "rate =\n" RX, 0, "x.ini:4: [tx] rate: empty value", "value" },
	{ "value that is only a comment", TX "rate = ; none\n" RX, 0, "x.ini:4: [tx] rate: empty value", "value" },
	{ "size and sizes", TX "size = 64\nsizes = 128\n" RX, 0,
	  "x.ini:5: [tx] sizes: conflicts with 'size' at line 4", "one of them" },
	{ "rate and rates", TX "rates = 1k\nrate = 2k\n" RX, 0, "x.ini:5: [tx] rate: conflicts with 'rates' at line 4",
	  "one of them" },
	/* bytes and lines */
	{ "a 300-character line", TX "; " LONG50 LONG50 LONG50 LONG50 LONG50 LONG50 "\n" RX, 0,
	  "x.ini:4: line too long (302 characters; at most 199)", "long" },
	{ "a 200-character line", TX "name = " LONG50 LONG50 LONG50 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 0,
	  "x.ini:4: line too long (200 characters", "199" },
	{ "NUL byte", TX "\x00\x01\xff\n" RX, sizeof(TX "\x00\x01\xff\n" RX) - 1, "x.ini:4: NUL byte at column 1",
	  "text" },
	{ "control byte", TX "rate = 1\x01k\n" RX, 0, "x.ini:4: control character 0x01 at column 9", "text" },
	{ "0xff byte", TX "\xff\xfe\n" RX, 0, "x.ini:4: byte 0xff at column 1 is not UTF-8", "binary" },
	{ "truncated UTF-8", "; \xc3\n" TX RX, 0, "x.ini:1: byte 0xc3 at column 3 is not UTF-8", "UTF-8" },
	{ "overlong UTF-8", "; \xc0\xaf\n" TX RX, 0, "x.ini:1: byte 0xc0", "UTF-8" },
	{ "stray carriage return", TX "rate = 1k\r\r\n" RX, 0, "x.ini:4: control character 0x0d", "text" },
	{ "form feed", "\f" TX RX, 0, "x.ini:1: control character 0x0c", "text" },
	{ "empty file", "", 0, "x.ini:1: missing section [tx]", "interface" },
	{ "only comments", "; a\n# b\n\n   ; c\n", 0, "x.ini:1: missing section [tx]", "reference.ini" },
	{ "missing [tx]", RX, 0, "x.ini:1: missing section [tx]", "dst_ip" },
	{ "missing [rx]", TX, 0, "x.ini:1: missing section [rx]", "interface" },
	{ "missing tx interface", RX "[tx]\ndst_ip = 198.18.0.2\n", 0, "x.ini:3: [tx] missing key 'interface'", "send" },
	{ "missing rx interface", TX "[rx]\nworkers = 2\n", 0, "x.ini:4: [rx] missing key 'interface'", "count" },
	{ "missing dst_ip", "[tx]\ninterface = v0\n" RX, 0, "x.ini:1: [tx] missing key 'dst_ip'", "receiver" },
	{ "stream without dst_ip anywhere", "[tx]\ninterface = v0\n" RX "[stream a]\nsize = 64\n", 0,
	  "x.ini:5: [stream a] missing key 'dst_ip'", "[tx] gives none" },
	{ "stream without size", TX RX "[stream a]\nflows = 2\n", 0, "x.ini:6: [stream a] missing key 'size'", "9018" },
	/* [test] values */
	{ "bad mode", "[test]\nmode = fast\n" TX RX, 0, "x.ini:2: [test] mode: 'fast' is not one of sweep, throughput",
	  "sweep" },
	{ "bad duration", "[test]\nduration = 5 parsecs\n" TX RX, 0,
	  "x.ini:2: [test] duration: '5 parsecs' is not a duration", "500ms" },
	{ "zero duration", "[test]\nduration = 0\n" TX RX, 0, "x.ini:2: [test] duration: '0' is not a duration",
	  "more than 0" },
	{ "duration over a day", "[test]\nduration = 25h\n" TX RX, 0, "x.ini:2: [test] duration: '25h'", "24h" },
	{ "negative warmup", "[test]\nwarmup = -1s\n" TX RX, 0, "x.ini:2: [test] warmup: '-1s' is not a duration",
	  "0," },
	{ "zero max_p99", "[test]\nmax_p99 = 0\n" TX RX, 0, "x.ini:2: [test] max_p99: '0' is not a duration", "more" },
	{ "zero trial", "[test]\ntrial = 0s\n" TX RX, 0, "x.ini:2: [test] trial: '0s'", "duration" },
	{ "bad sender_limited", "[test]\nsender_limited = warn\n" TX RX, 0,
	  "x.ini:2: [test] sender_limited: 'warn' is not one of fail, pass", "pass" },
	{ "repeat 0", "[test]\nrepeat = 0\n" TX RX, 0, "x.ini:2: [test] repeat: '0' is not a repeat count (1..100)",
	  "1..100" },
	{ "repeat 101", "[test]\nrepeat = 101\n" TX RX, 0, "x.ini:2: [test] repeat: '101'", "1..100" },
	{ "max_trials 65", "[test]\nmax_trials = 65\n" TX RX, 0,
	  "x.ini:2: [test] max_trials: '65' is not a trial count (1..64)", "1..64" },
	{ "max_loss 101%", "[test]\nmax_loss = 101%\n" TX RX, 0,
	  "x.ini:2: [test] max_loss: '101%' is not a loss percentage (0, 0.1%, 1; 0..100)", "0.1%" },
	{ "max_loss negative", "[test]\nmax_loss = -1\n" TX RX, 0, "x.ini:2: [test] max_loss: '-1'", "percentage" },
	{ "max_loss with a unit", "[test]\nmax_loss = 1k\n" TX RX, 0, "x.ini:2: [test] max_loss: '1k'", "percentage" },
	{ "max_loss %%", "[test]\nmax_loss = %\n" TX RX, 0, "x.ini:2: [test] max_loss: '%'", "percentage" },
	{ "resolution 0%", "[test]\nresolution = 0%\n" TX RX, 0, "x.ini:2: [test] resolution: '0%'", "percentage" },
	{ "resolution 100%", "[test]\nresolution = 100%\n" TX RX, 0, "x.ini:2: [test] resolution: '100%'", "below" },
	{ "resolution as a bit rate", "[test]\nresolution = 1Mbit\n" TX RX, 0, "x.ini:2: [test] resolution: '1Mbit'",
	  "packets per second" },
	{ "resolution max", "[test]\nresolution = max\n" TX RX, 0, "x.ini:2: [test] resolution: 'max'", "5k" },
	{ "name too long", "[test]\nname = " LONG50 "xxxxxxxxxxxxxx\n" TX RX, 0, "x.ini:2: [test] name:", "at most 63" },
	/* [tx] and [rx] values */
	{ "bad rate", TX "rate = 5 parsecs\n" RX, 0,
	  "x.ini:4: [tx] rate: '5 parsecs' is not a rate (max, 100k, 1Mpps, 2.5Gbit; at most 1 Gpps", "1 Tbit/s" },
	{ "bad item in rates", TX "rates = 10k, fast\n" RX, 0, "x.ini:4: [tx] rates: 'fast' is not a rate", "1Mpps" },
	{ "empty item in rates", TX "rates = 10k,,20k\n" RX, 0, "x.ini:4: [tx] rates: '10k,,20k' has an empty item",
	  "empty" },
	{ "zero rate", TX "rate = 0\n" RX, 0, "x.ini:4: [tx] rate: '0' is not a rate", "max" },
	{ "bad size", TX "size = big\n" RX, 0, "x.ini:4: [tx] size: 'big' is not a frame size (64..9018 bytes)",
	  "bytes" },
	{ "size 63", TX "size = 63\n" RX, 0, "x.ini:4: [tx] size: '63' is not a frame size (64..9018", "64" },
	{ "size 9019", TX "size = 9019\n" RX, 0, "x.ini:4: [tx] size: '9019' is not a frame size", "9018" },
	{ "size range", TX "sizes = 64-128\n" RX, 0, "x.ini:4: [tx] sizes: '64-128' is not a frame size", "bytes" },
	{ "33 sizes", TX "sizes = 64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,64,"
		      "64,64,64,64,64\n" RX, 0, "x.ini:4: [tx] sizes: more than 32 values", "32" },
	{ "stream size 9019", TX RX "[stream a]\nsize = 9019\n", 0, "x.ini:7: [stream a] size: '9019'", "9018" },
	{ "flows 0", TX "flows = 0\n" RX, 0, "x.ini:4: [tx] flows: '0' is not a flow count (1..65536)", "65536" },
	{ "flows 65537", TX "flows = 65537\n" RX, 0, "x.ini:4: [tx] flows: '65537' is not a flow count", "1..65536" },
	{ "workers 65", TX RX "workers = 65\n", 0, "x.ini:6: [rx] workers: '65' is not a thread count (1..64)",
	  "1..64" },
	{ "workers 0", TX RX "workers = 0\n", 0, "x.ini:6: [rx] workers: '0'", "1..64" },
	{ "workers with engine xdp", TX RX "engine = xdp\nworkers = 2\n", 0, "x.ini:7: [rx] workers: AF_PACKET receive threads",
	  "engine = xdp" },
	{ "xdp_mode with engine packet", TX RX "xdp_mode = native\nengine = packet\n", 0,
	  "x.ini:6: [rx] xdp_mode: an XDP attach mode", "engine = packet" },
	{ "duration past a year", "[test]\nduration = 4159006706811470109h\n" TX RX, 0,
	  "x.ini:2: [test] duration: '4159006706811470109h' exceeds the limit of 24h", "24h" },
	{ "warmup past a year", "[test]\nwarmup = 18446744073709551615\n" TX RX, 0,
	  "x.ini:2: [test] warmup: '18446744073709551615' exceeds the limit of 24h", "24h" },
	{ "rate past 1 Gpps", TX "rate = 1844674407400\n" RX, 0,
	  "x.ini:4: [tx] rate: '1844674407400' exceeds the limit of 1 Gpps",
	  "1 Gpps" },
	{ "batch 513", TX "batch = 513\n" RX, 0, "x.ini:4: [tx] batch: '513' is not a batch size (1..512)", "512" },
	{ "bad ip", "[tx]\ninterface = v0\ndst_ip = 198.18.0.300\n" RX, 0,
	  "x.ini:3: [tx] dst_ip: '198.18.0.300' is not an IPv4 or IPv6 address", "IPv6" },
	{ "bad ipv6", TX "src_ip = fd00:::1\n" RX, 0, "x.ini:4: [tx] src_ip: 'fd00:::1' is not an IPv4", "address" },
	{ "bad mac", TX "dst_mac = zz:00:00:00:00:01\n" RX, 0,
	  "x.ini:4: [tx] dst_mac: 'zz:00:00:00:00:01' is not a MAC address", "aa:bb" },
	{ "multicast mac", TX "dst_mac = 01:00:5e:00:00:01\n" RX, 0, "x.ini:4: [tx] dst_mac: '01:00:5e:00:00:01'",
	  "unicast" },
	{ "bad port", TX "src_port = 70000\n" RX, 0, "x.ini:4: [tx] src_port: '70000' is not a port (1..65535)", "port" },
	{ "port 0", TX "dst_port = 0\n" RX, 0, "x.ini:4: [tx] dst_port: '0' is not a port", "65535" },
	{ "bad queue list", TX "queues = 0-\n" RX, 0, "x.ini:4: [tx] queues: '0-' is not a queue list", "0-3" },
	{ "blank between numbers", TX "queues = 1 2\n" RX, 0, "x.ini:4: [tx] queues: '1 2' is not a queue list", "0,2" },
	{ "queue 4096", TX "queues = 4096\n" RX, 0, "x.ini:4: [tx] queues: '4096'", "4096" },
	{ "65 queues", TX "queues = 0-64\n" RX, 0, "x.ini:4: [tx] queues: '0-64'", "at most 64" },
	{ "bad cpu list", TX "cpus = x\n" RX, 0, "x.ini:4: [tx] cpus: 'x' is not a CPU list", "0-3" },
	{ "duplicate queue", TX "queues = 0,1,0\nflows = 3\n" RX, 0, "x.ini:4: [tx] queues: queue 0 is listed twice",
	  "twice" },
	{ "bad tx engine", TX "engine = dpdk\n" RX, 0, "x.ini:4: [tx] engine: 'dpdk' is not one of auto, afxdp, packet",
	  "afxdp" },
	{ "rx engine afxdp", TX RX "engine = afxdp\n", 0, "x.ini:6: [rx] engine: 'afxdp' is not one of auto, xdp, packet",
	  "xdp" },
	{ "bad tx xdp_mode", TX "xdp_mode = native\n" RX, 0,
	  "x.ini:4: [tx] xdp_mode: 'native' is not one of auto, zerocopy, copy", "zerocopy" },
	{ "bad rx xdp_mode", TX RX "xdp_mode = copy\n", 0,
	  "x.ini:6: [rx] xdp_mode: 'copy' is not one of auto, native, generic", "generic" },
	{ "engine is case-sensitive", TX "engine = AFXDP\n" RX, 0, "x.ini:4: [tx] engine: 'AFXDP'", "afxdp" },
	{ "interface too long", "[tx]\ninterface = veth-much-too-long\n", 0,
	  "x.ini:2: [tx] interface: 'veth-much-too-long' is not an interface name", "15" },
	{ "interface with a slash", "[tx]\ninterface = a/b\n", 0, "x.ini:2: [tx] interface: 'a/b'", "'/'" },
	{ "bad netns", TX "netns = a/b\n" RX, 0, "x.ini:4: [tx] netns: 'a/b' is not a network namespace", "pid:PID" },
	{ "bad netns pid", TX RX "netns = pid:0\n", 0, "x.ini:6: [rx] netns: 'pid:0'", "absolute path" },
	{ "netns pid with a unit", TX RX "netns = pid:1k\n", 0, "x.ini:6: [rx] netns: 'pid:1k'", "pid:PID" },
	{ "netns container with an interface", TX RX "netns = container:web:eth0\n", 0,
	  "x.ini:6: [rx] netns: 'container:web:eth0'", "container:NAME" },
	{ "netns container without a name", TX "netns = container:\n" RX, 0, "x.ini:4: [tx] netns: 'container:'",
	  "container:NAME" },
	{ "bad share", TX RX "[stream a]\nsize = 64\nshare = lots\n", 0,
	  "x.ini:8: [stream a] share: 'lots' is not a share of the rate in percent", "70%" },
	{ "share 0", TX RX "[stream a]\nsize = 64\nshare = 0%\n", 0, "x.ini:8: [stream a] share: '0%'", "more than 0" },
	{ "share over 100", TX RX "[stream a]\nsize = 64\nshare = 100.5\n", 0, "x.ini:8: [stream a] share: '100.5'",
	  "at most 100" },
	/* across keys and sections */
	{ "throughput with two rates", "[test]\nmode = throughput\n" TX "rates = 10k, 20k\n" RX, 0,
	  "x.ini:6: [tx] rates: conflicts with [test] mode = throughput", "one rate" },
	{ "mode after the rates", TX "rates = 10k, 20k\n" RX "[test]\nmode = throughput\n", 0,
	  "x.ini:4: [tx] rates: conflicts with [test] mode = throughput", "upper bound" },
	{ "sweep sizes with streams", TX "sizes = 64, 128\n" RX "[stream a]\nsize = 64\n", 0,
	  "x.ini:4: [tx] sizes: conflicts with the [stream] sections", "at most one" },
	{ "shares not summing to 100", TX RX "[stream a]\nsize = 64\nshare = 50\n[stream b]\nsize = 64\nshare = 40%\n",
	  0, "x.ini:9: [stream b] share: the shares add up to 90%; they must add up to 100%", "100%" },
	{ "shares over by more than 0.01", TX RX "[stream a]\nsize = 64\nshare = 50\n[stream b]\nsize = 64\n"
					  "share = 50.02\n", 0, "x.ini:9: [stream b] share: the shares add up to 100.02%",
	  "100%" },
	{ "one stream without a share", TX RX "[stream a]\nsize = 64\nshare = 50\n[stream b]\nsize = 64\n", 0,
	  "x.ini:9: [stream b] missing key 'share'", "equal shares" },
	{ "two streams on one queue with afxdp", TX "engine = afxdp\n" RX "[stream a]\nsize = 64\nqueues = 0\n"
								     "[stream b]\nsize = 64\nqueues = 0\n", 0,
	  "x.ini:12: [stream b] queues: queue 0 is also used by [stream a]", "afxdp" },
	{ "inherited queues with afxdp", TX "engine = afxdp\n" RX "[stream a]\nsize = 64\n[stream b]\nsize = 64\n", 0,
	  "x.ini:9: [stream b] queues: queue 0 (from [tx]) is also used by [stream a]", "engine = packet" },
	{ "too many flows in all", TX RX "[stream a]\nsize = 64\nflows = 40000\nsrc_port = 1000\n"
				     "[stream b]\nsize = 64\nflows = 40000\nsrc_port = 1000\n", 0,
	  "x.ini:10: [stream b] flows: the streams add up to 80000 flows; at most 65536", "flow ids" },
	{ "IPv6 with size 64", "[tx]\ninterface = v0\ndst_ip = fd00::2\nsize = 64\n" RX, 0,
	  "x.ini:4: [tx] size: 64 bytes cannot carry the probe over IPv6; the minimum is 84", "IPv6" },
	{ "IPv6 with the default size", "[tx]\ninterface = v0\ndst_ip = fd00::2\n" RX, 0,
	  "x.ini:1: [tx] size: 64 bytes (the default) cannot carry the probe over IPv6", "84" },
	{ "IPv6 stream with size 80", TX RX "[stream a]\nsize = 80\ndst_ip = fd00::2\nsrc_ip = fd00::1\n", 0,
	  "x.ini:7: [stream a] size: 80 bytes cannot carry the probe over IPv6", "84" },
	{ "IPv6 in sizes", "[tx]\ninterface = v0\ndst_ip = fd00::2\nsizes = 128, 64\n" RX, 0,
	  "x.ini:4: [tx] sizes: 64 bytes cannot carry the probe over IPv6", "minimum" },
	{ "mixed families", "[tx]\ninterface = v0\ndst_ip = fd00::2\nsrc_ip = 198.18.0.1\nsize = 84\n" RX, 0,
	  "x.ini:4: [tx] src_ip: '198.18.0.1' is IPv4 but dst_ip 'fd00::2' is IPv6", "one address family" },
	{ "mixed families through [tx]", TX "src_ip = 198.18.0.1\n" RX "[stream a]\nsize = 84\ndst_ip = fd00::2\n", 0,
	  "x.ini:9: [stream a] src_ip: '198.18.0.1' (from [tx]) is IPv4 but dst_ip 'fd00::2' is IPv6",
	  "one address family" },
	{ "cpus/queues length", TX "queues = 0-1\ncpus = 0\nflows = 2\n" RX, 0,
	  "x.ini:5: [tx] cpus: 1 CPU for 2 queues; give one CPU per queue", "one CPU per queue" },
	{ "stream cpus for [tx] queues", TX "queues = 0-1\nflows = 2\n" RX "[stream a]\nsize = 64\ncpus = 3\n", 0,
	  "x.ini:10: [stream a] cpus: 1 CPU for 2 queues (from [tx])", "per queue" },
	{ "flows fewer than queues", TX "queues = 0-3\nflows = 2\n" RX, 0,
	  "x.ini:5: [tx] flows: 2 flows for 4 queues", "flows >= 4" },
	{ "ports past 65535", TX "src_port = 65535\nflows = 2\n" RX, 0,
	  "x.ini:4: [tx] src_port: 65535 + flows 2 runs past port 65535", "65535" },
	/* round trips: [rx] is a reflector */
	{ "rtt: [rx] engine", "[test]\nmode = rtt\n" TX RX "engine = xdp\n", 0,
	  "x.ini:8: [rx] engine: with mode = rtt [rx] runs a reflector", "xdp_mode" },
	{ "rtt: [rx] pcap", "[test]\nmode = rtt\n" TX RX "pcap = /tmp/x.pcap\n", 0,
	  "x.ini:8: [rx] pcap: with mode = rtt", "reflector" },
	{ "rtt: max_p99", "[test]\nmode = rtt\nmax_p99 = 1ms\n" TX RX, 0,
	  "x.ini:3: [test] max_p99: one-way latency", "max_rtt_p99" },
	{ "max_rtt_p99 without rtt", "[test]\nmax_rtt_p99 = 1ms\n" TX RX, 0,
	  "x.ini:2: [test] max_rtt_p99: a round-trip threshold", "mode = rtt" },
	{ "rtt: [tx] agent", "[test]\nmode = rtt\n" TX "agent = 198.18.0.9\n" RX, 0,
	  "x.ini:6: [tx] agent: with mode = rtt the sender counts", "[rx] agent" },
	{ "rtt-throughput with two rates", "[test]\nmode = rtt-throughput\n" TX "rates = 1k, 2k\n" RX, 0,
	  "x.ini:6: [tx] rates: conflicts with [test] mode = rtt-throughput", "one rate" },
	{ "unknown mode", "[test]\nmode = roundtrip\n" TX RX, 0, "x.ini:2: [test] mode:", "rtt-throughput" },
};

/* Round-trip modes parse, with their threshold and the reflector's keys. */
static void test_rtt_modes(void **state)
{
	(void)state;
	assert_parses("[test]\nmode = rtt\nmax_rtt_p99 = 5ms\n" TX RX "xdp_mode = generic\n");
	assert_int_equal(cfg.mode, LR_RUN_RTT);
	assert_int_equal(cfg.max_rtt_p99_ns, 5 * MS);
	assert_int_equal(cfg.xdp_mode, LR_XDP_GENERIC);
	assert_true(lr_run_mode_rtt(cfg.mode) && !lr_run_mode_search(cfg.mode));
	assert_parses("[test]\nmode = rtt-throughput\n" TX RX "agent = 198.18.0.9\n");
	assert_int_equal(cfg.mode, LR_RUN_RTT_THROUGHPUT);
	assert_int_equal(cfg.max_rtt_p99_ns, 0);
	assert_true(lr_run_mode_rtt(cfg.mode) && lr_run_mode_search(cfg.mode));
	assert_parses("[test]\nmode = throughput\n" TX RX);
	assert_false(lr_run_mode_rtt(cfg.mode));
	load("rtt-bridge.ini");
	assert_int_equal(cfg.mode, LR_RUN_RTT);
	assert_int_equal(cfg.max_rtt_p99_ns, 5 * MS);
}

static void test_bad_inputs(void **state)
{
	unsigned int i, failed = 0;

	(void)state;
	for (i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		const struct bad *b = &bad_inputs[i];
		size_t len = b->len ? b->len : strlen(b->text);
		int ret = parse_len(b->text, len);

		if (ret != -EINVAL || strncmp(err, b->prefix, strlen(b->prefix)) || !strstr(err, b->word)) {
			print_error("%s: got %d '%s'\n    want -EINVAL '%s...' containing '%s'\n", b->what, ret, err,
				    b->prefix, b->word);
			failed++;
		}
		/* one line, no newline in the message */
		if (ret && strchr(err, '\n')) {
			print_error("%s: message has a newline: '%s'\n", b->what, err);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* Only the first problem is reported, even when a later line is worse. */
static void test_first_error_only(void **state)
{
	(void)state;
	assert_int_equal(parse(TX "rate = fast\nsize = 1\n[bogus]\n\x01\n"), -EINVAL);
	assert_string_equal(err, "x.ini:4: [tx] rate: 'fast' is not a rate (max, 100k, 1Mpps, 2.5Gbit; at most 1 "
				 "Gpps, or 1 Tbit/s as a bit rate)");
	/* inih's syntax error before one of ours */
	assert_int_equal(parse(TX "word\nrate = fast\n" RX), -EINVAL);
	assert_string_equal(err, "x.ini:4: syntax error: expected 'key = value' or '[section]'");
	/* text errors are reported even though [tx] is missing */
	assert_int_equal(parse("; ok\n\x7f\n"), -EINVAL);
	assert_string_equal(err, "x.ini:2: control character 0x7f at column 1; only text and tabs are allowed");
	/* a small buffer truncates, never overflows */
	{
		char small[12];

		memset(small, 'z', sizeof(small));
		assert_int_equal(lr_cfg_parse("x.ini", "", 0, &cfg, small, 8), -EINVAL);
		assert_string_equal(small, "x.ini:1");
		assert_int_equal(small[8], 'z');
		assert_int_equal(lr_cfg_parse("x.ini", "", 0, &cfg, NULL, 0), -EINVAL);
	}
}


/* ---- lr_cfg_load ---- */

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_load(void **state)
{
	char dir[] = "/tmp/lr-test-config-XXXXXX", path[256], *big;
	const size_t mib = 1024 * 1024;
	size_t off;

	(void)state;
	assert_non_null(mkdtemp(dir));

	snprintf(path, sizeof(path), "%s/none.ini", dir);
	assert_int_equal(lr_cfg_load(path, &cfg, NULL, 0), -ENOENT);	/* no buffer: no message */
	assert_int_equal(lr_cfg_load(path, &cfg, err, sizeof(err)), -ENOENT);
	assert_true(!strncmp(err, dir, strlen(dir)));
	assert_non_null(strstr(err, "/none.ini: cannot open: No such file or directory"));

	snprintf(path, sizeof(path), "%s/t.ini", dir);
	write_file(path, TX "rate = nope\n" RX, strlen(TX "rate = nope\n" RX));
	assert_int_equal(lr_cfg_load(path, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/t.ini:4: [tx] rate: 'nope'"));

	/* exactly 1 MiB parses; one byte more does not */
	big = malloc(mib + 2);
	assert_non_null(big);
	off = (size_t)snprintf(big, mib, "%s", TX RX);
	while (off < mib) {
		size_t n = mib - off < 100 ? mib - off : 100;

		memset(big + off, 'x', n);
		big[off] = ';';
		big[off + n - 1] = '\n';
		off += n;
	}
	write_file(path, big, mib);
	assert_int_equal(lr_cfg_load(path, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.name, "t");
	big[mib] = '\n';
	write_file(path, big, mib + 1);
	assert_int_equal(lr_cfg_load(path, &cfg, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "/t.ini: file too large"));
	free(big);
	unlink(path);

	/* a directory opens but does not read */
	assert_true(lr_cfg_load(dir, &cfg, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, ": cannot read: Is a directory"));
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_configs),
		cmocka_unit_test(test_shipped_details),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_src_port_base),
		cmocka_unit_test(test_flows_default),
		cmocka_unit_test(test_rx_engine_options),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_valid_edges),
		cmocka_unit_test(test_rtt_modes), cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_first_error_only),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
