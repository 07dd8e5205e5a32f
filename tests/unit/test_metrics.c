/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the agent's metrics (no root, no network): the exposition text (every family with
 * HELP and TYPE, label escaping, quantiles, per-queue series of both directions, rx.sent only once a
 * marker came, an idle agent and a running test,
 * large numbers exact), the HTTP exchange (GET /metrics, another path, another method, a request
 * too long, malformed ones), the seqlock (a torn read is never returned, a dead writer recovered)
 * and agent --metrics on the command line.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
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
#include "ctl/metrics.h"

static char page[LR_METRICS_PAGE_MAX];

static const struct lr_metrics_agent idle_agent = {
	.release = "0.1.0", .revision = "abc123", .start_time = 1700000000.25,
};

/* Every family the page must have, and its type: docs/metrics.md lists the same. */
static const struct {
	const char *name, *type;
} families[] = {
	{ "linerate_agent_info", "gauge" },
	{ "linerate_agent_start_time_seconds", "gauge" },
	{ "linerate_agent_busy", "gauge" },
	{ "linerate_agent_sessions_total", "counter" },
	{ "linerate_agent_sessions_refused_total", "counter" },
	{ "linerate_agent_tests_total", "counter" },
	{ "linerate_test_info", "gauge" },
	{ "linerate_test_id", "gauge" },
	{ "linerate_test_running", "gauge" },
	{ "linerate_test_start_time_seconds", "gauge" },
	{ "linerate_tx_packets_total", "counter" },
	{ "linerate_tx_bytes_total", "counter" },
	{ "linerate_tx_packets_per_second", "gauge" },
	{ "linerate_tx_queue_packets_total", "counter" },
	{ "linerate_rx_packets_total", "counter" },
	{ "linerate_rx_bytes_total", "counter" },
	{ "linerate_rx_sent_packets_total", "counter" },
	{ "linerate_rx_queue_packets_total", "counter" },
	{ "linerate_rx_lost_packets", "gauge" },
	{ "linerate_rx_reordered_packets_total", "counter" },
	{ "linerate_rx_duplicate_packets_total", "counter" },
	{ "linerate_rx_packets_per_second", "gauge" },
	{ "linerate_rx_latency_seconds", "summary" },
	{ "linerate_reflect_packets_total", "counter" },
	{ "linerate_reflect_bytes_total", "counter" },
	{ "linerate_cost_seconds_per_packet", "gauge" },
	{ "linerate_cost_error_seconds_per_packet", "gauge" },
};
#define NFAMILIES (sizeof(families) / sizeof(families[0]))

static int render(const struct lr_metrics_agent *a, const struct lr_metrics_test *t)
{
	int n = lr_metrics_render(a, t, page, sizeof(page));

	assert_true(n > 0);
	assert_int_equal(strlen(page), (size_t)n);
	return n;
}

