/* SPDX-License-Identifier: MIT */
/*
 * fuzz_msg's seeds, made by the protocol's own encoders (ctl/request.c, ctl/host.c, rx/report.c over
 * the results' codec) and framed by lr_msg_send(), so that a protocol change cannot leave them
 * stale. Each file is a stream of frames as one side of a session sends them. Each message is then
 * read back from its file with lr_msg_recv() and handed to the parser fuzz_msg is to see accept it:
 * a refusal is this program's failure, and the build's.
 *
 *   fuzz_msg_seed DIR    (the build runs it: build-fuzz/tests/fuzz/msg_seeds)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "opt/opts.h"
#include "ctl/handshake.h"
#include "ctl/host.h"
#include "ctl/msg.h"
#include "ctl/request.h"
#include "rx/report.h"
#include "util/result.h"
#include "util/version.h"

#define MAX_FRAMES	16
/* the two nonces of a session and a proof: any 64 lower-case hex digits pass the parsers */
#define NONCE_C	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NONCE_E	"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define PROOF	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/* static: the option structs are tens of kilobytes */
static struct lr_send_opts tx;
static struct lr_recv_opts rx;
static struct lr_reflect_opts fo;
static struct lr_host host;
static struct lr_rx_result result;
static struct lr_rx_context context;
static char err[512];

/* The parsers that must accept a message: 0, or -EINVAL with the reason in err. */
static int prepare_rx_ok(struct json_object *m)
{
	char address[LR_CTL_ADDR_TEXT];

	return lr_ctl_prepare_rx_parse(m, &rx, address, err, sizeof(err));
}

static int prepare_tx_ok(struct json_object *m)
{
	char address[LR_CTL_ADDR_TEXT];
	bool route;

	return lr_ctl_prepare_tx_parse(m, &tx, address, &route, err, sizeof(err));
}

static int prepare_reflect_ok(struct json_object *m)
{
	char address[LR_CTL_ADDR_TEXT];

	return lr_ctl_prepare_reflect_parse(m, &fo, address, err, sizeof(err));
}

static int hello_ok(struct json_object *m)
{
	struct lr_ctl_hello_req h;

	return lr_ctl_hello_parse(m, &h, err, sizeof(err));
}

static int host_ok(struct json_object *m)
{
	return lr_host_get(m, &host, err, sizeof(err));
}

static int auth_ok(struct json_object *m)
{
	char proof[LR_AUTH_HEX + 1];

	return lr_ctl_auth_parse(m, proof, err, sizeof(err));
}

static int clock_ok(struct json_object *m)
{
	uint64_t t1;

	return lr_ctl_clock_parse(m, &t1, err, sizeof(err));
}

static int start_ok(struct json_object *m)
{
	uint64_t at;

	return lr_ctl_start_parse(m, &at, err, sizeof(err));
}

static int wait_ok(struct json_object *m)
{
	unsigned int ms;

	return lr_ctl_wait_parse(m, &ms, err, sizeof(err));
}

/* a result's document, where the controller reads it */
static int result_ok(struct json_object *m)
{
	struct json_object *doc;

	if (!json_object_object_get_ex(m, "document", &doc)) {
		snprintf(err, sizeof(err), "result.document: missing");
		return -EINVAL;
	}
	return lr_rx_doc_get(doc, &context, &result, err, sizeof(err));
}

/* A seed file being made: its frames, each with the parser that must accept it (NULL: none). */
struct seed {
	const char *name;
	unsigned int n;
	struct json_object *msgs[MAX_FRAMES];
	int (*accept[MAX_FRAMES])(struct json_object *m);
};

static void add(struct seed *s, struct json_object *m, int (*accept)(struct json_object *m))
{
	if (!m) {
		fprintf(stderr, "fuzz_msg_seed: %s: frame %d could not be made\n", s->name, s->n + 1);
		exit(1);
	}
	if (s->n == MAX_FRAMES) {
		fprintf(stderr, "fuzz_msg_seed: %s: more than %d frames\n", s->name, MAX_FRAMES);
		exit(1);
	}
	s->msgs[s->n] = m;
	s->accept[s->n++] = accept;
}

