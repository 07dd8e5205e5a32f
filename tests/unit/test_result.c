/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the result codec: a tx and an rx result render, parse back and render again to
 * the same text; every key, deleted or given another type, is refused with its path named.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/jfield.h"
#include "util/report.h"
#include "util/result.h"

static char err[512];

/*
 * Every member set, each to a value of its own; static, so that padding is zero and a parsed copy
 * compares equal byte for byte.
 */
static const struct lr_tx_result tx_example = {
	.packets = 1999990, .queued = 2000010, .completed = 2000000, .bytes = 1999990ULL * 60,
	.pps = 1234567.891, .device_dropped = 10, .eot = 15, .device = { 2000015, 11, 12 },
	.nqueues = 3,
	.queues = {
		{ .queue = 4, .cpu = 1, .packets = 666666, .pps = 411522.63, .ring_full = 7, .kicks = 100,
		  .have_device_packets = true, .device_packets = 666667 },
		{ .queue = 5, .cpu = 2, .packets = 666667, .pps = 411522.63 + 1 / 3.0, .ring_full = 8, .kicks = 101,
		  .kick_errors = 1 },
		{ .queue = 6, .cpu = 3, .packets = 666668, .pps = 411523.5, .ring_full = 9, .kicks = 102,
		  .kick_errors = 2, .have_device_packets = true, .device_packets = 666669 },
	},
};

static const struct lr_rx_result rx_example = {
	.packets = 1999980, .bytes = 1999980ULL * 60, .foreign = 3, .ring_drops = 4, .eot = 40,
	.bad_flow = 2, .sent = 1999990, .late = 5, .dups = 6, .lost = -7,
	.flows = 8, .flows_eot = 8, .flows_announced = 9, .settled = true,
	.have_unseen = true, .unseen = 19,
	.have_shared = true, .flows_shared = 3, .run_ids = { 0xdeadbeefU, 1 },
	.active_s = 1.6180339887498949, .pps = 1234567.0 / 3.0,
	.lat_count = 1999970, .lat_min = 1500, .lat_p50 = 2500, .lat_p90 = 3500, .lat_p99 = 4500,
	.lat_p999 = 5500, .lat_max = 65000, .lat_mean = 2600, .lat_future = 1,
	.lat_clock = LR_LAT_CLOCK_ESTIMATED, .lat_offset_ns = -123456789012, .lat_error_bound_ns = 350,
	.lat_drift_ppb = -2500, .lat_valid = true,
	.queue_packets = { [0] = 1000000, [5] = 999980, [LR_RX_MAX_QUEUES - 1] = 1 },
	.device = { 2000100, 13, 14 },
	.pcap = true, .pcap_file = "/tmp/lr \"quoted\"/rx.pcap", .pcap_written = 1000, .pcap_dropped = 16,
	.pcap_capped = 17, .pcap_every = 18, .pcap_snaplen = 128,
};

static void tx_sample(void *p)
{
	memcpy(p, &tx_example, sizeof(tx_example));
}

static void rx_sample(void *p)
{
	memcpy(p, &rx_example, sizeof(rx_example));
}

/* One result type: how the codec writes it into a document, and reads it back. */
struct codec {
	const char *command;
	size_t size;
	void (*put)(struct json_object *doc, const void *r);
	int (*get)(struct json_object *doc, void *r, char *err, size_t errlen);
	void (*sample)(void *r);	/* every member set, each to a value of its own */
};

static void tx_put(struct json_object *doc, const void *r)
{
	lr_tx_result_put(doc, r);
}

static int tx_get(struct json_object *doc, void *r, char *e, size_t len)
{
	return lr_tx_result_get(doc, r, e, len);
}

static void rx_put(struct json_object *doc, const void *r)
{
	lr_rx_result_put(doc, r);
}

static int rx_get(struct json_object *doc, void *r, char *e, size_t len)
{
	return lr_rx_result_get(doc, r, e, len);
}

static const struct codec tx_codec = { "send", sizeof(struct lr_tx_result), tx_put, tx_get, tx_sample };
static const struct codec rx_codec = { "recv", sizeof(struct lr_rx_result), rx_put, rx_get, rx_sample };

static char *render(const struct codec *c, const void *r)
{
	struct json_object *o = lr_json_doc(c->command);
	char *t;

	c->put(o, r);
	t = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return t;
}

