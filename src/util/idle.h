/* SPDX-License-Identifier: MIT */
/*
 * The idle limit of recv --once and reflect --once: how long they wait for a test frame or marker
 * before giving up, so a sender that failed does not leave a receiver (and its XDP program) behind.
 */
#ifndef LINERATE_UTIL_IDLE_H
#define LINERATE_UTIL_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The default: a sender that never starts gets a minute; one that went quiet mid-test, 10 s. */
#define LR_IDLE_FIRST_NS	(60ULL * 1000000000ULL)
#define LR_IDLE_LAST_NS		(10ULL * 1000000000ULL)

struct lr_idle {
	uint64_t first_ns, last_ns;	/* the limit before the first test frame or marker, and after the last; 0: none */
	uint64_t since_ns;	/* the start, or when the count last moved */
	uint64_t count;	/* test frames and markers counted at since_ns */
	bool seen;	/* the count moved at least once */
};

/*
 * From --idle-timeout: not @given, the default (LR_IDLE_FIRST_NS, then LR_IDLE_LAST_NS); given, @timeout_ns
 * both before the first and after the last (0: no limit). @now starts the wait.
 */
void lr_idle_init(struct lr_idle *w, uint64_t timeout_ns, bool given, uint64_t now);
/* @count is every test frame and marker so far: true once it stood still for longer than the limit. */
bool lr_idle_expired(struct lr_idle *w, uint64_t count, uint64_t now);
/* Why it stopped, for the error line and the JSON: "no test frame or end-of-test marker in 60 s since ...". */
void lr_idle_why(const struct lr_idle *w, char *buf, size_t len);

#endif
