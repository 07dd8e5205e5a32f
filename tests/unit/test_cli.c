/* SPDX-License-Identifier: MIT */
/* Unit tests for the send and recv command lines: defaults, options, errors naming the option, help. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "cmd/cmd.h"
#include "opt/opts.h"
#include "linerate/probe.h"

#define NS 1000000000ULL
#define MAXARGS 64

/* A writable argv (getopt may permute it) and a help sink we can read back. */
struct cmd {
	int argc;
	char *argv[MAXARGS + 1];
	char err[512];
	char *help;
	size_t help_len;
	FILE *out;
};

static void cmd_init(struct cmd *c, const char *const *args)
{
	memset(c, 0, sizeof(*c));
	while (args[c->argc]) {
		assert_true(c->argc < MAXARGS);
		c->argv[c->argc] = strdup(args[c->argc]);
		assert_non_null(c->argv[c->argc]);
		c->argc++;
	}
	c->out = open_memstream(&c->help, &c->help_len);
	assert_non_null(c->out);
}

static void cmd_free(struct cmd *c)
{
	for (int i = 0; i < c->argc; i++)
		free(c->argv[i]);
	fclose(c->out);
	free(c->help);
}

static int send_parse(struct cmd *c, struct lr_send_opts *o, const char *const *args)
{
	int ret;

	cmd_init(c, args);
	lr_send_opts_default(o);
	ret = lr_cli_parse_send(c->argc, c->argv, o, c->out, c->err, sizeof(c->err));
	fflush(c->out);
	return ret;
}

static int recv_parse(struct cmd *c, struct lr_recv_opts *o, const char *const *args)
{
	int ret;

	cmd_init(c, args);
	lr_recv_opts_default(o);
	ret = lr_cli_parse_recv(c->argc, c->argv, o, c->out, c->err, sizeof(c->err));
	fflush(c->out);
	return ret;
}

/* -EINVAL, and a single line that mentions @w1 (or @w2, if given). */
static void expect_error(const struct cmd *c, int ret, const char *what, const char *w1, const char *w2)
{
	const char *nl = strchr(c->err, '\n');

	if (ret != -EINVAL)
		fail_msg("%s: returned %d, want -EINVAL (err \"%s\")", what, ret, c->err);
	if (!c->err[0])
		fail_msg("%s: empty error message", what);
	if (nl && nl[1])
		fail_msg("%s: message is not one line: \"%s\"", what, c->err);
	if (!strstr(c->err, w1) && !(w2 && strstr(c->err, w2)))
		fail_msg("%s: message \"%s\" does not mention %s%s%s", what, c->err, w1, w2 ? " or " : "",
			 w2 ? w2 : "");
}

static void expect_ok(const struct cmd *c, int ret, const char *what)
{
	if (ret != 0)
		fail_msg("%s: returned %d (err \"%s\")", what, ret, c->err);
}

static void ip4(struct in6_addr *a, const char *s)
{
	memset(a, 0, sizeof(*a));
	assert_int_equal(inet_pton(AF_INET, s, a), 1);
}

static void test_send_defaults(void **state)
{
	static const char *const args[] = { "send", "-i", "veth0", "--dst-ip", "198.18.0.2", NULL };
	struct lr_send_opts o;
	struct in6_addr dst;
	struct cmd c;

	(void)state;
	expect_ok(&c, send_parse(&c, &o, args), "minimal send");
	assert_string_equal(o.tx.ifname, "veth0");
	assert_int_equal(o.tx.size, 64);
	assert_int_equal(o.tx.flows, 1);
	assert_int_equal(o.tx.rate.kind, LR_RATE_MAX);
	assert_int_equal(o.tx.nworkers, 1);
	assert_int_equal(o.tx.queues[0], 0);
	assert_false(o.tx.cpus_set);
	assert_true(o.tx.count == 0);
	assert_int_equal(o.tx.family, AF_INET);
	assert_true(o.tx.have_dst_ip);
	assert_false(o.tx.have_src_ip);
	ip4(&dst, "198.18.0.2");
	assert_memory_equal(&o.tx.dst_ip, &dst, 4);
	assert_false(o.tx.have_dst_mac);
	assert_int_equal(o.tx.dst_port, LR_DEFAULT_DST_PORT);
	assert_int_equal(o.tx.src_port, LR_DEFAULT_SRC_PORT);
	assert_string_equal(o.netns, "");
	assert_string_equal(o.json, "");
	assert_int_equal(o.tx.engine, LR_ENGINE_AUTO);
	cmd_free(&c);
}

