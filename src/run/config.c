/* SPDX-License-Identifier: MIT */
/* `linerate run` INI files: libinih over our own line reader, every key checked, errors as PATH:LINE. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <ini.h>

#include "cmd/cli.h"
#include "linerate/probe.h"
#include "run/config.h"
#include "sys/container.h"
#include "tx/frame.h"
#include "util/log.h"

/*
 * inih's line buffer is INI_MAX_LINE (200) bytes with the NUL. We hand it
 * lines without their line ending, so 199 characters fit; longer lines are
 * refused by us rather than silently split by inih.
 */
#define CFG_LINE_MAX	199
#define CFG_FILE_MAX	(1024 * 1024)
#define NANO		1000000000ULL
#define PERCENT_NANO	(100 * NANO)	/* 100 %, in the units parse_percent() returns */
#define DURATION_MAX	(24ULL * 3600 * NANO)
#define QUEUE_LIMIT	4096	/* same bound as `send --queues` */

enum sec_kind { SEC_NONE = 0, SEC_TEST, SEC_TX, SEC_RX, SEC_STREAM };

#define S_TEST	(1u << SEC_TEST)
#define S_TX	(1u << SEC_TX)
#define S_RX	(1u << SEC_RX)
#define S_STR	(1u << SEC_STREAM)

enum key_id {
	K_NAME, K_MODE, K_DURATION, K_WARMUP, K_REPEAT, K_MAX_LOSS, K_MAX_P99, K_TRIAL, K_RESOLUTION,
	K_MAX_TRIALS, K_INTERFACE, K_NETNS, K_ENGINE, K_XDP_MODE, K_WORKERS, K_QUEUES, K_CPUS, K_BATCH,
	K_SIZE, K_SIZES, K_RATE, K_RATES, K_FLOWS, K_SHARE, K_SRC_IP, K_DST_IP, K_SRC_MAC, K_DST_MAC,
	K_SRC_PORT, K_DST_PORT, K_PCAP, K_PCAP_EVERY, K_SNAPLEN, K_NKEYS
};

/* In the order the "unknown key" message lists them. */
static const struct {
	const char *name;
	unsigned int secs;
} keys[K_NKEYS] = {
	[K_NAME] = { "name", S_TEST },
	[K_MODE] = { "mode", S_TEST },
	[K_DURATION] = { "duration", S_TEST },
	[K_WARMUP] = { "warmup", S_TEST },
	[K_REPEAT] = { "repeat", S_TEST },
	[K_MAX_LOSS] = { "max_loss", S_TEST },
	[K_MAX_P99] = { "max_p99", S_TEST },
	[K_TRIAL] = { "trial", S_TEST },
	[K_RESOLUTION] = { "resolution", S_TEST },
	[K_MAX_TRIALS] = { "max_trials", S_TEST },
	[K_INTERFACE] = { "interface", S_TX | S_RX },
	[K_NETNS] = { "netns", S_TX | S_RX },
	[K_ENGINE] = { "engine", S_TX | S_RX },
	[K_XDP_MODE] = { "xdp_mode", S_TX | S_RX },
	[K_WORKERS] = { "workers", S_RX },
	[K_QUEUES] = { "queues", S_TX | S_STR },
	[K_CPUS] = { "cpus", S_TX | S_STR },
	[K_BATCH] = { "batch", S_TX },
	[K_SIZE] = { "size", S_TX | S_STR },
	[K_SIZES] = { "sizes", S_TX },
	[K_RATE] = { "rate", S_TX },
	[K_RATES] = { "rates", S_TX },
	[K_FLOWS] = { "flows", S_TX | S_STR },
	[K_SHARE] = { "share", S_STR },
	[K_SRC_IP] = { "src_ip", S_TX | S_STR },
	[K_DST_IP] = { "dst_ip", S_TX | S_STR },
	[K_SRC_MAC] = { "src_mac", S_TX | S_STR },
	[K_DST_MAC] = { "dst_mac", S_TX | S_STR },
	[K_SRC_PORT] = { "src_port", S_TX | S_STR },
	[K_DST_PORT] = { "dst_port", S_TX },
	[K_PCAP] = { "pcap", S_TX | S_RX },
	[K_PCAP_EVERY] = { "pcap_every", S_TX | S_RX },
	[K_SNAPLEN] = { "snaplen", S_RX },
};

/* In the order of the enums in opts.h and config.h. */
static const char *const modes[] = { "sweep", "throughput", NULL };
static const char *const tx_engines[] = { "auto", "afxdp", "packet", "live", NULL };
static const char *const xsk_modes[] = { "auto", "zerocopy", "copy", NULL };
static const char *const rx_engines[] = { "auto", "xdp", "packet", NULL };
static const char *const xdp_modes[] = { "auto", "native", "generic", NULL };

/* Where a section starts and where each of its keys was given (0: not given). */
struct sec {
	int line;
	int kline[K_NKEYS];
};

/* What [tx] or one [stream NAME] says about a stream, before [tx] fills the gaps. */
struct sdef {
	struct sec sec;
	char title[LR_CFG_NAME_MAX + 10];	/* "[tx]", "[stream NAME]": message prefix */
	char name[LR_CFG_NAME_MAX];
	struct in6_addr src_ip, dst_ip;
	int src_family, dst_family;
	uint8_t src_mac[6], dst_mac[6];
	uint16_t src_port;
	unsigned int size, flows;
	uint64_t share;	/* in 1e-9 percent */
	unsigned int nqueues, ncpus;
	unsigned int queues[LR_MAX_WORKERS], cpus[LR_MAX_WORKERS];
};