/* The frames of @s through a socket pair into DIR/NAME (lr_msg_send() writes to sockets only). */
static int write_seed(int dir, const struct seed *s)
{
	char buf[1 << 16];
	int sv[2], fd, ret = 0;
	unsigned int i;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		fprintf(stderr, "fuzz_msg_seed: socketpair: %s\n", strerror(errno));
		return -1;
	}
	fd = openat(dir, s->name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "fuzz_msg_seed: %s: %s\n", s->name, strerror(errno));
		ret = -1;
		goto out;
	}
	for (i = 0; i < s->n && !ret; i++) {
		if (lr_msg_send(sv[0], s->msgs[i], 1000, err, sizeof(err))) {
			fprintf(stderr, "fuzz_msg_seed: %s: %s\n", s->name, err);
			ret = -1;
		}
		while (!ret && (n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			if (write(fd, buf, (size_t)n) != n) {
				fprintf(stderr, "fuzz_msg_seed: %s: %s\n", s->name, strerror(errno));
				ret = -1;
			}
	}
	if (close(fd) && !ret) {
		fprintf(stderr, "fuzz_msg_seed: %s: %s\n", s->name, strerror(errno));
		ret = -1;
	}
out:
	close(sv[0]);
	close(sv[1]);
	return ret;
}

/* DIR/NAME read back as fuzz_msg reads it: every frame there, each accepted where it must be. */
static int check_seed(int dir, const struct seed *s)
{
	struct json_object *m;
	unsigned int i;
	int fd, ret = 0;

	fd = openat(dir, s->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fuzz_msg_seed: %s: %s\n", s->name, strerror(errno));
		return -1;
	}
	for (i = 0; i < s->n && !ret; i++) {
		if (lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err))) {
			fprintf(stderr, "fuzz_msg_seed: %s: frame %u: %s\n", s->name, i + 1, err);
			ret = -1;
			break;
		}
		if (s->accept[i] && s->accept[i](m)) {
			fprintf(stderr, "fuzz_msg_seed: %s: frame %u ('%s') refused: %s\n", s->name, i + 1,
				lr_msg_type(m), err);
			ret = -1;
		}
		json_object_put(m);
	}
	close(fd);
	return ret;
}

static int emit(int dir, struct seed *s)
{
	int ret = write_seed(dir, s);
	unsigned int i;

	if (!ret)
		ret = check_seed(dir, s);
	for (i = 0; i < s->n; i++)
		json_object_put(s->msgs[i]);
	return ret;
}

/* A command's options from a command line, as the user would give them: defaults, then its checks. */
static void parse(const struct lr_cli *cli, void *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	if (lr_cli_parse(cli, argc, argv, o, NULL, err, sizeof(err))) {
		fprintf(stderr, "fuzz_msg_seed: linerate %s: %s\n", cli->cmd, err);
		exit(1);
	}
}

/* The facts an agent tells of its host in hello: fixed ones, not this build host's. */
static void fake_host(struct lr_host *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->hostname, sizeof(h->hostname), "b");
	snprintf(h->boot_id, sizeof(h->boot_id), "4b0f717a-0c77-4768-a57c-b46c3ffc4265");
	snprintf(h->kernel, sizeof(h->kernel), "6.1.0");
	h->cpus = 2;
	h->nifs = 2;
	snprintf(h->ifs[0].name, sizeof(h->ifs[0].name), "lo");
	h->ifs[0].naddrs = 1;
	snprintf(h->ifs[0].addrs[0], sizeof(h->ifs[0].addrs[0]), "127.0.0.1/8");
	snprintf(h->ifs[1].name, sizeof(h->ifs[1].name), "ul0");
	snprintf(h->ifs[1].kind, sizeof(h->ifs[1].kind), "veth");
	h->ifs[1].naddrs = 2;
	snprintf(h->ifs[1].addrs[0], sizeof(h->ifs[1].addrs[0]), "198.18.0.2/24");
	snprintf(h->ifs[1].addrs[1], sizeof(h->ifs[1].addrs[1]), "fd00::2/64");
}

/*
 * The agent's answer to a controller's hello, made by the handshake the agent runs (its version,
 * roles, auth, nonce and proof), with a token or without, so a change to that reply reaches the
 * seeds; its host facts (without a token: with one they are null) then replaced by fixed ones
 * (the same keys), not this build host's.
 */
static struct json_object *hello_reply(bool token)
{
	static const char secret[] = "the seed generator's token";
	struct json_object *req = lr_ctl_hello_msg(NONCE_C), *m;
	struct lr_ctl_handshake h;
	struct lr_auth_key key;
	bool quit = false;

	if (lr_auth_init() || lr_auth_key(secret, sizeof(secret) - 1, &key))
		return NULL;
	lr_ctl_handshake_init(&h, token ? &key : NULL, true);
	m = lr_ctl_handshake_on(&h, req, NULL, &quit);
	json_object_put(req);
	if (quit || strcmp(lr_msg_type(m), "hello")) {
		json_object_put(m);
		return NULL;
	}
	/* with a token, hello's "host" is null (the facts come with auth's "ok"): kept so */
	if (!token) {
		fake_host(&host);
		lr_host_put(m, &host);
	}
	return m;
}