/* Parses @doc into a scratch result: the codec's verdict. */
static int parse(const struct codec *c, struct json_object *doc, char *e, size_t len)
{
	void *r = malloc(c->size);
	int ret = c->get(doc, r, e, len);

	free(r);
	return ret;
}

/* render -> parse -> render: the same text, and the same struct; and each of @texts in it. */
static void round_trip(const struct codec *c, const void *a, const char *const *texts)
{
	void *b = calloc(1, c->size);
	char *t1 = render(c, a), *t2;
	struct json_object *doc = json_tokener_parse(t1);

	assert_non_null(doc);
	assert_int_equal(c->get(doc, b, err, sizeof(err)), 0);
	assert_memory_equal(a, b, c->size);
	t2 = render(c, b);
	assert_string_equal(t1, t2);
	for (; *texts; texts++)
		if (!strstr(t1, *texts))
			fail_msg("%s is not in %s", *texts, t1);
	json_object_put(doc);
	free(t1);
	free(t2);
	free(b);
}

#define TEXTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_tx_round_trip(void **state)
{
	struct lr_tx_result *a = calloc(1, sizeof(*a));

	(void)state;
	tx_sample(a);
	round_trip(&tx_codec, a, TEXTS("\"device_packets\":null", "\"device_packets\":666667,"));
	free(a);
}

static void test_rx_round_trip(void **state)
{
	struct lr_rx_result *a = calloc(1, sizeof(*a));

	(void)state;
	rx_sample(a);
	round_trip(&rx_codec, a, TEXTS("\"sent\":1999990", "\"file\":\"/tmp/lr \\\"quoted\\\"/rx.pcap\""));
	/* no marker: "sent" null; a capture that was lost: "file" null */
	a->flows_eot = 0;
	a->sent = 0;
	memset(a->pcap_file, 0, sizeof(a->pcap_file));
	round_trip(&rx_codec, a, TEXTS("\"sent\":null", "\"file\":null"));
	/* no capture: "pcap" null */
	a->pcap = false;
	a->pcap_written = a->pcap_dropped = a->pcap_capped = a->pcap_every = a->pcap_snaplen = 0;
	round_trip(&rx_codec, a, TEXTS("\"pcap\":null"));
	/* one run id per flow; the packet engine, with no hook to compare */
	a->have_shared = false;
	a->flows_shared = 0;
	a->run_ids[0] = a->run_ids[1] = 0;
	a->have_unseen = false;
	a->unseen = 0;
	round_trip(&rx_codec, a, TEXTS("\"shared_flows\":null", "\"unseen\":null"));
	free(a);
}

/* The derived rates: from the counts, as every report computed them. */
static void assert_number_at(struct json_object *o, const char *pointer, double want)
{
	struct json_object *v;

	assert_int_equal(json_pointer_get(o, pointer, &v), 0);
	if (json_object_get_double(v) != want)
		fail_msg("%s: %.17g, want %.17g", pointer, json_object_get_double(v), want);
}

static void test_derived(void **state)
{
	struct lr_tx_result *t = calloc(1, sizeof(*t));
	struct lr_rx_result *r = calloc(1, sizeof(*r));
	struct json_object *o = json_object_new_object();

	(void)state;
	t->packets = 1000;
	t->bytes = 1000 * 60;
	t->pps = 1000;
	r->packets = 10;
	r->bytes = 10 * 1514;
	r->pps = 2;
	lr_tx_result_put(o, t);
	lr_rx_result_put(o, r);
	assert_number_at(o, "/tx/bps_l2", 1000.0 * 64 * 8);
	assert_number_at(o, "/tx/bps_l1", 1000.0 * 84 * 8);
	assert_number_at(o, "/rx/bps_l2", 2.0 * 1518 * 8);
	assert_number_at(o, "/rx/bps_l1", 2.0 * 1538 * 8);
	assert_true(lr_rx_result_frame_bytes(r) == 1514.0);
	json_object_put(o);
	free(t);
	free(r);
}

/* How an error names the key at a JSON pointer: "/rx/per_queue/1/packets" is "rx.per_queue[1].packets". */
static void dotted(const char *pointer, char *out, size_t len)
{
	const char *p = pointer + 1;
	size_t o = 0;

	while (*p && o + 8 < len) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n && strspn(p, "0123456789") == n)
			o += (size_t)snprintf(out + o, len - o, "[%.*s]", (int)n, p);
		else
			o += (size_t)snprintf(out + o, len - o, "%s%.*s", o ? "." : "", (int)n, p);
		p += n + (end ? 1 : 0);
		if (!end)
			break;
	}
	out[o] = '\0';
}

