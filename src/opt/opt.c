/* SPDX-License-Identifier: MIT */
/* Option values: text to a typed field, the bounds of each kind of value and its one message format. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include "opt/opt.h"
#include "sys/container.h"
#include "util/units.h"

#define NANO		1000000000ULL
#define PERCENT_NANO	(100 * NANO)	/* 100 %, in the units parse_percent() returns */
#define LIST_MAX	1024	/* the longest queue or CPU list, blanks dropped */

/* One value being parsed: the option, where it goes, and where a message goes. */
struct val {
	const struct lr_opt *o;
	const struct lr_bind *b;
	char *base;
	const char *name;
	char *err;
	size_t errlen;
};

static void *aux_field(const struct val *v)
{
	return v->base + v->b->aux - 1;
}

/* "a; b" from the parts that are not empty. */
static void join(char *buf, size_t len, const char *a, const char *b)
{
	snprintf(buf, len, "%s%s%s", a ? a : "", a && *a && b && *b ? "; " : "", b ? b : "");
}

/* "NAME: 'ARG' is not WHAT (HINT; BOUNDS)": the message of every value that does not parse. */
static int bad_value(const struct val *v, const char *arg)
{
	const struct lr_kind *k = v->o->kind;
	char bounds[128], detail[384];

	lr_opt_bounds(k, bounds, sizeof(bounds));
	join(detail, sizeof(detail), k->hint, bounds);
	snprintf(v->err, v->errlen, "%s: '%s' is not %s%s%s%s", v->name, arg, k->what, *detail ? " (" : "", detail,
		 *detail ? ")" : "");
	return -EINVAL;
}

/* A value that parses but is above what any test needs (durations, rates). */
static int too_big(const struct val *v, const char *arg)
{
	snprintf(v->err, v->errlen, "%s: '%s' exceeds the limit of %s", v->name, arg, v->o->kind->limit);
	return -EINVAL;
}

static void store_uint(void *f, unsigned int size, uint64_t x)
{
	switch (size) {
	case 1:
		*(uint8_t *)f = (uint8_t)x;
		break;
	case 2:
		*(uint16_t *)f = (uint16_t)x;
		break;
	case 4:
		*(uint32_t *)f = (uint32_t)x;
		break;
	default:
		*(uint64_t *)f = x;
		break;
	}
}

/*
 * "30", "30%", "0.1": a percentage in units of 1e-9 %. lr_parse_count() is
 * exact fixed point to nine decimals, and its G multiplier turns "0.1" into
 * 100000000, so appending "G" is all it takes.
 */
static int parse_percent(const char *s, uint64_t *out)
{
	char buf[64];
	size_t n = strlen(s);

	if (n && s[n - 1] == '%')
		n--;
	if (!n || n + 2 > sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 'G';
	buf[n + 1] = '\0';
	return lr_parse_count(buf, 0, PERCENT_NANO, out);
}

/* "0-3", "0, 2, 5-6": blanks around ',' and '-' dropped, blanks between two numbers refused. */
static int squeeze_blanks(const char *s, char *out, size_t len)
{
	size_t n = 0;
	char prev = ',';

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t') {
			const char *next = s;

			while (*next == ' ' || *next == '\t')
				next++;
			if (prev != ',' && prev != '-' && *next && *next != ',' && *next != '-')
				return -EINVAL;
			s = next - 1;
			continue;
		}
		if (n + 1 >= len)
			return -EINVAL;
		out[n++] = *s;
		prev = *s;
	}
	out[n] = '\0';
	return 0;
}

/* What the kernel's dev_valid_name() takes. */
static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return !strpbrk(s, "/: \t");
}

