/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the agent protocol over a socketpair (no root, no network): framing (a message
 * split anywhere across reads, a length over the cap, garbage, another version, the stream ending
 * in the middle of a message, silence), the non-blocking reader, and the endpoint's answers to requests it must refuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "cmd/cmd.h"
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "ctl/request.h"
#include "opt/optset.h"

static char err[512];

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void put_all(int fd, const void *buf, size_t len)
{
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
}

/* A frame around @body, as a peer would write it (or a broken one, with any @len). */
static size_t frame(char *out, uint32_t len, const char *body, size_t body_len)
{
	uint32_t be = htonl(len);

	memcpy(out, &be, 4);
	memcpy(out + 4, body, body_len);
	return 4 + body_len;
}

/* Bytes written in two pieces, a pause between them, so the reader sees the message split there. */
struct split {
	int fd;
	const char *buf;
	size_t len, at;
};

static void *write_split(void *arg)
{
	struct split *s = arg;

	put_all(s->fd, s->buf, s->at);
	usleep(2000);
	put_all(s->fd, s->buf + s->at, s->len - s->at);
	return NULL;
}

static void test_round_trip(void **state)
{
	struct json_object *m = lr_msg_new("wait"), *got, *v;
	int sv[2];

	(void)state;
	pair(sv);
	json_object_object_add(m, "timeout_ms", json_object_new_int(3000));
	assert_int_equal(lr_msg_send(sv[0], m, 1000, err, sizeof(err)), 0);
	json_object_put(m);
	assert_int_equal(lr_msg_recv(sv[1], LR_MSG_MAX, 1000, &got, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(got), "wait");
	assert_true(json_object_object_get_ex(got, "v", &v));
	assert_int_equal(json_object_get_int(v), LR_MSG_VERSION);
	assert_true(json_object_object_get_ex(got, "timeout_ms", &v));
	assert_int_equal(json_object_get_int(v), 3000);
	json_object_put(got);
	close(sv[0]);
	close(sv[1]);
}

/* Every split point of a message, header and body alike: one message comes out whole. */
static void test_split_anywhere(void **state)
{
	const char *body = "{\"type\":\"reset\",\"v\":7,\"x\":\"\\u00e9t\\u00e9\"}";
	char buf[128];
	size_t len = frame(buf, (uint32_t)strlen(body), body, strlen(body)), at;

	(void)state;
	for (at = 1; at < len; at++) {
		struct split s = { .buf = buf, .len = len, .at = at };
		struct json_object *got;
		pthread_t t;
		int sv[2];

		pair(sv);
		s.fd = sv[0];
		assert_int_equal(pthread_create(&t, NULL, write_split, &s), 0);
		if (lr_msg_recv(sv[1], LR_MSG_MAX, 2000, &got, err, sizeof(err)))
			fail_msg("split at byte %zu: %s", at, err);
		assert_string_equal(lr_msg_type(got), "reset");
		json_object_put(got);
		pthread_join(t, NULL);
		close(sv[0]);
		close(sv[1]);
	}
}

/* What a reader makes of @bytes followed by the writer closing (or not, with @keep_open). */
static int recv_bytes(const char *bytes, size_t len, bool keep_open, size_t max, int timeout_ms)
{
	struct json_object *got = NULL;
	int sv[2], ret;

	pair(sv);
	put_all(sv[0], bytes, len);
	if (!keep_open)
		shutdown(sv[0], SHUT_WR);
	err[0] = '\0';
	ret = lr_msg_recv(sv[1], max, timeout_ms, &got, err, sizeof(err));
	assert_null(got);
	close(sv[0]);
	close(sv[1]);
	return ret;
}

/* A good message in @buf: its length. */
static size_t quit_frame(char *buf)
{
	static const char body[] = "{\"type\":\"quit\",\"v\":7}";

	return frame(buf, (uint32_t)strlen(body), body, strlen(body));
}

/* A reader of @n bytes of @buf (then the end of the stream, unless @keep_open) fails with @want, saying @text. */
static void expect_recv(const char *buf, size_t n, bool keep_open, int timeout_ms, int want, const char *text)
{
	assert_int_equal(recv_bytes(buf, n, keep_open, LR_MSG_MAX, timeout_ms), want);
	if (!strstr(err, text))
		fail_msg("after %zu bytes: the error \"%s\" does not say \"%s\"", n, err, text);
}

static void test_eof(void **state)
{
	char buf[64];
	size_t len = quit_frame(buf);

	(void)state;
	/* between messages: the peer is gone, nothing was cut */
	expect_recv(buf, 0, false, 1000, -ECONNRESET, "the connection was closed");
	expect_recv(buf, 3, false, 1000, -EPROTO, "truncated message: the connection closed after 3 of the 4 bytes of its length");
	expect_recv(buf, len - 1, false, 1000, -EPROTO, "truncated message: the connection closed after 20 of the 21 bytes of its body");
}

static void test_timeout(void **state)
{
	char buf[64];
	size_t len = quit_frame(buf);

	(void)state;
	expect_recv(buf, 0, true, 50, -ETIMEDOUT, "no message within 50 ms");
	/* half a message, then silence */
	expect_recv(buf, len / 2, true, 50, -ETIMEDOUT, "truncated message: 8 of the 21 bytes of its body came in 50 ms");
}

static void test_oversized(void **state)
{
	char buf[64];
	size_t len = frame(buf, 1000, "{", 1);
	struct json_object *big = lr_msg_new("hello");
	char *pad = malloc(LR_MSG_MAX + 1);
	int sv[2];

	(void)state;
	/* refused from the length alone: nothing of the body is read, nor allocated */
	assert_int_equal(recv_bytes(buf, len, true, 999, 1000), -EMSGSIZE);
	assert_non_null(strstr(err, "1000 bytes is over the limit of 999"));
	len = frame(buf, UINT32_MAX, "", 0);
	assert_int_equal(recv_bytes(buf, len, true, LR_MSG_MAX, 1000), -EMSGSIZE);
	/* the sender refuses to send one */
	memset(pad, 'x', LR_MSG_MAX);
	pad[LR_MSG_MAX] = '\0';
	json_object_object_add(big, "pad", json_object_new_string(pad));
	pair(sv);
	assert_int_equal(lr_msg_send(sv[0], big, 1000, err, sizeof(err)), -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
	json_object_put(big);
	free(pad);
}

/* Another protocol's text where a length belongs: its first line, quoted, and nothing more read. */
static void test_foreign(void **state)
{
	static const char http[] = "HTTP/1.0 400 Bad request\r\nServer: x\r\n\r\n";
	static const char ssh[] = "SSH-2.0-OpenSSH_9.6\r\n";
	char line[200];

	(void)state;
	assert_int_equal(recv_bytes(http, sizeof(http) - 1, false, LR_MSG_MAX, 1000), -EPROTOTYPE);
	assert_string_equal(err, "'HTTP/1.0 400 Bad request'");
	assert_int_equal(recv_bytes(ssh, sizeof(ssh) - 1, true, LR_MSG_MAX, 1000), -EPROTOTYPE);
	assert_string_equal(err, "'SSH-2.0-OpenSSH_9.6'");
	/* a long line is cut, a quote in it cannot end ours, and a peer that says no more is not waited for */
	memset(line, 'a', sizeof(line));
	memcpy(line, "GET '/", 6);
	assert_int_equal(recv_bytes(line, sizeof(line), true, LR_MSG_MAX, 1000), -EPROTOTYPE);
	assert_int_equal(strlen(err), 64 + 5);
	assert_int_equal(strncmp(err, "'GET \"/aaa", 10), 0);
	assert_int_equal(recv_bytes("HTTP", 4, true, LR_MSG_MAX, 1000), -EPROTOTYPE);
	assert_string_equal(err, "'HTTP'");
}

/* A reader late past its deadline (stopped, say) still takes the message that waits for it. */
static void test_late_reader(void **state)
{
	struct json_object *got = NULL;
	char buf[64];
	size_t len = quit_frame(buf);
	int sv[2];

	(void)state;
	pair(sv);
	put_all(sv[0], buf, len);
	assert_int_equal(lr_msg_recv(sv[1], LR_MSG_MAX, 0, &got, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(got), "quit");
	json_object_put(got);
	close(sv[0]);
	close(sv[1]);
}

/* @body as one whole frame: what the reader says about it. */
static int recv_body(const char *body, size_t body_len)
{
	char buf[256];
	size_t len = frame(buf, (uint32_t)body_len, body, body_len);

	return recv_bytes(buf, len, false, LR_MSG_MAX, 1000);
}

#define BODY_LEN(s) (sizeof(s) - 1)
#define BODY(s) s, BODY_LEN(s)

static void test_garbage(void **state)
{
	(void)state;
	assert_int_equal(recv_body(BODY("")), -EBADMSG);
	assert_non_null(strstr(err, "empty"));
	assert_int_equal(recv_body(BODY("hello")), -EBADMSG);
	assert_non_null(strstr(err, "not JSON"));
	assert_int_equal(recv_body(BODY("{\"type\":\"quit\",\"v\":7")), -EBADMSG);
	assert_non_null(strstr(err, "ends early"));
	assert_int_equal(recv_body(BODY("{\"type\":\"quit\",\"v\":7}{}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":\"quit\",\"v\":7}\0")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":\"qu\0it\",\"v\":7}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{'type':'quit','v':1}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("[\"quit\",1]")), -EBADMSG);
	assert_non_null(strstr(err, "not an object"));
	assert_int_equal(recv_body(BODY("{\"v\":7}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":\"\",\"v\":7}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":3,\"v\":7}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":\"quit\"}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":\"quit\",\"v\":\"1\"}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]")),
			 -EBADMSG);
	/* a type is a word: what messages quote of it stays on one line */
	assert_int_equal(recv_body(BODY("{\"type\":\"qu\\nit\",\"v\":7}")), -EBADMSG);
	assert_non_null(strstr(err, "not a word"));
	assert_int_equal(recv_body(BODY("{\"type\":\"Quit\",\"v\":7}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":\"abcdefghijklmnopqrstuvwxyzabcdefg\",\"v\":7}")), -EBADMSG);
	assert_int_equal(recv_body(BODY("{\"type\":\"quit\",\"v\":3}")), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "version 3"));
}

/* ---- the endpoint, served in a thread on the other end of the pair ---- */

struct served {
	int fd;
	int code;
};

static void *serve(void *arg)
{
	struct served *s = arg;

	s->code = lr_ctl_serve(s->fd, NULL);
	return NULL;
}

static void start(struct served *s, int *fd, pthread_t *t)
{
	int sv[2];

	pair(sv);
	s->fd = sv[1];
	*fd = sv[0];
	assert_int_equal(pthread_create(t, NULL, serve, s), 0);
}

static void test_endpoint_refuses(void **state)
{
	struct lr_recv_opts o;
	struct lr_rx_result *r = malloc(sizeof(*r));
	struct lr_ctl_ready rd;
	struct lr_ctl *c;
	struct served s;
	pthread_t t;
	bool complete;
	int fd;

	(void)state;
	start(&s, &fd, &t);
	assert_int_equal(lr_ctl_attach(fd, "the receiver", &c), 0);
	assert_int_equal(lr_ctl_hello(c, NULL, err, sizeof(err)), 0);
	/* nothing prepared yet */
	assert_int_equal(lr_ctl_reset(c, err, sizeof(err)), LR_EXIT_USAGE);
	assert_non_null(strstr(err, "prepare_rx first"));
	assert_int_equal(lr_ctl_wait(c, 1000000, &complete, r, NULL, err, sizeof(err)), LR_EXIT_USAGE);
	/* a receiver on an interface that does not exist: refused as the CLI refuses it */
	lr_recv_opts_default(&o);
	snprintf(o.rx.ifname, sizeof(o.rx.ifname), "lrnosuch0");
	assert_int_equal(lr_ctl_prepare_rx(c, &o, NULL, &rd, err, sizeof(err)), LR_EXIT_USAGE);
	if (!strstr(err, "lrnosuch0"))
		fail_msg("%s", err);
	/* run's child is no agent: it sends nothing */
	assert_int_equal(lr_ctl_prepare_tx(c, &(struct lr_send_opts){ 0 }, "198.18.0.1", false, &rd, err, sizeof(err)),
			 LR_EXIT_USAGE);
	assert_non_null(strstr(err, "takes no prepare_tx"));
	/* the endpoint still answers after a refusal, and a second hello is one too many */
	assert_int_equal(lr_ctl_ping(c, err, sizeof(err)), 0);
	assert_int_equal(lr_ctl_hello(c, NULL, err, sizeof(err)), LR_EXIT_USAGE);
	assert_int_equal(lr_ctl_quit(c, err, sizeof(err)), 0);
	lr_ctl_close(c);
	pthread_join(t, NULL);
	close(s.fd);
	assert_int_equal(s.code, LR_EXIT_USAGE);
	free(r);
}

/* Anything before hello: one error, then the stream is closed. */
static void test_endpoint_hello_first(void **state)
{
	struct json_object *m;
	struct served s;
	pthread_t t;
	int fd;

	(void)state;
	start(&s, &fd, &t);
	m = lr_msg_new("ping");
	assert_int_equal(lr_msg_send(fd, m, 1000, err, sizeof(err)), 0);
	json_object_put(m);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(m), "error");
	assert_non_null(strstr(json_object_to_json_string(m), "'ping' before hello"));
	json_object_put(m);
	pthread_join(t, NULL);
	close(s.fd);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err)), -ECONNRESET);
	close(fd);
}