struct mutation {
	const struct codec *c;
	const char *text;
	unsigned int tried;
};

/* Deletes, then mistypes, the value at @pointer in a fresh copy; both must be refused naming it. */
static void refuse_at(struct mutation *m, struct json_object *parent, const char *key, const char *pointer)
{
	char path[256], copy_ptr[256];
	struct json_object *doc, *at;
	bool array = json_object_is_type(parent, json_type_array);

	dotted(pointer, path, sizeof(path));
	snprintf(copy_ptr, sizeof(copy_ptr), "%s", pointer);
	*strrchr(copy_ptr, '/') = '\0';

	doc = json_tokener_parse(m->text);
	assert_int_equal(json_pointer_get(doc, copy_ptr[0] ? copy_ptr : "", &at), 0);
	if (array) {
		json_object_array_del_idx(at, (size_t)atoi(key), 1);
	} else {
		json_object_object_del(at, key);
	}
	/* an element gone from an array is no error of its own (per_queue may be empty): only keys */
	if (!array) {
		err[0] = '\0';
		assert_int_not_equal(parse(m->c, doc, err, sizeof(err)), 0);
		if (!strstr(err, path))
			fail_msg("deleting %s: the error \"%s\" does not name it", path, err);
	}
	json_object_put(doc);

	doc = json_tokener_parse(m->text);
	assert_int_equal(json_pointer_get(doc, pointer, &at), 0);
	/* no value of ours takes an array where it has none, nor an object where it has an array */
	assert_int_equal(json_pointer_set(&doc, pointer,
					  json_object_is_type(at, json_type_array) ? json_object_new_object() :
										     json_object_new_array()),
			 0);
	err[0] = '\0';
	assert_int_not_equal(parse(m->c, doc, err, sizeof(err)), 0);
	if (!strstr(err, path))
		fail_msg("mistyping %s: the error \"%s\" does not name it", path, err);
	json_object_put(doc);
	m->tried++;
}

/* Every key and element below @o (at @pointer), depth first. */
static void refuse_each(struct mutation *m, struct json_object *o, const char *pointer)
{
	char child[256];

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, val)
		{
			snprintf(child, sizeof(child), "%s/%s", pointer, key);
			refuse_at(m, o, key, child);
			refuse_each(m, val, child);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		size_t i;

		for (i = 0; i < json_object_array_length(o); i++) {
			char idx[24];

			snprintf(idx, sizeof(idx), "%zu", i);
			snprintf(child, sizeof(child), "%s/%zu", pointer, i);
			refuse_at(m, o, idx, child);
			refuse_each(m, json_object_array_get_idx(o, i), child);
		}
	}
}

static unsigned int keys_below(struct json_object *o)
{
	unsigned int n = 0;
	size_t i;

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, val)
		{
			(void)key;
			n += 1 + keys_below(val);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (i = 0; i < json_object_array_length(o); i++)
			n += 1 + keys_below(json_object_array_get_idx(o, i));
	}
	return n;
}

static void refuse_all(const struct codec *c, const char *text, const char *top)
{
	struct mutation m = { c, text, 0 };
	struct json_object *doc = json_tokener_parse(text), *o;
	char pointer[32];

	snprintf(pointer, sizeof(pointer), "/%s", top);
	assert_int_equal(json_pointer_get(doc, pointer, &o), 0);
	refuse_at(&m, doc, top, pointer);
	refuse_each(&m, o, pointer);
	/* each key below the object, with the object itself */
	assert_int_equal(m.tried, 1 + keys_below(o));
	json_object_put(doc);
}

/* Every key below each of @tops (and each of them), deleted or mistyped, is refused by name. */
static void strict(const struct codec *c, const char *const *tops)
{
	void *a = calloc(1, c->size);
	char *t;

	c->sample(a);
	t = render(c, a);
	for (; *tops; tops++)
		refuse_all(c, t, *tops);
	free(t);
	free(a);
}

static void test_tx_strict(void **state)
{
	(void)state;
	strict(&tx_codec, (const char *const[]){ "tx", NULL });
}

static void test_rx_strict(void **state)
{
	(void)state;
	strict(&rx_codec, (const char *const[]){ "active_s", "rx", "latency_ns", NULL });
}

