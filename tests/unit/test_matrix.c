/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the matrix's plan (no root, no network; names resolve through a table here): the
 * agents a list stands for (names expanded, duplicates once, sorted, one family, at least two),
 * the pairs of a --pairs file (each bad line refused as FILE:LINE), the ordered cells (every pair
 * both ways at every size, or the file's pairs), and the verdict of a cell against the thresholds.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "run/matrix.h"

static char err[1024];

/* What the fake DNS knows: a name and its addresses, in the order a server might give them. */
static const struct {
	const char *name;
	const char *addrs[4];
} names[] = {
	/* a headless Service: three pods, not in order, one of them twice */
	{ "agents.test", { "198.18.0.3", "198.18.0.1", "198.18.0.2", "198.18.0.3" } },
	{ "node-b", { "198.18.0.2" } },
	{ "node-x", { "198.18.0.99" } },
	{ "dual.test", { "198.18.0.7", "fd00::7" } },
	{ "v6.test", { "fd00::2", "fd00::1" } },
};

static int calls;

static int fake_resolve(const char *host, int family, struct lr_matrix_addr *out, unsigned int max, unsigned int *n,
			char *why, size_t len)
{
	unsigned int i, k;

	calls++;
	*n = 0;
	/* "big-N.test": N addresses of a range of their own */
	if (sscanf(host, "big-%u.test", &k) == 1) {
		for (i = 0; i < k && *n < max; i++) {
			out[*n].family = AF_INET;
			memset(&out[*n].addr, 0, sizeof(out[*n].addr));
			out[*n].addr.s6_addr[0] = 198;
			out[*n].addr.s6_addr[1] = 19;
			out[*n].addr.s6_addr[2] = (uint8_t)k;
			out[(*n)++].addr.s6_addr[3] = (uint8_t)i;
		}
		return 0;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(names[i].name, host))
			continue;
		for (k = 0; k < 4 && names[i].addrs[k] && *n < max; k++) {
			struct lr_matrix_addr a = { .family = strchr(names[i].addrs[k], ':') ? AF_INET6 : AF_INET };

			assert_int_equal(inet_pton(a.family, names[i].addrs[k], &a.addr), 1);
			if (family == AF_UNSPEC || family == a.family)
				out[(*n)++] = a;
		}
		if (!*n)
			snprintf(why, len, "'%s': no %s address", host, family == AF_INET ? "IPv4" : "IPv6");
		return *n ? 0 : -ENOENT;
	}
	out[0].family = strchr(host, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(out[0].family, host, &out[0].addr) == 1 && (family == AF_UNSPEC || family == out[0].family)) {
		*n = 1;
		return 0;
	}
	snprintf(why, len, "'%s': Name or service not known", host);
	return -ENOENT;
}

/* The plan of @n entries, which must be accepted. */
static struct lr_matrix_plan *agents_ok(int family, unsigned int n, ...)
{
	char(*entries)[LR_HOSTPORT_MAX] = calloc(n, LR_HOSTPORT_MAX);
	struct lr_matrix_plan *p = calloc(1, sizeof(*p));
	unsigned int i;
	va_list ap;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		snprintf(entries[i], LR_HOSTPORT_MAX, "%s", va_arg(ap, const char *));
	va_end(ap);
	if (lr_matrix_agents(p, (const char(*)[LR_HOSTPORT_MAX])entries, n, family, fake_resolve, err, sizeof(err)))
		fail_msg("refused: %s", err);
	free(entries);
	return p;
}

/* The entries refused: -EINVAL or -ENOENT, err holding @says. */
static void agents_refused(const char *says, int family, unsigned int n, ...)
{
	char(*entries)[LR_HOSTPORT_MAX] = calloc(n ? n : 1, LR_HOSTPORT_MAX);
	struct lr_matrix_plan *p = calloc(1, sizeof(*p));
	unsigned int i;
	va_list ap;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		snprintf(entries[i], LR_HOSTPORT_MAX, "%s", va_arg(ap, const char *));
	va_end(ap);
	err[0] = '\0';
	if (!lr_matrix_agents(p, (const char(*)[LR_HOSTPORT_MAX])entries, n, family, fake_resolve, err, sizeof(err)))
		fail_msg("accepted, where \"%s\" was expected", says);
	if (!strstr(err, says))
		fail_msg("\"%s\" does not say \"%s\"", err, says);
	free(entries);
	free(p);
}