/* A request the endpoint does not know, or one out of protocol: one error, then it stops. */
static void test_endpoint_protocol(void **state)
{
	static const char v9[] = "{\"type\":\"hello\",\"v\":9}";
	struct json_object *m;
	char buf[64];
	struct served s;
	pthread_t t;
	int fd;

	(void)state;
	start(&s, &fd, &t);
	m = lr_ctl_hello_msg("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	assert_int_equal(lr_msg_send(fd, m, 1000, err, sizeof(err)), 0);
	json_object_put(m);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(m), "hello");
	json_object_put(m);
	m = lr_msg_new("launch");
	assert_int_equal(lr_msg_send(fd, m, 1000, err, sizeof(err)), 0);
	json_object_put(m);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(m), "error");
	assert_non_null(strstr(json_object_to_json_string(m), "unknown message type 'launch'"));
	json_object_put(m);
	/* another protocol version: answered with an error naming it, and the stream is closed */
	put_all(fd, buf, frame(buf, BODY_LEN(v9), v9, BODY_LEN(v9)));
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(m), "error");
	assert_non_null(strstr(json_object_to_json_string(m), "version 9"));
	json_object_put(m);
	/* the endpoint returned: its end is the caller's to close */
	pthread_join(t, NULL);
	close(s.fd);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err)), -ECONNRESET);
	close(fd);
}