/* One change to a valid document, refused with @what in the error. */
static void refused(const struct codec *c, const char *text, const char *pointer, struct json_object *v, const char *what)
{
	struct json_object *doc = json_tokener_parse(text);

	assert_non_null(doc);
	if (v)
		assert_int_equal(json_pointer_set(&doc, pointer, v), 0);
	else
		assert_int_equal(json_pointer_set(&doc, pointer, NULL), 0);
	err[0] = '\0';
	assert_int_equal(parse(c, doc, err, sizeof(err)), -EINVAL);
	if (!strstr(err, what))
		fail_msg("%s: the error \"%s\" does not say \"%s\"", pointer, err, what);
	json_object_put(doc);
}

static void test_bounds(void **state)
{
	struct lr_tx_result *t = calloc(1, sizeof(*t));
	struct lr_rx_result *r = calloc(1, sizeof(*r));
	struct json_object *big;
	char *tt, *rt;
	unsigned int i;

	(void)state;
	tx_sample(t);
	rx_sample(r);
	tt = render(&tx_codec, t);
	rt = render(&rx_codec, r);
	refused(&tx_codec, tt, "/tx/packets", json_object_new_int64(-1), "tx.packets: -1 is negative");
	refused(&tx_codec, tt, "/tx/per_queue/0/queue", json_object_new_int64(1LL << 33), "tx.per_queue[0].queue");
	refused(&tx_codec, tt, "/tx/pps", json_object_new_string("fast"), "tx.pps: expected a number, got string");
	refused(&tx_codec, tt, "/tx/queued", json_object_new_double(1.5), "tx.queued: expected an unsigned integer");
	refused(&tx_codec, tt, "/tx/packets", NULL, "tx.packets: expected an unsigned integer, got null");
	refused(&tx_codec, tt, "/tx/device/extra", json_object_new_int(1), "tx.device.extra: unknown key");
	refused(&tx_codec, tt, "/tx/surprise", json_object_new_int(1), "tx.surprise: unknown key");
	refused(&tx_codec, tt, "/tx", json_object_new_string("x"), "tx: expected an object");
	big = json_object_new_array();
	for (i = 0; i <= LR_TX_MAX_QUEUES; i++) {
		struct json_object *q = json_object_new_object();

		json_object_array_add(big, q);
	}
	refused(&tx_codec, tt, "/tx/per_queue", big, "tx.per_queue: 65 entries, at most 64");
	refused(&rx_codec, rt, "/rx/per_queue/0/queue", json_object_new_int(LR_RX_MAX_QUEUES), "rx.per_queue[0].queue");
	refused(&rx_codec, rt, "/rx/per_queue/1/queue", json_object_new_int(0), "rx.per_queue[1].queue: queue 0 is listed twice");
	refused(&rx_codec, rt, "/rx/per_queue/0/packets", json_object_new_int(0), "rx.per_queue[0].packets");
	refused(&rx_codec, rt, "/rx/lost", json_object_new_string("7"), "rx.lost: expected an integer");
	refused(&rx_codec, rt, "/rx/sent", json_object_new_boolean(1), "rx.sent");
	refused(&rx_codec, rt, "/rx/tail_settled", json_object_new_int(1), "rx.tail_settled: expected true or false");
	refused(&rx_codec, rt, "/rx/pcap/file", json_object_new_string(""), "rx.pcap.file");
	refused(&rx_codec, rt, "/active_s", json_object_new_double(INFINITY), "active_s: not a finite number");
	refused(&rx_codec, rt, "/latency_ns/p50", json_object_new_string("1"), "latency_ns.p50");
	free(tt);
	free(rt);
	free(t);
	free(r);
}

