/* SPDX-License-Identifier: MIT */
/* Numbers with unit suffixes (counts, rates, durations, ranges) as the CLI and configs take them. */
#ifndef LINERATE_UNITS_H
#define LINERATE_UNITS_H

#include <stdint.h>
#include <stddef.h>

/*
 * Bounds no test needs to exceed, stated in the help and refused beyond (-ERANGE), so that no
 * arithmetic downstream (pacing in nanopackets, deadlines in nanoseconds) can overflow.
 */
#define LR_DURATION_MAX_NS	(366ULL * 24 * 3600 * 1000000000ULL)	/* a year */
#define LR_RATE_MAX_PPS		1000000000ULL	/* 1 Gpps */
#define LR_RATE_MAX_BPS		1000000000000ULL	/* 1 Tbit/s (L1) */

/* A count's plural ending: "s" unless it is one, as in ("%llu frame%s", n, lr_s(n)). */
static inline const char *lr_s(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* "1500", "64k", "2.5M", "1G" (decimal multipliers). 0 or -EINVAL/-ERANGE. */
int lr_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "10s", "500ms", "2m", "1h", "250us", a bare number is seconds; at most LR_DURATION_MAX_NS (-ERANGE). */
int lr_parse_duration(const char *s, uint64_t *ns);

enum lr_rate_kind { LR_RATE_MAX = 0, LR_RATE_PPS, LR_RATE_BPS };

struct lr_rate {
	enum lr_rate_kind kind;
	uint64_t value;	/* packets or bits (line rate, L1) per second */
};

/* "max", "10000", "100kpps", "1Mpps", "2.5Gbit", "800Mbps", "1e6"-free; -ERANGE beyond the LR_RATE_MAX_* bounds. */
int lr_parse_rate(const char *s, struct lr_rate *r);
/* Packets per second for @rate at @frame_size (incl. FCS); 0 = unlimited. */
uint64_t lr_rate_pps(const struct lr_rate *r, unsigned int frame_size);

/* "0-3", "0,2,5-6": up to @max values into @out, returns the count or -errno. */
int lr_parse_list(const char *s, unsigned int limit, unsigned int *out, unsigned int max);

#endif