/* The whole line that starts with @prefix, or NULL. */
static const char *line_of(const char *prefix)
{
	static char line[1024];
	size_t plen = strlen(prefix);
	const char *p = page;

	while (p && *p) {
		const char *end = strchr(p, '\n');

		if (!strncmp(p, prefix, plen)) {
			size_t n = end ? (size_t)(end - p) : strlen(p);

			assert_true(n < sizeof(line));
			memcpy(line, p, n);
			line[n] = '\0';
			return line;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* The value of the sample line "@series VALUE". */
static const char *value_of(const char *series)
{
	char prefix[512];
	const char *l;

	snprintf(prefix, sizeof(prefix), "%s ", series);
	l = line_of(prefix);
	if (!l)
		fail_msg("no sample '%s' in:\n%s", series, page);
	return l + strlen(prefix);
}

static bool valid_name(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_' || s[i] == ':' ||
		      (i && s[i] >= '0' && s[i] <= '9')))
			return false;
	return n > 0;
}

/*
 * The page against the format: HELP then TYPE once per family, before its samples; every sample
 * of a declared family (a summary's _sum and _count too), its labels well-formed and escaped, its
 * value a number, NaN or an infinity; only ASCII; a newline at the end.
 */
static void check_format(void)
{
	char declared[64][96], typed[64][16];
	unsigned int nfam = 0, i;
	const char *p = page;

	assert_true(strlen(page) > 0 && page[strlen(page) - 1] == '\n');
	for (i = 0; page[i]; i++)
		assert_true((unsigned char)page[i] < 0x80);
	while (*p) {
		const char *end = strchr(p, '\n'), *v, *q;
		char name[96], num[64], *stop;
		size_t n, len = (size_t)(end - p);
		bool found = false;

		if (!strncmp(p, "# HELP ", 7)) {
			n = strcspn(p + 7, " ");
			assert_true(valid_name(p + 7, n) && n < sizeof(name));
			assert_true(nfam < 64);
			memcpy(declared[nfam], p + 7, n);
			declared[nfam][n] = '\0';
			for (i = 0; i < nfam; i++)
				if (!strcmp(declared[i], declared[nfam]))
					fail_msg("HELP twice for %s", declared[nfam]);
			/* the TYPE line follows */
			p = end + 1;
			end = strchr(p, '\n');
			assert_non_null(end);
			assert_true(!strncmp(p, "# TYPE ", 7) && !strncmp(p + 7, declared[nfam], n) && p[7 + n] == ' ');
			snprintf(typed[nfam], sizeof(typed[nfam]), "%.*s", (int)(end - p - 8 - n), p + 8 + n);
			assert_true(!strcmp(typed[nfam], "gauge") || !strcmp(typed[nfam], "counter") ||
				    !strcmp(typed[nfam], "summary"));
			nfam++;
			p = end + 1;
			continue;
		}
		assert_true(p[0] != '#');
		/* a sample: NAME[{LABELS}] VALUE */
		n = strcspn(p, "{ ");
		assert_true(valid_name(p, n) && n < sizeof(name));
		memcpy(name, p, n);
		name[n] = '\0';
		for (i = 0; i < nfam && !found; i++) {
			size_t dl = strlen(declared[i]);

			found = !strcmp(name, declared[i]) ||
				(!strcmp(typed[i], "summary") && !strncmp(name, declared[i], dl) &&
				 (!strcmp(name + dl, "_sum") || !strcmp(name + dl, "_count")));
		}
		if (!found)
			fail_msg("sample of %s before its HELP and TYPE", name);
		q = p + n;
		if (*q == '{') {
			q++;
			while (*q != '}') {
				size_t ln = strcspn(q, "=");

				assert_true(valid_name(q, ln));
				q += ln;
				assert_true(q[0] == '=' && q[1] == '"');
				for (q += 2; *q != '"'; q++) {
					assert_true(*q != '\n' && *q != '\0');
					if (*q == '\\') {
						q++;
						assert_true(*q == '\\' || *q == '"' || *q == 'n');
					}
				}
				q++;
				if (*q == ',')
					q++;
				else
					assert_int_equal(*q, '}');
			}
			q++;
		}
		assert_int_equal(*q, ' ');
		v = q + 1;
		snprintf(num, sizeof(num), "%.*s", (int)(end - v), v);
		if (strcmp(num, "NaN") && strcmp(num, "+Inf") && strcmp(num, "-Inf")) {
			strtod(num, &stop);
			if (*stop || stop == num)
				fail_msg("'%s' is not a value (line '%.*s')", num, (int)len, p);
		}
		p = end + 1;
	}
	/* every family of the documented list, with its type, and no other */
	assert_int_equal(nfam, NFAMILIES);
	for (i = 0; i < NFAMILIES; i++) {
		unsigned int j;

		for (j = 0; j < nfam && strcmp(declared[j], families[i].name); j++)
			;
		if (j == nfam)
			fail_msg("family %s missing", families[i].name);
		assert_string_equal(typed[j], families[i].type);
	}
}

static void test_render_idle(void **state)
{
	struct lr_metrics_test t = { 0 };

	(void)state;
	render(&idle_agent, &t);
	check_format();
	assert_string_equal(value_of("linerate_agent_info{version=\"0.1.0\",revision=\"abc123\"}"), "1");
	assert_string_equal(value_of("linerate_agent_start_time_seconds"), "1700000000.25");
	assert_string_equal(value_of("linerate_agent_busy"), "0");
	assert_string_equal(value_of("linerate_agent_sessions_total"), "0");
	assert_string_equal(value_of("linerate_agent_sessions_refused_total{reason=\"busy\"}"), "0");
	assert_string_equal(value_of("linerate_agent_sessions_refused_total{reason=\"error\"}"), "0");
	assert_string_equal(value_of("linerate_agent_tests_total"), "0");
	/* before the first test: no info sample, zeros, latency without samples */
	assert_null(line_of("linerate_test_info{"));
	assert_string_equal(value_of("linerate_test_id"), "0");
	assert_string_equal(value_of("linerate_test_running"), "0");
	assert_string_equal(value_of("linerate_rx_packets_total"), "0");
	assert_string_equal(value_of("linerate_tx_packets_total"), "0");
	assert_null(line_of("linerate_tx_queue_packets_total{"));
	assert_null(line_of("linerate_rx_queue_packets_total{"));
	/* no marker yet: no sample at all (the JSON's null), neither 0 nor NaN */
	assert_null(line_of("linerate_rx_sent_packets_total "));
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.5\"}"), "NaN");
	assert_string_equal(value_of("linerate_rx_latency_seconds_count"), "0");
}

