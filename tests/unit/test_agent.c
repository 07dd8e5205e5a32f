/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the agent's requests and facts (no root, no network): prepare_tx, prepare_rx and
 * prepare_reflect through the option table (each key missing, mistyped, out of bounds: refused by name), the small
 * requests, the auth proofs against known answers, the token file's checks, host facts,
 * HOST[:PORT], and the options of send --peer and agent.
 */
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
#include <sys/stat.h>
#include <cmocka.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "ctl/auth.h"
#include "ctl/host.h"
#include "ctl/msg.h"
#include "ctl/net.h"
#include "ctl/request.h"

static char err[512];

/* A copy of @m with @key set to the JSON @value (NULL: removed). */
static struct json_object *with(struct json_object *m, const char *key, const char *value)
{
	struct json_object *c = json_tokener_parse(json_object_to_json_string(m));

	if (value)
		json_object_object_add(c, key, json_tokener_parse(value));
	else
		json_object_object_del(c, key);
	return c;
}

/* The options of a sender as send would have them: defaults, a few choices, send's checks. */
static void sender(struct lr_send_opts *o)
{
	lr_send_opts_default(o);
	snprintf(o->tx.ifname, sizeof(o->tx.ifname), "veth1");
	o->tx.engine = LR_ENGINE_PACKET;
	o->tx.size = 128;
	o->tx.flows = 4;
	o->tx.nworkers = 2;
	o->tx.queues[1] = 1;
	o->tx.count = 5000;
	o->tx.rate.kind = LR_RATE_PPS;
	o->tx.rate.value = 20000;
	inet_pton(AF_INET, "198.18.0.2", &o->tx.dst_ip);
	o->tx.have_dst_ip = true;
	o->tx.dst_family = AF_INET;
	o->tx.dst_mac[0] = 0x02;
	o->tx.dst_mac[5] = 0x07;
	o->tx.have_dst_mac = true;
	o->tx.dst_port = 9000;
	assert_int_equal(lr_send_cli.check(o, err, sizeof(err)), 0);
}

static void test_prepare_tx(void **state)
{
	struct lr_send_opts *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char address[LR_CTL_ADDR_TEXT];
	struct json_object *m;
	bool route = true;

	(void)state;
	sender(a);
	m = lr_ctl_prepare_tx_msg(a, "", false);
	assert_int_equal(lr_ctl_prepare_tx_parse(m, b, address, &route, err, sizeof(err)), 0);
	assert_false(route);
	assert_string_equal(b->tx.ifname, "veth1");
	assert_int_equal(b->tx.engine, LR_ENGINE_PACKET);
	assert_int_equal(b->tx.size, 128);
	assert_int_equal(b->tx.flows, 4);
	assert_int_equal(b->tx.nworkers, 2);
	assert_int_equal(b->tx.queues[1], 1);
	assert_false(b->tx.cpus_set);
	assert_int_equal(b->tx.count, 5000);
	assert_int_equal(b->tx.duration_ns, 0);
	assert_int_equal(b->tx.rate.kind, LR_RATE_PPS);
	assert_int_equal(b->tx.rate.value, 20000);
	assert_memory_equal(&b->tx.dst_ip, &a->tx.dst_ip, sizeof(a->tx.dst_ip));
	assert_int_equal(b->tx.family, AF_INET);
	assert_false(b->tx.have_src_ip);
	assert_true(b->tx.have_dst_mac);
	assert_memory_equal(b->tx.dst_mac, a->tx.dst_mac, 6);
	assert_false(b->tx.have_src_mac);
	assert_int_equal(b->tx.src_port, a->tx.src_port);
	assert_int_equal(b->tx.dst_port, 9000);
	assert_int_equal(b->tx.batch, a->tx.batch);
	assert_string_equal(address, "");
	json_object_put(m);

	/* by address instead of interface; a duration and the max rate */
	a->tx.ifname[0] = '\0';
	a->tx.count = 0;
	a->tx.duration_ns = 1500000000ULL;
	a->tx.rate.kind = LR_RATE_MAX;
	m = lr_ctl_prepare_tx_msg(a, "198.18.0.1", false);
	assert_int_equal(lr_ctl_prepare_tx_parse(m, b, address, &route, err, sizeof(err)), 0);
	assert_string_equal(b->tx.ifname, "");
	assert_string_equal(address, "198.18.0.1");
	assert_false(route);
	assert_int_equal(b->tx.duration_ns, 1500000000ULL);
	assert_int_equal(b->tx.rate.kind, LR_RATE_MAX);
	json_object_put(m);

	/* by the route to dst_ip (version 4): neither an interface nor an address */
	m = lr_ctl_prepare_tx_msg(a, "", true);
	assert_true(json_object_get_boolean(json_object_object_get(m, "route")));
	assert_int_equal(lr_ctl_prepare_tx_parse(m, b, address, &route, err, sizeof(err)), 0);
	assert_true(route);
	assert_string_equal(b->tx.ifname, "");
	assert_string_equal(address, "");
	assert_memory_equal(&b->tx.dst_ip, &a->tx.dst_ip, sizeof(a->tx.dst_ip));
	json_object_put(m);
	free(a);
	free(b);
}