struct parser {
	const char *path;
	const char *text;
	size_t len, pos;
	int line;
	char raw[CFG_LINE_MAX + 1];	/* the current line as handed to inih, before inih cuts it up */
	struct lr_cfg *cfg;
	char *err;
	size_t errlen;
	int err_line;	/* of the first error; 0 while there is none */
	/* the section the reader saw last */
	enum sec_kind kind;
	struct sec *cur;
	struct sdef *cur_def;
	const char *cur_title;
	struct sec test, rx;
	struct sdef tx;
	unsigned int ndefs;
	struct sdef defs[LR_CFG_MAX_STREAMS];
};

/* Records the first error only: "PATH:LINE: message". Returns -EINVAL. */
__attribute__((format(printf, 3, 4))) static int fail(struct parser *p, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err_line)
		return -EINVAL;
	p->err_line = line > 0 ? line : 1;
	if (!p->err || !p->errlen)
		return -EINVAL;
	n = snprintf(p->err, p->errlen, "%s:%d: ", p->path, p->err_line);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Line of key @id in @s, else of the section header. */
static int key_line(const struct sec *s, enum key_id id)
{
	return s->kline[id] ? s->kline[id] : s->line;
}

/* ---- values ---------------------------------------------------------- */

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
static int squeeze(const char *s, char *out, size_t len)
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

static int parse_idlist(const char *s, unsigned int *out, unsigned int max)
{
	char buf[CFG_LINE_MAX + 1];

	if (squeeze(s, buf, sizeof(buf)))
		return -EINVAL;
	return lr_parse_list(buf, QUEUE_LIMIT, out, max);
}

/*
 * Splits "a, b,c" at commas into @n trimmed items, copied into @buf. 0, -E2BIG
 * past @max items, or -EINVAL for an empty item.
 */
static int split_items(const char *s, char *buf, size_t len, char **items, unsigned int max, unsigned int *n)
{
	char *p, *tok;

	if (strlen(s) >= len)
		return -EINVAL;
	strcpy(buf, s);
	*n = 0;
	/* strtok would merge ",," into one separator; an empty item is an error */
	for (p = buf;; p = tok + 1) {
		char *end;

		tok = strchr(p, ',');
		if (tok)
			*tok = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (*n >= max)
			return -E2BIG;
		items[(*n)++] = p;
		if (!*p)
			return -EINVAL;
		if (!tok)
			break;
	}
	return 0;
}

static int parse_ip(const char *s, struct in6_addr *out, int *family)
{
	int f = strchr(s, ':') ? AF_INET6 : AF_INET;

	memset(out, 0, sizeof(*out));	/* IPv4 lands in the first 4 bytes, as frame.h wants */
	if (inet_pton(f, s, out) != 1)
		return -EINVAL;
	*family = f;
	return 0;
}

static const char *family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

/* What the kernel's dev_valid_name() takes. */
static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return !strpbrk(s, "/: \t");
}

/* A name under /run/netns, pid:PID, container:NAME or an absolute path, as lr_netns_enter() takes them. */
static bool valid_netns(const char *s)
{
	struct lr_container_spec spec;
	char err[160];
	uint64_t pid;

	if (lr_container_is_spec(s))
		return !lr_container_spec_parse(s, false, &spec, err, sizeof(err));
	if (!strncmp(s, "pid:", 4))
		return s[4] && strspn(s + 4, "0123456789") == strlen(s + 4) &&
		       !lr_parse_count(s + 4, 1, INT32_MAX, &pid);
	if (s[0] == '/')
		return true;
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static bool valid_stream_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= LR_CFG_NAME_MAX)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* ---- keys ------------------------------------------------------------ */

static int set_choice(struct parser *p, const char *key, const char *v, const char *const *names, int *out)
{
	char opt[LR_CFG_NAME_MAX + 32], msg[256];

	snprintf(opt, sizeof(opt), "%s %s", p->cur_title, key);
	if (lr_cli_choice(opt, v, names, out, msg, sizeof(msg)))
		return fail(p, p->line, "%s", msg);
	return 0;
}

static int set_duration(struct parser *p, const char *key, const char *v, bool zero_ok, uint64_t *out)
{
	uint64_t ns;

	if (lr_parse_duration(v, &ns) || (!ns && !zero_ok) || ns > DURATION_MAX)
		return fail(p, p->line, "%s %s: '%s' is not a duration (%s; at most 24h)", p->cur_title, key, v,
			    zero_ok ? "0, 200ms, 2s" : "500ms, 2s, 1m; more than 0");
	*out = ns;
	return 0;
}

static int set_count(struct parser *p, const char *key, const char *v, const char *what, uint64_t min,
		     uint64_t max, unsigned int *out)
{
	uint64_t n;

	if (lr_parse_count(v, min, max, &n))
		return fail(p, p->line, "%s %s: '%s' is not %s in %llu..%llu", p->cur_title, key, v, what,
			    (unsigned long long)min, (unsigned long long)max);
	*out = (unsigned int)n;
	return 0;
}

static int set_size(struct parser *p, const char *key, const char *v, unsigned int *out)
{
	uint64_t n;

	if (lr_parse_count(v, LR_MIN_FRAME, LR_MAX_FRAME, &n))
		return fail(p, p->line, "%s %s: '%s' is not a frame size in %u..%u bytes (Ethernet, with FCS)",
			    p->cur_title, key, v, LR_MIN_FRAME, LR_MAX_FRAME);
	*out = (unsigned int)n;
	return 0;
}

static int set_port(struct parser *p, const char *key, const char *v, uint16_t *out)
{
	uint64_t n;

	if (lr_parse_count(v, 1, 65535, &n))
		return fail(p, p->line, "%s %s: '%s' is not a port (1..65535)", p->cur_title, key, v);
	*out = (uint16_t)n;
	return 0;
}

