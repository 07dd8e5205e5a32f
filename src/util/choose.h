/* SPDX-License-Identifier: MIT */
/* Engine choice: try candidates in order of preference, remember why each better one failed. */
#ifndef LINERATE_CHOOSE_H
#define LINERATE_CHOOSE_H

#include <stddef.h>

#define LR_CHOICE_MAX 8
/*
 * One candidate's reason: a sentence or two with a hint, naming an interface and maybe a
 * namespace (at most 128 bytes: LR_PREP_NETNS_MAX); the longest written today is about 220.
 */
#define LR_WHY_MAX 1024
/* lr_choice_why()'s text at most, for @n candidates tried: "; NAME not usable (WHY)" each. */
#define LR_CHOICE_WHY_MAX(n) ((n) * (LR_WHY_MAX + 32))
/* A start line, or the error of a choice that failed: its words, notes and the reasons of the candidates. */
#define LR_START_LINE_MAX 4096

struct lr_cand {
	const char *name;
	/* Opens the engine for real (so "usable" means usable); 0 or -errno with the reason in @why. */
	int (*try_open)(void *ctx, const struct lr_cand *self, char *why, size_t len);
	const void *data;	/* e.g. the engine ops */
};

struct lr_choice {
	int chosen;	/* index into the candidates, -1 if none could open */
	int err;	/* the last candidate's error when none could */
	unsigned int ntried;
	struct {
		const char *name;
		int err;
		char why[LR_WHY_MAX];
	} tried[LR_CHOICE_MAX];
};

/* Tries @cands in order until one opens. 0, or the last error when none did. */
int lr_choose(const struct lr_cand *cands, unsigned int n, void *ctx, struct lr_choice *out);
/*
 * "; afxdp not usable (<why>)" for every candidate tried before the chosen one ("" if none),
 * whole: @len at least LR_CHOICE_WHY_MAX(ch->ntried) holds it all.
 */
void lr_choice_why(const struct lr_choice *ch, char *buf, size_t len);
/* Whether the test-only switch LINERATE_TEST_DISABLE (comma list) names @what. */
int lr_test_disabled(const char *what);

#endif
