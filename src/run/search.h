/* SPDX-License-Identifier: MIT */
/*
 * The RFC 2544 (26.1) zero-loss throughput search as a pure state machine: given the bounds and
 * the trials so far, the rate of the next trial, or done and the best passing trial. No I/O.
 */
#ifndef LINERATE_SEARCH_H
#define LINERATE_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

struct lr_search_cfg {
	uint64_t upper_pps;	/* the first trial's rate; 0: "max", whatever the sender reaches */
	uint64_t resolution_pps;	/* done when hi - lo <= this; 0: use @resolution */
	double resolution;	/* done when (hi - lo) / hi <= this */
	unsigned int max_trials;
};

struct lr_search {
	struct lr_search_cfg cfg;
	uint64_t next;	/* the next trial's offered rate (0: "max") */
	uint64_t lo;	/* the highest rate a trial passed at */
	uint64_t hi;	/* the lowest rate a trial failed at, or the upper bound */
	unsigned int ntrials;
	bool done;
	bool found;	/* a trial passed */
	unsigned int best;	/* found: the index (0-based, in trial order) of the best passing trial */
	uint64_t best_pps;	/* found: the rate it tested */
	/* the first trial, at the upper bound, passed: the throughput is at least that, not known */
	bool capped;
};

void lr_search_init(struct lr_search *s, const struct lr_search_cfg *cfg);
/* False once the search is done; else true and the next trial's offered rate in @pps (0: "max"). */
bool lr_search_next(const struct lr_search *s, uint64_t *pps);
/* The trial at the rate lr_search_next() gave: the rate the sender reached, and whether it passed. */
void lr_search_feed(struct lr_search *s, double tx_pps, bool pass);

/* The sender fell more than 2 % short of @offered_pps (never, for 0: "max"). */
bool lr_search_short(uint64_t offered_pps, double tx_pps);
/*
 * The rate a trial really tested: the offered rate, or what the sender reached when it fell
 * short of it (a loss-free trial at 237 kpps is no evidence for 300 kpps) or for "max".
 */
uint64_t lr_search_tested_pps(uint64_t offered_pps, double tx_pps);

#endif