/* @m parsed by the endpoint's parser of its type: 0, or -EINVAL with the reason in err. */
static int parse(struct json_object *m)
{
	struct lr_send_opts *tx = malloc(sizeof(*tx));
	struct lr_recv_opts *rx = malloc(sizeof(*rx));
	struct lr_reflect_opts *fo = malloc(sizeof(*fo));
	char address[LR_CTL_ADDR_TEXT], proof[LR_AUTH_HEX + 1];
	const char *type = lr_msg_type(m);
	bool route;
	struct lr_ctl_hello_req h;
	unsigned int ms;
	uint64_t t1;
	int ret;

	err[0] = '\0';
	if (!strcmp(type, "prepare_tx"))
		ret = lr_ctl_prepare_tx_parse(m, tx, address, &route, err, sizeof(err));
	else if (!strcmp(type, "prepare_rx"))
		ret = lr_ctl_prepare_rx_parse(m, rx, address, err, sizeof(err));
	else if (!strcmp(type, "prepare_reflect"))
		ret = lr_ctl_prepare_reflect_parse(m, fo, address, err, sizeof(err));
	else if (!strcmp(type, "wait"))
		ret = lr_ctl_wait_parse(m, &ms, err, sizeof(err));
	else if (!strcmp(type, "clock"))
		ret = lr_ctl_clock_parse(m, &t1, err, sizeof(err));
	else if (!strcmp(type, "start"))
		ret = lr_ctl_start_parse(m, &t1, err, sizeof(err));
	else if (!strcmp(type, "auth"))
		ret = lr_ctl_auth_parse(m, proof, err, sizeof(err));
	else
		ret = lr_ctl_hello_parse(m, &h, err, sizeof(err));
	free(tx);
	free(rx);
	free(fo);
	return ret;
}

/* Every key of @m removed in turn: "TYPE.KEY: missing". */
static void each_missing(struct json_object *m)
{
	json_object_object_foreach(m, key, val)
	{
		struct json_object *c;
		char want[96];

		(void)val;
		if (!strcmp(key, "type") || !strcmp(key, "v"))
			continue;
		c = with(m, key, NULL);
		assert_int_equal(parse(c), -EINVAL);
		snprintf(want, sizeof(want), "%s.%s: missing", lr_msg_type(m), key);
		if (strcmp(err, want))
			fail_msg("without %s: \"%s\", not \"%s\"", key, err, want);
		json_object_put(c);
	}
}

struct bad {
	const char *key;
	const char *json;
	const char *says;	/* NULL: the key's name is enough */
};

/* Each value of @bad refused with a message naming its key (and saying @says). */
static void each_bad(struct json_object *m, const struct bad *bad, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct json_object *c = with(m, bad[i].key, bad[i].json);

		assert_int_equal(parse(c), -EINVAL);
		if (!strstr(err, bad[i].key) || (bad[i].says && !strstr(err, bad[i].says)))
			fail_msg("%s = %s: \"%s\" does not name it (or say \"%s\")", bad[i].key, bad[i].json, err,
				 bad[i].says ? bad[i].says : "");
		json_object_put(c);
	}
}