/* latency_ns's clock keys: each kind of clock, and the combinations one clock rules out. */
static void test_rx_clock(void **state)
{
	struct lr_rx_result *a = calloc(1, sizeof(*a));
	char *t;

	(void)state;
	rx_sample(a);
	round_trip(&rx_codec, a, TEXTS("\"clock\":\"estimated\",\"offset_ns\":-123456789012,\"error_bound_ns\":350,"
				       "\"drift_ppb\":-2500,\"valid\":true}"));
	a->lat_valid = false;
	a->lat_offset_ns = INT64_MIN;
	a->lat_drift_ppb = INT64_MAX;
	a->lat_error_bound_ns = UINT64_MAX;
	round_trip(&rx_codec, a,
		   TEXTS("\"offset_ns\":-9223372036854775808", "\"error_bound_ns\":18446744073709551615"));
	/* what a local receiver reports */
	a->lat_clock = LR_LAT_CLOCK_SAME_HOST;
	a->lat_offset_ns = a->lat_drift_ppb = 0;
	a->lat_error_bound_ns = 0;
	a->lat_valid = true;
	round_trip(&rx_codec, a, TEXTS("\"clock\":\"same_host\",\"offset_ns\":0,\"error_bound_ns\":0,\"drift_ppb\":0,"
				       "\"valid\":true"));
	t = render(&rx_codec, a);
	refused(&rx_codec, t, "/latency_ns/offset_ns", json_object_new_int(1),
		"latency_ns: offset_ns, error_bound_ns and drift_ppb are 0 with clock \"same_host\"");
	refused(&rx_codec, t, "/latency_ns/error_bound_ns", json_object_new_int(1), "with clock \"same_host\"");
	refused(&rx_codec, t, "/latency_ns/drift_ppb", json_object_new_int(-1), "with clock \"same_host\"");
	refused(&rx_codec, t, "/latency_ns/clock", json_object_new_string("none"),
		"latency_ns: valid is false with clock \"none\"");
	refused(&rx_codec, t, "/latency_ns/clock", json_object_new_string("local"),
		"latency_ns.clock: 'local' is not one of same_host, estimated, none");
	refused(&rx_codec, t, "/latency_ns/valid", json_object_new_int(1), "latency_ns.valid: expected true or false");
	refused(&rx_codec, t, "/latency_ns/offset_ns", json_object_new_double(1.5),
		"latency_ns.offset_ns: expected an integer");
	refused(&rx_codec, t, "/latency_ns/error_bound_ns", json_object_new_int(-1),
		"latency_ns.error_bound_ns: -1 is negative");
	free(t);
	/* no estimate across hosts */
	a->lat_clock = LR_LAT_CLOCK_NONE;
	a->lat_valid = false;
	round_trip(&rx_codec, a, TEXTS("\"clock\":\"none\"", "\"valid\":false"));
	free(a);
}

/* Every document begins with the same header, schema included. */
static void test_doc_header(void **state)
{
	struct json_object *o = lr_json_doc("send"), *v;

	(void)state;
	assert_int_equal(json_pointer_get(o, "/schema", &v), 0);
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int(v), LR_JSON_SCHEMA);
	assert_int_equal(json_pointer_get(o, "/command", &v), 0);
	assert_string_equal(json_object_get_string(v), "send");
	assert_int_equal(json_pointer_get(o, "/version/release", &v), 0);
	json_object_put(o);
}

/* Round trips: both directions from the sender's stamped count and the return's counts. */
static void test_rtt_compute(void **state)
{
	struct lr_rx_result *rx = calloc(1, sizeof(*rx));
	struct lr_rtt_result t;

	(void)state;
	/* 10000 stamped; the reflector reflected 9805 of which 5 forward duplicates; 9808 came back, 3 dups */
	rx->packets = 9808;
	rx->dups = 3;
	rx->late = 2;
	rx->sent = 9805;
	rx->lost = 9805 - (9808 - 3);
	rx->fwd_late = 7;
	rx->fwd_dups = 5;
	rx->flows = 4;
	rx->flows_eot = 4;
	rx->settled = true;
	rx->lat_count = 100;
	rx->lat_p99 = 4242;
	lr_rtt_compute(10000, 4, rx, &t);
	assert_true(t.settled);
	assert_int_equal(t.fwd.sent, 10000);
	assert_int_equal(t.fwd.received, 9805);
	assert_int_equal(t.fwd.lost, 200);
	assert_int_equal(t.fwd.late, 7);
	assert_int_equal(t.fwd.dups, 5);
	assert_int_equal(t.ret.sent, 9805);
	assert_int_equal(t.ret.received, 9808);
	assert_int_equal(t.ret.lost, 0);
	assert_int_equal(t.ret.late, 2);
	assert_int_equal(t.ret.dups, 3);
	assert_int_equal(t.count, 100);
	assert_int_equal(t.p99, 4242);

	/* loss on the way back: 50 of 10000 reflected never returned */
	memset(rx, 0, sizeof(*rx));
	rx->packets = 9950;
	rx->sent = 10000;
	rx->lost = 50;
	rx->flows = rx->flows_eot = 1;
	rx->settled = true;
	lr_rtt_compute(10000, 1, rx, &t);
	assert_true(t.settled);
	assert_int_equal(t.fwd.lost, 0);
	assert_int_equal(t.ret.lost, 50);
	assert_int_equal(t.ret.sent, 10000);

	/* one flow's reflected marker missing: not settled, the return's gaps stand for its loss */
	memset(rx, 0, sizeof(*rx));
	rx->packets = 900;
	rx->lost = 10;	/* open gaps */
	rx->flows = 2;
	rx->flows_eot = 1;
	rx->settled = false;
	lr_rtt_compute(1000, 2, rx, &t);
	assert_false(t.settled);
	assert_int_equal(t.ret.sent, 910);
	assert_int_equal(t.fwd.received, 910);
	assert_int_equal(t.fwd.lost, 90);
	/* every marker in, but fewer flows than the sender had: still not settled */
	rx->flows_eot = 2;
	rx->settled = true;
	lr_rtt_compute(1000, 3, rx, &t);
	assert_false(t.settled);
	free(rx);
}