static int set_mac(struct parser *p, const char *key, const char *v, uint8_t mac[6])
{
	char opt[LR_CFG_NAME_MAX + 32], msg[256];

	snprintf(opt, sizeof(opt), "%s %s", p->cur_title, key);
	if (lr_cli_mac(opt, v, mac, msg, sizeof(msg)))
		return fail(p, p->line, "%s", msg);
	return 0;
}

static int set_ip(struct parser *p, const char *key, const char *v, struct in6_addr *a, int *family)
{
	if (parse_ip(v, a, family))
		return fail(p, p->line, "%s %s: '%s' is not an IPv4 or IPv6 address", p->cur_title, key, v);
	return 0;
}

/* Queue or CPU numbers; @unique: no number twice (a queue takes one worker). */
static int set_idlist(struct parser *p, const char *key, const char *v, const char *what, bool unique,
		      unsigned int *out, unsigned int *n)
{
	unsigned int i, j;
	int ret;

	ret = parse_idlist(v, out, LR_MAX_WORKERS);
	if (ret <= 0)
		return fail(p, p->line, "%s %s: '%s' is not a %s list (0-3, 0,2; at most %d, each below %d)",
			    p->cur_title, key, v, what, LR_MAX_WORKERS, QUEUE_LIMIT);
	*n = (unsigned int)ret;
	if (!unique)
		return 0;
	for (i = 0; i < *n; i++)
		for (j = 0; j < i; j++)
			if (out[i] == out[j])
				return fail(p, p->line, "%s %s: queue %u is listed twice", p->cur_title, key,
					    out[i]);
	return 0;
}

static int set_sizes(struct parser *p, const char *key, const char *v)
{
	char buf[CFG_LINE_MAX + 1], *items[LR_CFG_MAX_SIZES + 1];
	unsigned int i, n;
	int ret;

	ret = split_items(v, buf, sizeof(buf), items, LR_CFG_MAX_SIZES, &n);
	if (ret == -E2BIG)
		return fail(p, p->line, "%s %s: more than %d sizes", p->cur_title, key, LR_CFG_MAX_SIZES);
	if (ret)
		return fail(p, p->line, "%s %s: '%s' has an empty item; give sizes as 64, 512, 1518", p->cur_title,
			    key, v);
	for (i = 0; i < n; i++) {
		ret = set_size(p, key, items[i], &p->cfg->sizes[i]);
		if (ret)
			return ret;
	}
	p->cfg->nsizes = n;
	return 0;
}

static int set_rates(struct parser *p, const char *key, const char *v)
{
	char buf[CFG_LINE_MAX + 1], *items[LR_CFG_MAX_RATES + 1];
	unsigned int i, n;
	int ret;

	ret = split_items(v, buf, sizeof(buf), items, LR_CFG_MAX_RATES, &n);
	if (ret == -E2BIG)
		return fail(p, p->line, "%s %s: more than %d rates", p->cur_title, key, LR_CFG_MAX_RATES);
	if (ret)
		return fail(p, p->line, "%s %s: '%s' has an empty item; give rates as 20k, 50k, max", p->cur_title,
			    key, v);
	for (i = 0; i < n; i++) {
		ret = lr_parse_rate(items[i], &p->cfg->rates[i]);
		if (ret == -ERANGE)
			return fail(p, p->line, "%s %s: '%s' is above the limit of 1 Gpps (1 Tbit/s as a bit rate)",
				    p->cur_title, key, items[i]);
		if (ret)
			return fail(p, p->line, "%s %s: '%s' is not a rate (max, 100k, 1Mpps, 2.5Gbit)", p->cur_title,
				    key, items[i]);
	}
	p->cfg->nrates = n;
	return 0;
}

static int set_resolution(struct parser *p, const char *v)
{
	struct lr_cfg *c = p->cfg;
	size_t n = strlen(v);
	struct lr_rate r;
	uint64_t pct;

	if (n && v[n - 1] == '%') {
		if (parse_percent(v, &pct) || !pct || pct >= PERCENT_NANO)
			goto bad;
		c->resolution = (double)pct / (double)PERCENT_NANO;
		c->resolution_pps = 0;
		return 0;
	}
	if (lr_parse_rate(v, &r) || r.kind != LR_RATE_PPS)
		goto bad;
	c->resolution = 0;
	c->resolution_pps = r.value;
	return 0;
bad:
	return fail(p, p->line,
		    "[test] resolution: '%s' is neither a percentage of the rate (1%%, 0.5%%; below 100%%) "
		    "nor a step in packets per second (1000, 5k)", v);
}

/* Keys that several sections (or [tx] and [stream]) take. */
static int set_stream_key(struct parser *p, struct sdef *d, enum key_id id, const char *key, const char *v)
{
	switch (id) {
	case K_SRC_IP:
		return set_ip(p, key, v, &d->src_ip, &d->src_family);
	case K_DST_IP:
		return set_ip(p, key, v, &d->dst_ip, &d->dst_family);
	case K_SRC_MAC:
		return set_mac(p, key, v, d->src_mac);
	case K_DST_MAC:
		return set_mac(p, key, v, d->dst_mac);
	case K_SRC_PORT:
		return set_port(p, key, v, &d->src_port);
	case K_FLOWS:
		return set_count(p, key, v, "a flow count", 1, LR_MAX_FLOWS, &d->flows);
	case K_QUEUES:
		return set_idlist(p, key, v, "queue", true, d->queues, &d->nqueues);
	case K_CPUS:
		return set_idlist(p, key, v, "CPU", false, d->cpus, &d->ncpus);
	case K_SIZE:
		if (p->kind == SEC_TX)
			return set_sizes(p, key, v);
		return set_size(p, key, v, &d->size);
	case K_SHARE:
		if (parse_percent(v, &d->share) || !d->share)
			return fail(p, p->line,
				    "%s share: '%s' is not a share of the rate in percent (70%%, 12.5; more than 0, "
				    "at most 100)", p->cur_title, v);
		return 0;
	default:
		break;
	}
	return fail(p, p->line, "internal: %s %s has no parser", p->cur_title, key);
}