static void test_render_running(void **state)
{
	struct lr_metrics_agent a = idle_agent;
	struct lr_metrics_test t = {
		.tests = 4, .id = 5, .role = LR_METRICS_RX, .running = 1, .name = "rx on ul0 in h2",
		.interface = "ul0", .engine = "xdp", .start_time = 1700000100.5,
		.rx_packets = 123456, .rx_bytes = 123456 * 60ULL, .rx_lost = -2, .rx_reordered = 3,
		.rx_duplicates = 1, .rx_pps = 20000.5, .rx_sent = 123457, .rx_flows_eot = 2,
		.rx_queue_packets = { [0] = 100000, [3] = 23456 },
		.lat_count = 1929, .lat_sum_ns = 25000000001ULL,
		.lat_ns = { 1000, 12345, 20000, 1000000000, 1500000000, 2000000007 },
	};

	(void)state;
	a.busy = true;
	a.sessions = 7;
	a.refused_busy = 2;
	render(&a, &t);
	check_format();
	assert_string_equal(value_of("linerate_agent_busy"), "1");
	assert_string_equal(value_of("linerate_agent_sessions_total"), "7");
	assert_string_equal(value_of("linerate_agent_sessions_refused_total{reason=\"busy\"}"), "2");
	assert_string_equal(value_of("linerate_agent_tests_total"), "4");
	assert_string_equal(value_of("linerate_test_info{role=\"rx\",interface=\"ul0\",engine=\"xdp\","
				     "test=\"rx on ul0 in h2\"}"),
			    "1");
	assert_string_equal(value_of("linerate_test_id"), "5");
	assert_string_equal(value_of("linerate_test_running"), "1");
	assert_string_equal(value_of("linerate_test_start_time_seconds"), "1700000100.5");
	assert_string_equal(value_of("linerate_rx_packets_total"), "123456");
	assert_string_equal(value_of("linerate_rx_bytes_total"), "7407360");
	assert_string_equal(value_of("linerate_rx_lost_packets"), "-2");
	assert_string_equal(value_of("linerate_rx_reordered_packets_total"), "3");
	assert_string_equal(value_of("linerate_rx_duplicate_packets_total"), "1");
	assert_string_equal(value_of("linerate_rx_packets_per_second"), "20000.5");
	assert_string_equal(value_of("linerate_rx_sent_packets_total"), "123457");
	/* the queues that counted a frame, as rx.per_queue lists them */
	assert_string_equal(value_of("linerate_rx_queue_packets_total{queue=\"0\"}"), "100000");
	assert_string_equal(value_of("linerate_rx_queue_packets_total{queue=\"3\"}"), "23456");
	assert_null(line_of("linerate_rx_queue_packets_total{queue=\"1\"}"));
	assert_null(line_of("linerate_rx_queue_packets_total{queue=\"2\"}"));
	/* nanoseconds as seconds in decimal, exact */
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0\"}"), "0.000001");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.5\"}"), "0.000012345");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.9\"}"), "0.00002");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.99\"}"), "1.0");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.999\"}"), "1.5");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"1\"}"), "2.000000007");
	assert_string_equal(value_of("linerate_rx_latency_seconds_sum"), "25.000000001");
	assert_string_equal(value_of("linerate_rx_latency_seconds_count"), "1929");
	/* the other roles' counts are there, at zero */
	assert_string_equal(value_of("linerate_tx_packets_total"), "0");
	assert_string_equal(value_of("linerate_reflect_packets_total"), "0");
}