/*
 * With a token, the agent's "ok" to a controller's right proof: the host's facts come there (hello
 * says null), made by the handshake itself, then replaced by fixed ones as in hello_reply.
 */
static struct json_object *auth_ok_reply(void)
{
	static const char secret[] = "the seed generator's token";
	struct json_object *req = lr_ctl_hello_msg(NONCE_C), *m;
	char proof[LR_AUTH_HEX + 1];
	struct lr_ctl_handshake h;
	struct lr_auth_key key;
	bool quit = false;

	if (lr_auth_init() || lr_auth_key(secret, sizeof(secret) - 1, &key))
		return NULL;
	lr_ctl_handshake_init(&h, &key, true);
	m = lr_ctl_handshake_on(&h, req, NULL, &quit);
	json_object_put(req);
	json_object_put(m);
	if (quit)
		return NULL;
	lr_auth_proof(&key, "controller", h.nonce_e, NONCE_C, proof);
	req = lr_msg_new("auth");
	json_object_object_add(req, "proof", json_object_new_string(proof));
	m = lr_ctl_handshake_on(&h, req, NULL, &quit);
	json_object_put(req);
	if (quit || strcmp(lr_msg_type(m), "ok")) {
		json_object_put(m);
		return NULL;
	}
	fake_host(&host);
	lr_host_put(m, &host);
	return m;
}

/* The controller's small requests, with the keys it gives them. */
static struct json_object *auth_msg(void)
{
	struct json_object *m = lr_msg_new("auth");

	json_object_object_add(m, "proof", json_object_new_string(PROOF));
	return m;
}

static struct json_object *clock_msg(uint64_t t1)
{
	struct json_object *m = lr_msg_new("clock");

	json_object_object_add(m, "t1", json_object_new_uint64(t1));
	return m;
}

static struct json_object *wait_msg(unsigned int ms)
{
	struct json_object *m = lr_msg_new("wait");

	json_object_object_add(m, "timeout_ms", json_object_new_int64(ms));
	return m;
}

/* An agent's answer to a hello while another session runs. */
static struct json_object *busy_msg(void)
{
	struct json_object *m = lr_msg_new("busy");

	json_object_object_add(m, "test", json_object_new_string("rx on ul0 for 198.18.0.5:4000"));
	json_object_object_add(m, "since", json_object_new_string("2026-01-01T00:00:00Z"));
	json_object_object_add(m, "since_s", json_object_new_int64(3));
	return m;
}

/* A receiver's result as an agent sends it (a wait's reply): 2000 frames of 2 flows, all in. */
static struct json_object *result_msg(bool prog, bool complete)
{
	struct lr_rx_context x = { .engine = "xdp", .mode = "native", .ifname = "ul0", .secs = 0.25 };
	struct lr_rx_result *r = calloc(1, sizeof(*r));
	struct json_object *m = lr_msg_new("result");

	if (!r) {
		fprintf(stderr, "fuzz_msg_seed: out of memory\n");
		exit(1);
	}
	r->packets = r->sent = 2000;
	r->bytes = 2000 * 60;
	r->foreign = 3;
	r->eot = 2;
	r->flows = r->flows_eot = r->flows_announced = 2;
	r->settled = true;
	r->active_s = 0.1;
	r->pps = 20000;
	r->lat_count = 32;
	r->lat_min = 9000;
	r->lat_p50 = 12000;
	r->lat_p90 = r->lat_p99 = r->lat_p999 = 15000;
	r->lat_max = 16000;
	r->lat_mean = 12500;
	r->lat_clock = LR_LAT_CLOCK_ESTIMATED;
	r->lat_offset_ns = -520;
	r->lat_error_bound_ns = 400;
	r->lat_valid = true;
	r->queue_packets[0] = 2000;
	r->device.packets = 2005;
	if (prog) {
		r->have_prog = true;
		r->prog.run_ns = 2000 * 40;
		r->prog.stat_runs = 2000;
		r->prog.stats_reported_ns = 20;
		r->prog.stats_added_ns = 25;
		r->prog.stats_added_known = true;
		r->prog.stats_error_ns = 2;
	}
	json_object_object_add(m, "complete", json_object_new_boolean(complete));
	json_object_object_add(m, "document", lr_rx_doc(&x, r));
	json_object_object_add(m, "summary", json_object_new_string(""));
	free(r);
	return m;
}

