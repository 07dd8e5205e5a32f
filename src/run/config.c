/* SPDX-License-Identifier: MIT */
/* `linerate run` INI files: libinih over our own line reader, keys from the option table, errors as PATH:LINE. */
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

#include "cmd/opt.h"
#include "linerate/probe.h"
#include "run/config.h"
#include "tx/frame.h"
#include "util/log.h"

/*
 * inih's line buffer is INI_MAX_LINE (200) bytes with the NUL. We hand it
 * lines without their line ending, so 199 characters fit; longer lines are
 * refused by us rather than silently split by inih.
 */
#define CFG_LINE_MAX	199
#define CFG_FILE_MAX	(1024 * 1024)
#define NKEYS		LR_O_COUNT_ALL

/* Where a section starts, where each of its keys was given (0: not given), and in which spelling. */
struct sec {
	int line;
	int kline[NKEYS];
	bool kalias[NKEYS];
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
	double share;	/* a fraction, as given */
	unsigned int nqueues, ncpus;
	unsigned int queues[LR_MAX_WORKERS], cpus[LR_MAX_WORKERS];
};

/* Where the value of each key of each section lands: in struct lr_cfg, or in the section's struct sdef. */
struct key_bind {
	unsigned int secs;
	bool in_def;
	struct lr_bind b;
};

#define CFG(secs, id, f, ...)	{ secs, false, { id, LR_FIELD(struct lr_cfg, f), __VA_ARGS__ } }
#define DEF(secs, id, f, ...)	{ secs, true, { id, LR_FIELD(struct sdef, f), __VA_ARGS__ } }
#define LIST(secs, id, f, n)	{ secs, false, { id, LR_ELEMS(struct lr_cfg, f), LR_AT(struct lr_cfg, n) } }

static const struct key_bind binds[] = {
	CFG(LR_SEC_TEST, LR_O_NAME, name),
	CFG(LR_SEC_TEST, LR_O_MODE, mode),
	CFG(LR_SEC_TEST, LR_O_DURATION, duration_ns),
	CFG(LR_SEC_TEST, LR_O_WARMUP, warmup_ns),
	CFG(LR_SEC_TEST, LR_O_REPEAT, repeat),
	CFG(LR_SEC_TEST, LR_O_MAX_LOSS, max_loss),
	CFG(LR_SEC_TEST, LR_O_MAX_P99, max_p99_ns),
	CFG(LR_SEC_TEST, LR_O_MAX_RTT_P99, max_rtt_p99_ns),
	CFG(LR_SEC_TEST, LR_O_TRIAL, trial_ns),
	CFG(LR_SEC_TEST, LR_O_RESOLUTION, resolution, LR_AT(struct lr_cfg, resolution_pps)),
	CFG(LR_SEC_TEST, LR_O_MAX_TRIALS, max_trials),
	CFG(LR_SEC_TEST, LR_O_COST, cost),
	CFG(LR_SEC_TEST, LR_O_SENDER_LIMITED, sender_limited_pass),
	CFG(LR_SEC_TX, LR_O_TX_IFACE, tx_ifname),
	CFG(LR_SEC_TX, LR_O_NETNS, tx_netns),
	CFG(LR_SEC_TX, LR_O_TX_ENGINE, tx_engine),
	CFG(LR_SEC_TX, LR_O_XSK_MODE, xsk_mode),
	CFG(LR_SEC_TX, LR_O_BATCH, batch),
	CFG(LR_SEC_TX, LR_O_LATENCY_EVERY, latency_every),
	CFG(LR_SEC_TX, LR_O_DST_PORT, dst_port),
	LIST(LR_SEC_TX, LR_O_SIZE, sizes, nsizes),
	LIST(LR_SEC_TX, LR_O_RATE, rates, nrates),
	CFG(LR_SEC_TX, LR_O_TX_PCAP, tx_pcap),
	CFG(LR_SEC_TX, LR_O_TX_PCAP_EVERY, tx_pcap_every),
	CFG(LR_SEC_TX, LR_O_RUN_AGENT, tx_agent),
	CFG(LR_SEC_TX, LR_O_RUN_TOKEN_FILE, tx_token_file),
	CFG(LR_SEC_TX, LR_O_RUN_PREPARE_PEER, prepare_peer),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_DST_IP, dst_ip, LR_AT(struct sdef, dst_family)),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_SRC_IP, src_ip, LR_AT(struct sdef, src_family)),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_DST_MAC, dst_mac),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_SRC_MAC, src_mac),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_SRC_PORT, src_port),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_FLOWS, flows),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_QUEUES, queues, LR_AT(struct sdef, nqueues)),
	DEF(LR_SEC_TX | LR_SEC_STREAM, LR_O_CPUS, cpus, LR_AT(struct sdef, ncpus)),
	DEF(LR_SEC_STREAM, LR_O_STREAM_SIZE, size),
	DEF(LR_SEC_STREAM, LR_O_SHARE, share),
	CFG(LR_SEC_RX, LR_O_RX_IFACE, rx_ifname),
	CFG(LR_SEC_RX, LR_O_NETNS, rx_netns),
	CFG(LR_SEC_RX, LR_O_RX_ENGINE, rx_engine),
	CFG(LR_SEC_RX, LR_O_XDP_MODE, xdp_mode),
	CFG(LR_SEC_RX, LR_O_WORKERS, rx_workers),
	CFG(LR_SEC_RX, LR_O_RX_PCAP, rx_pcap),
	CFG(LR_SEC_RX, LR_O_RX_PCAP_EVERY, rx_pcap_every),
	CFG(LR_SEC_RX, LR_O_SNAPLEN, rx_snaplen),
	CFG(LR_SEC_RX, LR_O_RUN_AGENT, rx_agent),
	CFG(LR_SEC_RX, LR_O_RUN_TOKEN_FILE, rx_token_file),
	CFG(LR_SEC_TEST, LR_O_RUN_CLOCK, clock),
};