static void test_render_cost(void **state)
{
	struct lr_metrics_test t = {
		.id = 2, .role = LR_METRICS_RX, .running = 1, .name = "rx on eth0", .interface = "eth0", .engine = "xdp",
		.cost_sender_ns = NAN, .cost_sender_err_ns = NAN, .cost_receiver_ns = 31.25, .cost_receiver_err_ns = 2.5,
	};

	(void)state;
	render(&idle_agent, &t);
	check_format();
	/* ns as seconds; a part this endpoint does not measure is NaN */
	assert_string_equal(value_of("linerate_cost_seconds_per_packet{part=\"receiver\"}"), "3.125e-08");
	assert_string_equal(value_of("linerate_cost_error_seconds_per_packet{part=\"receiver\"}"), "2.5e-09");
	assert_string_equal(value_of("linerate_cost_seconds_per_packet{part=\"sender\"}"), "NaN");
	assert_string_equal(value_of("linerate_cost_error_seconds_per_packet{part=\"sender\"}"), "NaN");
	t.role = LR_METRICS_TX;
	t.cost_sender_ns = 812.5;
	t.cost_sender_err_ns = 40;
	render(&idle_agent, &t);
	check_format();
	assert_string_equal(value_of("linerate_cost_seconds_per_packet{part=\"sender\"}"), "8.125e-07");
	assert_string_equal(value_of("linerate_cost_error_seconds_per_packet{part=\"sender\"}"), "4e-08");
}

static void test_render_queues(void **state)
{
	struct lr_metrics_test t = {
		.id = 1, .role = LR_METRICS_TX, .running = 0, .name = "tx on d2", .interface = "d2", .engine = "afxdp",
		.tx_packets = 30000, .tx_bytes = 30000 * 60ULL, .tx_pps = 19999.75, .nqueues = 3,
		.queues = { { 0, 10000 }, { 2, 10001 }, { 4095, 9999 } },
	};
	unsigned int i;

	(void)state;
	render(&idle_agent, &t);
	check_format();
	assert_string_equal(value_of("linerate_test_info{role=\"tx\",interface=\"d2\",engine=\"afxdp\","
				     "test=\"tx on d2\"}"),
			    "1");
	assert_string_equal(value_of("linerate_tx_queue_packets_total{queue=\"0\"}"), "10000");
	assert_string_equal(value_of("linerate_tx_queue_packets_total{queue=\"2\"}"), "10001");
	assert_string_equal(value_of("linerate_tx_queue_packets_total{queue=\"4095\"}"), "9999");
	assert_null(line_of("linerate_tx_queue_packets_total{queue=\"1\"}"));
	assert_string_equal(value_of("linerate_tx_packets_per_second"), "19999.75");
	/* more queues than the page keeps: the first LR_METRICS_QUEUES */
	t.nqueues = 200;
	for (i = 0; i < LR_METRICS_QUEUES; i++)
		t.queues[i] = (struct lr_metrics_queue){ 100 + i, i };
	render(&idle_agent, &t);
	check_format();
	assert_non_null(line_of("linerate_tx_queue_packets_total{queue=\"115\"} 15"));
	assert_null(line_of("linerate_tx_queue_packets_total{queue=\"116\"}"));
	/* a sender's test: no receiver's series */
	assert_null(line_of("linerate_rx_queue_packets_total{"));
	assert_null(line_of("linerate_rx_sent_packets_total "));
}

static void test_render_rx_sent(void **state)
{
	struct lr_metrics_test t = { .id = 1, .role = LR_METRICS_RX, .running = 1, .rx_packets = 5 };

	(void)state;
	/* frames, but no marker yet: still no sample */
	t.rx_sent = 7;
	render(&idle_agent, &t);
	check_format();
	assert_null(line_of("linerate_rx_sent_packets_total "));
	/* a marker that says nothing was sent: a sample of 0, not none */
	t.rx_sent = 0;
	t.rx_flows_eot = 1;
	render(&idle_agent, &t);
	check_format();
	assert_string_equal(value_of("linerate_rx_sent_packets_total"), "0");
}

static void test_render_escaping(void **state)
{
	struct lr_metrics_agent a = idle_agent;
	struct lr_metrics_test t = { .id = 2, .role = LR_METRICS_REFLECT, .interface = "v\"0", .engine = "x\\y" };

	(void)state;
	/* a namespace path with a quote, a backslash, a newline, a tab and a byte outside ASCII */
	snprintf(t.name, sizeof(t.name), "reflect on v\"0 in /run/a\\b\nc\td\xc3\xa9");
	a.revision = "r\"1\n";
	render(&a, &t);
	check_format();
	assert_non_null(line_of("linerate_agent_info{version=\"0.1.0\",revision=\"r\\\"1\\n\"} 1"));
	assert_non_null(line_of("linerate_test_info{role=\"reflect\",interface=\"v\\\"0\",engine=\"x\\\\y\","
				"test=\"reflect on v\\\"0 in /run/a\\\\b\\nc?d??\"} 1"));
}

