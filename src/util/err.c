/* SPDX-License-Identifier: MIT */
/* The core's error type and the spelling of the settings its messages name. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "util/err.h"

int lr_err_set(struct lr_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void lr_err_clear(struct lr_err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

void lr_err_spell_cli(const char *key, char *out, size_t len)
{
	size_t o = 0;

	if (len < 3) {
		if (len)
			out[0] = '\0';
		return;
	}
	out[o++] = '-';
	out[o++] = '-';
	for (; *key && o + 1 < len; key++)
		out[o++] = *key == '_' ? '-' : *key;
	out[o] = '\0';
}

void lr_err_spell_ini(const char *key, char *out, size_t len)
{
	snprintf(out, len, "%s", key);
}

static size_t key_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_')
		n++;
	return n;
}

const char *lr_err_render(const struct lr_err *e, lr_err_spell_fn spell, char *out, size_t len)
{
	return lr_err_spell_text(e->msg, spell, out, len);
}

const char *lr_err_spell_text(const char *s, lr_err_spell_fn spell, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return out;
	if (!spell)
		spell = lr_err_spell_cli;
	while (*s && o + 1 < len) {
		size_t n = *s == '{' ? key_len(s + 1) : 0;

		if (n && n < 64 && s[n + 1] == '}') {
			char key[64], word[128];

			memcpy(key, s + 1, n);
			key[n] = '\0';
			spell(key, word, sizeof(word));
			o += (size_t)snprintf(out + o, len - o, "%s", word);
			if (o >= len)
				o = len - 1;
			s += n + 2;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = '\0';
	return out;
}