static void free_plan(struct lr_matrix_plan *p)
{
	lr_matrix_plan_free(p);
	free(p);
}

static void test_agents_expand_sort_dedup(void **state)
{
	struct lr_matrix_plan *p;

	(void)state;
	/* a name stands for all its addresses; node-b and a literal duplicate some of them */
	p = agents_ok(LR_MATRIX_FAMILY_AUTO, 3, "198.18.0.2", "agents.test", "node-b");
	assert_int_equal(p->nagents, 3);
	assert_int_equal(p->family, AF_INET);
	assert_string_equal(p->agents[0].name, "198.18.0.1:7446");
	assert_string_equal(p->agents[1].name, "198.18.0.2:7446");
	assert_string_equal(p->agents[2].name, "198.18.0.3:7446");
	assert_string_equal(p->agents[0].address, "198.18.0.1");
	assert_int_equal(p->agents[0].port, 7446);
	/* a duplicate keeps the entry that named it first */
	assert_string_equal(p->agents[1].entry, "198.18.0.2");
	assert_string_equal(p->agents[0].entry, "agents.test");
	free_plan(p);

	/* the same list in another order: the same agents in the same order */
	p = agents_ok(LR_MATRIX_FAMILY_AUTO, 2, "node-b", "agents.test");
	assert_int_equal(p->nagents, 3);
	assert_string_equal(p->agents[0].name, "198.18.0.1:7446");
	assert_string_equal(p->agents[2].name, "198.18.0.3:7446");
	free_plan(p);

	/* a port makes another agent; ports sort after addresses */
	p = agents_ok(LR_MATRIX_FAMILY_AUTO, 2, "198.18.0.1:7500", "agents.test");
	assert_int_equal(p->nagents, 4);
	assert_string_equal(p->agents[0].name, "198.18.0.1:7446");
	assert_string_equal(p->agents[1].name, "198.18.0.1:7500");
	assert_int_equal(p->agents[1].port, 7500);
	assert_string_equal(p->agents[3].name, "198.18.0.3:7446");
	free_plan(p);

	/* IPv6: bracketed names, sorted by address */
	p = agents_ok(LR_MATRIX_FAMILY_AUTO, 1, "v6.test");
	assert_int_equal(p->family, AF_INET6);
	assert_string_equal(p->agents[0].name, "[fd00::1]:7446");
	assert_string_equal(p->agents[1].name, "[fd00::2]:7446");
	free_plan(p);

	/* a name of both families, one of them chosen */
	p = agents_ok(LR_MATRIX_FAMILY_IPV4, 2, "dual.test", "node-b");
	assert_int_equal(p->nagents, 2);
	assert_string_equal(p->agents[0].name, "198.18.0.2:7446");
	assert_string_equal(p->agents[1].name, "198.18.0.7:7446");
	free_plan(p);
	p = agents_ok(LR_MATRIX_FAMILY_IPV6, 2, "dual.test", "v6.test");
	assert_int_equal(p->nagents, 3);
	assert_string_equal(p->agents[2].name, "[fd00::7]:7446");
	free_plan(p);
}

static void test_agents_refused(void **state)
{
	(void)state;
	agents_refused("one agent only; a pair needs two agents", LR_MATRIX_FAMILY_AUTO, 1, "node-b");
	/* the same agent twice is one agent */
	agents_refused("one agent only", LR_MATRIX_FAMILY_AUTO, 2, "198.18.0.2", "node-b:7446");
	agents_refused("'nosuch.test': Name or service not known", LR_MATRIX_FAMILY_AUTO, 2, "node-b", "nosuch.test");
	agents_refused("--agents: 'bad..name' is not a host name", LR_MATRIX_FAMILY_AUTO, 2, "node-b", "bad..name");
	agents_refused("is not a port", LR_MATRIX_FAMILY_AUTO, 2, "node-b", "198.18.0.1:0");
	/* two families cannot pair up: --family says which */
	agents_refused("198.18.0.7:7446 is IPv4 but [fd00::7]:7446 is IPv6, and a pair needs one family: give --family",
		       LR_MATRIX_FAMILY_AUTO, 1, "dual.test");
	agents_refused("'198.18.0.1': Name or service not known", LR_MATRIX_FAMILY_IPV6, 2, "198.18.0.1", "v6.test");
	agents_refused("'v6.test': no IPv4 address", LR_MATRIX_FAMILY_IPV4, 2, "198.18.0.1", "v6.test");
}

