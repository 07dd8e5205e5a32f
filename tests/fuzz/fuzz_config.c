/* SPDX-License-Identifier: MIT */
/* libFuzzer target: lr_cfg_parse() on arbitrary bytes; it must not crash and must keep its promises. */
/*
 * CC=clang cmake -S . -B build-fuzz -DLINERATE_FUZZ=ON -DBUILD_TESTING=OFF
 * cmake --build build-fuzz --target fuzz_config
 * cp -r configs /tmp/corpus
 * build-fuzz/tests/fuzz/fuzz_config -dict=tests/fuzz/config.dict -max_total_time=60 /tmp/corpus
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "linerate/probe.h"
#include "run/config.h"
#include "tx/frame.h"
#include "reach.h"

#define CHECK(cond)                        \
	do {                               \
		if (!(cond))               \
			__builtin_trap();  \
	} while (0)

/* static: struct lr_cfg is tens of kilobytes */
static struct lr_cfg cfg;

/* a config accepted; one of several streams */
enum { R_PARSED, R_STREAMS };
static struct fuzz_reach reached[] = { [R_PARSED] = { "parsed" }, [R_STREAMS] = { "streams" }, { NULL } };

/* What a successful parse promises the runner. */
static void check_cfg(const struct lr_cfg *c)
{
	double shares = 0;
	uint32_t flows = 0;
	unsigned int i, j, k;

	CHECK(c->tx_ifname[0] && c->rx_ifname[0]);
	CHECK(c->duration_ns && c->trial_ns && c->repeat >= 1 && c->repeat <= 100);
	CHECK(c->max_trials >= 1 && c->max_trials <= 64);
	CHECK(c->max_loss >= 0 && c->max_loss <= 1);
	CHECK(c->nsizes >= 1 && c->nsizes <= LR_CFG_MAX_SIZES);
	CHECK(c->nrates >= 1 && c->nrates <= LR_CFG_MAX_RATES);
	CHECK(c->mode != LR_RUN_THROUGHPUT || c->nrates == 1);
	CHECK(c->nstreams >= 1 && c->nstreams <= LR_CFG_MAX_STREAMS);
	for (i = 0; i < c->nsizes; i++)
		CHECK(c->sizes[i] <= LR_MAX_FRAME);
	for (i = 0; i < c->nstreams; i++) {
		const struct lr_cfg_stream *s = &c->streams[i];

		CHECK(s->tx.family == AF_INET || s->tx.family == AF_INET6);
		CHECK(s->tx.flows >= 1 && s->tx.flows >= s->tx.nworkers);
		CHECK(s->tx.nworkers >= 1 && s->tx.nworkers <= LR_MAX_WORKERS);
		CHECK((uint32_t)s->tx.src_port + s->tx.flows - 1 <= 65535);
		CHECK(s->share > 0 && s->share <= 1);
		if (s->tx.size)
			CHECK(s->tx.size >= lr_frame_min_size(s->tx.family) && s->tx.size <= LR_MAX_FRAME);
		else
			for (j = 0; j < c->nsizes; j++)
				CHECK(c->sizes[j] >= lr_frame_min_size(s->tx.family));
		for (j = 0; j < s->tx.nworkers; j++)
			for (k = 0; k < j; k++)
				CHECK(s->tx.queues[j] != s->tx.queues[k]);
		flows += s->tx.flows;
		shares += s->share;
	}
	CHECK(flows <= LR_MAX_FLOWS);
	CHECK(shares > 0.999999 && shares < 1.000001);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	reach_init("fuzz_config", reached);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char path[] = "fuzz.ini";
	char err[512];
	int ret;

	ret = lr_cfg_parse(path, (const char *)data, size, &cfg, err, sizeof(err));
	if (ret) {
		/* one message, in the promised shape */
		CHECK(ret == -EINVAL);
		CHECK(!strncmp(err, "fuzz.ini:", 9) && err[9] >= '1' && err[9] <= '9');
		CHECK(strlen(err) < sizeof(err));
		return 0;
	}
	check_cfg(&cfg);
	reached[R_PARSED].n++;
	if (cfg.nstreams > 1)
		reached[R_STREAMS].n++;
	return 0;
}