#define NBINDS	(sizeof(binds) / sizeof(binds[0]))

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
	unsigned int kind;	/* LR_SEC_*, 0 before the first */
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
static int key_line(const struct sec *s, enum lr_opt_id id)
{
	return s->kline[id] ? s->kline[id] : s->line;
}

/* The key as the file spells it (a key with an alias has two spellings). */
static const char *key_name(const struct sec *s, enum lr_opt_id id)
{
	return s->kalias[id] ? lr_opts[id].alias : lr_opts[id].key;
}

static const char *family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

static bool valid_stream_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= LR_CFG_NAME_MAX)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* ---- keys ------------------------------------------------------------ */

/* The option that @name is in the current section, or NKEYS. */
static enum lr_opt_id find_key(const struct parser *p, const char *name, bool *alias)
{
	unsigned int id;

	for (id = 0; id < NKEYS; id++) {
		const struct lr_opt *o = &lr_opts[id];

		if (!o->key || !(o->secs & p->kind))
			continue;
		*alias = o->alias && !strcmp(o->alias, name);
		if (*alias || !strcmp(o->key, name))
			return id;
	}
	return NKEYS;
}

static int set_key(struct parser *p, enum lr_opt_id id, const char *name, const char *v)
{
	char opt[LR_CFG_NAME_MAX + 32], msg[512];
	unsigned int i;

	snprintf(opt, sizeof(opt), "%s %s", p->cur_title, name);
	for (i = 0; i < NBINDS; i++) {
		const struct key_bind *k = &binds[i];

		if (k->b.id != id || !(k->secs & p->kind))
			continue;
		if (lr_opt_set(&k->b, k->in_def ? (void *)p->cur_def : (void *)p->cfg, opt, v, msg, sizeof(msg)))
			return fail(p, p->line, "%s", msg);
		return 0;
	}
	return fail(p, p->line, "internal: %s has no field", opt);
}