static void test_agents_too_many(void **state)
{
	struct lr_matrix_plan *p;

	(void)state;
	/* 200 and 56 addresses: exactly the bound */
	p = agents_ok(LR_MATRIX_FAMILY_AUTO, 2, "big-200.test", "big-56.test");
	assert_int_equal(p->nagents, LR_MATRIX_MAX_AGENTS);
	free_plan(p);
	agents_refused("--agents: more than 256 agents (at 'big-57.test')", LR_MATRIX_FAMILY_AUTO, 2, "big-200.test",
		       "big-57.test");
}

static void test_pairs_all_and_cells(void **state)
{
	static const unsigned int sizes[] = { 64, 1518 };
	/* every pair once, A to B at each size then B to A at each size */
	static const struct {
		unsigned int tx, rx, size;
	} want[] = {
		{ 0, 1, 64 }, { 0, 1, 1518 }, { 1, 0, 64 }, { 1, 0, 1518 },
		{ 0, 2, 64 }, { 0, 2, 1518 }, { 2, 0, 64 }, { 2, 0, 1518 },
		{ 1, 2, 64 }, { 1, 2, 1518 }, { 2, 1, 64 }, { 2, 1, 1518 },
	};
	struct lr_matrix_plan *p = agents_ok(LR_MATRIX_FAMILY_AUTO, 1, "agents.test");
	unsigned int i, seen[3][3] = { { 0 } };

	(void)state;
	assert_int_equal(lr_matrix_pairs_all(p, err, sizeof(err)), 0);
	assert_int_equal(p->npairs, 3);
	assert_int_equal(p->pairs[0].a, 0);
	assert_int_equal(p->pairs[0].b, 1);
	assert_int_equal(p->pairs[2].a, 1);
	assert_int_equal(p->pairs[2].b, 2);
	assert_int_equal(lr_matrix_cells(p, sizes, 2, err, sizeof(err)), 0);
	assert_int_equal(p->ncells, 12);
	for (i = 0; i < p->ncells; i++) {
		assert_int_equal(p->cells[i].tx, want[i].tx);
		assert_int_equal(p->cells[i].rx, want[i].rx);
		assert_int_equal(p->cells[i].size, want[i].size);
		assert_int_equal(p->cells[i].pair, i / 4);
		seen[p->cells[i].tx][p->cells[i].rx]++;
	}
	/* the 6 ordered pairs, each at both sizes; none with itself */
	for (i = 0; i < 9; i++)
		assert_int_equal(seen[i / 3][i % 3], i / 3 == i % 3 ? 0 : 2);
	free_plan(p);
}