static void test_render_large(void **state)
{
	struct lr_metrics_test t = {
		.tests = UINT64_MAX, .id = UINT64_MAX - 1, .role = 99 /* not one: no role label value */,
		.tx_packets = UINT64_MAX, .tx_bytes = 18446744073709551557ULL, .rx_packets = 9007199254740993ULL,
		.rx_lost = INT64_MIN, .rx_reordered = UINT64_MAX, .lat_count = UINT64_MAX, .lat_sum_ns = UINT64_MAX,
		.lat_ns = { 0, 1, 999999999, 1000000001, UINT64_MAX - 1, UINT64_MAX },
		.reflect_packets = 1ULL << 63, .tx_pps = 1.0 / 3, .nqueues = 1,
		.queues = { { UINT32_MAX, UINT64_MAX } }, .rx_sent = UINT64_MAX, .rx_flows_eot = UINT32_MAX,
	};
	char small[64];
	unsigned int i;

	(void)state;
	/* every RX queue counted, and the sender's queues all kept: the largest page there is */
	for (i = 0; i < LR_METRICS_RX_QUEUES; i++)
		t.rx_queue_packets[i] = UINT64_MAX - i;
	t.nqueues = LR_METRICS_QUEUES;
	for (i = 1; i < LR_METRICS_QUEUES; i++)
		t.queues[i] = (struct lr_metrics_queue){ UINT32_MAX - i, UINT64_MAX - i };
	render(&idle_agent, &t);
	check_format();
	assert_string_equal(value_of("linerate_agent_tests_total"), "18446744073709551615");
	assert_string_equal(value_of("linerate_test_id"), "18446744073709551614");
	assert_string_equal(value_of("linerate_tx_packets_total"), "18446744073709551615");
	assert_string_equal(value_of("linerate_tx_bytes_total"), "18446744073709551557");
	/* 2^53 + 1: a double would print 9007199254740992 */
	assert_string_equal(value_of("linerate_rx_packets_total"), "9007199254740993");
	assert_string_equal(value_of("linerate_rx_lost_packets"), "-9223372036854775808");
	assert_string_equal(value_of("linerate_rx_reordered_packets_total"), "18446744073709551615");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0\"}"), "0.0");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.5\"}"), "0.000000001");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.9\"}"), "0.999999999");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"0.99\"}"), "1.000000001");
	assert_string_equal(value_of("linerate_rx_latency_seconds{quantile=\"1\"}"), "18446744073.709551615");
	assert_string_equal(value_of("linerate_rx_latency_seconds_sum"), "18446744073.709551615");
	assert_string_equal(value_of("linerate_rx_latency_seconds_count"), "18446744073709551615");
	assert_string_equal(value_of("linerate_reflect_packets_total"), "9223372036854775808");
	assert_string_equal(value_of("linerate_tx_queue_packets_total{queue=\"4294967295\"}"), "18446744073709551615");
	assert_string_equal(value_of("linerate_rx_sent_packets_total"), "18446744073709551615");
	assert_string_equal(value_of("linerate_rx_queue_packets_total{queue=\"0\"}"), "18446744073709551615");
	assert_string_equal(value_of("linerate_rx_queue_packets_total{queue=\"63\"}"), "18446744073709551552");
	/* a rate that reads back exactly */
	assert_true(strtod(value_of("linerate_tx_packets_per_second"), NULL) == 1.0 / 3);
	assert_non_null(line_of("linerate_test_info{role=\"\","));
	/* no room: refused, not cut */
	assert_int_equal(lr_metrics_render(&idle_agent, &t, small, sizeof(small)), -ENOSPC);
	assert_int_equal(lr_metrics_render(&idle_agent, &t, small, 0), -ENOSPC);
}

/* ---- HTTP ---------------------------------------------------------------------------------------- */

static int parse(const char *req, struct lr_metrics_req *r)
{
	return lr_metrics_http_parse(req, strlen(req), r);
}

