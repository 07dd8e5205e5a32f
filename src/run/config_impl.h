/* SPDX-License-Identifier: MIT */
/* The INI parser's state, shared by run/config*.c only: the reader, the key table and the checks. */
#ifndef LINERATE_CONFIG_IMPL_H
#define LINERATE_CONFIG_IMPL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>
#include "opt/opt.h"
#include "run/config.h"

/*
 * inih's line buffer is INI_MAX_LINE (200) bytes with the NUL. We hand it
 * lines without their line ending, so 199 characters fit; longer lines are
 * refused by us rather than silently split by inih.
 */
#define CFG_LINE_MAX	199
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

/* Records the first error only: "PATH:LINE: message". Returns -EINVAL. (Inline: each file has its copy.) */
__attribute__((format(printf, 3, 4))) static inline int fail(struct parser *p, int line, const char *fmt, ...)
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
static inline int key_line(const struct sec *s, enum lr_opt_id id)
{
	return s->kline[id] ? s->kline[id] : s->line;
}

/* The key as the file spells it (a key with an alias has two spellings). */
static inline const char *key_name(const struct sec *s, enum lr_opt_id id)
{
	return s->kalias[id] ? lr_opts[id].alias : lr_opts[id].key;
}

/* inih calls this for each "key = value"; the reader has just read that line. 1 to go on, 0 after an error. */
int lr_cfg_on_key(void *user, const char *section, const char *name, const char *value);
/* @p->cfg as the option table's defaults say, its name from @path; [tx]'s defaults in p->tx. */
void lr_cfg_set_defaults(struct parser *p, const char *path);
/*
 * After the last line: the checks across keys and sections, then what follows from them filled in
 * (the streams, the one step size of [stream] sections, the trial window). 0 or -EINVAL.
 */
int lr_cfg_validate(struct parser *p);

#endif
