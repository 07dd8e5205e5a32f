/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the agent protocol's decoder on arbitrary bytes. The input is a stream of
 * frames read with lr_msg_recv() (and again with lr_msg_read(), which must agree); each message that passes goes through every parser the endpoint
 * and the controller apply (requests, hello's host facts, results). Nothing may crash, leak or
 * hang; the framing refuses with one line of its own words, the parsers with -EINVAL and a reason.
 * What each parser accepted is counted and printed at exit (reach.h), for .ci/run to check.
 */
/*
 * CC=clang cmake -S . -B build-fuzz -DLINERATE_FUZZ=ON -DBUILD_TESTING=OFF
 * cmake --build build-fuzz --target fuzz_msg     (also makes the seeds, msg_seed.c)
 * cp -r build-fuzz/tests/fuzz/msg_seeds /tmp/corpus && cp -r tests/fuzz/msg_corpus/. /tmp/corpus
 * build-fuzz/tests/fuzz/fuzz_msg -dict=tests/fuzz/msg.dict -max_total_time=60 /tmp/corpus
 */
#define _GNU_SOURCE	/* memfd_create() */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "opt/opts.h"
#include "ctl/host.h"
#include "ctl/msg.h"
#include "ctl/request.h"
#include "rx/report.h"
#include "util/result.h"
#include "reach.h"

#define CHECK(cond)                        \
	do {                               \
		if (!(cond))               \
			__builtin_trap();  \
	} while (0)

#define MAX_MSGS	16

/* what got past the framing and each parser */
enum { R_MSG, R_PREPARE_RX, R_PREPARE_TX, R_PREPARE_REFLECT, R_WAIT, R_CLOCK, R_START, R_AUTH, R_HELLO, R_HOST,
       R_RESULT };
static struct fuzz_reach reached[] = {
	[R_MSG] = { "msg" }, [R_PREPARE_RX] = { "prepare_rx" }, [R_PREPARE_TX] = { "prepare_tx" },
	[R_PREPARE_REFLECT] = { "prepare_reflect" }, [R_WAIT] = { "wait" }, [R_CLOCK] = { "clock" },
	[R_START] = { "start" }, [R_AUTH] = { "auth" }, [R_HELLO] = { "hello" }, [R_HOST] = { "host" },
	[R_RESULT] = { "result" }, { NULL }
};

/* static: the option structs are tens of kilobytes */
static struct lr_send_opts tx;
static struct lr_recv_opts rx;
static struct lr_reflect_opts fo;
static struct lr_host host;
static struct lr_rx_result result;
static struct lr_rx_context context;

/*
 * A refusal: -EINVAL and a message, or success. A message may quote a value the peer sent, line
 * breaks and all: it is escaped where it is printed (lr_fail(), lr_ctl_log()), not here.
 */
static void one_line(int ret, const char *err, size_t len)
{
	CHECK(ret == 0 || ret == -EINVAL);
	if (ret)
		CHECK(err[0] && strlen(err) < len);
}

/* A parser's verdict on @m, as one_line() wants it; a success counted as @path. */
static int judged(int ret, const char *err, size_t len, int path)
{
	one_line(ret, err, len);
	if (!ret)
		reached[path].n++;
	return ret;
}

/* Every parser on @m; what a success promises. */
static void parse_all(struct json_object *m)
{
	char err[512], address[LR_CTL_ADDR_TEXT], proof[LR_AUTH_HEX + 1];
	struct json_object *doc;
	struct lr_ctl_hello_req h;
	unsigned int ms;
	uint64_t t1;
	bool route;
	int ret;

	ret = judged(lr_ctl_prepare_rx_parse(m, &rx, address, err, sizeof(err)), err, sizeof(err), R_PREPARE_RX);
	if (!ret) {
		CHECK(!rx.rx.ifname[0] != !address[0]);
		CHECK(rx.rx.workers >= 1 && rx.rx.workers <= LR_MAX_WORKERS && rx.rx.dst_port >= 1);
	}
	ret = judged(lr_ctl_prepare_tx_parse(m, &tx, address, &route, err, sizeof(err)), err, sizeof(err),
		     R_PREPARE_TX);
	if (!ret) {
		/* exactly one way to the interface: its name, an address it holds, or the route */
		CHECK((!!tx.tx.ifname[0]) + (!!address[0]) + route == 1);
		CHECK(tx.tx.nworkers >= 1 && tx.tx.nworkers <= LR_MAX_WORKERS && tx.tx.flows >= tx.tx.nworkers);
		CHECK(tx.tx.have_dst_ip && (tx.tx.family == AF_INET || tx.tx.family == AF_INET6));
		CHECK(tx.tx.count || tx.tx.duration_ns);
	}
	ret = judged(lr_ctl_prepare_reflect_parse(m, &fo, address, err, sizeof(err)), err, sizeof(err),
		     R_PREPARE_REFLECT);
	if (!ret)
		CHECK(!fo.fx.ifname[0] != !address[0] && fo.fx.dst_port >= 1 && fo.fx.xdp_mode <= LR_XDP_GENERIC);
	ret = judged(lr_ctl_wait_parse(m, &ms, err, sizeof(err)), err, sizeof(err), R_WAIT);
	CHECK(ret || ms <= LR_CTL_WAIT_MAX_MS);
	judged(lr_ctl_clock_parse(m, &t1, err, sizeof(err)), err, sizeof(err), R_CLOCK);
	judged(lr_ctl_start_parse(m, &t1, err, sizeof(err)), err, sizeof(err), R_START);
	ret = judged(lr_ctl_auth_parse(m, proof, err, sizeof(err)), err, sizeof(err), R_AUTH);
	CHECK(ret || lr_auth_hex_ok(proof));
	ret = judged(lr_ctl_hello_parse(m, &h, err, sizeof(err)), err, sizeof(err), R_HELLO);
	CHECK(ret || lr_auth_hex_ok(h.nonce));
	ret = judged(lr_host_get(m, &host, err, sizeof(err)), err, sizeof(err), R_HOST);
	CHECK(ret || (host.nifs <= LR_HOST_MAX_IFS && host.cpus >= 1));
	/* a receiver's document where the controller reads it, in a result's "document"; else the message */
	if (!json_object_object_get_ex(m, "document", &doc) || !json_object_is_type(doc, json_type_object))
		doc = m;
	judged(lr_rx_doc_get(doc, &context, &result, err, sizeof(err)), err, sizeof(err), R_RESULT);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	reach_init("fuzz_msg", reached);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	const char *types[MAX_MSGS];
	struct json_object *m, *ms[MAX_MSGS];
	struct lr_msg_reader rd = { 0 };
	int i, n, ret, first;
	char err[512];

	/* the input as a stream: a memory file reads like a socket that was closed after it */
	if (fd < 0)
		fd = memfd_create("fuzz_msg", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(!ftruncate(fd, 0) && pwrite(fd, data, size, 0) == (ssize_t)size && lseek(fd, 0, SEEK_SET) == 0);
	for (n = 0, first = 0; n < MAX_MSGS; n++) {
		ret = lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err));
		if (ret) {
			CHECK(ret == -ECONNRESET || ret == -EPROTO || ret == -EMSGSIZE || ret == -EBADMSG ||
			      ret == -EPROTONOSUPPORT || ret == -EPROTOTYPE);
			CHECK(err[0] && !strchr(err, '\n') && strlen(err) < sizeof(err));
			CHECK(!m);
			first = ret;
			break;
		}
		CHECK(m && lr_msg_type(m)[0]);
		reached[R_MSG].n++;
		parse_all(m);
		ms[n] = m;
		types[n] = lr_msg_type(m);
	}
	/*
	 * The agent's main process reads a handshake with the non-blocking reader: the same stream
	 * must give it the same messages, and the same refusal where lr_msg_recv() stopped.
	 */
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	for (i = 0; i < n; i++) {
		ret = lr_msg_read(&rd, fd, LR_MSG_MAX, &m, err, sizeof(err));
		CHECK(ret == 1 && m && !strcmp(lr_msg_type(m), types[i]));
		json_object_put(m);
	}
	if (n < MAX_MSGS) {
		ret = lr_msg_read(&rd, fd, LR_MSG_MAX, &m, err, sizeof(err));
		CHECK(ret == first && !m);
		CHECK(err[0] && !strchr(err, '\n') && strlen(err) < sizeof(err));
	}
	lr_msg_reader_reset(&rd);
	for (i = 0; i < n; i++)
		json_object_put(ms[i]);
	return 0;
}
