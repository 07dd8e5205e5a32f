/* SPDX-License-Identifier: MIT */
/* Unit tests for the one option table: its entries, and the command line and the INI file agreeing on every value. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "run/config.h"

/* A valid minimal file: [tx] on lines 1-3, [rx] on lines 4-5 when used as TX RX. */
#define TX "[tx]\ninterface = v0\ndst_ip = 198.18.0.2\n"
#define RX "[rx]\ninterface = v1\n"

/* static: struct lr_cfg is tens of kilobytes */
static struct lr_cfg cfg;
static char err[1024];

static int parse(const char *text)
{
	memset(err, 0, sizeof(err));
	return lr_cfg_parse("x.ini", text, strlen(text), &cfg, err, sizeof(err));
}

/*
 * The table: every command option has a long name, every value option a
 * metavar and a kind that can say what it takes (and the second field some
 * kinds need), no name or short name twice in a command, and every default
 * parses with its own kind.
 */
static void test_table(void **state)
{
	const struct lr_cli *const *c;

	(void)state;
	for (c = lr_commands; *c; c++) {
		void *o = calloc(1, (*c)->opts->size);
		char err[512];

		assert_non_null(o);
		for (unsigned int i = 0; i < (*c)->opts->nbinds; i++) {
			const struct lr_bind *b = &(*c)->opts->binds[i];
			const struct lr_opt *opt = &lr_opts[b->id];

			if (!opt->name || !opt->kind || !opt->help)
				fail_msg("%s: option %d has no name, kind or help", (*c)->cmd, (int)b->id);
			if (!opt->metavar != (opt->kind->type == LR_T_FLAG || opt->kind->type == LR_T_COUNTER))
				fail_msg("%s --%s: a metavar exactly when it takes a value", (*c)->cmd, opt->name);
			if (opt->metavar && !opt->kind->what)
				fail_msg("%s --%s: its kind cannot say what it takes", (*c)->cmd, opt->name);
			if (!b->aux && (opt->kind->type == LR_T_IP || opt->kind->type == LR_T_IDLIST ||
					opt->kind->type == LR_T_STEP))
				fail_msg("%s --%s: its kind needs a second field (aux)", (*c)->cmd, opt->name);
			for (unsigned int j = 0; j < i; j++) {
				const struct lr_opt *other = &lr_opts[(*c)->opts->binds[j].id];

				if (!strcmp(opt->name, other->name) ||
				    (opt->short_name && opt->short_name == other->short_name))
					fail_msg("%s: --%s given twice", (*c)->cmd, opt->name);
			}
			if (opt->def && lr_opt_set(b, o, "default", opt->def, err, sizeof(err)))
				fail_msg("%s --%s: the default does not parse: %s", (*c)->cmd, opt->name, err);
		}
		free(o);
	}
	/* INI keys: a metavar for the man page, and a section */
	for (unsigned int id = 0; id < LR_O_COUNT_ALL; id++)
		if (lr_opts[id].key && (!lr_opts[id].metavar || !lr_opts[id].secs || !lr_opts[id].help))
			fail_msg("key %s: no metavar, section or help", lr_opts[id].key);
}

/* The command and binding that take option @id on the command line. */
static const struct lr_bind *cli_bind(enum lr_opt_id id, const struct lr_cli **cli)
{
	const struct lr_cli *const *c;

	for (c = lr_commands; *c; c++)
		for (unsigned int i = 0; i < (*c)->opts->nbinds; i++)
			if ((*c)->opts->binds[i].id == id) {
				*cli = *c;
				return &(*c)->opts->binds[i];
			}
	return NULL;
}