/* prepare_rx: recv's options through the message and back, and each bad field named. */
static void test_prepare_rx(void **state)
{
	struct lr_recv_opts *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char address[LR_CTL_ADDR_TEXT];
	static const struct {
		const char *key;
		const char *json;
	} bad[] = {
		{ "interface", "\"\"" },
		{ "interface", "\"abcdefghijklmnopq\"" },
		{ "engine", "\"bpf\"" },
		{ "xdp_mode", "1" },
		{ "workers", "0" },
		{ "workers", "65" },
		{ "dst_port", "0" },
		{ "dst_port", "65536" },
		{ "pcap_every", "0" },
		{ "snaplen", "63" },
		{ "snaplen", "9019" },
		{ "netns", "null" },
		{ "prog_stats", "1" },
		{ "surprise", "1" },
	};
	struct json_object *m;
	unsigned int i;

	(void)state;
	lr_recv_opts_default(a);
	snprintf(a->rx.ifname, sizeof(a->rx.ifname), "rcv0");
	snprintf(a->netns, sizeof(a->netns), "container:web");
	a->rx.engine = LR_RX_ENGINE_PACKET;
	a->rx.xdp_mode = LR_XDP_GENERIC;
	a->rx.workers = 3;
	a->rx.dst_port = 9000;
	snprintf(a->rx.pcap, sizeof(a->rx.pcap), "/tmp/rx.pcap");
	a->rx.pcap_every = 7;
	a->rx.snaplen = 256;
	a->rx.prog_stats = true;
	a->rx.clock_offset_ns = -123456789;
	m = lr_ctl_prepare_rx_msg(a, "");
	assert_int_equal(lr_ctl_prepare_rx_parse(m, b, address, err, sizeof(err)), 0);
	assert_memory_equal(a, b, sizeof(*a));
	assert_string_equal(address, "");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *c = json_tokener_parse(json_object_to_json_string(m));

		json_object_object_add(c, bad[i].key, json_tokener_parse(bad[i].json));
		err[0] = '\0';
		assert_int_equal(lr_ctl_prepare_rx_parse(c, b, address, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].key))
			fail_msg("%s = %s: the error \"%s\" does not name it", bad[i].key, bad[i].json, err);
		json_object_put(c);
	}
	json_object_object_del(m, "dst_port");
	assert_int_equal(lr_ctl_prepare_rx_parse(m, b, address, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "prepare_rx.dst_port: missing");
	json_object_put(m);
	free(a);
	free(b);
}