static void test_prepare_tx_refused(void **state)
{
	static const struct bad bad[] = {
		/* mistyped */
		{ "size", "\"64\"", "expected an unsigned integer" },
		{ "interface", "7", "expected a string" },
		{ "queues", "\"0-3\"", "expected an array" },
		{ "queues", "[0, \"1\"]", "expected an unsigned integer" },
		{ "count", "-1", "expected an unsigned integer" },
		{ "rate", "1000", "expected a string" },
		{ "netns", "null", "expected a string" },
		/* out of the option table's bounds, in its words */
		{ "size", "9999", "is not a frame size (64..9018 bytes)" },
		{ "size", "0", "is not a frame size" },
		{ "flows", "0", "is not a flow count" },
		{ "flows", "70000", "is not a flow count" },
		{ "queues", "[4096]", "is not a queue list" },
		{ "queues", "[0, 0]", "listed twice" },
		{ "queues", "[]", "is not a queue list" },
		{ "batch", "513", "is not a batch size" },
		{ "dst_port", "0", "is not a port" },
		{ "dst_port", "65536", "is not a port" },
		{ "src_port", "65536", "is not a port" },
		{ "rate", "\"2000Gbit\"", "exceeds the limit" },
		{ "rate", "\"fast\"", "is not a rate" },
		{ "engine", "\"dpdk\"", "is not one of auto, afxdp, packet, live" },
		{ "xdp_mode", "\"native\"", "is not one of auto, zerocopy, copy" },
		{ "dst_ip", "\"\"", "is not an IPv4 or IPv6 address" },
		{ "dst_ip", "\"198.18.0.256\"", "is not an IPv4 or IPv6 address" },
		{ "src_mac", "\"ff:ff:ff:ff:ff:ff\"", "multicast" },
		{ "dst_mac", "\"02:00:00:00:00\"", "is not a MAC address" },
		{ "duration_ns", "400000000000000000", "exceeds the limit" },
		{ "interface", "\"a/b\"", "is not an interface name" },
		{ "netns", "\"../x\"", "is not a network namespace" },
		{ "address", "\"host.example\"", "is not an IPv4 or IPv6 address" },
		{ "address", "\"198.18.0.1\"", "not both" },
		{ "route", "1", "expected true or false" },
		{ "route", "\"yes\"", "expected true or false" },
		{ "route", "null", NULL },
		{ "route", "true", "the interface is found one way only" },
		{ "surprise", "1", "unknown key" },
	};
	struct lr_send_opts *a = calloc(1, sizeof(*a));
	struct json_object *m, *c, *d;

	(void)state;
	sender(a);
	m = lr_ctl_prepare_tx_msg(a, "", false);
	each_missing(m);
	each_bad(m, bad, sizeof(bad) / sizeof(bad[0]));
	/* neither an interface nor an address nor the route to find it by */
	c = with(m, "interface", "\"\"");
	assert_int_equal(parse(c), -EINVAL);
	assert_string_equal(err, "prepare_tx.interface: empty, and no address or route to find the interface by");
	/* the route and an address: one way only */
	d = with(c, "route", "true");
	assert_int_equal(parse(d), 0);
	json_object_put(d);
	d = with(c, "address", "\"198.18.0.1\"");
	json_object_object_add(d, "route", json_object_new_boolean(true));
	assert_int_equal(parse(d), -EINVAL);
	assert_string_equal(err, "prepare_tx.route: true, and an address given too: the interface is found one way only");
	json_object_put(d);
	json_object_put(c);
	/* how the options go together: send's own checks */
	c = with(m, "flows", "1");
	assert_int_equal(parse(c), -EINVAL);
	assert_non_null(strstr(err, "prepare_tx: --flows 1 is fewer than the 2 workers"));
	json_object_put(c);
	c = with(m, "src_ip", "\"fd00::1\"");
	assert_int_equal(parse(c), -EINVAL);
	assert_non_null(strstr(err, "use one address family"));
	json_object_put(c);
	json_object_put(m);
	free(a);
}

static void test_prepare_rx_refused(void **state)
{
	static const struct bad bad[] = {
		{ "clock_offset_ns", "1.5", "expected an integer" },
		{ "clock_offset_ns", "\"0\"", "expected an integer" },
		{ "address", "\"::1::2\"", "is not an IPv4 or IPv6 address" },
		{ "workers", "\"2\"", "expected an unsigned integer" },
		{ "pcap", "[]", "expected a string" },
	};
	struct lr_recv_opts *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char address[LR_CTL_ADDR_TEXT];
	struct json_object *m;

	(void)state;
	lr_recv_opts_default(a);
	a->rx.clock_offset_ns = INT64_MIN + 1;
	m = lr_ctl_prepare_rx_msg(a, "fd00::2");
	assert_int_equal(lr_ctl_prepare_rx_parse(m, b, address, err, sizeof(err)), 0);
	assert_string_equal(address, "fd00::2");
	assert_string_equal(b->rx.ifname, "");
	assert_int_equal(b->rx.clock_offset_ns, INT64_MIN + 1);
	each_missing(m);
	each_bad(m, bad, sizeof(bad) / sizeof(bad[0]));
	json_object_put(m);
	free(a);
	free(b);
}

