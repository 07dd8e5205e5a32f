/* SPDX-License-Identifier: MIT */
/* Logging sink and the libbpf/libxdp print hooks. */
#define _GNU_SOURCE	/* vasprintf */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "util/log.h"

volatile sig_atomic_t lr_stop;

static int log_level = LR_LOG_WARN;
static lr_log_sink_fn log_sink;
static void *log_sink_arg;

void lr_log_set_level(int level)
{
	log_level = level;
}

int lr_log_level(void)
{
	return log_level;
}

void lr_log_set_sink(lr_log_sink_fn fn, void *arg)
{
	log_sink = fn;
	log_sink_arg = arg;
}

void lr_log_stderr(int level, const char *text, void *arg)
{
	(void)level;
	(void)arg;
	fputs(text, stderr);
}

static void log_v(int level, const char *fmt, va_list ap)
{
	char buf[1024], *text = buf;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, aq);
	va_end(aq);
	/* a long line (a verifier log) is written whole */
	if (n >= (int)sizeof(buf) && vasprintf(&text, fmt, ap) < 0)
		text = buf;
	log_sink(level, text, log_sink_arg);
	if (text != buf)
		free(text);
}

void lr_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level || !log_sink)
		return;
	va_start(ap, fmt);
	log_v(level, fmt, ap);
	va_end(ap);
}

void lr_msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

size_t lr_escape(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!len)
		return 0;
	for (; *in && o + 1 < len; in++) {
		unsigned char c = (unsigned char)*in;
		char e = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : 0;

		if (c >= 0x20 && c != 0x7f) {
			out[o++] = (char)c;
		} else if (e && o + 2 < len) {
			out[o++] = '\\';
			out[o++] = e;
		} else if (!e && o + 4 < len) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			break;
		}
	}
	out[o] = '\0';
	return o;
}

void lr_err_line(const char *prefix, const char *msg)
{
	/* each byte escapes to at most 4 ("\\x1f"): the whole message, however long */
	size_t len = strlen(msg) * 4 + 1;
	char *buf = malloc(len);

	if (!buf) {
		fprintf(stderr, "%s%s\n", prefix, msg);
		return;
	}
	lr_escape(msg, buf, len);
	fprintf(stderr, "%s%s\n", prefix, buf);
	free(buf);
}

int lr_fail(int code, const char *cmd, const char *fmt, ...)
{
	char *msg = NULL, prefix[64];
	va_list ap;
	int n;

	/* sized from the text: an error line is never cut */
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	snprintf(prefix, sizeof(prefix), "linerate %s: ", cmd);
	/* messages quote what the user gave: escaped, so one error stays one line */
	lr_err_line(prefix, n < 0 ? "out of memory" : msg);
	if (n >= 0)
		free(msg);
	return code;
}

/* Library chatter shows one -v later than ours: warnings at -v, the rest at -vv. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int want = level == LIBBPF_WARN ? LR_LOG_INFO : LR_LOG_DEBUG;

	if (want > log_level || !log_sink)
		return 0;
	log_v(want, fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	int want = level == LIBXDP_WARN ? LR_LOG_INFO : LR_LOG_DEBUG;

	if (want > log_level || !log_sink)
		return 0;
	log_v(want, fmt, ap);
	return 0;
}

void lr_log_hook_libs(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