/*
 * A prepare_tx value is refused by the option table with the message the same value gets as text
 * on the command line, under the wire's name: numbers, durations and lists go in typed, not
 * rendered as text and parsed again, and must still say the same thing.
 */
static void test_prepare_tx_messages(void **state)
{
	struct lr_send_opts *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char address[LR_CTL_ADDR_TEXT], want[512];
	static const struct {
		const char *key;
		enum lr_opt_id id;
		const char *json;
		const char *text;	/* the same value as the command line spells it */
	} cases[] = {
		{ "size", LR_O_SIZE, "63", "63" },
		{ "size", LR_O_SIZE, "9019", "9019" },
		{ "flows", LR_O_FLOWS, "0", "0" },
		{ "batch", LR_O_BATCH, "0", "0" },
		{ "batch", LR_O_BATCH, "513", "513" },
		{ "dst_port", LR_O_DST_PORT, "65536", "65536" },
		{ "duration_ns", LR_O_TX_DURATION, "400000000000000000", "400000000000000000ns" },
		{ "queues", LR_O_QUEUES, "[]", "" },
		{ "queues", LR_O_QUEUES, "[0,1,0]", "0,1,0" },
		{ "queues", LR_O_QUEUES, "[0,70000]", "0,70000" },
		{ "cpus", LR_O_CPUS, "[1,100000]", "1,100000" },
		{ "rate", LR_O_RATE, "\"fast\"", "fast" },
		{ "engine", LR_O_TX_ENGINE, "\"dpdk\"", "dpdk" },
	};
	static const unsigned int want_queues[] = { 2, 0, 1 };
	struct json_object *m;
	bool route;
	unsigned int i, j;

	(void)state;
	lr_send_opts_default(a);
	snprintf(a->tx.ifname, sizeof(a->tx.ifname), "snd0");
	a->tx.dst_family = AF_INET;
	a->tx.have_dst_ip = true;
	inet_pton(AF_INET, "198.18.0.2", &a->tx.dst_ip);
	assert_int_equal(lr_send_optset.check(a, err, sizeof(err)), 0);	/* as a controller sends it */
	m = lr_ctl_prepare_tx_msg(a, "", false);
	if (lr_ctl_prepare_tx_parse(m, b, address, &route, err, sizeof(err)))
		fail_msg("the good message: %s", err);
	assert_int_equal(b->tx.size, a->tx.size);
	assert_int_equal(b->tx.duration_ns, a->tx.duration_ns);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_object *c = json_tokener_parse(json_object_to_json_string(m));
		const struct lr_bind *bind = lr_optset_bind(&lr_send_optset, cases[i].id);
		char name[64];

		assert_non_null(bind);
		snprintf(name, sizeof(name), "prepare_tx.%s", cases[i].key);
		memset(b, 0, sizeof(*b));
		if (lr_opt_set(bind, b, name, cases[i].text, want, sizeof(want)) != -EINVAL)
			fail_msg("%s '%s': the table takes it", name, cases[i].text);
		json_object_object_add(c, cases[i].key, json_tokener_parse(cases[i].json));
		err[0] = '\0';
		assert_int_equal(lr_ctl_prepare_tx_parse(c, b, address, &route, err, sizeof(err)), -EINVAL);
		if (strcmp(err, want))
			fail_msg("%s = %s: the wire says \"%s\", the table \"%s\"", cases[i].key, cases[i].json, err, want);
		json_object_put(c);
	}
	/* and a good list lands as it would from the command line */
	json_object_object_add(m, "queues", json_tokener_parse("[2,0,1]"));
	json_object_object_add(m, "cpus", json_tokener_parse("[1,0,1]"));
	json_object_object_add(m, "flows", json_object_new_int(3));
	if (lr_ctl_prepare_tx_parse(m, b, address, &route, err, sizeof(err)))
		fail_msg("three queues: %s", err);
	assert_int_equal(b->tx.nworkers, 3);
	assert_int_equal(b->tx.ncpus, 3);
	assert_true(b->tx.cpus_set);
	for (j = 0; j < 3; j++)
		assert_int_equal(b->tx.queues[j], want_queues[j]);
	assert_int_equal(b->tx.cpus[0], 1);
	json_object_put(m);
	free(a);
	free(b);
}