static int unknown_key(struct parser *p, const char *name)
{
	char list[512];
	size_t off = 0;
	unsigned int i;

	list[0] = '\0';
	for (i = 0; i < NKEYS && off < sizeof(list); i++) {
		const struct lr_opt *o = &lr_opts[i];

		if (o->key && (o->secs & p->kind))
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s%s%s", off ? ", " : "", o->key,
						o->alias ? ", " : "", o->alias ? o->alias : "");
	}
	return fail(p, p->line, "%s unknown key '%s' (keys are case-sensitive; %s takes %s)", p->cur_title, name,
		    p->cur_title, list);
}

/* inih calls this for each "key = value"; the reader has just read that line. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	enum lr_opt_id id;
	bool alias;

	(void)section;	/* inih cuts section names at 50 bytes; the reader keeps its own */
	if (p->err_line)
		return 0;
	/* inih also splits at ':' (configparser's "key: value"); we take '=' only */
	if (p->raw[strcspn(p->raw, "=:")] != '=' || !*name) {
		fail(p, p->line, "syntax error: expected 'key = value' or '[section]'");
		return 0;
	}
	if (!p->kind) {
		fail(p, p->line, "'%s' is outside any section; put it under [test], [tx], [rx] or [stream NAME]",
		     name);
		return 0;
	}
	id = find_key(p, name, &alias);
	if (id == NKEYS) {
		unknown_key(p, name);
		return 0;
	}
	if (p->cur->kline[id]) {
		/* the two spellings of one key: either is fine, both is a conflict */
		if (p->cur->kalias[id] != alias)
			fail(p, p->line, "%s %s: conflicts with '%s' at line %d; give one of them", p->cur_title, name,
			     key_name(p->cur, id), p->cur->kline[id]);
		else
			fail(p, p->line, "%s %s: given twice (first at line %d)", p->cur_title, name,
			     p->cur->kline[id]);
		return 0;
	}
	p->cur->kline[id] = p->line;
	p->cur->kalias[id] = alias;
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