int main(int argc, char **argv)
{
	/* options as the controller takes them on its command line; a bare interface name, no --pcap path */
	char *recv_argv[] = { "recv", "-i", "ul0", "--prog-stats", NULL };
	char *send_argv[] = { "send", "-i", "ul0", "--dst-ip", "198.18.0.1", "--dst-mac", "02:42:c6:12:03:02",
			      "--queues", "0,1", "--flows", "2", "--rate", "20kpps", "--count", "2000", NULL };
	char *send6_argv[] = { "send", "-i", "ul0", "--dst-ip", "fd00::1", "--dst-mac", "02:42:c6:12:03:02",
			       "--size", "128", "--duration", "2s", "--rate", "max", "--latency-every", "1", "--prepare-peer",
			       NULL };
	char *reflect_argv[] = { "reflect", "-i", "ul0", NULL };
	struct seed s;
	int dir, ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_msg_seed DIR\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) && errno != EEXIST) {
		fprintf(stderr, "fuzz_msg_seed: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		fprintf(stderr, "fuzz_msg_seed: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	/* the controller's side of a session up to the wait, a receiver found by its address */
	s = (struct seed){ .name = "session_rx" };
	add(&s, lr_ctl_hello_msg(NONCE_C), hello_ok);
	add(&s, auth_msg(), auth_ok);
	add(&s, clock_msg(123456789), clock_ok);
	parse(&lr_recv_cli, &rx, recv_argv);
	rx.rx.ifname[0] = '\0';
	rx.rx.clock_offset_ns = -520;
	add(&s, lr_ctl_prepare_rx_msg(&rx, "198.18.0.2"), prepare_rx_ok);
	add(&s, lr_ctl_start_msg(0), start_ok);
	add(&s, wait_msg(1000), wait_ok);
	add(&s, lr_msg_new("progress"), NULL);
	add(&s, lr_msg_new("stop"), NULL);
	add(&s, lr_msg_new("quit"), NULL);
	ret |= emit(dir, &s);

	/* the agent's side: hello's reply, auth's "ok" (host facts), then the receiver's result */
	s = (struct seed){ .name = "session_agent" };
	add(&s, hello_reply(true), NULL);
	add(&s, auth_ok_reply(), host_ok);
	add(&s, result_msg(true, true), result_ok);
	ret |= emit(dir, &s);

	/* one message a file, each small enough for the fuzzer to work on alone */
	s = (struct seed){ .name = "prepare_rx" };
	parse(&lr_recv_cli, &rx, recv_argv);
	add(&s, lr_ctl_prepare_rx_msg(&rx, ""), prepare_rx_ok);
	ret |= emit(dir, &s);

	parse(&lr_send_cli, &tx, send_argv);
	s = (struct seed){ .name = "prepare_tx" };
	add(&s, lr_ctl_prepare_tx_msg(&tx, "", false), prepare_tx_ok);
	ret |= emit(dir, &s);
	tx.tx.ifname[0] = '\0';
	s = (struct seed){ .name = "prepare_tx_address" };
	add(&s, lr_ctl_prepare_tx_msg(&tx, "198.18.0.2", false), prepare_tx_ok);
	ret |= emit(dir, &s);
	s = (struct seed){ .name = "prepare_tx_route" };
	add(&s, lr_ctl_prepare_tx_msg(&tx, "", true), prepare_tx_ok);
	ret |= emit(dir, &s);
	parse(&lr_send_cli, &tx, send6_argv);
	s = (struct seed){ .name = "prepare_tx_v6" };
	add(&s, lr_ctl_prepare_tx_msg(&tx, "", false), prepare_tx_ok);
	ret |= emit(dir, &s);

	parse(&lr_reflect_cli, &fo, reflect_argv);
	s = (struct seed){ .name = "prepare_reflect" };
	add(&s, lr_ctl_prepare_reflect_msg(&fo, ""), prepare_reflect_ok);
	ret |= emit(dir, &s);

	s = (struct seed){ .name = "hello" };
	add(&s, lr_ctl_hello_msg(NONCE_C), hello_ok);
	ret |= emit(dir, &s);
	s = (struct seed){ .name = "hello_reply" };
	add(&s, hello_reply(false), host_ok);
	ret |= emit(dir, &s);

	s = (struct seed){ .name = "result" };
	add(&s, result_msg(false, false), result_ok);
	ret |= emit(dir, &s);

	/* replies no parser takes: an agent busy with another session, an error */
	s = (struct seed){ .name = "busy" };
	add(&s, busy_msg(), NULL);
	add(&s, lr_msg_error(2, "prepare_tx.rate: '5 parsecs' is not a rate"), NULL);
	ret |= emit(dir, &s);

	close(dir);
	return ret ? 1 : 0;
}