/* The default source ports are ones no capture tool decodes; many flows move the base down, never past 65535. */
static void test_send_src_port_base(void **state)
{
	static const char *const many[] = { "send", "-i", "veth0", "--dst-ip", "198.18.0.2", "--flows", "20000", NULL };
	static const char *const fit[] = { "send", "-i", "veth0", "--dst-ip", "198.18.0.2", "--flows", "10536", NULL };
	static const char *const given[] = { "send", "-i", "veth0", "--dst-ip", "198.18.0.2", "--flows", "20000",
					      "--src-port", "60000", NULL };
	struct lr_send_opts o;
	struct cmd c;

	(void)state;
	assert_int_equal(LR_DEFAULT_SRC_PORT, 55000);
	expect_ok(&c, send_parse(&c, &o, fit), "10536 flows");
	assert_int_equal(o.tx.src_port, 55000);
	cmd_free(&c);
	expect_ok(&c, send_parse(&c, &o, many), "20000 flows");
	assert_int_equal(o.tx.src_port, 65536 - 20000);
	cmd_free(&c);
	/* a port the user chose is kept, and then it must fit */
	expect_error(&c, send_parse(&c, &o, given), "20000 flows from 60000", "65535", NULL);
	cmd_free(&c);
	assert_int_equal(lr_src_port_base(1), 55000);
	assert_int_equal(lr_src_port_base(65536), 0);
}

static void test_send_all_options(void **state)
{
	static const char *const args[] = {
		"send", "-i", "veth0", "--size", "128", "--flows", "8", "--rate", "1Mpps", "--count", "1000",
		"--duration", "5s", "--queues", "0-1", "--cpus", "0-1", "--dst-ip", "198.18.0.2",
		"--src-ip", "198.18.0.1", "--dst-mac", "02:00:00:00:00:02", "--src-port", "1000",
		"--dst-port", "2000", "--json", "-", "--netns", "foo", NULL,
	};
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	struct lr_send_opts o;
	struct in6_addr a;
	struct cmd c;

	(void)state;
	expect_ok(&c, send_parse(&c, &o, args), "send with every option");
	assert_string_equal(o.tx.ifname, "veth0");
	assert_int_equal(o.tx.size, 128);
	assert_int_equal(o.tx.flows, 8);
	assert_int_equal(o.tx.rate.kind, LR_RATE_PPS);
	assert_true(o.tx.rate.value == 1000000);
	assert_true(o.tx.count == 1000);
	assert_true(o.tx.duration_ns == 5 * NS);
	assert_int_equal(o.tx.nworkers, 2);
	assert_int_equal(o.tx.queues[0], 0);
	assert_int_equal(o.tx.queues[1], 1);
	assert_true(o.tx.cpus_set);
	assert_int_equal(o.tx.cpus[0], 0);
	assert_int_equal(o.tx.cpus[1], 1);
	assert_int_equal(o.tx.family, AF_INET);
	assert_true(o.tx.have_dst_ip);
	assert_true(o.tx.have_src_ip);
	ip4(&a, "198.18.0.2");
	assert_memory_equal(&o.tx.dst_ip, &a, 4);
	ip4(&a, "198.18.0.1");
	assert_memory_equal(&o.tx.src_ip, &a, 4);
	assert_true(o.tx.have_dst_mac);
	assert_memory_equal(o.tx.dst_mac, mac, 6);
	assert_int_equal(o.tx.src_port, 1000);
	assert_int_equal(o.tx.dst_port, 2000);
	assert_string_equal(o.json, "-");
	assert_string_equal(o.netns, "foo");
	cmd_free(&c);
}