/* A valid file with "KEY = VALUE" in section @sec; its line in *line. */
static void file_with(char *text, size_t len, unsigned int sec, const char *key, const char *value, int *line)
{
	const char *iface = strcmp(key, "interface") ? "interface = v0\n" : "";
	const char *dst = strcmp(key, "dst_ip") ? "dst_ip = 198.18.0.2\n" : "";

	if (sec == LR_SEC_TX) {
		snprintf(text, len, "[tx]\n%s = %s\n%s%s" RX, key, value, iface, dst);
		*line = 2;
	} else if (sec == LR_SEC_RX) {
		snprintf(text, len, TX "[rx]\n%s = %s\n%s", key, value,
			 strcmp(key, "interface") ? "interface = v1\n" : "");
		*line = 5;
	} else {
		snprintf(text, len, TX RX "[stream a]\n%s = %s\n%s", key, value,
			 strcmp(key, "size") ? "size = 64\n" : "");
		*line = 7;
	}
}

static void test_cli_ini_pairs(void **state)
{
	static const char *const values[] = {
		"x", "0", "1", "63", "64", "84", "100", "512", "513", "1000", "1k", "1.5", "65535", "65536", "65537",
		"9018", "9019", "1M", "4095", "4096", "0-3", "3-1", "0-64", "0 1", "2s", "0s", "max", "1Mpps", "2Tbit",
		"1844674407400", "auto", "copy", "native", "generic", "xdp", "packet", "live", "AFXDP", "198.18.0.1",
		"fd00::1", "198.18.0.300", "02:00:00:00:00:02", "01:00:5e:00:00:01", "a/b", "pid:1", "pid:+1",
		"/run/netns/x", "container:web", "container:", "v0", "averyveryverylongname", NULL,
	};
	static const struct {
		unsigned int sec;
		const char *title;
	} secs[] = { { LR_SEC_TX, "[tx]" }, { LR_SEC_RX, "[rx]" }, { LR_SEC_STREAM, "[stream a]" } };
	unsigned int id, failed = 0, pairs = 0;

	(void)state;
	for (id = 0; id < LR_O_COUNT_ALL; id++) {
		const struct lr_opt *o = &lr_opts[id];
		const struct lr_cli *cli = NULL;
		const struct lr_bind *b;

		if (!o->name || !o->key)
			continue;
		b = cli_bind(id, &cli);
		assert_non_null(b);
		for (size_t v = 0; values[v]; v++) {
			char cerr[512], want[1024], text[1024], name[64];
			void *opts = calloc(1, cli->opts->size);
			int cret;

			assert_non_null(opts);
			snprintf(name, sizeof(name), "--%s", o->name);
			cret = lr_opt_set(b, opts, name, values[v], cerr, sizeof(cerr));
			free(opts);
			for (size_t si = 0; si < sizeof(secs) / sizeof(secs[0]); si++) {
				int line, iret;

				if (!(o->secs & secs[si].sec))
					continue;
				pairs++;
				file_with(text, sizeof(text), secs[si].sec, o->key, values[v], &line);
				iret = parse(text);
				if (cret) {
					/* the same words after the name */
					snprintf(want, sizeof(want), "x.ini:%d: %s %s%s", line, secs[si].title, o->key,
						 cerr + strlen(name));
					if (iret != -EINVAL || strcmp(err, want)) {
						print_error("%s = %s: file says '%s', command line '%s'\n", o->key,
							    values[v], err, cerr);
						failed++;
					}
					continue;
				}
				/* a value the command line takes is no value error in the file (a conflict may be) */
				snprintf(want, sizeof(want), "x.ini:%d: %s %s: '%s' ", line, secs[si].title, o->key,
					 values[v]);
				if (iret && !strncmp(err, want, strlen(want)) &&
				    (strstr(err + strlen(want), "is not ") == err + strlen(want) ||
				     strstr(err + strlen(want), "exceeds ") == err + strlen(want))) {
					print_error("%s = %s: file refuses what the command line takes: '%s'\n", o->key,
						    values[v], err);
					failed++;
				}
			}
		}
	}
	assert_true(pairs > 500);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_cli_ini_pairs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
