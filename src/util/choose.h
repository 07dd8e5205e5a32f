/* SPDX-License-Identifier: MIT */
/* Engine choice: try candidates in order of preference, remember why each better one failed. */
#ifndef LINERATE_CHOOSE_H
#define LINERATE_CHOOSE_H

#include <stddef.h>

#define LR_CHOICE_MAX 8

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
		char why[256];
	} tried[LR_CHOICE_MAX];
};

/* Tries @cands in order until one opens. 0, or the last error when none did. */
int lr_choose(const struct lr_cand *cands, unsigned int n, void *ctx, struct lr_choice *out);
/* "; afxdp not usable: <why>" for every candidate tried before the chosen one ("" if none). */
void lr_choice_why(const struct lr_choice *ch, char *buf, size_t len);
/* Whether the test-only switch LINERATE_TEST_DISABLE (comma list) names @what. */
int lr_test_disabled(const char *what);

#endif
