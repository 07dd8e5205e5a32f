/* SPDX-License-Identifier: MIT */
/*
 * RFC 2544 26.1: the highest offered rate with loss within the threshold. The first trial runs
 * at the upper bound (a rate, or "max": whatever the sender reaches); then binary search between
 * the best passing and the lowest failing rate until the gap is within the resolution or the
 * trials run out.
 */
#include <string.h>
#include "run/search.h"

bool lr_search_short(uint64_t offered_pps, double tx_pps)
{
	return offered_pps && tx_pps < 0.98 * (double)offered_pps;
}

uint64_t lr_search_tested_pps(uint64_t offered_pps, double tx_pps)
{
	if (!offered_pps || lr_search_short(offered_pps, tx_pps))
		return (uint64_t)tx_pps;
	return offered_pps;
}

void lr_search_init(struct lr_search *s, const struct lr_search_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->next = cfg->upper_pps;
}

bool lr_search_next(const struct lr_search *s, uint64_t *pps)
{
	if (s->done)
		return false;
	*pps = s->next;
	return true;
}

/* Whether the gap between the bounds is within the resolution. */
static bool resolved(const struct lr_search *s)
{
	const struct lr_search_cfg *c = &s->cfg;

	if (s->found && s->hi > s->lo) {
		uint64_t gap = s->hi - s->lo;

		if (c->resolution_pps)
			return gap <= c->resolution_pps;
		return (double)gap <= c->resolution * (double)s->hi;
	}
	/* nothing passed, and the upper bound is already within the resolution of zero */
	return !s->found && c->resolution_pps && s->hi <= c->resolution_pps;
}

void lr_search_feed(struct lr_search *s, double tx_pps, bool pass)
{
	uint64_t offered = s->next;
	/* "max": what the sender reached is the upper bound */
	uint64_t rate = offered ? offered : (uint64_t)tx_pps;

	if (s->done)
		return;
	s->ntrials++;
	if (pass) {
		/* what was really sent: a sender short of the rate tested a lower one */
		uint64_t t = lr_search_tested_pps(offered, tx_pps);

		if (!s->found || t >= s->best_pps) {
			s->best = s->ntrials - 1;
			s->best_pps = t;
		}
		if (t > s->lo)
			s->lo = t;
		s->found = true;
		/* the upper bound itself passes; or the sender fell short, and higher offers would only repeat this */
		if (s->ntrials == 1 || (offered && t < offered)) {
			s->capped = s->ntrials == 1;
			s->done = true;
			return;
		}
	} else {
		s->hi = rate;
	}
	if (s->ntrials >= s->cfg.max_trials || s->hi <= 1 || resolved(s)) {
		s->done = true;
		return;
	}
	s->next = s->lo + (s->hi - s->lo) / 2;
	if (!s->next)
		s->done = true;
}
