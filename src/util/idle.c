/* SPDX-License-Identifier: MIT */
/* The idle limit of recv --once and reflect --once (util/idle.h). */
#include <stdio.h>
#include "util/idle.h"

#define NS 1000000000ULL

void lr_idle_init(struct lr_idle *w, uint64_t timeout_ns, bool given, uint64_t now)
{
	w->first_ns = given ? timeout_ns : LR_IDLE_FIRST_NS;
	w->last_ns = given ? timeout_ns : LR_IDLE_LAST_NS;
	w->since_ns = now;
	w->count = 0;
	w->seen = false;
}

bool lr_idle_expired(struct lr_idle *w, uint64_t count, uint64_t now)
{
	uint64_t limit;

	/* the count only grows while counting; any change is a frame or marker that came */
	if (count != w->count) {
		w->count = count;
		w->since_ns = now;
		w->seen = true;
		return false;
	}
	limit = w->seen ? w->last_ns : w->first_ns;
	return limit && now - w->since_ns >= limit;
}

void lr_idle_why(const struct lr_idle *w, char *buf, size_t len)
{
	uint64_t limit = w->seen ? w->last_ns : w->first_ns;

	if (w->seen)
		snprintf(buf, len, "no test frame or end-of-test marker for %.1f s after the last one (the idle limit, "
			 "--idle-timeout): the sender stopped before every flow's marker came; the counts are up to "
			 "that moment", (double)limit / NS);
	else
		snprintf(buf, len, "no test frame or end-of-test marker in the %.1f s since the start (the idle limit, "
			 "--idle-timeout): did the sender fail, or send elsewhere?", (double)limit / NS);
}