static int set_key(struct parser *p, enum key_id id, const char *key, const char *v)
{
	struct lr_cfg *c = p->cfg;
	uint64_t u;
	int choice, ret;

	switch (id) {
	case K_NAME:
		if (strlen(v) >= sizeof(c->name))
			return fail(p, p->line, "[test] name: '%s' is too long (at most %zu characters)", v,
				    sizeof(c->name) - 1);
		strcpy(c->name, v);
		return 0;
	case K_MODE:
		ret = set_choice(p, key, v, modes, &choice);
		if (!ret)
			c->mode = choice;
		return ret;
	case K_DURATION:
		return set_duration(p, key, v, false, &c->duration_ns);
	case K_WARMUP:
		return set_duration(p, key, v, true, &c->warmup_ns);
	case K_TRIAL:
		return set_duration(p, key, v, false, &c->trial_ns);
	case K_MAX_P99:
		return set_duration(p, key, v, false, &c->max_p99_ns);
	case K_REPEAT:
		return set_count(p, key, v, "a repeat count", 1, 100, &c->repeat);
	case K_MAX_TRIALS:
		return set_count(p, key, v, "a trial count", 1, 64, &c->max_trials);
	case K_MAX_LOSS:
		if (parse_percent(v, &u))
			return fail(p, p->line, "[test] max_loss: '%s' is not a loss percentage in 0..100 (0, 0.1%%, 1)",
				    v);
		c->max_loss = (double)u / (double)PERCENT_NANO;
		return 0;
	case K_RESOLUTION:
		return set_resolution(p, v);
	case K_INTERFACE:
		if (!valid_ifname(v))
			return fail(p, p->line,
				    "%s interface: '%s' is not an interface name (1..%d characters, no '/', ':' or "
				    "blanks)", p->cur_title, v, IF_NAMESIZE - 1);
		strcpy(p->kind == SEC_TX ? c->tx_ifname : c->rx_ifname, v);
		return 0;
	case K_NETNS:
		if (!valid_netns(v))
			return fail(p, p->line,
				    "%s netns: '%s' is not a network namespace (a name from 'ip netns', pid:PID, "
				    "container:NAME or an absolute path)", p->cur_title, v);
		strcpy(p->kind == SEC_TX ? c->tx_netns : c->rx_netns, v);	/* a line is far shorter */
		return 0;
	case K_ENGINE:
		ret = set_choice(p, key, v, p->kind == SEC_TX ? tx_engines : rx_engines, &choice);
		if (ret)
			return ret;
		if (p->kind == SEC_TX)
			c->tx_engine = choice;
		else
			c->rx_engine = choice;
		return 0;
	case K_XDP_MODE:
		ret = set_choice(p, key, v, p->kind == SEC_TX ? xsk_modes : xdp_modes, &choice);
		if (ret)
			return ret;
		if (p->kind == SEC_TX)
			c->xsk_mode = choice;
		else
			c->xdp_mode = choice;
		return 0;
	case K_WORKERS:
		return set_count(p, key, v, "a receive thread count", 1, 64, &c->rx_workers);
	case K_BATCH:
		return set_count(p, key, v, "a batch size", 1, 512, &c->batch);
	case K_SIZES:
		return set_sizes(p, key, v);
	case K_RATE:
	case K_RATES:
		return set_rates(p, key, v);
	case K_DST_PORT:
		return set_port(p, key, v, &c->dst_port);
	case K_PCAP:
		if (strlen(v) >= sizeof(c->tx_pcap))
			return fail(p, p->line, "%s pcap: the path is too long", p->cur_title);
		strcpy(p->kind == SEC_TX ? c->tx_pcap : c->rx_pcap, v);
		return 0;
	case K_PCAP_EVERY:
		return set_count(p, key, v, "a sampling interval (1 = every frame)", 1, UINT32_MAX,
				 p->kind == SEC_TX ? &c->tx_pcap_every : &c->rx_pcap_every);
	case K_SNAPLEN:
		return set_count(p, key, v, "a snap length", 64, 9018, &c->rx_snaplen);
	default:
		return set_stream_key(p, p->cur_def, id, key, v);
	}
}

/* The two spellings of one list in [tx]: either is fine, both is a conflict. */
static int check_alias(struct parser *p, enum key_id id)
{
	static const enum key_id pairs[][2] = { { K_SIZE, K_SIZES }, { K_RATE, K_RATES } };
	unsigned int i;

	if (p->kind != SEC_TX)
		return 0;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		enum key_id other;

		if (id == pairs[i][0])
			other = pairs[i][1];
		else if (id == pairs[i][1])
			other = pairs[i][0];
		else
			continue;
		if (p->cur->kline[other])
			return fail(p, p->line, "[tx] %s: conflicts with '%s' at line %d; give one of them",
				    keys[id].name, keys[other].name, p->cur->kline[other]);
	}
	return 0;
}

static int unknown_key(struct parser *p, const char *name)
{
	char list[512];
	size_t off = 0;
	unsigned int i;

	list[0] = '\0';
	for (i = 0; i < K_NKEYS && off < sizeof(list); i++)
		if (keys[i].secs & (1u << p->kind))
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", off ? ", " : "",
						keys[i].name);
	return fail(p, p->line, "%s unknown key '%s' (keys are case-sensitive; %s takes %s)", p->cur_title, name,
		    p->cur_title, list);
}

