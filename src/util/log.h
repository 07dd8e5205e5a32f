/* SPDX-License-Identifier: MIT */
/* Logging: one printf-checked sink, levels, and libbpf/libxdp output routed through it. */
#ifndef LINERATE_LOG_H
#define LINERATE_LOG_H

#include <signal.h>
#include <stddef.h>

/* Exit codes of every command: 0 ok, 1 runtime failure, 2 usage or environment, 3 a threshold missed. */
enum { LR_EXIT_OK = 0, LR_EXIT_RUNTIME = 1, LR_EXIT_USAGE = 2, LR_EXIT_THRESHOLD = 3 };

enum lr_log_level { LR_LOG_WARN = 0, LR_LOG_INFO = 1, LR_LOG_DEBUG = 2 };

void lr_log_set_level(int level);
int lr_log_level(void);
/*
 * Where messages at or below the level go: the core writes through this sink only, never to a
 * stream of its own. No sink (the default): the core is silent. A command sets lr_log_stderr.
 * A sink gets the text as formatted, newline included.
 */
typedef void (*lr_log_sink_fn)(int level, const char *text, void *arg);
void lr_log_set_sink(lr_log_sink_fn fn, void *arg);
void lr_log_stderr(int level, const char *text, void *arg);
void lr_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* snprintf into a caller's message buffer, which may be NULL. */
void lr_msg(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * Copies @in to @out with control characters written as \n, \t, \r or \xNN, so that text
 * quoted from the user's input cannot break a one-line message in two (or move the cursor).
 * Truncates to @len; returns the length written.
 */
size_t lr_escape(const char *in, char *out, size_t len);
/* "@prefix@msg\n" on stderr, @msg escaped. */
void lr_err_line(const char *prefix, const char *msg);
/* Prints "linerate CMD: message" on stderr (escaped) and returns @code (an exit code). */
int lr_fail(int code, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Sends libbpf and libxdp messages to the sink, one level quieter than ours. */
void lr_log_hook_libs(void);

#define pr_warn(...) lr_log(LR_LOG_WARN, __VA_ARGS__)
#define pr_info(...) lr_log(LR_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) lr_log(LR_LOG_DEBUG, __VA_ARGS__)

/* The only mutable global: set by SIGINT/SIGTERM handlers. */
extern volatile sig_atomic_t lr_stop;

#endif
