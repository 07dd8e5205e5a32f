/* SPDX-License-Identifier: MIT */
/* libFuzzer target: lr_matrix_pairs_parse() (a --pairs file) on arbitrary bytes, against fixed agents. */
/*
 * CC=clang cmake -S . -B build-fuzz -DLINERATE_FUZZ=ON -DBUILD_TESTING=OFF
 * cmake --build build-fuzz --target fuzz_pairs
 * build-fuzz/tests/fuzz/fuzz_pairs -dict=tests/fuzz/pairs.dict -max_total_time=60 tests/fuzz/pairs_corpus
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include "run/matrix.h"
#include "reach.h"

#define CHECK(cond)                        \
	do {                               \
		if (!(cond))               \
			__builtin_trap();  \
	} while (0)

/* "node-a" .. "node-d": 198.18.0.1 .. .4; "two.test": .1 and .2; anything else does not resolve */
static int resolve(const char *host, int family, struct lr_matrix_addr *out, unsigned int max, unsigned int *n,
		   char *err, size_t errlen)
{
	unsigned int first = 0, count = 0;

	(void)family;
	*n = 0;
	if (max && inet_pton(AF_INET, host, &out[0].addr.s6_addr[0]) == 1) {
		memset(&out[0].addr.s6_addr[4], 0, sizeof(out[0].addr.s6_addr) - 4);
		out[0].family = AF_INET;
		*n = 1;
		return 0;
	}
	if (!strncmp(host, "node-", 5) && host[5] >= 'a' && host[5] <= 'd' && !host[6]) {
		first = (unsigned int)(host[5] - 'a');
		count = 1;
	} else if (!strcmp(host, "two.test")) {
		count = 2;
	} else {
		snprintf(err, errlen, "%s: no such name", host);
		return -ENOENT;
	}
	for (; *n < count && *n < max; (*n)++) {
		memset(&out[*n], 0, sizeof(out[*n]));
		out[*n].family = AF_INET;
		out[*n].addr.s6_addr[0] = 198;
		out[*n].addr.s6_addr[1] = 18;
		out[*n].addr.s6_addr[3] = (uint8_t)(first + *n + 1);
	}
	return 0;
}

static struct lr_matrix_plan plan;

/* a file accepted, with at least one pair in it */
enum { R_ACCEPTED };
static struct fuzz_reach reached[] = { [R_ACCEPTED] = { "accepted" }, { NULL } };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	reach_init("fuzz_pairs", reached);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char entries[][LR_HOSTPORT_MAX] = { "node-a", "node-b", "node-c", "198.18.0.4:7500",
							 "198.18.0.4:7446" };
	static bool ready;
	char err[1024] = "";
	unsigned int i, k;
	int ret;

	if (!ready) {
		if (lr_matrix_agents(&plan, entries, sizeof(entries) / sizeof(entries[0]), LR_MATRIX_FAMILY_AUTO,
				     resolve, err, sizeof(err))) {
			fprintf(stderr, "fuzz_pairs: the fixed agents: %s\n", err);
			__builtin_trap();
		}
		CHECK(plan.nagents == 5);
		ready = true;
	}
	plan.pairs = NULL;
	plan.npairs = 0;
	ret = lr_matrix_pairs_parse(&plan, "pairs.txt", (const char *)data, size, resolve, err, sizeof(err));
	if (ret) {
		/* refused: one line that names the file and the line */
		CHECK(ret == -EINVAL || ret == -ENOMEM);
		CHECK(!strncmp(err, "pairs.txt:", 10));
		CHECK(!strchr(err, '\n'));
	} else {
		/* accepted: each pair two different agents of the plan, named once */
		for (i = 0; i < plan.npairs; i++) {
			const struct lr_matrix_pair *p = &plan.pairs[i];

			CHECK(p->a < plan.nagents && p->b < plan.nagents && p->a != p->b);
			CHECK(p->line >= 1);
			for (k = 0; k < i; k++)
				CHECK(!((plan.pairs[k].a == p->a && plan.pairs[k].b == p->b) ||
					(plan.pairs[k].a == p->b && plan.pairs[k].b == p->a)));
		}
		if (plan.npairs)
			reached[R_ACCEPTED].n++;
	}
	free(plan.pairs);
	plan.pairs = NULL;
	plan.npairs = 0;
	return 0;
}
