/* SPDX-License-Identifier: MIT */
/* Ordered engine fallback with the reasons kept for the user. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/choose.h"

int lr_choose(const struct lr_cand *cands, unsigned int n, void *ctx, struct lr_choice *out)
{
	unsigned int i;
	int err = -ENOENT;

	memset(out, 0, sizeof(*out));
	out->chosen = -1;
	for (i = 0; i < n && i < LR_CHOICE_MAX; i++) {
		char *why = out->tried[i].why;

		out->tried[i].name = cands[i].name;
		err = cands[i].try_open(ctx, &cands[i], why, sizeof(out->tried[i].why));
		out->tried[i].err = err;
		out->ntried = i + 1;
		if (!err) {
			out->chosen = (int)i;
			return 0;
		}
		if (!why[0])
			snprintf(why, sizeof(out->tried[i].why), "%s: %s", cands[i].name, strerror(-err));
	}
	out->err = err;
	return err;
}

void lr_choice_why(const struct lr_choice *ch, char *buf, size_t len)
{
	unsigned int i, end = ch->chosen >= 0 ? (unsigned int)ch->chosen : ch->ntried;
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < end && off < len; i++) {
		int n = snprintf(buf + off, len - off, "; %s not usable (%s)", ch->tried[i].name, ch->tried[i].why);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

int lr_test_disabled(const char *what)
{
	const char *list = getenv("LINERATE_TEST_DISABLE");
	size_t n = strlen(what);

	while (list && *list) {
		if (!strncmp(list, what, n) && (list[n] == ',' || list[n] == '\0'))
			return 1;
		list = strchr(list, ',');
		if (list)
			list++;
	}
	return 0;
}