static void test_http_parse(void **state)
{
	/* what Prometheus 2.42 sends */
	static const char prom[] = "GET /metrics HTTP/1.1\r\nHost: 198.18.0.2:9446\r\nUser-Agent: Prometheus/2.42.0\r\n"
				   "Accept: application/openmetrics-text;version=1.0.0,"
				   "text/plain;version=0.0.4;q=0.5\r\n"
				   "Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 1\r\n\r\n";
	static const struct {
		const char *req;
		int status;
		bool metrics, head;
	} cases[] = {
		{ prom, 200, true, false },
		{ "GET /metrics HTTP/1.0\r\n\r\n", 200, true, false },
		{ "GET /metrics?name[]=x HTTP/1.1\n\n", 200, true, false },	/* bare LF, a query */
		{ "HEAD /metrics HTTP/1.1\r\n\r\n", 200, true, true },
		{ "GET / HTTP/1.1\r\n\r\n", 200, false, false },
		{ "GET /?x HTTP/1.1\r\n\r\n", 200, false, false },
		{ "GET /metricsx HTTP/1.1\r\n\r\n", 404, false, false },
		{ "GET /metrics/ HTTP/1.1\r\n\r\n", 404, false, false },
		{ "GET /favicon.ico HTTP/1.1\r\n\r\n", 404, false, false },
		{ "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405, false, false },
		{ "DELETE /metrics HTTP/1.1\r\n\r\n", 405, false, false },
		{ "OPTIONS * HTTP/1.1\r\n\r\n", 405, false, false },
		{ "get /metrics HTTP/1.1\r\n\r\n", 400, false, false },
		{ "GET metrics HTTP/1.1\r\n\r\n", 400, false, false },
		{ "GET /metrics HTTP/2.0\r\n\r\n", 400, false, false },
		{ "GET /metrics HTTP/1.1 x\r\n\r\n", 400, false, false },
		{ "GET /metrics\r\n\r\n", 400, false, false },
		{ "GET  /metrics HTTP/1.1\r\n\r\n", 400, false, false },
		{ "GET /met\x01rics HTTP/1.1\r\n\r\n", 400, false, false },
		{ " GET /metrics HTTP/1.1\r\n\r\n", 400, false, false },
		{ "\r\n\r\n", 400, false, false },
		{ "HELLO\n\n", 400, false, false },
	};
	struct lr_metrics_req r;
	char *big;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (parse(cases[i].req, &r) != 1)
			fail_msg("'%s': not decided", cases[i].req);
		if (r.status != cases[i].status || r.metrics != cases[i].metrics || r.head != cases[i].head)
			fail_msg("'%s': %d metrics %d head %d", cases[i].req, r.status, r.metrics, r.head);
	}
	/* incomplete: every prefix of a good request waits for more */
	for (i = 0; i < sizeof(prom) - 2; i++)
		assert_int_equal(lr_metrics_http_parse(prom, i, &r), 0);
	assert_int_equal(lr_metrics_http_parse(prom, sizeof(prom) - 1, &r), 1);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &r), 0);
	/* too long: a head that has not ended within LR_METRICS_HEAD_MAX bytes */
	big = malloc(LR_METRICS_HEAD_MAX + 1);
	memset(big, 'a', LR_METRICS_HEAD_MAX);
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	assert_int_equal(lr_metrics_http_parse(big, LR_METRICS_HEAD_MAX - 1, &r), 0);
	assert_int_equal(lr_metrics_http_parse(big, LR_METRICS_HEAD_MAX, &r), 1);
	assert_int_equal(r.status, 431);
	assert_false(r.metrics);
	free(big);
}