/* inih calls this for each "key = value"; the reader has just read that line. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	enum key_id id;

	(void)section;	/* inih cuts section names at 50 bytes; the reader keeps its own */
	if (p->err_line)
		return 0;
	/* inih also splits at ':' (configparser's "key: value"); we take '=' only */
	if (p->raw[strcspn(p->raw, "=:")] != '=' || !*name) {
		fail(p, p->line, "syntax error: expected 'key = value' or '[section]'");
		return 0;
	}
	if (p->kind == SEC_NONE) {
		fail(p, p->line, "'%s' is outside any section; put it under [test], [tx], [rx] or [stream NAME]",
		     name);
		return 0;
	}
	for (id = 0; id < K_NKEYS; id++)
		if ((keys[id].secs & (1u << p->kind)) && !strcmp(keys[id].name, name))
			break;
	if (id == K_NKEYS) {
		unknown_key(p, name);
		return 0;
	}
	if (p->cur->kline[id]) {
		fail(p, p->line, "%s %s: given twice (first at line %d)", p->cur_title, name, p->cur->kline[id]);
		return 0;
	}
	p->cur->kline[id] = p->line;
	if (check_alias(p, id))
		return 0;
	if (!*value) {
		fail(p, p->line, "%s %s: empty value; give a value or drop the line (defaults are in "
		     "configs/reference.ini)", p->cur_title, name);
		return 0;
	}
	return set_key(p, id, name, value) ? 0 : 1;
}

/* ---- lines and sections ---------------------------------------------- */

/* Length of a valid UTF-8 sequence at @s (at most @n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

/* Text only: tabs, printable ASCII and UTF-8. */
static int check_bytes(struct parser *p, const char *line, size_t n)
{
	const unsigned char *s = (const unsigned char *)line;
	size_t i = 0;

	while (i < n) {
		size_t len;

		if (s[i] == '\0')
			return fail(p, p->line, "NUL byte at column %zu; this is not a text file", i + 1);
		if ((s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			return fail(p, p->line, "control character 0x%02x at column %zu; only text and tabs are allowed",
				    s[i], i + 1);
		len = utf8_len(s + i, n - i);
		if (!len)
			return fail(p, p->line, "byte 0x%02x at column %zu is not UTF-8 text (a binary file?)", s[i],
				    i + 1);
		i += len;
	}
	return 0;
}

static int enter_section(struct parser *p, enum sec_kind kind, struct sec *s, const char *title)
{
	if (s->line)
		return fail(p, p->line, "section %s given twice (first at line %d)", title, s->line);
	s->line = p->line;
	p->kind = kind;
	p->cur = s;
	p->cur_title = title;
	return 0;
}

static int new_stream(struct parser *p, const char *name)
{
	struct sdef *d;
	unsigned int i;

	if (!valid_stream_name(name))
		return fail(p, p->line,
			    "stream name '%s' is not valid: 1..%d letters, digits, '_' or '-' ([stream NAME])", name,
			    LR_CFG_NAME_MAX - 1);
	for (i = 0; i < p->ndefs; i++)
		if (!strcmp(p->defs[i].name, name))
			return fail(p, p->line, "section [stream %s] given twice (first at line %d)", name,
				    p->defs[i].sec.line);
	if (p->ndefs >= LR_CFG_MAX_STREAMS)
		return fail(p, p->line, "[stream %s]: more than %d streams", name, LR_CFG_MAX_STREAMS);
	d = &p->defs[p->ndefs++];
	strcpy(d->name, name);
	snprintf(d->title, sizeof(d->title), "[stream %s]", name);
	p->cur_def = d;
	return enter_section(p, SEC_STREAM, &d->sec, d->title);
}

/* "[name]" with an optional "; comment" after it; @s starts at '['. */
static int section_line(struct parser *p, char *s)
{
	char *close = strchr(s, ']'), *name, *end, *rest;

	if (!close)
		return fail(p, p->line, "syntax error: section header '%s' has no closing ']'", s);
	rest = close + 1 + strspn(close + 1, " \t");
	if (*rest && *rest != ';' && *rest != '#')
		return fail(p, p->line, "syntax error: '%s' after the section header; only a comment may follow ']'",
			    rest);
	*close = '\0';
	name = s + 1 + strspn(s + 1, " \t");
	end = name + strlen(name);
	while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	if (!strcmp(name, "test"))
		return enter_section(p, SEC_TEST, &p->test, "[test]");
	if (!strcmp(name, "tx")) {
		p->cur_def = &p->tx;
		return enter_section(p, SEC_TX, &p->tx.sec, "[tx]");
	}
	if (!strcmp(name, "rx"))
		return enter_section(p, SEC_RX, &p->rx, "[rx]");
	if (!strncmp(name, "stream", 6) && (!name[6] || name[6] == ' ' || name[6] == '\t'))
		return new_stream(p, name + 6 + strspn(name + 6, " \t"));
	return fail(p, p->line, "unknown section [%s]; sections are [test], [tx], [rx] and [stream NAME]", name);
}

/*
 * inih's fgets: one line per call, so p->line is the line inih is on. We
 * check the bytes, drop the BOM, the line ending and the indentation (an
 * indented line would otherwise continue the previous value), and follow
 * section headers here. NULL ends the parse at the first error.
 */
static char *read_line(char *buf, int num, void *stream)
{
	struct parser *p = stream;
	const char *s, *nl;
	size_t n, rest;

	if (p->err_line || p->pos >= p->len)
		return NULL;
	s = p->text + p->pos;
	rest = p->len - p->pos;
	nl = memchr(s, '\n', rest);
	n = nl ? (size_t)(nl - s) : rest;
	p->pos += nl ? n + 1 : n;
	p->line++;
	if (p->line == 1 && n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) {
		s += 3;
		n -= 3;
	}
	if (n && s[n - 1] == '\r')
		n--;
	if (n > CFG_LINE_MAX || (int)n >= num) {
		fail(p, p->line, "line too long (%zu characters; at most %d)", n,
		     num - 1 < CFG_LINE_MAX ? num - 1 : CFG_LINE_MAX);
		return NULL;
	}
	if (check_bytes(p, s, n))
		return NULL;
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	memcpy(p->raw, s, n);
	p->raw[n] = '\0';
	if (p->raw[0] == '[') {
		char hdr[CFG_LINE_MAX + 1];

		memcpy(hdr, p->raw, n + 1);
		if (section_line(p, hdr))
			return NULL;
	}
	memcpy(buf, p->raw, n + 1);
	return buf;
}

/* ---- the whole file ---------------------------------------------------- */

static void set_defaults(struct parser *p, const char *path)
{
	struct lr_cfg *c = p->cfg;
	const char *base = strrchr(path, '/');
	size_t n;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path);
	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 4 && !strcmp(base + n - 4, ".ini"))
		n -= 4;
	if (n >= sizeof(c->name))
		n = sizeof(c->name) - 1;
	memcpy(c->name, base, n);
	c->name[n] = '\0';
	if (!c->name[0])
		strcpy(c->name, "linerate");
	c->mode = LR_RUN_SWEEP;
	c->duration_ns = 2 * NANO;
	c->warmup_ns = NANO / 2;
	c->repeat = 1;
	c->resolution = 0.01;
	c->max_trials = 16;
	c->tx_engine = LR_ENGINE_AUTO;
	c->xsk_mode = LR_XSK_AUTO;
	c->batch = 64;
	c->dst_port = LR_DEFAULT_DST_PORT;
	c->nsizes = 1;
	c->sizes[0] = LR_MIN_FRAME;
	c->nrates = 1;
	c->rates[0].kind = LR_RATE_MAX;
	c->rx_engine = LR_RX_ENGINE_AUTO;
	c->xdp_mode = LR_XDP_AUTO;
	c->rx_workers = 1;

	strcpy(p->tx.title, "[tx]");
	p->tx.src_port = LR_DEFAULT_SRC_PORT;
	p->tx.flows = 1;
	p->tx.nqueues = 1;
	p->tx.queues[0] = 0;
}

