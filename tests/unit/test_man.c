/* SPDX-License-Identifier: MIT */
/* Unit tests for linerate(1): it lists every option --help lists and every INI key, and nothing else. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cmd/cli.h"
#include "cmd/man.h"

#define MAX_NAMES 128

struct names {
	unsigned int n;
	char name[MAX_NAMES][40];
};

static void add(struct names *s, const char *name, size_t len)
{
	assert_true(s->n < MAX_NAMES && len < sizeof(s->name[0]));
	memcpy(s->name[s->n], name, len);
	s->name[s->n++][len] = '\0';
}

static bool has(const struct names *s, const char *name)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return true;
	return false;
}

/* Every name of @a is in @b and the other way round. */
static void same(const char *what, const struct names *a, const char *an, const struct names *b, const char *bn)
{
	unsigned int i;

	assert_true(a->n > 0);
	for (i = 0; i < a->n; i++)
		if (!has(b, a->name[i]))
			fail_msg("%s: %s lists '%s', %s does not", what, an, a->name[i], bn);
	for (i = 0; i < b->n; i++)
		if (!has(a, b->name[i]))
			fail_msg("%s: %s lists '%s', %s does not", what, bn, b->name[i], an);
}

static char *capture_help(const struct lr_cli *cli)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lr_cli_help(cli, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *capture_man(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lr_man_write(f, "2024-01-01");
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* "  -i, --interface IFACE   ..." and "      --dst-ip IP   ...": the long names of the option lines. */
static void help_names(const char *help, struct names *s)
{
	const char *line;

	for (line = help; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = NULL;

		if (!strncmp(line, "  -", 3) && line[3] != '-' && !strncmp(line + 4, ", --", 4))
			p = line + 8;
		else if (!strncmp(line, "      --", 8))
			p = line + 8;
		if (p)
			add(s, p, strcspn(p, " \n"));
	}
}

/* The lines of @man between the heading @start (a whole line) and the next heading of its level or above. */
static const char *section(const char *man, const char *start, size_t *len)
{
	const char *p = strstr(man, start), *end;

	if (!p)
		fail_msg("the man page has no '%s'", start);
	p += strlen(start);
	end = strstr(p, !strncmp(start, ".SH", 3) ? "\n.SH" : "\n.S");
	*len = end ? (size_t)(end - p) : strlen(p);
	return p;
}

/* A name in roff: plain characters and "\-" escapes, up to a blank or another escape. */
static size_t roff_name(const char *q, char *name, size_t size)
{
	size_t n = 0;

	while (*q && n < size - 1) {
		if (!strncmp(q, "\\-", 2)) {
			name[n++] = '-';
			q += 2;
		} else if (*q == '\\' || *q == ' ' || *q == '\n') {
			break;
		} else {
			name[n++] = *q++;
		}
	}
	return n;
}

/*
 * The tags of the .TP paragraphs between @p and @p + @len: the option after
 * "\fB\-\-", or for INI keys the key after the leading "\fB" and an alias
 * after " or \fB".
 */
static void man_tags(const char *p, size_t len, bool keys, struct names *s)
{
	const char *end = p + len;

	while ((p = strstr(p, "\n.TP\n")) && p < end) {
		const char *tag = p + 5, *eol = strchr(tag, '\n'), *q;
		char name[40];

		p = tag;
		if (!keys) {
			q = strstr(tag, "\\fB\\-\\-");
			if (q && q < eol)
				add(s, name, roff_name(q + 7, name, sizeof(name)));
			continue;
		}
		assert_memory_equal(tag, "\\fB", 3);
		add(s, name, roff_name(tag + 3, name, sizeof(name)));
		q = strstr(tag, " or \\fB");
		if (q && q < eol)
			add(s, name, roff_name(q + 7, name, sizeof(name)));
	}
}

static void test_options_agree(void **state)
{
	const struct lr_cli *const *c;
	char *man = capture_man();

	(void)state;
	for (c = lr_commands; *c; c++) {
		struct names h = { 0 }, m = { 0 };
		char *help = capture_help(*c), head[64];
		const char *sec;
		size_t len;

		help_names(help, &h);
		snprintf(head, sizeof(head), ".SS \"linerate %s\"\n", (*c)->cmd);
		sec = section(man, head, &len);
		man_tags(sec - 1, len + 1, false, &m);
		same((*c)->cmd, &h, "--help", &m, "the man page");
		assert_int_equal(h.n, (*c)->opts->nbinds + 1);	/* and --help */
		free(help);
	}
	free(man);
}

static void test_keys_agree(void **state)
{
	char *man = capture_man();

	(void)state;
	for (unsigned int i = 0; i < sizeof(lr_ini_sections) / sizeof(lr_ini_sections[0]); i++) {
		struct names t = { 0 }, m = { 0 };
		char head[64];
		const char *sec;
		size_t len;

		for (unsigned int id = 0; id < LR_O_COUNT_ALL; id++) {
			const struct lr_opt *o = &lr_opts[id];

			if (!o->key || !(o->secs & lr_ini_sections[i].sec))
				continue;
			add(&t, o->key, strlen(o->key));
			if (o->alias)
				add(&t, o->alias, strlen(o->alias));
		}
		snprintf(head, sizeof(head), ".SS \"%s\"\n", lr_ini_sections[i].title);
		sec = section(man, head, &len);
		man_tags(sec - 1, len + 1, true, &m);
		same(lr_ini_sections[i].title, &t, "the table", &m, "the man page");
	}
	free(man);
}

/* The sections the page must have, in order, and no line roff would take for a request by mistake. */
static void test_page_shape(void **state)
{
	static const char *const heads[] = {
		".TH LINERATE 1 \"2024-01-01\"", ".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH COMMANDS\n",
		".SH \"RUN FILES\"\n", ".SH \"EXIT STATUS\"\n", ".SH FILES\n", ".SH EXAMPLES\n", ".SH \"SEE ALSO\"\n",
	};
	char *man = capture_man();
	const char *prev = man, *line;
	bool nofill = false;

	(void)state;
	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		const char *p = strstr(prev, heads[i]);

		if (!p)
			fail_msg("no '%s' after the previous section", heads[i]);
		prev = p;
	}
	for (const char *code = ".B 130, 143\n"; code; code = NULL)
		assert_non_null(strstr(man, code));
	for (line = man; *line; line += strcspn(line, "\n") + !!line[strcspn(line, "\n")]) {
		size_t n = strcspn(line, "\n");

		if (line[0] == '\'' || (line[0] == '.' && !strchr("\\BIPRSTfbnr", line[1])))
			fail_msg("a line roff would misread: '%.*s'", (int)n, line);
		if (!strncmp(line, ".nf\n", 4) || !strncmp(line, ".fi\n", 4))
			nofill = line[1] == 'n';
		if (line[0] != '.' && !nofill && n > 80)
			fail_msg("a text line of %zu bytes: '%.*s'", n, (int)n, line);
	}
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_agree),
		cmocka_unit_test(test_keys_agree),
		cmocka_unit_test(test_page_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