static int enter_section(struct parser *p, unsigned int kind, struct sec *s, const char *title)
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
	return enter_section(p, LR_SEC_STREAM, &d->sec, d->title);
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
		return enter_section(p, LR_SEC_TEST, &p->test, "[test]");
	if (!strcmp(name, "tx")) {
		p->cur_def = &p->tx;
		return enter_section(p, LR_SEC_TX, &p->tx.sec, "[tx]");
	}
	if (!strcmp(name, "rx"))
		return enter_section(p, LR_SEC_RX, &p->rx, "[rx]");
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
	unsigned int i;
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
	/* the table's defaults; a [stream] takes [tx]'s where it gives none, so streams get none here */
	for (i = 0; i < NBINDS; i++)
		if (binds[i].secs & ~LR_SEC_STREAM)
			lr_opt_defaults(&binds[i].b, 1, binds[i].in_def ? (void *)&p->tx : (void *)c);
	strcpy(p->tx.title, "[tx]");
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
	const struct sdef *src = sec->kline[LR_O_SRC_IP] ? d : tx;
	const struct sdef *dst = sec->kline[LR_O_DST_IP] ? d : tx;
	char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];
	unsigned int i, min;

	memset(s, 0, sizeof(*s));
	strcpy(s->name, implicit ? "" : d->name);
	s->line = sec->line;

	if (!dst->sec.kline[LR_O_DST_IP]) {
		if (implicit)
			return fail(p, sec->line, "[tx] missing key 'dst_ip' (the receiver's address)");
		return fail(p, sec->line, "%s missing key 'dst_ip', and [tx] gives none", d->title);
	}
	s->dst_ip = dst->dst_ip;
	s->family = dst->dst_family;
	if (src->sec.kline[LR_O_SRC_IP]) {
		s->have_src_ip = true;
		s->src_ip = src->src_ip;
		if (src->src_family != s->family)
			return fail(p, key_line(sec, sec->kline[LR_O_SRC_IP] ? LR_O_SRC_IP : LR_O_DST_IP),
				    "%s src_ip: '%s'%s is %s but dst_ip '%s'%s is %s; use one address family",
				    d->title, addr_str(&src->src_ip, src->src_family, a1, sizeof(a1)),
				    src == d ? "" : " (from [tx])", family_name(src->src_family),
				    addr_str(&dst->dst_ip, dst->dst_family, a2, sizeof(a2)),
				    dst == d ? "" : " (from [tx])", family_name(dst->dst_family));
	}
	if (sec->kline[LR_O_SRC_MAC] || tx->sec.kline[LR_O_SRC_MAC]) {
		s->have_src_mac = true;
		memcpy(s->src_mac, (sec->kline[LR_O_SRC_MAC] ? d : tx)->src_mac, 6);
	}
	if (sec->kline[LR_O_DST_MAC] || tx->sec.kline[LR_O_DST_MAC]) {
		s->have_dst_mac = true;
		memcpy(s->dst_mac, (sec->kline[LR_O_DST_MAC] ? d : tx)->dst_mac, 6);
	}

	/*
	 * Queues and CPUs come as a pair: a stream with queues of its own does
	 * not take [tx]'s CPUs, which belong to [tx]'s queues.
	 */
	if (sec->kline[LR_O_QUEUES] || implicit) {
		s->nqueues = d->nqueues;
		memcpy(s->queues, d->queues, sizeof(s->queues));
	} else {
		s->nqueues = tx->nqueues;
		memcpy(s->queues, tx->queues, sizeof(s->queues));
	}
	if (sec->kline[LR_O_CPUS] || (!sec->kline[LR_O_QUEUES] && tx->sec.kline[LR_O_CPUS])) {
		const struct sdef *cd = sec->kline[LR_O_CPUS] ? d : tx;

		if (cd->ncpus != s->nqueues)
			return fail(p, key_line(sec, LR_O_CPUS),
				    "%s cpus: %u CPU%s%s for %u queue%s%s; give one CPU per queue", d->title, cd->ncpus,
				    cd->ncpus == 1 ? "" : "s", cd == d ? "" : " (from [tx])", s->nqueues,
				    s->nqueues == 1 ? "" : "s",
				    sec->kline[LR_O_QUEUES] || implicit ? "" : " (from [tx])");
		s->cpus_set = true;
		memcpy(s->cpus, cd->cpus, sizeof(s->cpus));
	}
	/* flows: given, or one per queue (a key left out reads 0, below any flow count) */
	s->flows = (sec->kline[LR_O_FLOWS] ? d : tx)->flows;
	if (!s->flows)
		s->flows = s->nqueues;
	if (sec->kline[LR_O_SRC_PORT] || tx->sec.kline[LR_O_SRC_PORT])
		s->src_port = (sec->kline[LR_O_SRC_PORT] ? d : tx)->src_port;
	else
		s->src_port = lr_src_port_base(s->flows);

	min = lr_frame_min_size(s->family);
	if (implicit) {
		s->size = 0;
		s->share = 1.0;
		for (i = 0; i < p->cfg->nsizes; i++)
			if (p->cfg->sizes[i] < min)
				return fail(p, key_line(sec, LR_O_SIZE),
					    "[tx] %s: %u bytes%s cannot carry the probe over %s; the minimum is %u",
					    sec->kline[LR_O_SIZE] ? key_name(sec, LR_O_SIZE) : "size", p->cfg->sizes[i],
					    sec->kline[LR_O_SIZE] ? "" : " (the default)", family_name(s->family), min);
	} else {
		if (!sec->kline[LR_O_STREAM_SIZE])
			return fail(p, sec->line, "%s missing key 'size' (its frame size, %u..%u)", d->title, min,
				    LR_MAX_FRAME);
		s->size = d->size;
		if (s->size < min)
			return fail(p, key_line(sec, LR_O_STREAM_SIZE),
				    "%s size: %u bytes cannot carry the probe over %s; the minimum is %u", d->title,
				    s->size, family_name(s->family), min);
	}
	if (s->flows < s->nqueues)
		return fail(p, key_line(sec, sec->kline[LR_O_FLOWS] ? LR_O_FLOWS : LR_O_QUEUES),
			    "%s flows: %u flow%s for %u queues; each queue's worker needs a flow of its own (flows >= %u)",
			    d->title, s->flows, s->flows == 1 ? "" : "s", s->nqueues, s->nqueues);
	if ((uint32_t)s->src_port + s->flows - 1 > 65535)
		return fail(p, key_line(sec, sec->kline[LR_O_SRC_PORT] ? LR_O_SRC_PORT : LR_O_FLOWS),
			    "%s src_port: %u + flows %u runs past port 65535", d->title, s->src_port, s->flows);
	return 0;
}