/* A reflector for send --peer --rtt: by interface and by address, every key back as it went. */
static void test_prepare_reflect(void **state)
{
	static const struct bad bad[] = {
		/* mistyped */
		{ "dst_port", "\"7447\"", "expected an unsigned integer" },
		{ "dst_port", "-1", "expected an unsigned integer" },
		{ "xdp_mode", "1", "expected a string" },
		{ "interface", "[]", "expected a string" },
		{ "netns", "null", "expected a string" },
		{ "address", "7", "expected a string" },
		/* out of the option table's bounds, in its words */
		{ "dst_port", "0", "is not a port" },
		{ "dst_port", "65536", "is not a port" },
		{ "xdp_mode", "\"zerocopy\"", "is not one of auto, native, generic" },
		{ "xdp_mode", "\"\"", "is not one of auto, native, generic" },
		{ "interface", "\"a/b\"", "is not an interface name" },
		{ "interface", "\"ul0ul0ul0ul0ul0ul0\"", "interface" },
		{ "netns", "\"../x\"", "is not a network namespace" },
		{ "address", "\"host.example\"", "is not an IPv4 or IPv6 address" },
		{ "address", "\"198.18.0.1\"", "not both" },
		/* no other key: not a duration, nor a file of the agent's host */
		{ "duration_ns", "1000000000", "unknown key" },
		{ "json", "\"/tmp/x.json\"", "unknown key" },
		{ "once", "true", "unknown key" },
		{ "surprise", "1", "unknown key" },
	};
	struct lr_reflect_opts *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char address[LR_CTL_ADDR_TEXT];
	struct json_object *m, *c;
	const char *modes[] = { "auto", "native", "generic" };
	unsigned int i;

	(void)state;
	lr_reflect_opts_default(a);
	snprintf(a->fx.ifname, sizeof(a->fx.ifname), "ul0");
	snprintf(a->netns, sizeof(a->netns), "container:web");
	a->fx.dst_port = 9000;
	a->fx.xdp_mode = LR_XDP_GENERIC;
	m = lr_ctl_prepare_reflect_msg(a, "");
	assert_string_equal(lr_msg_type(m), "prepare_reflect");
	assert_int_equal(lr_ctl_prepare_reflect_parse(m, b, address, err, sizeof(err)), 0);
	assert_string_equal(b->fx.ifname, "ul0");
	assert_string_equal(b->netns, "container:web");
	assert_int_equal(b->fx.dst_port, 9000);
	assert_int_equal(b->fx.xdp_mode, LR_XDP_GENERIC);
	assert_string_equal(address, "");
	/* reflect's own options are not the controller's: their defaults, whatever was in the struct */
	assert_int_equal(b->duration_ns, 0);
	assert_false(b->once);
	assert_string_equal(b->json, "");
	assert_string_equal(b->ready_file, "");
	assert_false(b->fx.allow_physical);
	each_missing(m);
	each_bad(m, bad, sizeof(bad) / sizeof(bad[0]));
	/* neither an interface nor an address to find it by */
	c = with(m, "interface", "\"\"");
	assert_int_equal(parse(c), -EINVAL);
	assert_string_equal(err, "prepare_reflect.interface: empty, and no address to find the interface by");
	json_object_put(c);
	json_object_put(m);

	/* each mode by its name, the interface found by an IPv6 address in the endpoint's own namespace */
	a->fx.ifname[0] = a->netns[0] = '\0';
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		a->fx.xdp_mode = (enum lr_xdp_mode)i;
		m = lr_ctl_prepare_reflect_msg(a, "fd00::2");
		c = json_tokener_parse(json_object_to_json_string(m));
		assert_non_null(c);
		assert_string_equal(json_object_get_string(json_object_object_get(c, "xdp_mode")), modes[i]);
		assert_int_equal(lr_ctl_prepare_reflect_parse(c, b, address, err, sizeof(err)), 0);
		assert_int_equal(b->fx.xdp_mode, i);
		assert_string_equal(b->fx.ifname, "");
		assert_string_equal(b->netns, "");
		assert_string_equal(address, "fd00::2");
		json_object_put(c);
		json_object_put(m);
	}
	free(a);
	free(b);
}