static void test_http_reply(void **state)
{
	static const char body[] = "# HELP a b\n# TYPE a gauge\na 1\n";
	struct lr_metrics_req r;
	char out[1024], small[80];
	int n;

	(void)state;
	parse("GET /metrics HTTP/1.1\r\n\r\n", &r);
	n = lr_metrics_http_reply(&r, body, strlen(body), out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out, "HTTP/1.1 200 OK\r\n"
				 "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
				 "Content-Length: 30\r\n"
				 "Connection: close\r\n"
				 "\r\n"
				 "# HELP a b\n# TYPE a gauge\na 1\n");
	/* HEAD: the same head, no body */
	parse("HEAD /metrics HTTP/1.1\r\n\r\n", &r);
	n = lr_metrics_http_reply(&r, body, strlen(body), out, sizeof(out));
	out[n] = '\0';
	assert_non_null(strstr(out, "Content-Length: 30\r\n"));
	assert_true(strlen(out) > 4 && !strcmp(out + strlen(out) - 4, "\r\n\r\n"));
	/* another path: 404, a line of text, never the page */
	parse("GET /x HTTP/1.1\r\n\r\n", &r);
	n = lr_metrics_http_reply(&r, body, strlen(body), out, sizeof(out));
	out[n] = '\0';
	assert_true(!strncmp(out, "HTTP/1.1 404 Not Found\r\n", 24));
	assert_non_null(strstr(out, "Content-Type: text/plain; charset=utf-8\r\n"));
	assert_non_null(strstr(out, "Connection: close\r\n"));
	assert_null(strstr(out, "# HELP"));
	/* another method: 405 with Allow */
	parse("PUT /metrics HTTP/1.1\r\n\r\n", &r);
	n = lr_metrics_http_reply(&r, body, strlen(body), out, sizeof(out));
	out[n] = '\0';
	assert_true(!strncmp(out, "HTTP/1.1 405 Method Not Allowed\r\n", 33));
	assert_non_null(strstr(out, "Allow: GET, HEAD\r\n"));
	/* malformed, too long */
	parse("BREW\r\n\r\n", &r);
	n = lr_metrics_http_reply(&r, body, strlen(body), out, sizeof(out));
	out[n] = '\0';
	assert_true(!strncmp(out, "HTTP/1.1 400 Bad Request\r\n", 26));
	r = (struct lr_metrics_req){ .status = 431 };
	n = lr_metrics_http_reply(&r, NULL, 0, out, sizeof(out));
	out[n] = '\0';
	assert_true(!strncmp(out, "HTTP/1.1 431 Request Header Fields Too Large\r\n", 46));
	/* the Content-Length is the body's */
	{
		const char *cl = strstr(out, "Content-Length: "), *b = strstr(out, "\r\n\r\n") + 4;

		assert_int_equal(strtoul(cl + 16, NULL, 10), strlen(b));
	}
	/* no room: refused */
	parse("GET /metrics HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(lr_metrics_http_reply(&r, body, strlen(body), small, sizeof(small)), -ENOSPC);
	assert_int_equal(lr_metrics_http_reply(&r, body, strlen(body), small, 20), -ENOSPC);
}

/* ---- the seqlock --------------------------------------------------------------------------------- */

static void test_seqlock(void **state)
{
	struct lr_metrics_shm *m = calloc(1, sizeof(*m));
	struct lr_metrics_test t = { .tests = 3, .id = 4, .running = 1, .rx_packets = 99 }, u;

	(void)state;
	assert_int_equal(lr_metrics_read(m, &u), 0);
	assert_int_equal(u.id, 0);
	lr_metrics_publish(m, &t);
	assert_int_equal(m->seq % 2, 0);
	assert_int_equal(lr_metrics_read(m, &u), 0);
	assert_memory_equal(&t, &u, sizeof(t));
	/* strings are terminated on the way out, whatever was written */
	memset(t.name, 'x', sizeof(t.name));
	lr_metrics_publish(m, &t);
	assert_int_equal(lr_metrics_read(m, &u), 0);
	assert_int_equal(strlen(u.name), sizeof(u.name) - 1);
	t.name[0] = '\0';
	/* a writer that died in the middle of a write: no read succeeds... */
	m->seq++;
	assert_int_equal(lr_metrics_read(m, &u), -EAGAIN);
	/* ...until the parent recovers: the test it left running has ended */
	lr_metrics_recover(m);
	assert_int_equal(m->seq % 2, 0);
	assert_int_equal(lr_metrics_read(m, &u), 0);
	assert_int_equal(u.running, 0);
	assert_int_equal(u.tests, 4);
	assert_int_equal(u.rx_packets, 99);
	/* recovering again changes nothing: nothing runs */
	lr_metrics_recover(m);
	assert_int_equal(lr_metrics_read(m, &u), 0);
	assert_int_equal(u.tests, 4);
	/* a write over an odd sequence ends even */
	m->seq++;
	lr_metrics_publish(m, &t);
	assert_int_equal(m->seq % 2, 0);
	assert_int_equal(lr_metrics_read(m, &u), 0);
	free(m);
}

struct race {
	struct lr_metrics_shm *m;
	uint64_t rounds;
	volatile int done;
};

/* Writes states whose every field says the same round number. */
static void *writer(void *arg)
{
	struct race *r = arg;
	struct lr_metrics_test t;
	uint64_t k;
	unsigned int i;

	for (k = 1; k <= r->rounds; k++) {
		memset(&t, 0, sizeof(t));
		t.id = t.tests = t.rx_packets = t.tx_packets = t.reflect_bytes = k;
		for (i = 0; i < LR_METRICS_NQ; i++)
			t.lat_ns[i] = k;
		t.nqueues = LR_METRICS_QUEUES;
		t.queues[LR_METRICS_QUEUES - 1].packets = k;
		snprintf(t.name, sizeof(t.name), "%llu", (unsigned long long)k);
		lr_metrics_publish(r->m, &t);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Reads racing a writer: each copy is one whole state, and the states only move forward. */
static void test_seqlock_race(void **state)
{
	struct race r = { .m = calloc(1, sizeof(*r.m)), .rounds = 200000 };
	struct lr_metrics_test u;
	uint64_t last = 0, reads = 0;
	char want[32];
	pthread_t th;
	unsigned int i;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, writer, &r), 0);
	while (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) || reads < 10) {
		if (lr_metrics_read(r.m, &u))
			continue;
		reads++;
		assert_true(u.id >= last);
		last = u.id;
		if (!u.id)
			continue;
		assert_int_equal(u.tests, u.id);
		assert_int_equal(u.rx_packets, u.id);
		assert_int_equal(u.tx_packets, u.id);
		assert_int_equal(u.reflect_bytes, u.id);
		for (i = 0; i < LR_METRICS_NQ; i++)
			assert_int_equal(u.lat_ns[i], u.id);
		assert_int_equal(u.queues[LR_METRICS_QUEUES - 1].packets, u.id);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)u.id);
		assert_string_equal(u.name, want);
	}
	pthread_join(th, NULL);
	assert_int_equal(lr_metrics_read(r.m, &u), 0);
	assert_int_equal(u.id, r.rounds);
	free(r.m);
}

