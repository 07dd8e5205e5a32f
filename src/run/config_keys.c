/* SPDX-License-Identifier: MIT */
/* The keys of `linerate run` INI files: where each lands, taken from the option table, and each 'key = value'. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "opt/opt.h"
#include "run/config.h"
#include "run/config_impl.h"

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

int lr_cfg_on_key(void *user, const char *section, const char *name, const char *value)
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

void lr_cfg_set_defaults(struct parser *p, const char *path)
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
