/* SPDX-License-Identifier: MIT */
/* Unit tests for the core's error type: codes, and {key} spelled as each kind of user wrote it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "util/err.h"

static void set_returns_code(void **state)
{
	struct lr_err e;

	(void)state;
	assert_int_equal(lr_err_set(&e, 2, "{size} %u is too big", 9000u), 2);
	assert_int_equal(e.code, 2);
	assert_string_equal(e.msg, "{size} 9000 is too big");
	/* NULL: the code alone, for a caller that does not want the text */
	assert_int_equal(lr_err_set(NULL, 1, "x"), 1);
	lr_err_clear(&e);
	assert_int_equal(e.code, 0);
	assert_string_equal(e.msg, "");
}

static void render_cli(void **state)
{
	struct lr_err e;
	char out[128];

	(void)state;
	lr_err_set(&e, 2, "{src_ip} and {dst_ip} differ in family");
	assert_string_equal(lr_err_render(&e, lr_err_spell_cli, out, sizeof(out)),
			    "--src-ip and --dst-ip differ in family");
	/* NULL speller: the CLI's */
	assert_string_equal(lr_err_render(&e, NULL, out, sizeof(out)), "--src-ip and --dst-ip differ in family");
}

static void render_ini(void **state)
{
	struct lr_err e;
	char out[128];

	(void)state;
	lr_err_set(&e, 2, "{latency_every} must be a power of 2");
	assert_string_equal(lr_err_render(&e, lr_err_spell_ini, out, sizeof(out)), "latency_every must be a power of 2");
}

static void wire_spell(const char *key, char *out, size_t len)
{
	snprintf(out, len, "prepare_tx.%s", key);
}

static void render_custom_and_literal(void **state)
{
	struct lr_err e;
	char out[128];

	(void)state;
	/* braces around what is not a key name stay as written */
	lr_err_set(&e, 2, "{ttl} bad; {Not A Key} {} {unterminated");
	assert_string_equal(lr_err_render(&e, wire_spell, out, sizeof(out)),
			    "prepare_tx.ttl bad; {Not A Key} {} {unterminated");
}

static void render_truncates(void **state)
{
	struct lr_err e;
	char out[8];

	(void)state;
	lr_err_set(&e, 2, "{src_port} too long");
	lr_err_render(&e, NULL, out, sizeof(out));
	assert_int_equal(strlen(out), 7);
	assert_memory_equal(out, "--src-p", 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_returns_code),
		cmocka_unit_test(render_cli),
		cmocka_unit_test(render_ini),
		cmocka_unit_test(render_custom_and_literal),
		cmocka_unit_test(render_truncates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
