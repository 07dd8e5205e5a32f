/* SPDX-License-Identifier: MIT */
/* The agent's metrics: the seqlock over the shared state, the exposition text, the HTTP exchange. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/metrics.h"

#define WORDS		(sizeof(((struct lr_metrics_shm *)0)->w) / sizeof(uint64_t))
#define READ_TRIES	1000	/* a write takes well under a microsecond; a stuck one is a dead writer's */

_Static_assert(sizeof(struct lr_metrics_test) <= sizeof(((struct lr_metrics_shm *)0)->w), "the state fits its words");

static const char *const quantiles[LR_METRICS_NQ] = { "0", "0.5", "0.9", "0.99", "0.999", "1" };

static const char *const role_names[] = {
	[LR_METRICS_NONE] = "", [LR_METRICS_RX] = "rx", [LR_METRICS_TX] = "tx", [LR_METRICS_REFLECT] = "reflect",
};

/* ---- the seqlock ---------------------------------------------------------------------------- */

/*
 * The classic seqlock, with every access to the shared words atomic (relaxed), so that a reader
 * racing a writer reads stale or mixed words, never undefined ones, and throws them away:
 * the writer makes seq odd, and its release fence keeps the data stores after that store; the
 * final release store of the even seq keeps them before it. The reader's acquire load of seq
 * comes before its data loads, and its acquire fence keeps them before the second load of seq.
 */
void lr_metrics_publish(struct lr_metrics_shm *m, const struct lr_metrics_test *t)
{
	uint64_t w[WORDS] = { 0 }, seq;
	size_t i;

	memcpy(w, t, sizeof(*t));
	seq = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
	/* odd: a writer died between its two stores (the agent's parent takes over); start from even */
	seq += seq & 1;
	__atomic_store_n(&m->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (i = 0; i < WORDS; i++)
		__atomic_store_n(&m->w[i], w[i], __ATOMIC_RELAXED);
	__atomic_store_n(&m->seq, seq + 2, __ATOMIC_RELEASE);
}

int lr_metrics_read(const struct lr_metrics_shm *m, struct lr_metrics_test *t)
{
	uint64_t w[WORDS], s0, s1;
	unsigned int tries;
	size_t i;

	for (tries = 0; tries < READ_TRIES; tries++) {
		s0 = __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE);
		if (s0 & 1) {
			sched_yield();
			continue;
		}
		for (i = 0; i < WORDS; i++)
			w[i] = __atomic_load_n(&m->w[i], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s1 = __atomic_load_n(&m->seq, __ATOMIC_RELAXED);
		if (s0 != s1)
			continue;
		memcpy(t, w, sizeof(*t));
		/* the strings are the session's: terminated here whatever it wrote */
		t->name[sizeof(t->name) - 1] = '\0';
		t->interface[sizeof(t->interface) - 1] = '\0';
		t->engine[sizeof(t->engine) - 1] = '\0';
		if (t->nqueues > LR_METRICS_QUEUES)
			t->nqueues = LR_METRICS_QUEUES;
		return 0;
	}
	return -EAGAIN;
}

void lr_metrics_recover(struct lr_metrics_shm *m)
{
	struct lr_metrics_test t;
	uint64_t w[WORDS];
	size_t i;

	if (lr_metrics_read(m, &t)) {
		/* no writer is left to finish: the words as they are (strings terminated once rendered) */
		for (i = 0; i < WORDS; i++)
			w[i] = __atomic_load_n(&m->w[i], __ATOMIC_RELAXED);
		memcpy(&t, w, sizeof(t));
	} else if (!t.running) {
		return;
	}
	if (t.running) {
		t.running = 0;
		t.tests++;
	}
	lr_metrics_publish(m, &t);
}

/* ---- the exposition text -------------------------------------------------------------------- */

struct page {
	char *buf;
	size_t len, off;
	bool full;
};

static void put(struct page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct page *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(p->buf + p->off, p->len - p->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= p->len - p->off) {
		p->full = true;
		return;
	}
	p->off += (size_t)n;
}

/*
 * A label value as the format wants it: backslash, double quote and newline escaped. Other control
 * characters and bytes outside ASCII become '?', so the page is valid UTF-8 whatever a name holds.
 */
static const char *label(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in && o + 3 <= len; in++) {
		unsigned char c = (unsigned char)*in;

		if (c == '\\' || c == '"') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
		}
	}
	out[o] = '\0';
	return out;
}