/* What lr_netns_enter() takes: a name under /run/netns, pid:PID or an absolute path (container:NAME aside). */
static bool valid_netns(const char *s)
{
	uint64_t pid;

	if (!strncmp(s, "pid:", 4))
		return s[4] && strspn(s + 4, "0123456789") == strlen(s + 4) &&
		       !lr_parse_count(s + 4, 1, INT32_MAX, &pid);
	if (s[0] == '/')
		return true;
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static int set_string(const struct val *v, char *f, const char *arg)
{
	size_t n = strlen(arg);

	if (!n || n >= v->b->size) {
		snprintf(v->err, v->errlen, "%s: '%s' is empty or too long (at most %u characters)", v->name, arg,
			 v->b->size - 1);
		return -EINVAL;
	}
	memcpy(f, arg, n + 1);
	return 0;
}

static int set_netns(const struct val *v, char *f, const char *arg)
{
	struct lr_container_spec spec;
	char msg[256];

	/* the container spec parser says best what is wrong with one */
	if (lr_container_is_spec(arg) && lr_container_spec_parse(arg, false, &spec, msg, sizeof(msg))) {
		snprintf(v->err, v->errlen, "%s: %s", v->name, msg);
		return -EINVAL;
	}
	if (!lr_container_is_spec(arg) && !valid_netns(arg))
		return bad_value(v, arg);
	return set_string(v, f, arg);
}

static int set_mac(const struct val *v, uint8_t *mac, const char *arg)
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(arg, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return bad_value(v, arg);
	if (b[0] & 1) {
		snprintf(v->err, v->errlen, "%s: '%s' is a multicast/broadcast address; test frames need a unicast "
			 "destination", v->name, arg);
		return -EINVAL;
	}
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int set_idlist(const struct val *v, unsigned int *out, const char *arg)
{
	const struct lr_kind *k = v->o->kind;
	char buf[LIST_MAX];
	unsigned int cap = v->b->size / sizeof(*out), i, j;
	int n;

	if (cap > k->items)
		cap = k->items;
	if (squeeze_blanks(arg, buf, sizeof(buf)))
		return bad_value(v, arg);
	n = lr_parse_list(buf, (unsigned int)k->max + 1, out, cap);
	if (n <= 0)
		return bad_value(v, arg);
	for (i = 0; k->unique && i < (unsigned int)n; i++)
		for (j = 0; j < i; j++)
			if (out[i] == out[j]) {
				snprintf(v->err, v->errlen, "%s: %s %u is listed twice", v->name, k->unit, out[i]);
				return -EINVAL;
			}
	*(unsigned int *)aux_field(v) = (unsigned int)n;
	return 0;
}

static int set_choice(const struct val *v, void *f, const char *arg)
{
	const struct lr_opt_choice *c = v->o->kind->choices;
	size_t off;
	int i;

	for (i = 0; c[i].name; i++)
		if (!strcmp(arg, c[i].name)) {
			store_uint(f, v->b->size, (uint64_t)i);
			return 0;
		}
	off = (size_t)snprintf(v->err, v->errlen, "%s: '%s' is not one of", v->name, arg);
	for (i = 0; c[i].name && off < v->errlen; i++)
		off += (size_t)snprintf(v->err + off, v->errlen - off, "%s %s", i ? "," : "", c[i].name);
	return -EINVAL;
}

/* A percentage of the rate below 100 %, or a step in packets per second. */
static int set_step(const struct val *v, double *frac, const char *arg)
{
	size_t n = strlen(arg);
	struct lr_rate r;
	uint64_t pct;

	if (n && arg[n - 1] == '%') {
		if (parse_percent(arg, &pct) || !pct || pct >= PERCENT_NANO)
			return bad_value(v, arg);
		*frac = (double)pct / (double)PERCENT_NANO;
		*(uint64_t *)aux_field(v) = 0;
		return 0;
	}
	if (lr_parse_rate(arg, &r) || r.kind != LR_RATE_PPS)
		return bad_value(v, arg);
	*frac = 0;
	*(uint64_t *)aux_field(v) = r.value;
	return 0;
}

/* One value of the option's kind into @f. */
static int set_value(const struct val *v, void *f, const char *arg)
{
	const struct lr_kind *k = v->o->kind;
	uint64_t x;
	int ret, family;

	switch (k->type) {
	case LR_T_FLAG:
		*(bool *)f = true;
		return 0;
	case LR_T_COUNTER:
		(*(int *)f)++;
		return 0;
	case LR_T_STRING:
		return set_string(v, f, arg);
	case LR_T_IFNAME:
		if (!valid_ifname(arg)) {
			snprintf(v->err, v->errlen, "%s: '%s' is not an interface name (1..%d characters, no '/', "
				 "':' or blanks)", v->name, arg, IF_NAMESIZE - 1);
			return -EINVAL;
		}
		return set_string(v, f, arg);
	case LR_T_NETNS:
		return set_netns(v, f, arg);
	case LR_T_COUNT:
		if (lr_parse_count(arg, k->min, k->max, &x) || (k->pow2 && (x & (x - 1))))
			return bad_value(v, arg);
		store_uint(f, v->b->size, x);
		return 0;
	case LR_T_DURATION:
		ret = lr_parse_duration(arg, &x);
		if (ret == -ERANGE || (!ret && x > k->max))
			return too_big(v, arg);
		if (ret || x < k->min)
			return bad_value(v, arg);
		*(uint64_t *)f = x;
		return 0;
	case LR_T_RATE:
		ret = lr_parse_rate(arg, f);
		if (ret == -ERANGE)
			return too_big(v, arg);
		return ret ? bad_value(v, arg) : 0;
	case LR_T_PERCENT:
		if (parse_percent(arg, &x) || x < k->min || x > k->max)
			return bad_value(v, arg);
		*(double *)f = (double)x / (double)PERCENT_NANO;
		return 0;
	case LR_T_STEP:
		return set_step(v, f, arg);
	case LR_T_IP:
		family = strchr(arg, ':') ? AF_INET6 : AF_INET;
		memset(f, 0, sizeof(struct in6_addr));	/* IPv4 lands in the first 4 bytes, as frame.h wants */
		if (inet_pton(family, arg, f) != 1)
			return bad_value(v, arg);
		*(int *)aux_field(v) = family;
		return 0;
	case LR_T_MAC:
		return set_mac(v, f, arg);
	case LR_T_IDLIST:
		return set_idlist(v, f, arg);
	case LR_T_CHOICE:
		return set_choice(v, f, arg);
	}
	snprintf(v->err, v->errlen, "%s: internal: no parser for type %d", v->name, (int)k->type);
	return -EINVAL;
}

/* "a, b,c": each trimmed item parsed into the next element; its count at aux. */
static int set_list(const struct val *v, const char *arg)
{
	char buf[LIST_MAX], *p, *tok;
	/* a repeatable option adds to what earlier uses gave */
	unsigned int n = v->o->repeat ? *(unsigned int *)aux_field(v) : 0;
	int ret;

	if (strlen(arg) >= sizeof(buf))
		return bad_value(v, arg);
	strcpy(buf, arg);
	/* strtok would merge ",," into one separator; an empty item is an error */
	for (p = buf;; p = tok + 1) {
		char *end;

		tok = strchr(p, ',');
		if (tok)
			*tok = '\0';
		p += strspn(p, " \t");
		end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (n >= v->o->list) {
			snprintf(v->err, v->errlen, "%s: more than %u values", v->name, v->o->list);
			return -EINVAL;
		}
		if (!*p) {
			snprintf(v->err, v->errlen, "%s: '%s' has an empty item; separate the values with single "
				 "commas", v->name, arg);
			return -EINVAL;
		}
		ret = set_value(v, v->base + v->b->off + (size_t)n * v->b->size, p);
		if (ret)
			return ret;
		n++;
		if (!tok)
			break;
	}
	*(unsigned int *)aux_field(v) = n;
	return 0;
}

static int set_arg(const struct val *v, const char *arg)
{
	if (v->o->list && v->b->aux)
		return set_list(v, arg);
	return set_value(v, v->base + v->b->off, arg);
}

int lr_opt_set(const struct lr_bind *b, void *base, const char *name, const char *arg, char *err, size_t errlen)
{
	const struct val v = { &lr_opts[b->id], b, base, name, err, errlen };

	if (b->given)
		*(bool *)(v.base + b->given - 1) = true;
	return set_arg(&v, arg);
}

/* The field of a value given typed; -EINVAL with an internal message when @b is a list or of another type. */
static void *typed_field(const struct val *v, enum lr_opt_type want)
{
	if (v->o->kind->type != want || (v->o->list && v->b->aux)) {
		snprintf(v->err, v->errlen, "%s: internal: not a single value of this type", v->name);
		return NULL;
	}
	if (v->b->given)
		*(bool *)(v->base + v->b->given - 1) = true;
	return v->base + v->b->off;
}

int lr_opt_set_uint(const struct lr_bind *b, void *base, const char *name, uint64_t x, char *err, size_t errlen)
{
	const struct val v = { &lr_opts[b->id], b, base, name, err, errlen };
	const struct lr_kind *k = v.o->kind;
	bool duration = k->type == LR_T_DURATION;
	char text[32];
	void *f;

	f = typed_field(&v, duration ? LR_T_DURATION : LR_T_COUNT);
	if (!f)
		return -EINVAL;
	/* the value as a message quotes it: the text that would have said the same */
	snprintf(text, sizeof(text), "%llu%s", (unsigned long long)x, duration ? "ns" : "");
	if (duration && x > k->max)
		return too_big(&v, text);
	if (x < k->min || x > k->max || (!duration && k->pow2 && (x & (x - 1))))
		return bad_value(&v, text);
	if (duration)
		*(uint64_t *)f = x;
	else
		store_uint(f, b->size, x);
	return 0;
}

int lr_opt_set_ids(const struct lr_bind *b, void *base, const char *name, const uint64_t *ids, unsigned int n,
		   char *err, size_t errlen)
{
	const struct val v = { &lr_opts[b->id], b, base, name, err, errlen };
	const struct lr_kind *k = v.o->kind;
	unsigned int *out, cap = b->size / sizeof(*out), i, j;
	char text[LIST_MAX];
	size_t off = 0;

	out = typed_field(&v, LR_T_IDLIST);
	if (!out)
		return -EINVAL;
	if (cap > k->items)
		cap = k->items;
	text[0] = '\0';
	for (i = 0; i < n && off < sizeof(text); i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%llu", i ? "," : "",
					(unsigned long long)ids[i]);
	if (!n || n > cap)
		return bad_value(&v, text);
	for (i = 0; i < n; i++)
		if (ids[i] > k->max)
			return bad_value(&v, text);
	for (i = 0; i < n; i++) {
		for (j = 0; k->unique && j < i; j++)
			if (ids[i] == ids[j]) {
				snprintf(err, errlen, "%s: %s %llu is listed twice", name, k->unit,
					 (unsigned long long)ids[i]);
				return -EINVAL;
			}
		out[i] = (unsigned int)ids[i];
	}
	*(unsigned int *)aux_field(&v) = n;
	return 0;
}

void lr_opt_defaults(const struct lr_bind *b, unsigned int n, void *base)
{
	char err[256];
	unsigned int i;

	/* every default parses: tests/unit/test_opt.c (commands) and test_config.c (INI keys) check */
	for (i = 0; i < n; i++) {
		const struct val v = { &lr_opts[b[i].id], &b[i], base, "default", err, sizeof(err) };

		if (v.o->def)
			set_arg(&v, v.o->def);
	}
}

void lr_opt_bounds(const struct lr_kind *k, char *buf, size_t len)
{
	buf[0] = '\0';
	switch (k->type) {
	case LR_T_COUNT:
		if (k->max != UINT64_MAX)
			snprintf(buf, len, "%llu..%llu%s%s", (unsigned long long)k->min, (unsigned long long)k->max,
				 k->unit ? " " : "", k->unit ? k->unit : "");
		else if (k->min > 1)
			snprintf(buf, len, "at least %llu%s%s", (unsigned long long)k->min, k->unit ? " " : "",
				 k->unit ? k->unit : "");
		break;
	case LR_T_DURATION:
		snprintf(buf, len, "%sat most %s", k->min ? "more than 0, " : "", k->limit);
		break;
	case LR_T_RATE:
		snprintf(buf, len, "at most %s", k->limit);
		break;
	case LR_T_PERCENT:
		if (k->min)
			snprintf(buf, len, "more than 0, at most %g", (double)k->max / NANO);
		else
			snprintf(buf, len, "0..%g", (double)k->max / NANO);
		break;
	case LR_T_IDLIST:
		snprintf(buf, len, "at most %u, each below %llu", k->items, (unsigned long long)k->max + 1);
		break;
	default:
		break;
	}
}

void lr_opt_describe(const struct lr_opt *o, char *buf, size_t len)
{
	const struct lr_kind *k = o->kind;
	const char *def = o->def_text ? o->def_text : o->def;
	char bounds[128], detail[512];
	size_t off;
	int i;

	off = (size_t)snprintf(buf, len, "%s", o->help);
	for (i = 0; k->type == LR_T_CHOICE && k->choices[i].name && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s%s%s%s", i ? ", " : ": ", k->choices[i].name,
					k->choices[i].help ? " (" : "", k->choices[i].help ? k->choices[i].help : "",
					k->choices[i].help ? ")" : "");
	lr_opt_bounds(k, bounds, sizeof(bounds));
	join(detail, sizeof(detail), k->hint, bounds);
	if (def || o->required) {
		size_t n = strlen(detail);

		snprintf(detail + n, sizeof(detail) - n, "%s%s%s", n ? "; " : "", def ? "default: " : "required",
			 def ? def : "");
	}
	if (*detail && off < len)
		snprintf(buf + off, len - off, " (%s)", detail);
}