static const char *addr_str(const struct in6_addr *a, int family, char *buf, size_t len)
{
	if (!inet_ntop(family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * One stream: [tx] alone, or a [stream] with [tx]'s values where it has
 * none of its own. Checks what send checks for one command line.
 */
static int resolve_stream(struct parser *p, const struct sdef *d, struct lr_cfg_stream *s)
{
	const struct sdef *tx = &p->tx;
	const struct sec *sec = &d->sec;
	bool implicit = d == tx;
	const struct sdef *src = sec->kline[K_SRC_IP] ? d : tx;
	const struct sdef *dst = sec->kline[K_DST_IP] ? d : tx;
	char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];
	unsigned int i, min;

	memset(s, 0, sizeof(*s));
	strcpy(s->name, implicit ? "" : d->name);
	s->line = sec->line;

	if (!dst->sec.kline[K_DST_IP]) {
		if (implicit)
			return fail(p, sec->line, "[tx] missing key 'dst_ip' (the receiver's address)");
		return fail(p, sec->line, "%s missing key 'dst_ip', and [tx] gives none", d->title);
	}
	s->dst_ip = dst->dst_ip;
	s->family = dst->dst_family;
	if (src->sec.kline[K_SRC_IP]) {
		s->have_src_ip = true;
		s->src_ip = src->src_ip;
		if (src->src_family != s->family)
			return fail(p, key_line(sec, sec->kline[K_SRC_IP] ? K_SRC_IP : K_DST_IP),
				    "%s src_ip: '%s'%s is %s but dst_ip '%s'%s is %s; use one address family",
				    d->title, addr_str(&src->src_ip, src->src_family, a1, sizeof(a1)),
				    src == d ? "" : " (from [tx])", family_name(src->src_family),
				    addr_str(&dst->dst_ip, dst->dst_family, a2, sizeof(a2)),
				    dst == d ? "" : " (from [tx])", family_name(dst->dst_family));
	}
	if (sec->kline[K_SRC_MAC] || tx->sec.kline[K_SRC_MAC]) {
		s->have_src_mac = true;
		memcpy(s->src_mac, (sec->kline[K_SRC_MAC] ? d : tx)->src_mac, 6);
	}
	if (sec->kline[K_DST_MAC] || tx->sec.kline[K_DST_MAC]) {
		s->have_dst_mac = true;
		memcpy(s->dst_mac, (sec->kline[K_DST_MAC] ? d : tx)->dst_mac, 6);
	}
	s->flows = (sec->kline[K_FLOWS] ? d : tx)->flows;
	if (sec->kline[K_SRC_PORT] || tx->sec.kline[K_SRC_PORT])
		s->src_port = (sec->kline[K_SRC_PORT] ? d : tx)->src_port;
	else
		s->src_port = lr_src_port_base(s->flows);

	/*
	 * Queues and CPUs come as a pair: a stream with queues of its own does
	 * not take [tx]'s CPUs, which belong to [tx]'s queues.
	 */
	if (sec->kline[K_QUEUES] || implicit) {
		s->nqueues = d->nqueues;
		memcpy(s->queues, d->queues, sizeof(s->queues));
	} else {
		s->nqueues = tx->nqueues;
		memcpy(s->queues, tx->queues, sizeof(s->queues));
	}
	if (sec->kline[K_CPUS] || (!sec->kline[K_QUEUES] && tx->sec.kline[K_CPUS])) {
		const struct sdef *cd = sec->kline[K_CPUS] ? d : tx;

		if (cd->ncpus != s->nqueues)
			return fail(p, key_line(sec, K_CPUS),
				    "%s cpus: %u CPU%s%s for %u queue%s%s; give one CPU per queue", d->title, cd->ncpus,
				    cd->ncpus == 1 ? "" : "s", cd == d ? "" : " (from [tx])", s->nqueues,
				    s->nqueues == 1 ? "" : "s", sec->kline[K_QUEUES] || implicit ? "" : " (from [tx])");
		s->cpus_set = true;
		memcpy(s->cpus, cd->cpus, sizeof(s->cpus));
	}

	min = lr_frame_min_size(s->family);
	if (implicit) {
		s->size = 0;
		s->share = 1.0;
		for (i = 0; i < p->cfg->nsizes; i++)
			if (p->cfg->sizes[i] < min)
				return fail(p, key_line(sec, sec->kline[K_SIZES] ? K_SIZES : K_SIZE),
					    "[tx] %s: %u bytes%s cannot carry the probe over %s; the minimum is %u",
					    sec->kline[K_SIZES] ? "sizes" : "size", p->cfg->sizes[i],
					    sec->kline[K_SIZES] || sec->kline[K_SIZE] ? "" : " (the default)",
					    family_name(s->family), min);
	} else {
		if (!sec->kline[K_SIZE])
			return fail(p, sec->line, "%s missing key 'size' (its frame size, %u..%u)", d->title, min,
				    LR_MAX_FRAME);
		s->size = d->size;
		if (s->size < min)
			return fail(p, key_line(sec, K_SIZE),
				    "%s size: %u bytes cannot carry the probe over %s; the minimum is %u", d->title,
				    s->size, family_name(s->family), min);
	}
	if (s->flows < s->nqueues)
		return fail(p, key_line(sec, sec->kline[K_FLOWS] ? K_FLOWS : K_QUEUES),
			    "%s flows: %u flow%s for %u queues; each queue's worker needs a flow of its own (flows >= %u)",
			    d->title, s->flows, s->flows == 1 ? "" : "s", s->nqueues, s->nqueues);
	if ((uint32_t)s->src_port + s->flows - 1 > 65535)
		return fail(p, key_line(sec, sec->kline[K_SRC_PORT] ? K_SRC_PORT : K_FLOWS),
			    "%s src_port: %u + flows %u runs past port 65535", d->title, s->src_port, s->flows);
	return 0;
}

static int resolve_streams(struct parser *p)
{
	struct lr_cfg *c = p->cfg;
	const struct sdef *last;
	uint64_t total_share = 0;
	uint32_t total_flows = 0;
	unsigned int i, j, q, nshares = 0;
	int ret;

	if (!p->ndefs) {
		c->nstreams = 1;
		return resolve_stream(p, &p->tx, &c->streams[0]);
	}
	last = &p->defs[p->ndefs - 1];
	for (i = 0; i < p->ndefs; i++) {
		ret = resolve_stream(p, &p->defs[i], &c->streams[i]);
		if (ret)
			return ret;
		total_flows += c->streams[i].flows;
		if (p->defs[i].sec.kline[K_SHARE]) {
			nshares++;
			total_share += p->defs[i].share;
		}
	}
	c->nstreams = p->ndefs;
	if (total_flows > LR_MAX_FLOWS)
		return fail(p, last->sec.line,
			    "%s flows: the streams add up to %u flows; at most %u (flow ids are shared by all streams)",
			    last->title, total_flows, LR_MAX_FLOWS);

	/* AF_XDP binds one socket per queue; AF_PACKET does not bind to a queue at all. */
	if (c->tx_engine == LR_ENGINE_AFXDP) {
		for (i = 0; i < c->nstreams; i++)
			for (j = 0; j < i; j++)
				for (q = 0; q < c->streams[i].nqueues; q++) {
					const struct sdef *d = &p->defs[i];
					unsigned int k;

					for (k = 0; k < c->streams[j].nqueues; k++)
						if (c->streams[i].queues[q] == c->streams[j].queues[k])
							return fail(p, key_line(&d->sec, K_QUEUES),
								    "%s queues: queue %u%s is also used by %s; with [tx] engine = afxdp "
								    "each queue takes one stream (use other queues or engine = packet)",
								    d->title, c->streams[i].queues[q],
								    d->sec.kline[K_QUEUES] ? "" : " (from [tx])",
								    p->defs[j].title);
				}
	}

	/* All shares or none (equal shares); normalised so they sum to exactly 1. */
	if (nshares && nshares != p->ndefs) {
		for (i = 0; i < p->ndefs; i++)
			if (!p->defs[i].sec.kline[K_SHARE])
				return fail(p, p->defs[i].sec.line,
					    "%s missing key 'share': give every stream a share, or none for equal shares",
					    p->defs[i].title);
	}
	if (nshares) {
		uint64_t diff = total_share > PERCENT_NANO ? total_share - PERCENT_NANO : PERCENT_NANO - total_share;

		if (diff > PERCENT_NANO / 10000)
			return fail(p, last->sec.line, "%s share: the shares add up to %.9g%%; they must add up to 100%%",
				    last->title, (double)total_share / (double)NANO);
		for (i = 0; i < p->ndefs; i++)
			c->streams[i].share = (double)p->defs[i].share / (double)total_share;
	} else {
		for (i = 0; i < p->ndefs; i++)
			c->streams[i].share = 1.0 / p->ndefs;
	}
	return 0;
}

static int finish(struct parser *p)
{
	struct lr_cfg *c = p->cfg;
	const struct sec *tx = &p->tx.sec;
	int ret;

	if (!tx->line)
		return fail(p, 1, "missing section [tx] (interface = ..., dst_ip = ...; see configs/reference.ini)");
	if (!p->rx.line)
		return fail(p, 1, "missing section [rx] (interface = ...; see configs/reference.ini)");
	if (!c->tx_ifname[0])
		return fail(p, tx->line, "[tx] missing key 'interface' (the interface to send on)");
	if (!c->rx_ifname[0])
		return fail(p, p->rx.line, "[rx] missing key 'interface' (the interface to count on)");
	if (p->tx.sec.kline[K_SRC_IP] && p->tx.sec.kline[K_DST_IP] && p->tx.src_family != p->tx.dst_family) {
		char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];

		return fail(p, tx->kline[K_SRC_IP] > tx->kline[K_DST_IP] ? tx->kline[K_SRC_IP] : tx->kline[K_DST_IP],
			    "[tx] src_ip: '%s' is %s but dst_ip '%s' is %s; use one address family",
			    addr_str(&p->tx.src_ip, p->tx.src_family, a1, sizeof(a1)), family_name(p->tx.src_family),
			    addr_str(&p->tx.dst_ip, p->tx.dst_family, a2, sizeof(a2)), family_name(p->tx.dst_family));
	}
	/* options of one receive engine given with the other engine: refused, not silently ignored */
	if (c->rx_engine == LR_RX_ENGINE_XDP && p->rx.kline[K_WORKERS])
		return fail(p, p->rx.kline[K_WORKERS],
			    "[rx] workers: AF_PACKET receive threads, but engine = xdp has none (XDP counts on every "
			    "CPU that receives); remove one of the two");
	if (c->rx_engine == LR_RX_ENGINE_PACKET && p->rx.kline[K_XDP_MODE])
		return fail(p, p->rx.kline[K_XDP_MODE],
			    "[rx] xdp_mode: an XDP attach mode, but engine = packet uses no XDP; remove one of the two");
	if (c->mode == LR_RUN_THROUGHPUT && c->nrates > 1) {
		enum key_id k = tx->kline[K_RATES] ? K_RATES : K_RATE;

		return fail(p, key_line(tx, k),
			    "[tx] %s: conflicts with [test] mode = throughput, which searches below one upper bound; "
			    "give one rate (max, 1Mpps)", keys[k].name);
	}
	if (p->ndefs && c->nsizes > 1) {
		enum key_id k = tx->kline[K_SIZES] ? K_SIZES : K_SIZE;

		return fail(p, key_line(tx, k),
			    "[tx] %s: conflicts with the [stream] sections, which give each stream its own size; "
			    "give at most one size here (it is ignored)", keys[k].name);
	}
	ret = resolve_streams(p);
	if (ret)
		return ret;
	if (p->ndefs) {
		double mean = 0;
		unsigned int i;

		/*
		 * Each stream has its own size, so steps differ in rate only. The one
		 * step size is the share-weighted mean frame size: the size that turns
		 * a bit rate into the packets per second the streams then split.
		 */
		for (i = 0; i < c->nstreams; i++)
			mean += c->streams[i].share * c->streams[i].size;
		c->nsizes = 1;
		c->sizes[0] = (unsigned int)(mean + 0.5);
	}
	if (!p->test.kline[K_TRIAL])
		c->trial_ns = c->duration_ns;
	return 0;
}

int lr_cfg_parse(const char *path, const char *text, size_t len, struct lr_cfg *cfg, char *err, size_t errlen)
{
	struct parser p;
	int ret;

	if (!path)
		path = "-";
	if (err && errlen)
		err[0] = '\0';
	memset(&p, 0, sizeof(p));
	p.path = path;
	p.text = text;
	p.len = text ? len : 0;
	p.cfg = cfg;
	p.err = err;
	p.errlen = errlen;
	set_defaults(&p, path);

	ret = ini_parse_stream(read_line, &p, on_key, &p);
	if (ret < 0)
		return fail(&p, p.line, "internal: the INI parser failed (%d)", ret);
	if (ret > 0 && (!p.err_line || ret < p.err_line)) {
		/* inih saw a line it could not read before anything we refused */
		p.err_line = 0;
		return fail(&p, ret, "syntax error: expected 'key = value' or '[section]'");
	}
	if (p.err_line)
		return -EINVAL;
	return finish(&p);
}

int lr_cfg_load(const char *path, struct lr_cfg *cfg, char *err, size_t errlen)
{
	struct stat st = { 0 };
	size_t len = 0;
	char *buf;
	int fd, ret;

	/* O_NONBLOCK: a FIFO or device is refused below, not waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		lr_msg(err, errlen, "%s: cannot open: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		lr_msg(err, errlen, "%s: cannot read: %s", path,
		       ret == -EISDIR ? strerror(EISDIR) : "not a regular file (a FIFO, device or socket)");
		close(fd);
		return ret;
	}
	/* one byte more than allowed, so a read that fills it means "too large" */
	buf = malloc(CFG_FILE_MAX + 1);
	if (!buf) {
		ret = -ENOMEM;
		lr_msg(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (len <= CFG_FILE_MAX) {
		ssize_t n = read(fd, buf + len, CFG_FILE_MAX + 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			lr_msg(err, errlen, "%s: cannot read: %s", path, strerror(-ret));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (len > CFG_FILE_MAX) {
		ret = -EFBIG;
		lr_msg(err, errlen, "%s: file too large (more than %d MiB)", path, CFG_FILE_MAX >> 20);
		goto out;
	}
	ret = lr_cfg_parse(path, buf, len, cfg, err, errlen);
out:
	free(buf);
	close(fd);
	return ret;
}