static void test_send_more_values(void **state)
{
	static const char *const v6[] = {
		"send", "--interface", "eth1", "--dst-ip", "2001:db8::2", "--src-ip", "2001:db8::1",
		"--size", "1518", "--rate", "2.5Gbit", "--queues", "3,1,2", "--flows", "3", NULL,
	};
	static const char *const cpus_only[] = {
		"send", "-i", "eth1", "--dst-ip", "198.18.0.2", "--queues", "0-3", "--flows", "16", NULL,
	};
	struct lr_send_opts o;
	struct in6_addr a;
	struct cmd c;

	(void)state;
	expect_ok(&c, send_parse(&c, &o, v6), "IPv6 send");
	assert_string_equal(o.tx.ifname, "eth1");
	assert_int_equal(o.tx.family, AF_INET6);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::2", &a), 1);
	assert_memory_equal(&o.tx.dst_ip, &a, 16);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &a), 1);
	assert_memory_equal(&o.tx.src_ip, &a, 16);
	assert_int_equal(o.tx.size, 1518);
	assert_int_equal(o.tx.rate.kind, LR_RATE_BPS);
	assert_true(o.tx.rate.value == 2500000000ULL);
	assert_int_equal(o.tx.nworkers, 3);
	assert_int_equal(o.tx.queues[0], 3);
	assert_int_equal(o.tx.queues[1], 1);
	assert_int_equal(o.tx.queues[2], 2);
	cmd_free(&c);

	/* a parser run twice in one process must start over (optind) */
	expect_ok(&c, send_parse(&c, &o, cpus_only), "queues without cpus");
	assert_int_equal(o.tx.nworkers, 4);
	assert_int_equal(o.tx.queues[3], 3);
	assert_false(o.tx.cpus_set);
	assert_int_equal(o.tx.size, 64);
	cmd_free(&c);
}

struct bad_case {
	const char *what;
	const char *args[24];
	const char *w1, *w2;
};

/* the two options send always needs, for the cases that break something else */
#define SEND_OK "send", "-i", "veth0", "--dst-ip", "198.18.0.2"

