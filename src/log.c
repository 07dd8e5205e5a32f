/* SPDX-License-Identifier: MIT */
/* Logging sink and the libbpf/libxdp print hooks. */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "linerate/log.h"

volatile sig_atomic_t lr_stop;

static int log_level = LR_LOG_WARN;

void lr_log_set_level(int level)
{
	log_level = level;
}

int lr_log_level(void)
{
	return log_level;
}

void lr_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
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

int lr_fail(int code, const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "linerate %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* Library chatter shows one -v later than ours: warnings at -v, the rest at -vv. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int want = level == LIBBPF_WARN ? LR_LOG_INFO : LR_LOG_DEBUG;

	if (want > log_level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	int want = level == LIBXDP_WARN ? LR_LOG_INFO : LR_LOG_DEBUG;

	if (want > log_level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void lr_log_hook_libs(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