#define NONCE "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void test_small_requests(void **state)
{
	static const struct bad wait_bad[] = {
		{ "timeout_ms", "1001", "out of range (0..1000)" },
		{ "timeout_ms", "-1", "negative" },
		{ "timeout_ms", "\"5\"", "expected an unsigned integer" },
		{ "extra", "1", "unknown key" },
	};
	static const struct bad clock_bad[] = {
		{ "t1", "-5", "negative" },
		{ "t1", "1e3", "expected an unsigned integer" },
	};
	static const struct bad start_bad[] = {
		{ "at_ns", "-1", "negative" },
		{ "at_ns", "null", "expected an unsigned integer" },
		{ "extra", "0", "unknown key" },
	};
	static const struct bad auth_bad[] = {
		{ "proof", "\"abc\"", "not 64 lower-case hex digits" },
		{ "proof", "\"" "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff" "\"", "hex digits" },
		{ "proof", "\"" NONCE "00" "\"", "proof" },
	};
	static const struct bad hello_bad[] = {
		{ "nonce", "\"xyz\"", "not 64 lower-case hex digits" },
		{ "version", "\"1.0\"", "expected an object" },
		{ "version", "{\"release\":\"1\"}", "version.revision: missing" },
	};
	struct json_object *m, *c;
	unsigned int ms;
	uint64_t t1;

	(void)state;
	m = lr_msg_new("wait");
	json_object_object_add(m, "timeout_ms", json_object_new_int(1000));
	assert_int_equal(lr_ctl_wait_parse(m, &ms, err, sizeof(err)), 0);
	assert_int_equal(ms, 1000);
	each_missing(m);
	each_bad(m, wait_bad, sizeof(wait_bad) / sizeof(wait_bad[0]));
	json_object_put(m);

	m = lr_msg_new("clock");
	json_object_object_add(m, "t1", json_object_new_uint64(UINT64_MAX));
	assert_int_equal(lr_ctl_clock_parse(m, &t1, err, sizeof(err)), 0);
	assert_true(t1 == UINT64_MAX);
	each_missing(m);
	each_bad(m, clock_bad, sizeof(clock_bad) / sizeof(clock_bad[0]));
	json_object_put(m);

	c = lr_ctl_start_msg(5000000000ULL);
	m = json_tokener_parse(json_object_to_json_string(c));
	json_object_put(c);
	assert_non_null(m);
	assert_int_equal(lr_ctl_start_parse(m, &t1, err, sizeof(err)), 0);
	assert_true(t1 == 5000000000ULL);
	each_missing(m);
	each_bad(m, start_bad, sizeof(start_bad) / sizeof(start_bad[0]));
	json_object_put(m);

	m = lr_msg_new("auth");
	json_object_object_add(m, "proof", json_object_new_string(NONCE));
	assert_int_equal(parse(m), 0);
	each_missing(m);
	each_bad(m, auth_bad, sizeof(auth_bad) / sizeof(auth_bad[0]));
	json_object_put(m);

	m = lr_ctl_hello_msg(NONCE);
	assert_int_equal(parse(m), 0);
	each_missing(m);
	each_bad(m, hello_bad, sizeof(hello_bad) / sizeof(hello_bad[0]));
	json_object_put(m);
}

/* Known answers, computed apart from libsodium (Python's hashlib: blake2b(digest_size=32), HMAC-SHA-512 cut to 32 bytes). */
#define NONCE_C	"0000000000000000000000000000000011111111111111111111111111111111"
#define NONCE_E	"abababababababababababababababababababababababababababababababab"
#define PROOF_AGENT	"23d4ca6081e0e2c54ef445576ca6805f7ed788128b7cdf5be75e12a774528ab4"
#define PROOF_CONTROLLER "c3a65e140a20e31818e103929b8ca9439f66e311a3b918f3056e75cea4e5c80d"