static const struct bad_case send_bad[] = {
	{ "missing -i", { "send", "--dst-ip", "198.18.0.2", NULL }, "interface", "-i" },
	{ "missing --dst-ip", { "send", "-i", "veth0", NULL }, "dst-ip", NULL },
	{ "bad rate", { SEND_OK, "--rate", "5 parsecs", NULL }, "rate", NULL },
	{ "zero rate", { SEND_OK, "--rate", "0", NULL }, "rate", NULL },
	{ "rate past 1 Gpps", { SEND_OK, "--rate", "1844674407400", NULL }, "1 Gpps", NULL },
	{ "rate past 1 Tbit/s", { SEND_OK, "--rate", "2Tbit", NULL }, "rate", NULL },
	{ "bit rate past 1 Tbit/s", { SEND_OK, "--rate", "1001Gbit", NULL }, "1 Tbit/s", NULL },
	{ "duration past a year", { SEND_OK, "--duration", "4159006706811470109h", NULL }, "year", NULL },
	{ "duration of 2^64 s", { SEND_OK, "--duration", "18446744073709551616", NULL }, "duration", NULL },
	{ "size 63", { SEND_OK, "--size", "63", NULL }, "size", NULL },
	{ "size 20000", { SEND_OK, "--size", "20000", NULL }, "size", NULL },
	{ "size junk", { SEND_OK, "--size", "64b", NULL }, "size", NULL },
	{ "flows 0", { SEND_OK, "--flows", "0", NULL }, "flows", NULL },
	{ "flows 70000", { SEND_OK, "--flows", "70000", NULL }, "flows", NULL },
	{ "fewer flows than workers", { SEND_OK, "--queues", "0-3", "--flows", "2", NULL }, "flows", NULL },
	{ "queues and cpus differ", { SEND_OK, "--queues", "0-1", "--cpus", "0", "--flows", "2", NULL },
	  "queues", "cpus" },
	{ "bad queue list", { SEND_OK, "--queues", "3-1", NULL }, "queues", NULL },
	{ "short MAC", { SEND_OK, "--dst-mac", "02:00:00", NULL }, "mac", "MAC" },
	{ "MAC junk", { SEND_OK, "--dst-mac", "02:00:00:00:00:zz", NULL }, "mac", "MAC" },
	{ "long MAC", { SEND_OK, "--dst-mac", "02:00:00:00:00:02:03", NULL }, "mac", "MAC" },
	{ "mixed families", { "send", "-i", "veth0", "--src-ip", "198.18.0.1", "--dst-ip", "2001:db8::2", NULL },
	  "src-ip", "dst-ip" },
	{ "bad address", { "send", "-i", "veth0", "--dst-ip", "198.18.0.256", NULL }, "dst-ip", NULL },
	{ "bad duration", { SEND_OK, "--duration", "10x", NULL }, "duration", NULL },
	{ "bad count", { SEND_OK, "--count", "many", NULL }, "count", NULL },
	{ "port out of range", { SEND_OK, "--dst-port", "70000", NULL }, "dst-port", NULL },
	{ "interface name too long", { "send", "-i", "averyveryverylongifname0", "--dst-ip", "198.18.0.2", NULL },
	  "interface", "-i" },
	{ "unknown option", { SEND_OK, "--bogus", NULL }, "bogus", NULL },
	{ "missing argument", { SEND_OK, "--rate", NULL }, "rate", NULL },
	{ "stray argument", { SEND_OK, "extra", NULL }, "extra", NULL },
	{ "interface name with a slash", { "send", "-i", "a/b", "--dst-ip", "198.18.0.2", NULL }, "--interface: 'a/b'",
	  NULL },
	{ "netns name with a slash", { SEND_OK, "--netns", "a/b", NULL }, "--netns: 'a/b' is not a network namespace",
	  NULL },
	{ "netns pid with a sign", { SEND_OK, "--netns", "pid:+1", NULL }, "--netns: 'pid:+1'", NULL },
	{ "duplicate queue", { SEND_OK, "--queues", "0,1,0", "--flows", "3", NULL },
	  "--queues: queue 0 is listed twice", NULL },
	{ "pcap cap below 1k", { SEND_OK, "--pcap", "x.pcap", "--pcap-max-bytes", "1000", NULL },
	  "--pcap-max-bytes: '1000' is not a file size (64k, 10M; at least 1024 bytes)", NULL },
	{ "count 0", { SEND_OK, "--count", "0", NULL }, "--count: '0' is not a positive frame count", NULL },
	{ "latency-every not a power of two", { SEND_OK, "--latency-every", "100", NULL },
	  "--latency-every: '100' is not a latency interval (a power of two: 1 = every frame, 64; 1..65536 frames)",
	  NULL },
	{ "latency-every above the cap", { SEND_OK, "--latency-every", "131072", NULL },
	  "--latency-every: '131072' is not a latency interval", NULL },
	{ "latency-every 0", { SEND_OK, "--latency-every", "0", NULL }, "--latency-every: '0' is not a latency interval",
	  NULL },
	{ "latency-every, replay without stamp", { SEND_OK, "--replay", "x.pcap", "--latency-every", "8", NULL },
	  "--latency-every needs --stamp with --replay", NULL },
	{ "empty json", { SEND_OK, "--json", "", NULL }, "--json: '' is empty or too long", NULL },
	{ "loops without replay", { SEND_OK, "--loops", "2", NULL }, "--loops needs --replay FILE", NULL },
};

static void test_send_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(send_bad) / sizeof(send_bad[0]); i++) {
		struct lr_send_opts o;
		struct cmd c;
		int ret = send_parse(&c, &o, send_bad[i].args);

		expect_error(&c, ret, send_bad[i].what, send_bad[i].w1, send_bad[i].w2);
		cmd_free(&c);
	}
}