/*
 * The non-blocking reader, fed a byte at a time: nothing until the frame is whole, then the
 * message; never a byte of the next frame; the stream's end, in a frame or between two, and an
 * oversized length said as lr_msg_recv() says them.
 */
static void test_reader(void **state)
{
	struct lr_msg_reader r = { 0 };
	struct json_object *got;
	char buf[128], next[64];
	size_t len = quit_frame(buf), i;
	int sv[2];

	(void)state;
	pair(sv);
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(lr_msg_read(&r, sv[1], 64, &got, err, sizeof(err)), 0);
	assert_int_equal(r.got, 0);
	for (i = 0; i < len - 1; i++) {
		put_all(sv[0], buf + i, 1);
		assert_int_equal(lr_msg_read(&r, sv[1], 64, &got, err, sizeof(err)), 0);
		assert_int_equal(r.got, i + 1);
		assert_null(got);
	}
	/* the last byte, and the whole of a second frame behind it */
	memcpy(next, buf, len);
	put_all(sv[0], buf + len - 1, 1);
	put_all(sv[0], next, len);
	assert_int_equal(lr_msg_read(&r, sv[1], 64, &got, err, sizeof(err)), 1);
	assert_string_equal(lr_msg_type(got), "quit");
	json_object_put(got);
	assert_int_equal(r.got, 0);
	/* the second is still in the stream, whole, for a blocking reader */
	assert_int_equal(lr_msg_recv(sv[1], 64, 1000, &got, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(got), "quit");
	json_object_put(got);
	/* cut in its body */
	put_all(sv[0], buf, 10);
	shutdown(sv[0], SHUT_WR);
	assert_int_equal(lr_msg_read(&r, sv[1], 64, &got, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "truncated message: the connection closed after 6 of the 21 bytes of its body"));
	assert_int_equal(r.got, 0);
	assert_int_equal(lr_msg_read(&r, sv[1], 64, &got, err, sizeof(err)), -ECONNRESET);
	assert_string_equal(err, "the connection was closed");
	close(sv[0]);
	close(sv[1]);
	/* a length over the reader's cap: refused once the length is in, before any body */
	pair(sv);
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	frame(buf, 65, "", 0);
	put_all(sv[0], buf, 4);
	assert_int_equal(lr_msg_read(&r, sv[1], 64, &got, err, sizeof(err)), -EMSGSIZE);
	assert_string_equal(err, "a message of 65 bytes is over the limit of 64");
	assert_null(r.buf);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),	 cmocka_unit_test(test_split_anywhere),
		cmocka_unit_test(test_eof),		 cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_oversized),	 cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_endpoint_refuses), cmocka_unit_test(test_endpoint_protocol),
		cmocka_unit_test(test_endpoint_hello_first),
		cmocka_unit_test(test_prepare_rx),	 cmocka_unit_test(test_prepare_tx_messages),
			 cmocka_unit_test(test_reader),
		cmocka_unit_test(test_foreign),		 cmocka_unit_test(test_late_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