static void test_rtt_json(void **state)
{
	static const struct lr_rtt_result a = {
		.settled = true, .flows = 4, .flows_eot = 4,
		.fwd = { .sent = 10000, .received = 9805, .late = 7, .dups = 5, .lost = 200 },
		.ret = { .sent = 9805, .received = 9808, .late = 2, .dups = 3, .lost = -6 },
		.count = 100, .min = 1000, .p50 = 2000, .p90 = 3000, .p99 = 4000, .p999 = 5000, .max = 6000, .mean = 2100,
	};
	struct json_object *o = json_object_new_object(), *v;
	struct lr_rtt_result b;

	(void)state;
	lr_rtt_result_put(o, &a);
	assert_int_equal(lr_rtt_result_get(o, &b, err, sizeof(err)), 0);
	/* flows and flows_eot are not in the document */
	b.flows = a.flows;
	b.flows_eot = a.flows_eot;
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(json_pointer_get(o, "/return/lost", &v), 0);
	assert_int_equal(json_object_get_int64(v), -6);
	/* strict: a key gone is refused with its path */
	json_object_object_del(json_object_object_get(o, "forward"), "reordered");
	assert_int_equal(lr_rtt_result_get(o, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "forward.reordered"));
	json_object_put(o);
}

static void test_prep_json(void **state)
{
	static const struct lr_prep_result a = {
		.asked = true, .action = LR_PREP_JOINED, .device = "vc1", .netns = "lrlab-bridge-host",
		.gro_before = false, .switched_on = true, .released = true, .left_on_for = 2,
	};
	static const struct lr_prep_result none = { .asked = false };
	struct json_object *o = json_object_new_object(), *v;
	struct lr_prep_result b;

	(void)state;
	lr_prep_result_put(o, &a);
	assert_int_equal(lr_prep_result_get(o, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(json_pointer_get(o, "/prepare_peer/action", &v), 0);
	assert_string_equal(json_object_get_string(v), "joined");
	/* "" is null: no error, the sender's own namespace */
	assert_int_equal(json_pointer_get(o, "/prepare_peer/error", &v), 0);
	assert_null(v);
	/* strict: an unknown action is refused with its path */
	json_object_object_add(json_object_object_get(o, "prepare_peer"), "action", json_object_new_string("maybe"));
	assert_int_equal(lr_prep_result_get(o, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "prepare_peer.action"));
	json_object_put(o);
	/* not asked: null, and back */
	o = json_object_new_object();
	lr_prep_result_put(o, &none);
	assert_true(json_object_object_get_ex(o, "prepare_peer", &v));
	assert_null(v);
	assert_int_equal(lr_prep_result_get(o, &b, err, sizeof(err)), 0);
	assert_false(b.asked);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tx_round_trip), cmocka_unit_test(test_rx_round_trip),
		cmocka_unit_test(test_derived),	      cmocka_unit_test(test_tx_strict),
		cmocka_unit_test(test_rx_strict),     cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_rx_clock),     cmocka_unit_test(test_doc_header),
		cmocka_unit_test(test_rtt_compute),  cmocka_unit_test(test_rtt_json),
		cmocka_unit_test(test_prep_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
