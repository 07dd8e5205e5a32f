/* SPDX-License-Identifier: MIT */
/*
 * The success paths of a fuzz target, counted while it runs and printed when it exits, as
 * "fuzz_msg: reached prepare_rx=N prepare_tx=N ...": .ci/run fails a run in which one stayed at 0,
 * for then only the refusals in front of it were fuzzed (seeds that a protocol change made stale).
 */
#ifndef LINERATE_FUZZ_REACH_H
#define LINERATE_FUZZ_REACH_H

#include <stdio.h>
#include <stdlib.h>

struct fuzz_reach {
	const char *name;	/* one word: .ci/run reads "NAME=COUNT" */
	unsigned long long n;
};

static const char *reach_target;
static const struct fuzz_reach *reach_paths;

static void reach_print(void)
{
	const struct fuzz_reach *p;

	fprintf(stderr, "%s: reached", reach_target);
	for (p = reach_paths; p->name; p++)
		fprintf(stderr, " %s=%llu", p->name, p->n);
	fputc('\n', stderr);
}

/*
 * From LLVMFuzzerInitialize(): @paths (a NULL name ends them) printed at exit. libFuzzer ends a
 * run that lasted -max_total_time or -runs with exit(), which calls it; a crash ends it without.
 */
static inline void reach_init(const char *target, const struct fuzz_reach *paths)
{
	reach_target = target;
	reach_paths = paths;
	atexit(reach_print);
}

#endif