/* ---- agent --metrics on the command line --------------------------------------------------------- */

static int agent_cli(struct lr_agent_opts *o, const char *args, char *err, size_t errlen)
{
	char buf[512], *argv[32], *tok, *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "agent %s", args);
	for (tok = strtok_r(buf, " ", &save); tok && argc < 31; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	err[0] = '\0';
	return lr_cli_parse(&lr_agent_cli, argc, argv, o, NULL, err, errlen);
}

static void test_cli(void **state)
{
	struct lr_agent_opts *o = malloc(sizeof(*o));
	static const struct {
		const char *args, *says;
	} bad[] = {
		{ "--listen 127.0.0.1 --metrics 127.0.0.1", "has no port" },
		{ "--listen 127.0.0.1 --metrics [::1]", "has no port" },
		{ "--listen 127.0.0.1 --metrics ::1", "has no port" },
		{ "--listen 127.0.0.1 --metrics 127.0.0.1:0", "is not a port" },
		{ "--listen 127.0.0.1 --metrics 127.0.0.1:65536", "is not a port" },
		{ "--listen 127.0.0.1 --metrics 127.0.0.1:x", "is not a port" },
		{ "--listen 127.0.0.1 --metrics metrics.example:9446", "is not an IPv4 or IPv6 address" },
		{ "--listen 127.0.0.1 --metrics 1.2.3:9446", "is not an IPv4 or IPv6 address" },
		{ "--listen 127.0.0.1 --metrics ::1:9446", "has no port" },
		{ "--listen 127.0.0.1:9446 --metrics 127.0.0.1:9446", "is --listen's own address and port" },
		{ "--listen 127.0.0.1 --metrics 127.0.0.1:7446", "is --listen's own address and port" },
	};
	char err[512];
	unsigned int i;

	(void)state;
	assert_int_equal(agent_cli(o, "--insecure --listen 127.0.0.1", err, sizeof(err)), 0);
	assert_string_equal(o->metrics, "");
	assert_int_equal(agent_cli(o, "--insecure --listen 127.0.0.1 --metrics 127.0.0.1:9446", err, sizeof(err)), 0);
	assert_string_equal(o->metrics, "127.0.0.1:9446");
	assert_int_equal(agent_cli(o, "--insecure --listen 127.0.0.1 --metrics [::1]:9446", err, sizeof(err)), 0);
	assert_int_equal(agent_cli(o, "--insecure --listen 127.0.0.1 --metrics 0.0.0.0:9446", err, sizeof(err)), 0);
	/* another port on the same address, or the same port on another address */
	assert_int_equal(agent_cli(o, "--insecure --listen 127.0.0.1 --metrics 127.0.0.1:7447", err, sizeof(err)), 0);
	assert_int_equal(agent_cli(o, "--insecure --listen 127.0.0.1 --metrics 127.0.0.2:7446", err, sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (agent_cli(o, bad[i].args, err, sizeof(err)) != -EINVAL || !strstr(err, bad[i].says) ||
		    !strstr(err, "--metrics"))
			fail_msg("'%s': '%s'", bad[i].args, err);
		assert_null(strchr(err, '\n'));
	}
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_idle),	cmocka_unit_test(test_render_running),
		cmocka_unit_test(test_render_cost),	cmocka_unit_test(test_render_queues),
		cmocka_unit_test(test_render_rx_sent),	cmocka_unit_test(test_render_escaping),
		cmocka_unit_test(test_render_large),	cmocka_unit_test(test_http_parse),
		cmocka_unit_test(test_http_reply),	cmocka_unit_test(test_seqlock),
		cmocka_unit_test(test_seqlock_race),	cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
