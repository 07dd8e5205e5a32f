/* SPDX-License-Identifier: MIT */
/*
 * The core's error: an exit code and one line of text, filled by the layer that found the problem
 * and printed only by a command. A message names a setting as {key} (the option table's name,
 * e.g. {src_ip}); the caller renders it in the words its user wrote: --src-ip on the command line,
 * src_ip on a run-file line, prepare_tx.src_ip on the wire.
 */
#ifndef LINERATE_ERR_H
#define LINERATE_ERR_H

#include <stddef.h>

#define LR_ERR_MAX 768

struct lr_err {
	int code;	/* an exit code (util/log.h): 0 none, 1 runtime, 2 the user's to fix */
	char msg[LR_ERR_MAX];
};

/* Fills @e (which may be NULL) and returns @code, so a failure is one statement: return lr_err_set(...). */
int lr_err_set(struct lr_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lr_err_clear(struct lr_err *e);

/* Writes @key (an option table name) as its user would: into @out of @len bytes. */
typedef void (*lr_err_spell_fn)(const char *key, char *out, size_t len);
void lr_err_spell_cli(const char *key, char *out, size_t len);	/* size_mix: --size-mix */
void lr_err_spell_ini(const char *key, char *out, size_t len);	/* size_mix: size_mix */

/*
 * @e's message with every {key} spelled by @spell (NULL: the CLI's); text in braces that is not a
 * key name (lowercase letters, digits, '_') stays as it is. Returns @out.
 */
const char *lr_err_render(const struct lr_err *e, lr_err_spell_fn spell, char *out, size_t len);
/* The same for any text written with {key} names (a notice, a note). */
const char *lr_err_spell_text(const char *text, lr_err_spell_fn spell, char *out, size_t len);

#endif