static void test_auth_known_answer(void **state)
{
	static const char key_hex[] = "6f12bbc907b0048e2534e75bee53ec900aa42aafc3856b1b49fbb5ae23d0cef2";
	struct lr_auth_key k, k2;
	char proof[LR_AUTH_HEX + 1], hex[2 * LR_AUTH_KEY_LEN + 1], flipped[LR_AUTH_HEX + 1];
	unsigned int i;

	(void)state;
	assert_int_equal(lr_auth_init(), 0);
	/* trailing white space is not part of the token */
	assert_int_equal(lr_auth_key("secret-token \n", 14, &k), 0);
	for (i = 0; i < LR_AUTH_KEY_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", k.k[i]);
	assert_string_equal(hex, key_hex);
	assert_int_equal(lr_auth_key(" \n\t", 3, &k2), -EINVAL);

	lr_auth_proof(&k, "agent", NONCE_C, NONCE_E, proof);
	assert_string_equal(proof, PROOF_AGENT);
	lr_auth_proof(&k, "controller", NONCE_E, NONCE_C, proof);
	assert_string_equal(proof, PROOF_CONTROLLER);
	assert_true(lr_auth_check(&k, "agent", NONCE_C, NONCE_E, PROOF_AGENT));
	assert_true(lr_auth_check(&k, "controller", NONCE_E, NONCE_C, PROOF_CONTROLLER));
	/* a flipped bit anywhere in the proof fails */
	for (i = 0; i < LR_AUTH_HEX; i++) {
		memcpy(flipped, PROOF_AGENT, sizeof(flipped));
		flipped[i] = flipped[i] == '0' ? '1' : '0';
		assert_false(lr_auth_check(&k, "agent", NONCE_C, NONCE_E, flipped));
	}
	/* another role, the nonces swapped (a replayed proof), another token, a malformed proof */
	assert_false(lr_auth_check(&k, "controller", NONCE_C, NONCE_E, PROOF_AGENT));
	assert_false(lr_auth_check(&k, "agent", NONCE_E, NONCE_C, PROOF_AGENT));
	assert_int_equal(lr_auth_key("secret-tokem", 12, &k2), 0);
	assert_false(lr_auth_check(&k2, "agent", NONCE_C, NONCE_E, PROOF_AGENT));
	assert_false(lr_auth_check(&k, "agent", NONCE_C, NONCE_E, "23d4"));
	assert_false(lr_auth_check(&k, "agent", "0011", NONCE_E, PROOF_AGENT));
	/* fresh nonces each time */
	lr_auth_nonce(proof);
	lr_auth_nonce(flipped);
	assert_true(lr_auth_hex_ok(proof));
	assert_string_not_equal(proof, flipped);
}

/* A token file of @mode holding @text: what lr_auth_load() says. */
static int load(const char *text, mode_t mode)
{
	char path[] = "/tmp/lr-test-token.XXXXXX";
	struct lr_auth_key k;
	int fd = mkstemp(path), ret;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	err[0] = '\0';
	ret = lr_auth_load(path, &k, err, sizeof(err));
	unlink(path);
	return ret;
}

static void test_token_file(void **state)
{
	struct lr_auth_key k;

	(void)state;
	assert_int_equal(load("secret-token\n", 0600), 0);
	assert_int_equal(load("secret-token\n", 0400), 0);
	assert_int_equal(load("secret-token\n", 0644), -EPERM);
	assert_non_null(strstr(err, "has mode 0644: group and others must have no access"));
	assert_int_equal(load("secret-token\n", 0620), -EPERM);
	assert_int_equal(load("secret-token\n", 0602), -EPERM);
	assert_int_equal(load("\n\n", 0600), -EINVAL);
	assert_non_null(strstr(err, "holds no token"));
	assert_int_equal(lr_auth_load("/tmp", &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_true(lr_auth_load("/nonexistent/token", &k, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cannot open"));
}

static void test_host_facts(void **state)
{
	static const char good[] = "4b0f717a-0c77-4768-a57c-b46c3ffc4265\n";
	static const struct bad bad[] = {
		{ "cpus", "0", "out of range" },
		{ "boot_id", "\"4B0F717A-0C77-4768-A57C-B46C3FFC4265\"", "not a boot id" },
		{ "boot_id", "\"4b0f717a0c774768a57cb46c3ffc4265\"", "not a boot id" },
		{ "hostname", "\"\"", "hostname" },
		{ "timens_monotonic_ns", "\"0\"", "expected an integer" },
		{ "interfaces", "[{\"name\":\"v0\",\"kind\":\"veth\",\"physical\":false,\"addresses\":[\"198.18.0.1\"]}]",
		  "not an address with a prefix length" },
		{ "interfaces", "[{\"name\":\"v0\",\"kind\":\"veth\",\"physical\":false,\"addresses\":[\"198.18.0.1/33\"]}]",
		  "prefix length" },
		{ "interfaces", "[{\"name\":\"v0\",\"kind\":\"veth\",\"physical\":0,\"addresses\":[]}]", "physical" },
		{ "interfaces", "[{\"name\":\"v0\",\"kind\":\"veth\",\"addresses\":[]}]", "physical: missing" },
		{ "interfaces", "[{\"name\":\"v0\",\"kind\":\"veth\",\"physical\":false,\"addresses\":[],\"mtu\":1}]",
		  "unknown key" },
	};
	struct lr_host *h = calloc(1, sizeof(*h)), *g = calloc(1, sizeof(*g));
	struct json_object *m = json_object_new_object(), *host;
	char id[LR_BOOT_ID_LEN + 1];
	size_t i;

	(void)state;
	assert_int_equal(lr_host_boot_id_parse(good, id), 0);
	assert_string_equal(id, "4b0f717a-0c77-4768-a57c-b46c3ffc4265");
	assert_int_equal(lr_host_boot_id_parse("4b0f717a-0c77-4768-a57c-b46c3ffc4265", id), -EINVAL);
	assert_int_equal(lr_host_boot_id_parse("4b0f717a-0c77-4768-a57c-b46c3ffc426\n", id), -EINVAL);
	assert_int_equal(lr_host_boot_id_parse("4b0f717a+0c77-4768-a57c-b46c3ffc4265\n", id), -EINVAL);
	assert_int_equal(lr_host_boot_id_parse("4b0f717a-0c77-4768-a57c-b46c3ffc4265\nx", id), -EINVAL);

	snprintf(h->hostname, sizeof(h->hostname), "node-b");
	memcpy(h->boot_id, id, sizeof(id));
	snprintf(h->kernel, sizeof(h->kernel), "6.1.0");
	h->cpus = 8;
	h->timens_monotonic_ns = -1500000000;
	h->nifs = 2;
	snprintf(h->ifs[0].name, IF_NAMESIZE, "lo");
	h->ifs[0].naddrs = 1;
	snprintf(h->ifs[0].addrs[0], LR_HOST_ADDR_LEN, "127.0.0.1/8");
	snprintf(h->ifs[1].name, IF_NAMESIZE, "ul0");
	snprintf(h->ifs[1].kind, sizeof(h->ifs[1].kind), "veth");
	h->ifs[1].naddrs = 2;
	snprintf(h->ifs[1].addrs[0], LR_HOST_ADDR_LEN, "198.19.0.2/24");
	snprintf(h->ifs[1].addrs[1], LR_HOST_ADDR_LEN, "fd00::2/64");
	lr_host_put(m, h);
	assert_int_equal(lr_host_get(m, g, err, sizeof(err)), 0);
	assert_memory_equal(h, g, sizeof(*h));
	/* each fact refused by name */
	assert_true(json_object_object_get_ex(m, "host", &host));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *c = json_object_new_object();

		json_object_object_add(c, "host", with(host, bad[i].key, bad[i].json));
		assert_int_equal(lr_host_get(c, g, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].key) || !strstr(err, bad[i].says))
			fail_msg("host.%s = %s: \"%s\"", bad[i].key, bad[i].json, err);
		json_object_put(c);
	}
	json_object_put(m);
	/* this process's own facts read and carried back */
	m = json_object_new_object();
	assert_int_equal(lr_host_read(h), 0);
	assert_true(h->cpus >= 1 && h->nifs >= 1);
	lr_host_put(m, h);
	assert_int_equal(lr_host_get(m, g, err, sizeof(err)), 0);
	assert_string_equal(g->boot_id, h->boot_id);
	json_object_put(m);
	free(h);
	free(g);
}

static void test_addr(void **state)
{
	static const struct {
		const char *in;
		bool numeric;
		const char *host;	/* NULL: refused */
		unsigned int port;
	} cases[] = {
		{ "198.18.0.2", true, "198.18.0.2", LR_CTL_PORT },
		{ "198.18.0.2:9000", true, "198.18.0.2", 9000 },
		{ "[fd00::2]:9000", true, "fd00::2", 9000 },
		{ "[fd00::2]", true, "fd00::2", LR_CTL_PORT },
		{ "fd00::2", true, "fd00::2", LR_CTL_PORT },
		{ "agent-b.example", false, "agent-b.example", LR_CTL_PORT },
		{ "agent-b:7", false, "agent-b", 7 },
		{ "agent-b", true, NULL, 0 },
		{ "198.18.0.2:0", true, NULL, 0 },
		{ "198.18.0.2:65536", true, NULL, 0 },
		{ "198.18.0.2:", true, NULL, 0 },
		{ "198.18.0.2:+80", true, NULL, 0 },
		{ "[198.18.0.2]:80", true, NULL, 0 },
		{ "[fd00::2]x", true, NULL, 0 },
		{ "[fd00::2", true, NULL, 0 },
		{ ":80", false, NULL, 0 },
		{ "a..b", false, NULL, 0 },
		{ "a b", false, NULL, 0 },
		{ "", false, NULL, 0 },
	};
	struct lr_ctl_addr a;
	char name[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = lr_ctl_addr_parse(cases[i].in, cases[i].numeric, &a, err, sizeof(err));

		if (!cases[i].host) {
			if (ret != -EINVAL)
				fail_msg("'%s' was taken", cases[i].in);
			continue;
		}
		if (ret)
			fail_msg("'%s': %s", cases[i].in, err);
		assert_string_equal(a.host, cases[i].host);
		assert_int_equal(a.port, cases[i].port);
	}
	assert_int_equal(lr_ctl_addr_parse("[fd00::2]:80", true, &a, err, sizeof(err)), 0);
	lr_ctl_addr_name(&a, name, sizeof(name));
	assert_string_equal(name, "[fd00::2]:80");
	assert_int_equal(lr_ctl_addr_parse("127.3.4.5", true, &a, err, sizeof(err)), 0);
	assert_true(lr_ctl_addr_loopback(&a));
	assert_int_equal(lr_ctl_addr_parse("::1", true, &a, err, sizeof(err)), 0);
	assert_true(lr_ctl_addr_loopback(&a));
	assert_int_equal(lr_ctl_addr_parse("::ffff:127.0.0.1", true, &a, err, sizeof(err)), 0);
	assert_true(lr_ctl_addr_loopback(&a));
	assert_int_equal(lr_ctl_addr_parse("0.0.0.0", true, &a, err, sizeof(err)), 0);
	assert_false(lr_ctl_addr_loopback(&a));
	assert_int_equal(lr_ctl_addr_parse("198.18.0.2", true, &a, err, sizeof(err)), 0);
	assert_false(lr_ctl_addr_loopback(&a));
}

/* argv for a command, parsed: 0, or -EINVAL with the message in err. */
static int cli(const struct lr_cli *c, void *o, const char *args)
{
	char buf[512], *argv[32], *tok, *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s %s", c->cmd, args);
	for (tok = strtok_r(buf, " ", &save); tok && argc < 31; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	err[0] = '\0';
	return lr_cli_parse(c, argc, argv, o, NULL, err, sizeof(err));
}

/* The new options: what goes with --peer, the agent's address rule, --allow repeated. */
static void test_cli(void **state)
{
	struct lr_send_opts *s = malloc(sizeof(*s));
	struct lr_agent_opts *a = malloc(sizeof(*a));

	(void)state;
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --peer 198.18.0.2 --reverse --clock estimate"), 0);
	assert_string_equal(s->peer, "198.18.0.2");
	assert_true(s->reverse);
	assert_int_equal(s->clock, LR_CLOCK_ESTIMATE);
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --reverse"), -EINVAL);
	assert_non_null(strstr(err, "need --peer HOST"));
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --peer [198.18.0.2]"), -EINVAL);
	assert_non_null(strstr(err, "--peer: "));
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --peer b --reverse --dst-mac 02:00:00:00:00:01"),
			 -EINVAL);
	assert_non_null(strstr(err, "--reverse: the agent sends"));
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --peer b --clock sometimes"), -EINVAL);
	/* --rtt through an agent: its reflector; one clock, this side's, so nothing to estimate */
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --peer b --rtt --peer-interface ul0"), 0);
	assert_true(s->tx.rtt);
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --peer b --rtt --clock estimate"), -EINVAL);
	assert_non_null(strstr(err, "--clock estimate: --rtt times the round trip on this side's one clock"));
	assert_int_equal(cli(&lr_send_cli, s, "-i v0 --dst-ip 198.18.0.2 --peer b --rtt --reverse"), -EINVAL);

	/* a token always, loopback included, unless --insecure says otherwise */
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 127.0.0.1"), -EINVAL);
	assert_non_null(strstr(err, "give --token-file FILE"));
	assert_non_null(strstr(err, "or --insecure"));
	assert_int_equal(cli(&lr_agent_cli, a, "--listen [::1]:9000"), -EINVAL);
	assert_int_equal(cli(&lr_agent_cli, a, "--listen [::1]:9000 --token-file /etc/t"), 0);
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 127.0.0.1 --insecure"), 0);
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 198.18.0.1"), -EINVAL);
	assert_non_null(strstr(err, "give --token-file"));
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 198.18.0.1 --insecure"), 0);
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 198.18.0.1 --token-file /etc/t"), 0);
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 198.18.0.1 --token-file /etc/t --insecure"), -EINVAL);
	assert_non_null(strstr(err, "--insecure and --token-file: give one"));
	assert_int_equal(cli(&lr_agent_cli, a, "--listen agent.example --insecure"), -EINVAL);
	assert_non_null(strstr(err, "is not an IPv4 or IPv6 address"));
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 127.0.0.1 --insecure --capture-dir /var/lib/lr "
				 "--allow-netns lab-*,pid:* --allow-netns /run/netns/*"), 0);
	assert_string_equal(a->capture_dir, "/var/lib/lr");
	assert_int_equal(a->nallow_netns, 3);
	assert_string_equal(a->allow_netns[0], "lab-*");
	assert_string_equal(a->allow_netns[1], "pid:*");
	assert_string_equal(a->allow_netns[2], "/run/netns/*");
	assert_int_equal(cli(&lr_agent_cli, a, "--listen 127.0.0.1 --insecure --allow veth* --allow vx0,br*"), 0);
	assert_int_equal(a->nallow, 3);
	assert_string_equal(a->allow[0], "veth*");
	assert_string_equal(a->allow[1], "vx0");
	assert_string_equal(a->allow[2], "br*");
	free(s);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepare_tx),	   cmocka_unit_test(test_prepare_tx_refused),
		cmocka_unit_test(test_prepare_rx_refused), cmocka_unit_test(test_prepare_reflect),
		cmocka_unit_test(test_small_requests),
		cmocka_unit_test(test_auth_known_answer),  cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_host_facts),	   cmocka_unit_test(test_addr),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
