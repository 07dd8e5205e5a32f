/* SPDX-License-Identifier: MIT */
/* `linerate run` INI files read: libinih over our own line reader (text, sections, lines), errors as PATH:LINE. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <ini.h>

#include "opt/opt.h"
#include "run/config.h"
#include "run/config_impl.h"
#include "util/log.h"

#define CFG_FILE_MAX	(1024 * 1024)

static bool valid_stream_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= LR_CFG_NAME_MAX)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
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
	lr_cfg_set_defaults(&p, path);

	ret = ini_parse_stream(read_line, &p, lr_cfg_on_key, &p);
	if (ret < 0)
		return fail(&p, p.line, "internal: the INI parser failed (%d)", ret);
	if (ret > 0 && (!p.err_line || ret < p.err_line)) {
		/* inih saw a line it could not read before anything we refused */
		p.err_line = 0;
		return fail(&p, ret, "syntax error: expected 'key = value' or '[section]'");
	}
	if (p.err_line)
		return -EINVAL;
	return lr_cfg_validate(&p);
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