static void test_send_help(void **state)
{
	static const char *const args[] = { "send", "--help", NULL };
	struct lr_send_opts o;
	struct cmd c;

	(void)state;
	assert_int_equal(send_parse(&c, &o, args), 1);
	assert_non_null(c.help);
	assert_non_null(strstr(c.help, "--rate"));
	assert_non_null(strstr(c.help, "--dst-ip"));
	assert_non_null(strstr(c.help, "--interface"));
	/* the bounds, the default and the choices, from the table */
	assert_non_null(strstr(c.help, "--batch N                frames per ring round (1..512; default: 64)\n"));
	assert_non_null(strstr(c.help, "(64..9018 bytes; default: 64)\n"));
	assert_non_null(strstr(c.help, "at most a year; default: 10s unless --count)\n"));
	assert_non_null(strstr(c.help, "the engine that sends: auto ("));
	assert_non_null(strstr(c.help, "at least 1024 bytes; default: no cap)\n"));
	assert_non_null(strstr(c.help, "interface to send on (required)\n"));
	cmd_free(&c);
}

static void test_recv_defaults_and_options(void **state)
{
	static const char *const min[] = { "recv", "-i", "veth1", NULL };
	static const char *const all[] = {
		"recv", "--interface", "veth1", "--duration", "3s", "--once", "--pass", "--ready-file",
		"/tmp/lr.ready", "--dst-port", "9000", "--xdp-mode", "generic", "--json", "-", "--netns",
		"bar", NULL,
	};
	struct lr_recv_opts o;
	struct cmd c;

	(void)state;
	expect_ok(&c, recv_parse(&c, &o, min), "minimal recv");
	assert_string_equal(o.rx.ifname, "veth1");
	assert_int_equal(o.rx.dst_port, LR_DEFAULT_DST_PORT);
	assert_true(o.duration_ns == 0);
	assert_false(o.once);
	assert_false(o.rx.pass);
	assert_int_equal(o.rx.xdp_mode, LR_XDP_AUTO);
	assert_string_equal(o.ready_file, "");
	cmd_free(&c);

	expect_ok(&c, recv_parse(&c, &o, all), "recv with every option");
	assert_string_equal(o.rx.ifname, "veth1");
	assert_true(o.duration_ns == 3 * NS);
	assert_true(o.once);
	assert_true(o.rx.pass);
	assert_string_equal(o.ready_file, "/tmp/lr.ready");
	assert_int_equal(o.rx.dst_port, 9000);
	assert_int_equal(o.rx.xdp_mode, LR_XDP_GENERIC);
	assert_string_equal(o.json, "-");
	assert_string_equal(o.netns, "bar");
	cmd_free(&c);
}

static void test_recv_xdp_modes(void **state)
{
	static const struct {
		const char *name;
		enum lr_xdp_mode mode;
	} modes[] = { { "native", LR_XDP_NATIVE }, { "generic", LR_XDP_GENERIC }, { "auto", LR_XDP_AUTO } };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		const char *args[] = { "recv", "-i", "veth1", "--xdp-mode", modes[i].name, NULL };
		struct lr_recv_opts o;
		struct cmd c;

		expect_ok(&c, recv_parse(&c, &o, args), modes[i].name);
		assert_int_equal(o.rx.xdp_mode, modes[i].mode);
		cmd_free(&c);
	}
}

static const struct bad_case recv_bad[] = {
	{ "recv missing -i", { "recv", "--duration", "3s", NULL }, "interface", "-i" },
	{ "recv port 0", { "recv", "-i", "veth1", "--dst-port", "0", NULL }, "dst-port", NULL },
	{ "recv port 70000", { "recv", "-i", "veth1", "--dst-port", "70000", NULL }, "dst-port", NULL },
	{ "recv bad mode", { "recv", "-i", "veth1", "--xdp-mode", "turbo", NULL }, "xdp-mode", NULL },
	{ "recv bad duration", { "recv", "-i", "veth1", "--duration", "-1s", NULL }, "duration", NULL },
	{ "recv unknown option", { "recv", "-i", "veth1", "--bogus", NULL }, "bogus", NULL },
	{ "recv duration past a year", { "recv", "-i", "veth1", "--duration", "9000h", NULL }, "year", NULL },
	{ "recv --workers with xdp", { "recv", "-i", "veth1", "-e", "xdp", "--workers", "4", NULL }, "--workers",
	  "xdp" },
	{ "recv --xdp-mode with packet", { "recv", "-i", "veth1", "--xdp-mode", "native", "-e", "packet", NULL },
	  "--xdp-mode", "packet" },
	{ "recv pcap cap below 1k", { "recv", "-i", "veth1", "--pcap", "x.pcap", "--pcap-max-bytes", "100", NULL },
	  "--pcap-max-bytes: '100' is not a file size (64k, 10M; at least 1024 bytes)", NULL },
	{ "recv snaplen 63", { "recv", "-i", "veth1", "--pcap", "x.pcap", "--snaplen", "63", NULL },
	  "--snaplen: '63' is not a snap length (64..9018 bytes)", NULL },
	{ "recv sampling without --pcap", { "recv", "-i", "veth1", "--pcap-every", "10", NULL }, "need --pcap FILE",
	  NULL },
};

