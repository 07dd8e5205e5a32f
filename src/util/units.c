/* SPDX-License-Identifier: MIT */
/* Parsing of counts, durations, rates and lists with unit suffixes; exact integer arithmetic. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "util/units.h"

/*
 * Parses "123", "2.5" into a value scaled by 10^9 (so fractions stay exact
 * integers); *end points past the number. -EINVAL if there is no number,
 * -ERANGE if it does not fit.
 */
static int parse_fixed(const char *s, const char **end, unsigned __int128 *out)
{
	unsigned __int128 v = 0;
	const char *p = s;
	int digits = 0, frac = 0;

	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (unsigned)(*p++ - '0');
		if (v > (unsigned __int128)UINT64_MAX)
			return -ERANGE;
		digits++;
	}
	v *= 1000000000ULL;
	if (*p == '.') {
		unsigned __int128 scale = 100000000ULL;

		p++;
		while (isdigit((unsigned char)*p)) {
			if (frac++ < 9) {
				v += (unsigned)(*p - '0') * scale;
				scale /= 10;
			}
			p++;
			digits++;
		}
		if (!frac)
			return -EINVAL;
	}
	if (!digits)
		return -EINVAL;
	*end = p;
	*out = v;
	return 0;
}

/* A decimal multiplier suffix: k, M, G (and K, m for k/M ambiguity avoided: m is not mega). */
static uint64_t multiplier(const char **p)
{
	switch (**p) {
	case 'k':
	case 'K':
		(*p)++;
		return 1000ULL;
	case 'M':
		(*p)++;
		return 1000000ULL;
	case 'G':
		(*p)++;
		return 1000000000ULL;
	}
	return 1;
}

/* value (scaled by 1e9) * mult / 1e9, requiring an integer result. */
static int scale_exact(unsigned __int128 v, uint64_t mult, uint64_t *out)
{
	v *= mult;
	if (v % 1000000000ULL)
		return -EINVAL;	/* a fraction of a packet or nanosecond */
	v /= 1000000000ULL;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int lr_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned __int128 v;
	const char *p;
	uint64_t mult, r;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_fixed(s, &p, &v);
	if (err)
		return err;
	mult = multiplier(&p);
	if (*p)
		return -EINVAL;
	err = scale_exact(v, mult, &r);
	if (err)
		return err;
	if (r < min || r > max)
		return -ERANGE;
	*out = r;
	return 0;
}

int lr_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *sfx;
		uint64_t ns;
	} units[] = {
		{ "ns", 1ULL }, { "us", 1000ULL }, { "ms", 1000000ULL }, { "s", 1000000000ULL },
		{ "m", 60000000000ULL }, { "min", 60000000000ULL }, { "h", 3600000000000ULL }, { "", 1000000000ULL },
	};
	unsigned __int128 v;
	const char *p;
	size_t i;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_fixed(s, &p, &v);
	if (err)
		return err;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].sfx))
			continue;
		/* v is below 2^64 * 1e9: compare before multiplying, so 128 bits never wrap */
		if (v > (unsigned __int128)LR_DURATION_MAX_NS * 1000000000ULL / units[i].ns + 1)
			return -ERANGE;
		v *= units[i].ns;
		v /= 1000000000ULL;
		if (v > LR_DURATION_MAX_NS)
			return -ERANGE;
		*ns = (uint64_t)v;
		return 0;
	}
	return -EINVAL;
}

int lr_parse_rate(const char *s, struct lr_rate *r)
{
	unsigned __int128 v;
	const char *p;
	uint64_t mult, val;
	int err, bits;

	if (!s)
		return -EINVAL;
	if (!strcasecmp(s, "max")) {
		r->kind = LR_RATE_MAX;
		r->value = 0;
		return 0;
	}
	err = parse_fixed(s, &p, &v);
	if (err)
		return err;
	mult = multiplier(&p);
	if (!*p || !strcmp(p, "pps")) {
		bits = 0;
	} else if (!strcmp(p, "bit") || !strcmp(p, "bps") || !strcmp(p, "bit/s")) {
		bits = 1;
	} else {
		return -EINVAL;
	}
	err = scale_exact(v, mult, &val);
	if (err == -EINVAL && bits) {
		/* fractional bits per second: round down, harmless */
		v = v * mult / 1000000000ULL;
		if (v > UINT64_MAX)
			return -ERANGE;
		val = (uint64_t)v;
		err = 0;
	}
	if (err)
		return err;
	if (!val)
		return -EINVAL;	/* no rate at all, or less than one frame a second */
	if (val > (bits ? LR_RATE_MAX_BPS : LR_RATE_MAX_PPS))
		return -ERANGE;
	r->kind = bits ? LR_RATE_BPS : LR_RATE_PPS;
	r->value = val;
	return 0;
}

uint64_t lr_rate_pps(const struct lr_rate *r, unsigned int frame_size)
{
	switch (r->kind) {
	case LR_RATE_PPS:
		return r->value;
	case LR_RATE_BPS: {
		/* line rate: every frame also costs 8 B preamble + 12 B inter-frame gap */
		uint64_t pps = r->value / ((uint64_t)(frame_size + 20) * 8);

		return pps ? pps : 1;
	}
	default:
		return 0;
	}
}

int lr_parse_list(const char *s, unsigned int limit, unsigned int *out, unsigned int max)
{
	unsigned int n = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		unsigned long a, b;
		char *e;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		a = strtoul(p, &e, 10);
		if (errno)
			return -ERANGE;
		b = a;
		p = e;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			errno = 0;
			b = strtoul(p, &e, 10);
			if (errno)
				return -ERANGE;
			p = e;
			if (b < a)
				return -EINVAL;
		}
		if (b >= limit)
			return -ERANGE;
		for (; a <= b; a++) {
			if (n >= max)
				return -E2BIG;
			out[n++] = (unsigned int)a;
		}
		if (!*p)
			break;
		if (*p++ != ',')
			return -EINVAL;
	}
	return (int)n;
}