/* Go's and Prometheus's spelling of the special values; otherwise the shortest text that reads back exact. */
static const char *real(double v, char *buf, size_t len)
{
	if (isnan(v))
		return "NaN";
	if (isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	snprintf(buf, len, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, len, "%.17g", v);
	return buf;
}

/* Nanoseconds as seconds, in decimal: exact, where a double would round. */
static const char *seconds(uint64_t ns, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);

	while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
		buf[--n] = '\0';
	return buf;
}

static void family(struct page *p, const char *name, const char *type, const char *help)
{
	put(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void u64(struct page *p, const char *name, const char *type, const char *help, uint64_t v)
{
	family(p, name, type, help);
	put(p, "%s %" PRIu64 "\n", name, v);
}

static void dbl(struct page *p, const char *name, const char *type, const char *help, double v)
{
	char b[40];

	family(p, name, type, help);
	put(p, "%s %s\n", name, real(v, b, sizeof(b)));
}

static void agent_part(struct page *p, const struct lr_metrics_agent *a, const struct lr_metrics_test *t)
{
	char v1[256], v2[256];

	family(p, "linerate_agent_info", "gauge", "The agent's release and git revision, as labels; always 1.");
	put(p, "linerate_agent_info{version=\"%s\",revision=\"%s\"} 1\n", label(a->release, v1, sizeof(v1)),
	    label(a->revision, v2, sizeof(v2)));
	dbl(p, "linerate_agent_start_time_seconds", "gauge", "When the agent started, in seconds since the Unix epoch.",
	    a->start_time);
	u64(p, "linerate_agent_busy", "gauge",
	    "1 while a session (one controller's connection) runs, whose test may be prepared or not; else 0.",
	    a->busy);
	u64(p, "linerate_agent_sessions_total", "counter",
	    "Sessions started: controllers' connections, authenticated, handed to a session.",
	    a->sessions);
	family(p, "linerate_agent_sessions_refused_total", "counter",
	       "Connections refused, by reason: busy (another session ran), error (no process or pipe for it), "
	       "full (over the cap of unauthenticated connections), timeout (no hello or auth in time).");
	put(p, "linerate_agent_sessions_refused_total{reason=\"busy\"} %" PRIu64 "\n", a->refused_busy);
	put(p, "linerate_agent_sessions_refused_total{reason=\"error\"} %" PRIu64 "\n", a->refused_error);
	put(p, "linerate_agent_sessions_refused_total{reason=\"full\"} %" PRIu64 "\n", a->refused_full);
	put(p, "linerate_agent_sessions_refused_total{reason=\"timeout\"} %" PRIu64 "\n", a->refused_timeout);
	u64(p, "linerate_agent_tests_total", "counter",
	    "Tests (a receiver, sender or reflector prepared for a controller) that ended, however they ended.",
	    t->tests);
}

static void test_part(struct page *p, const struct lr_metrics_test *t)
{
	char v[4][288], b[40];
	unsigned int i;

	family(p, "linerate_test_info", "gauge",
	       "The current or last test: its role (rx, tx, reflect), interface, engine and description; always 1.");
	if (t->id)
		put(p, "linerate_test_info{role=\"%s\",interface=\"%s\",engine=\"%s\",test=\"%s\"} 1\n",
		    t->role < sizeof(role_names) / sizeof(role_names[0]) ? role_names[t->role] : "",
		    label(t->interface, v[0], sizeof(v[0])), label(t->engine, v[1], sizeof(v[1])),
		    label(t->name, v[2], sizeof(v[2])));
	u64(p, "linerate_test_id", "gauge",
	    "The current or last test's number since the agent started; 0 before the first.", t->id);
	u64(p, "linerate_test_running", "gauge", "1 from a test's prepare to its end, else 0.", t->running);
	dbl(p, "linerate_test_start_time_seconds", "gauge",
	    "When the current or last test was prepared, in seconds since the Unix epoch; 0 before the first.",
	    t->start_time);

	u64(p, "linerate_tx_packets_total", "counter",
	    "Data frames of the test's sender: completed so far while it runs; at its end the send result's "
	    "tx.packets, those the device accepted.",
	    t->tx_packets);
	u64(p, "linerate_tx_bytes_total", "counter", "Bytes of those frames, without the FCS (tx.bytes).", t->tx_bytes);
	dbl(p, "linerate_tx_packets_per_second", "gauge",
	    "The sender's rate between its last two counter reads; at its end, the result's tx.pps.", t->tx_pps);
	family(p, "linerate_tx_queue_packets_total", "counter",
	       "Data frames the device completed, per TX queue of the sender (tx.per_queue[].packets).");
	for (i = 0; i < t->nqueues && i < LR_METRICS_QUEUES; i++)
		put(p, "linerate_tx_queue_packets_total{queue=\"%" PRIu32 "\"} %" PRIu64 "\n", t->queues[i].queue,
		    t->queues[i].packets);

	u64(p, "linerate_rx_packets_total", "counter",
	    "Test data frames the test's receiver counted; at its end, the recv result's rx.packets.", t->rx_packets);
	u64(p, "linerate_rx_bytes_total", "counter", "Bytes of those frames, without the FCS (rx.bytes).", t->rx_bytes);
	/* no sample before a marker: the JSON's null, which a 0 would misreport as "nothing sent" */
	family(p, "linerate_rx_sent_packets_total", "counter",
	       "Data frames the senders sent, as their end-of-test markers say (rx.sent); no sample before the "
	       "first marker.");
	if (t->rx_flows_eot)
		put(p, "linerate_rx_sent_packets_total %" PRIu64 "\n", t->rx_sent);
	family(p, "linerate_rx_queue_packets_total", "counter",
	       "Test data frames the receiver counted, per RX queue that counted one (rx.per_queue[].packets).");
	for (i = 0; i < LR_METRICS_RX_QUEUES; i++)
		if (t->rx_queue_packets[i])
			put(p, "linerate_rx_queue_packets_total{queue=\"%u\"} %" PRIu64 "\n", i,
			    t->rx_queue_packets[i]);
	family(p, "linerate_rx_lost_packets", "gauge",
	       "Frames lost (rx.lost): the end-of-test markers settle it, open sequence gaps stand for it until then; "
	       "a late frame takes one back.");
	put(p, "linerate_rx_lost_packets %" PRId64 "\n", t->rx_lost);
	u64(p, "linerate_rx_reordered_packets_total", "counter", "Frames that came after a later one (rx.reordered).",
	    t->rx_reordered);
	u64(p, "linerate_rx_duplicate_packets_total", "counter", "Frames that came twice (rx.duplicates).",
	    t->rx_duplicates);
	dbl(p, "linerate_rx_packets_per_second", "gauge",
	    "The receiver's rate between its last two counter reads; at its end, the result's rx.pps.", t->rx_pps);
	/* a summary over the test's stamped frames: quantiles (0 the minimum, 1 the maximum), sum and count */
	family(p, "linerate_rx_latency_seconds", "summary",
	       "One-way latency of the stamped frames, as latency_ns has it: quantiles (0: min, 1: max; NaN without "
	       "samples), their sum and count.");
	for (i = 0; i < LR_METRICS_NQ; i++)
		put(p, "linerate_rx_latency_seconds{quantile=\"%s\"} %s\n", quantiles[i],
		    t->lat_count ? seconds(t->lat_ns[i], b, sizeof(b)) : "NaN");
	put(p, "linerate_rx_latency_seconds_sum %s\n", seconds(t->lat_sum_ns, b, sizeof(b)));
	put(p, "linerate_rx_latency_seconds_count %" PRIu64 "\n", t->lat_count);

	u64(p, "linerate_reflect_packets_total", "counter",
	    "Data frames the test's reflector sent back (reflect.packets).", t->reflect_packets);
	u64(p, "linerate_reflect_bytes_total", "counter", "Bytes of those frames, without the FCS (reflect.bytes).",
	    t->reflect_bytes);

	family(p, "linerate_cost_seconds_per_packet", "gauge",
	       "CPU time per packet of this endpoint's part (docs/cost.md): sender, the sending workers' own time per "
	       "frame sent (known at the test's end); receiver, the XDP program's calibrated time per frame (recv "
	       "--prog-stats). NaN while unknown.");
	put(p, "linerate_cost_seconds_per_packet{part=\"sender\"} %s\n", real(t->cost_sender_ns / 1e9, b, sizeof(b)));
	put(p, "linerate_cost_seconds_per_packet{part=\"receiver\"} %s\n", real(t->cost_receiver_ns / 1e9, b, sizeof(b)));
	family(p, "linerate_cost_error_seconds_per_packet", "gauge",
	       "How far each part of linerate_cost_seconds_per_packet can be off (docs/cost.md); NaN while unknown.");
	put(p, "linerate_cost_error_seconds_per_packet{part=\"sender\"} %s\n",
	    real(t->cost_sender_err_ns / 1e9, b, sizeof(b)));
	put(p, "linerate_cost_error_seconds_per_packet{part=\"receiver\"} %s\n",
	    real(t->cost_receiver_err_ns / 1e9, b, sizeof(b)));
}

int lr_metrics_render(const struct lr_metrics_agent *a, const struct lr_metrics_test *t, char *buf, size_t len)
{
	struct page p = { .buf = buf, .len = len };

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	agent_part(&p, a, t);
	test_part(&p, t);
	return p.full || p.off > INT32_MAX ? -ENOSPC : (int)p.off;
}

/* ---- HTTP ----------------------------------------------------------------------------------- */

/* The end of the head: the blank line after the headers ("\r\n\r\n", or bare "\n\n"). */
static bool head_complete(const char *buf, size_t len)
{
	size_t i;

	for (i = 1; i < len; i++)
		if (buf[i] == '\n' && (buf[i - 1] == '\n' || (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n')))
			return true;
	return false;
}

int lr_metrics_http_parse(const char *buf, size_t len, struct lr_metrics_req *r)
{
	const char *line_end, *sp1, *sp2, *path_end;
	size_t mlen, plen, i;

	memset(r, 0, sizeof(*r));
	if (!head_complete(buf, len)) {
		if (len < LR_METRICS_HEAD_MAX)
			return 0;
		r->status = 431;
		return 1;
	}
	r->status = 400;
	line_end = memchr(buf, '\n', len);
	if (line_end > buf && line_end[-1] == '\r')
		line_end--;
	/* METHOD SP TARGET SP HTTP/1.x, nothing more */
	sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
	if (!sp1)
		return 1;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1));
	if (!sp2 || sp1 == buf || sp2 == sp1 + 1)
		return 1;
	if ((size_t)(line_end - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) || (sp2[8] != '0' && sp2[8] != '1'))
		return 1;
	mlen = (size_t)(sp1 - buf);
	for (i = 0; i < mlen; i++)
		if (buf[i] < 'A' || buf[i] > 'Z')
			return 1;
	for (i = 0; sp1 + 1 + i < sp2; i++)
		if ((unsigned char)sp1[1 + i] <= 0x20 || (unsigned char)sp1[1 + i] >= 0x7f)
			return 1;
	if (!(mlen == 3 && !memcmp(buf, "GET", 3)) && !(mlen == 4 && !memcmp(buf, "HEAD", 4))) {
		r->status = 405;
		return 1;
	}
	if (sp1[1] != '/')
		return 1;
	path_end = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	plen = (size_t)((path_end ? path_end : sp2) - sp1 - 1);
	r->head = mlen == 4;
	if (plen == 8 && !memcmp(sp1 + 1, "/metrics", 8)) {
		r->status = 200;
		r->metrics = true;
	} else if (plen == 1) {
		r->status = 200;
	} else {
		r->status = 404;
	}
	return 1;
}

int lr_metrics_http_reply(const struct lr_metrics_req *r, const char *body, size_t bodylen, char *out, size_t outlen)
{
	const char *reason, *text, *type;
	int n;

	switch (r->status) {
	case 200:
		reason = "OK";
		text = "linerate agent: the metrics are at /metrics\n";
		break;
	case 404:
		reason = "Not Found";
		text = "not found: the metrics are at /metrics\n";
		break;
	case 405:
		reason = "Method Not Allowed";
		text = "method not allowed: GET or HEAD /metrics\n";
		break;
	case 431:
		reason = "Request Header Fields Too Large";
		text = "request too large\n";
		break;
	case 503:
		reason = "Service Unavailable";
		text = "the metrics are being written: try again\n";
		break;
	default:
		reason = r->status == 500 ? "Internal Server Error" : "Bad Request";
		text = r->status == 500 ? "cannot render the metrics\n" : "bad request: GET /metrics HTTP/1.1\n";
		break;
	}
	if (!(r->status == 200 && r->metrics)) {
		body = text;
		bodylen = strlen(text);
	}
	type = r->status == 200 && r->metrics ? LR_METRICS_CONTENT_TYPE : "text/plain; charset=utf-8";
	n = snprintf(out, outlen,
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
		     r->status, reason, type, bodylen, r->status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (n < 0 || (size_t)n >= outlen)
		return -ENOSPC;
	if (r->head)
		return n;
	if (bodylen > outlen - (size_t)n || (size_t)n + bodylen > INT32_MAX)
		return -ENOSPC;
	memcpy(out + n, body, bodylen);
	return n + (int)bodylen;
}