static void test_recv_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(recv_bad) / sizeof(recv_bad[0]); i++) {
		struct lr_recv_opts o;
		struct cmd c;
		int ret = recv_parse(&c, &o, recv_bad[i].args);

		expect_error(&c, ret, recv_bad[i].what, recv_bad[i].w1, recv_bad[i].w2);
		cmd_free(&c);
	}
}

static void test_recv_help(void **state)
{
	static const char *const args[] = { "recv", "--help", NULL };
	struct lr_recv_opts o;
	struct cmd c;

	(void)state;
	assert_int_equal(recv_parse(&c, &o, args), 1);
	assert_non_null(c.help);
	assert_non_null(strstr(c.help, "--xdp-mode"));
	assert_non_null(strstr(c.help, "--interface"));
	assert_null(strstr(c.help, "--rate"));
	cmd_free(&c);
}


/* A list with blanks, as the INI file takes it; --queues and [tx] queues are one option. */
static void test_send_list_blanks(void **state)
{
	static const char *const args[] = { SEND_OK, "--queues", "0, 2 - 3", "--flows", "3", NULL };
	struct lr_send_opts o;
	struct cmd c;

	(void)state;
	expect_ok(&c, send_parse(&c, &o, args), "queues with blanks");
	assert_int_equal(o.tx.nworkers, 3);
	assert_int_equal(o.tx.queues[2], 3);
	cmd_free(&c);
}

/* The example: one --pcap-max-bytes, so send and recv take the same values with the same words. */
static void test_shared_bounds(void **state)
{
	static const char *const values[] = { "1000", "1k", "1024", "64k", "lots", "2000000000000000", NULL };

	(void)state;
	for (size_t i = 0; values[i]; i++) {
		const char *sargs[] = { SEND_OK, "--pcap", "x.pcap", "--pcap-max-bytes", values[i], NULL };
		const char *rargs[] = { "recv", "-i", "veth1", "--pcap", "x.pcap", "--pcap-max-bytes", values[i],
					NULL };
		struct lr_send_opts so;
		struct lr_recv_opts ro;
		struct cmd sc, rc;
		int sret = send_parse(&sc, &so, sargs), rret = recv_parse(&rc, &ro, rargs);

		if (sret != rret || strcmp(sc.err, rc.err))
			fail_msg("--pcap-max-bytes %s: send %d '%s', recv %d '%s'", values[i], sret, sc.err, rret,
				 rc.err);
		if (!sret)
			assert_true(so.pcap_max_bytes == ro.rx.pcap_max_bytes);
		cmd_free(&sc);
		cmd_free(&rc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_defaults),
		cmocka_unit_test(test_send_src_port_base),
		cmocka_unit_test(test_send_all_options),
		cmocka_unit_test(test_send_more_values),
		cmocka_unit_test(test_send_errors),
		cmocka_unit_test(test_send_help),
		cmocka_unit_test(test_recv_defaults_and_options),
		cmocka_unit_test(test_recv_xdp_modes),
		cmocka_unit_test(test_recv_errors),
		cmocka_unit_test(test_recv_help),
		cmocka_unit_test(test_send_list_blanks),
		cmocka_unit_test(test_shared_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