static int resolve_streams(struct parser *p)
{
	struct lr_cfg *c = p->cfg;
	const struct sdef *last;
	double total_share = 0;
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
		if (p->defs[i].sec.kline[LR_O_SHARE]) {
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
							return fail(p, key_line(&d->sec, LR_O_QUEUES),
								    "%s queues: queue %u%s is also used by %s; with [tx] engine = afxdp "
								    "each queue takes one stream (use other queues or engine = packet)",
								    d->title, c->streams[i].queues[q],
								    d->sec.kline[LR_O_QUEUES] ? "" : " (from [tx])",
								    p->defs[j].title);
				}
	}

	/* All shares or none (equal shares); normalised so they sum to exactly 1. */
	if (nshares && nshares != p->ndefs) {
		for (i = 0; i < p->ndefs; i++)
			if (!p->defs[i].sec.kline[LR_O_SHARE])
				return fail(p, p->defs[i].sec.line,
					    "%s missing key 'share': give every stream a share, or none for equal shares",
					    p->defs[i].title);
	}
	if (nshares) {
		/* within 0.01 % of the rate: the shares as people write them (33.33, 33.33, 33.34) */
		if (total_share < 1 - 1e-4 || total_share > 1 + 1e-4)
			return fail(p, last->sec.line, "%s share: the shares add up to %.9g%%; they must add up to 100%%",
				    last->title, total_share * 100);
		for (i = 0; i < p->ndefs; i++)
			c->streams[i].share = p->defs[i].share / total_share;
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
	if (p->tx.sec.kline[LR_O_SRC_IP] && p->tx.sec.kline[LR_O_DST_IP] && p->tx.src_family != p->tx.dst_family) {
		int src = tx->kline[LR_O_SRC_IP], dst = tx->kline[LR_O_DST_IP];
		char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];

		return fail(p, src > dst ? src : dst, "[tx] src_ip: '%s' is %s but dst_ip '%s' is %s; use one address family",
			    addr_str(&p->tx.src_ip, p->tx.src_family, a1, sizeof(a1)), family_name(p->tx.src_family),
			    addr_str(&p->tx.dst_ip, p->tx.dst_family, a2, sizeof(a2)), family_name(p->tx.dst_family));
	}
	/* options of one receive engine given with the other engine: refused, not silently ignored */
	if (c->rx_engine == LR_RX_ENGINE_XDP && p->rx.kline[LR_O_WORKERS])
		return fail(p, p->rx.kline[LR_O_WORKERS],
			    "[rx] workers: AF_PACKET receive threads, but engine = xdp has none (XDP counts on every "
			    "CPU that receives); remove one of the two");
	if (c->rx_engine == LR_RX_ENGINE_PACKET && p->rx.kline[LR_O_XDP_MODE])
		return fail(p, p->rx.kline[LR_O_XDP_MODE],
			    "[rx] xdp_mode: an XDP attach mode, but engine = packet uses no XDP; remove one of the two");
	if (lr_run_mode_search(c->mode) && c->nrates > 1) {
		return fail(p, key_line(tx, LR_O_RATE),
			    "[tx] %s: conflicts with [test] mode = %s, which searches below one upper bound; "
			    "give one rate (max, 1Mpps)", key_name(tx, LR_O_RATE),
			    c->mode == LR_RUN_THROUGHPUT ? "throughput" : "rtt-throughput");
	}
	/* round trips: [rx] is a reflector, which counts in XDP and captures nothing; the return is counted here */
	if (lr_run_mode_rtt(c->mode)) {
		static const enum lr_opt_id rx_only[] = { LR_O_RX_ENGINE, LR_O_WORKERS, LR_O_RX_PCAP, LR_O_RX_PCAP_EVERY,
							  LR_O_SNAPLEN };
		unsigned int i;

		for (i = 0; i < sizeof(rx_only) / sizeof(rx_only[0]); i++)
			if (p->rx.kline[rx_only[i]])
				return fail(p, p->rx.kline[rx_only[i]],
					    "[rx] %s: with mode = rtt [rx] runs a reflector (XDP), which takes only "
					    "interface, netns, xdp_mode, agent and token_file", lr_opts[rx_only[i]].key);
		if (p->test.kline[LR_O_MAX_P99])
			return fail(p, p->test.kline[LR_O_MAX_P99],
				    "[test] max_p99: one-way latency, which a round trip does not measure; use max_rtt_p99");
		if (c->tx_agent[0])
			return fail(p, tx->kline[LR_O_RUN_AGENT],
				    "[tx] agent: with mode = rtt the sender counts what comes back on its own interface, "
				    "so it runs here; put the reflector on the agent ([rx] agent)");
		if (p->test.kline[LR_O_RUN_CLOCK] && c->clock)
			return fail(p, p->test.kline[LR_O_RUN_CLOCK],
				    "[test] clock: a round trip is timed on the sender's one clock; there is no other "
				    "clock to estimate");
	} else if (p->test.kline[LR_O_MAX_RTT_P99]) {
		return fail(p, p->test.kline[LR_O_MAX_RTT_P99],
			    "[test] max_rtt_p99: a round-trip threshold; it needs mode = rtt or rtt-throughput");
	}
	/* a remote sender is one send on the agent's host: one stream, its capture not ours to write */
	if (c->tx_agent[0] && p->ndefs)
		return fail(p, tx->kline[LR_O_RUN_AGENT],
			    "[tx] agent: a remote sender runs one stream; the [stream] sections need senders here");
	if (c->tx_agent[0] && c->tx_pcap[0])
		return fail(p, tx->kline[LR_O_TX_PCAP],
			    "[tx] pcap: samples of a remote sender's frames would be written on the agent's host; "
			    "capture at the receiver ([rx] pcap) or run the sender here");
	if (c->tx_token_file[0] && !c->tx_agent[0])
		return fail(p, tx->kline[LR_O_RUN_TOKEN_FILE], "[tx] token_file: there is no [tx] agent to give it to");
	if (c->rx_token_file[0] && !c->rx_agent[0])
		return fail(p, p->rx.kline[LR_O_RUN_TOKEN_FILE], "[rx] token_file: there is no [rx] agent to give it to");
	if (p->ndefs && c->nsizes > 1) {
		return fail(p, key_line(tx, LR_O_SIZE),
			    "[tx] %s: conflicts with the [stream] sections, which give each stream its own size; "
			    "give at most one size here (it is ignored)", key_name(tx, LR_O_SIZE));
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
	if (!p->test.kline[LR_O_TRIAL])
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

void lr_cfg_spell(const char *key, char *out, size_t len)
{
	char name[64];
	unsigned int i;
	size_t n;

	for (n = 0; key[n] && n + 1 < sizeof(name); n++)
		name[n] = key[n] == '_' ? '-' : key[n];
	name[n] = '\0';
	/* the run-file key of the option the core named: [tx] sizes for {size} */
	for (i = 0; i < LR_O_COUNT_ALL; i++)
		if (lr_opts[i].name && lr_opts[i].key && !strcmp(lr_opts[i].name, name)) {
			snprintf(out, len, "%s", lr_opts[i].key);
			return;
		}
	snprintf(out, len, "%s", key);
}