static void test_cells_refused(void **state)
{
	static const unsigned int small[] = { 64 };
	unsigned int sizes[LR_MATRIX_MAX_SIZES], i;
	struct lr_matrix_plan *p = agents_ok(LR_MATRIX_FAMILY_AUTO, 1, "v6.test");

	(void)state;
	assert_int_equal(lr_matrix_pairs_all(p, err, sizeof(err)), 0);
	/* 64 bytes cannot carry the probe over IPv6 */
	assert_int_equal(lr_matrix_cells(p, small, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--sizes: 64 bytes cannot carry the probe over IPv6; the minimum is 84"));
	free_plan(p);

	/* 64 agents: 2016 pairs x 2 x 2 sizes is over the bound, 1 size is not */
	p = calloc(1, sizeof(*p));
	p->nagents = 64;
	p->family = AF_INET;
	assert_int_equal(lr_matrix_pairs_all(p, err, sizeof(err)), 0);
	assert_int_equal(p->npairs, 2016);
	for (i = 0; i < 2; i++)
		sizes[i] = 64 + i;
	assert_int_equal(lr_matrix_cells(p, sizes, 2, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "2016 pairs x 2 directions x 2 sizes make 8064 cells, more than 4096"));
	assert_int_equal(lr_matrix_cells(p, sizes, 1, err, sizeof(err)), 0);
	assert_int_equal(p->ncells, 4032);
	free_plan(p);
}

static int pairs(struct lr_matrix_plan *p, const char *text)
{
	err[0] = '\0';
	return lr_matrix_pairs_parse(p, "pairs.txt", text, strlen(text), fake_resolve, err, sizeof(err));
}

static void test_pairs_file(void **state)
{
	static const unsigned int sizes[] = { 64, 512, 1518 };
	struct lr_matrix_plan *p = agents_ok(LR_MATRIX_FAMILY_AUTO, 2, "agents.test", "198.18.0.1:7500");

	(void)state;
	/* agents: 0 .1:7446, 1 .1:7500, 2 .2, 3 .3; by name, by address, with a port where it must */
	assert_int_equal(pairs(p, "# the pairs to test\n"
				  "\n"
				  "node-b 198.18.0.3   # by name and by address\r\n"
				  "  198.18.0.1:7446\t198.18.0.1:7500\n"
				  "198.18.0.3 198.18.0.1:7446"),
			 0);
	assert_int_equal(p->npairs, 3);
	assert_int_equal(p->pairs[0].a, 2);
	assert_int_equal(p->pairs[0].b, 3);
	assert_int_equal(p->pairs[0].line, 3);
	assert_int_equal(p->pairs[1].a, 0);
	assert_int_equal(p->pairs[1].b, 1);
	/* the file's order, and its first side first */
	assert_int_equal(p->pairs[2].a, 3);
	assert_int_equal(p->pairs[2].b, 0);
	assert_int_equal(p->pairs[2].line, 5);

	/* one pair: both ways at each size */
	assert_int_equal(pairs(p, "198.18.0.2 198.18.0.3\n"), 0);
	assert_int_equal(p->npairs, 1);
	assert_int_equal(lr_matrix_cells(p, sizes, 3, err, sizeof(err)), 0);
	assert_int_equal(p->ncells, 6);
	assert_int_equal(p->cells[0].tx, 2);
	assert_int_equal(p->cells[0].rx, 3);
	assert_int_equal(p->cells[2].size, 1518);
	assert_int_equal(p->cells[3].tx, 3);
	assert_int_equal(p->cells[3].rx, 2);
	assert_int_equal(p->cells[3].size, 64);
	free_plan(p);
}

static void test_pairs_file_refused(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "198.18.0.2\n", "pairs.txt:1: 1 agent where a pair names two, as 'A B'" },
		{ "# c\n198.18.0.2 198.18.0.3 198.18.0.1\n", "pairs.txt:2: 3 agents where a pair names two" },
		{ "198.18.0.2 node-x\n", "pairs.txt:1: 'node-x' (198.18.0.99) is none of the agents" },
		{ "198.18.0.2 198.18.0.9\n", "pairs.txt:1: '198.18.0.9' is none of the agents" },
		{ "198.18.0.2 nosuch.test\n", "pairs.txt:1: 'nosuch.test': Name or service not known" },
		{ "198.18.0.2 bad..name\n", "pairs.txt:1: 'bad..name' is not a host name" },
		{ "198.18.0.2 198.18.0.3:7500\n", "pairs.txt:1: '198.18.0.3:7500' is none of the agents" },
		{ "node-b 198.18.0.2:7446\n", "pairs.txt:1: 'node-b' and '198.18.0.2:7446' are one agent, 198.18.0.2:7446" },
		{ "198.18.0.2 198.18.0.3\n\n198.18.0.3 node-b\n",
		  "pairs.txt:3: the pair 198.18.0.3:7446 198.18.0.2:7446 was named on line 1 already" },
		/* a name of several agents, or an address with two ports: which one is not said */
		{ "agents.test 198.18.0.2\n", "pairs.txt:1: 'agents.test' stands for 4 agents (198.18.0.1:7446, "
					      "198.18.0.1:7500, 198.18.0.2:7446, 198.18.0.3:7446)" },
		{ "198.18.0.1 198.18.0.2\n", "pairs.txt:1: '198.18.0.1' stands for 2 agents" },
		{ "", "pairs.txt: no pair in it" },
		{ "# nothing\n\n", "pairs.txt: no pair in it" },
	};
	struct lr_matrix_plan *p = agents_ok(LR_MATRIX_FAMILY_AUTO, 2, "agents.test", "198.18.0.1:7500");
	char line[LR_MATRIX_LINE_MAX + 16];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pairs(p, bad[i].text), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("\"%s\": \"%s\" does not say \"%s\"", bad[i].text, err, bad[i].says);
	}
	/* a line longer than the bound; a NUL in the text */
	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	assert_int_equal(pairs(p, line), -EINVAL);
	assert_non_null(strstr(err, "pairs.txt:1: a line of more than 1024 characters"));
	assert_int_equal(lr_matrix_pairs_parse(p, "pairs.txt", "198.18.0.2 198.18.0.3\n\0x\n", 25, fake_resolve, err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pairs.txt:2: a NUL character"));
	free_plan(p);
}

static void test_pairs_load(void **state)
{
	struct lr_matrix_plan *p = agents_ok(LR_MATRIX_FAMILY_AUTO, 1, "agents.test");
	char path[] = "/tmp/lr-test-matrix-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "198.18.0.1 198.18.0.2\n", 22), 22);
	close(fd);
	assert_int_equal(lr_matrix_pairs_load(p, path, fake_resolve, err, sizeof(err)), 0);
	assert_int_equal(p->npairs, 1);
	unlink(path);
	assert_int_equal(lr_matrix_pairs_load(p, path, fake_resolve, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--pairs: cannot open"));
	/* a directory is no pairs file */
	assert_int_equal(lr_matrix_pairs_load(p, "/tmp", fake_resolve, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a regular file"));
	free_plan(p);
}

static void test_judge(void **state)
{
	struct lr_matrix_limits none = { 0 };
	struct lr_matrix_limits loss = { .max_loss_set = true, .max_loss = 0.01 };
	struct lr_matrix_limits zero = { .max_loss_set = true, .max_loss = 0 };
	struct lr_matrix_limits pps = { .min_pps_set = true, .min_pps = 10000 };
	char why[160];

	(void)state;
	/* no threshold set: whatever it measured passes */
	assert_true(lr_matrix_judge(&none, false, 50.0, 0, why, sizeof(why)));
	assert_string_equal(why, "");
	/* 2 % lost against at most 1 % */
	assert_false(lr_matrix_judge(&loss, true, 2.0, 20000, why, sizeof(why)));
	assert_string_equal(why, "loss 2.000% > 1%");
	assert_true(lr_matrix_judge(&loss, true, 1.0, 20000, why, sizeof(why)));
	assert_true(lr_matrix_judge(&zero, true, 0, 20000, why, sizeof(why)));
	assert_false(lr_matrix_judge(&zero, true, 0.001, 20000, why, sizeof(why)));
	/* markers missing: the loss is not settled, so a loss limit cannot be met */
	assert_false(lr_matrix_judge(&loss, false, 0, 20000, why, sizeof(why)));
	assert_non_null(strstr(why, "loss not settled"));
	/* the rate received */
	assert_false(lr_matrix_judge(&pps, true, 0, 9999.4, why, sizeof(why)));
	assert_string_equal(why, "rx 9999 pps < 10000 pps");
	assert_true(lr_matrix_judge(&pps, false, 0, 10000, why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agents_expand_sort_dedup),
		cmocka_unit_test(test_agents_refused),
		cmocka_unit_test(test_agents_too_many),
		cmocka_unit_test(test_pairs_all_and_cells),
		cmocka_unit_test(test_cells_refused),
		cmocka_unit_test(test_pairs_file),
		cmocka_unit_test(test_pairs_file_refused),
		cmocka_unit_test(test_pairs_load),
		cmocka_unit_test(test_judge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
