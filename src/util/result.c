/* SPDX-License-Identifier: MIT */
/* The tx and rx results ⇄ JSON: one field table per object, so rendering and parsing cannot drift. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "util/jfield.h"
#include "util/result.h"

#define FCS_LEN 4
#define L1_EXTRA 20	/* preamble, start delimiter and inter-frame gap */

#define F(key, type, st, m) { key, type, offsetof(st, m) }
#define F_OBJ(key, st, m, fields) { key, LR_J_OBJ, offsetof(st, m), .sub = fields }
#define F_FN(key, p, g) { key, LR_J_CUSTOM, .put = p, .get = g }
#define F_BPS(key, p, extra) { key, LR_J_CUSTOM, .min = extra, .put = p, .get = get_derived }

/* ---- derived values: rendered from the counts, only checked to be numbers when read ---- */

static double tx_frame_bytes(const struct lr_tx_result *r)
{
	return r->packets ? (double)r->bytes / (double)r->packets : 0;
}

double lr_rx_result_frame_bytes(const struct lr_rx_result *r)
{
	return r->packets ? (double)r->bytes / (double)r->packets : 0;
}

static int get_derived(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	double unused;

	(void)base;
	return lr_jfield_number(v, path, &unused, err, errlen);
}

double lr_tx_result_bps(const struct lr_tx_result *r, unsigned int extra)
{
	return r->pps * (tx_frame_bytes(r) + (double)extra) * 8;
}

double lr_rx_result_bps(const struct lr_rx_result *r, unsigned int extra)
{
	return r->pps * (lr_rx_result_frame_bytes(r) + (double)extra) * 8;
}

/* The bit rate of frames of the mean size plus f->min bytes each (the FCS; and preamble and gap for L1). */
static struct json_object *tx_bps(const struct lr_jfield *f, const void *base)
{
	return json_object_new_double(lr_tx_result_bps(base, (unsigned int)f->min));
}

static struct json_object *rx_bps(const struct lr_jfield *f, const void *base)
{
	return json_object_new_double(lr_rx_result_bps(base, (unsigned int)f->min));
}

/* ---- tx ---- */

static const struct lr_jfield tx_queue_fields[] = {
	F("queue", LR_J_UINT, struct lr_tx_queue_result, queue),
	F("cpu", LR_J_UINT, struct lr_tx_queue_result, cpu),
	F("packets", LR_J_U64, struct lr_tx_queue_result, packets),
	F("pps", LR_J_DOUBLE, struct lr_tx_queue_result, pps),
	F("ring_full", LR_J_U64, struct lr_tx_queue_result, ring_full),
	/* the driver's own count for this queue, or null where it keeps none (veth) */
	{ "device_packets", LR_J_U64_NULL, offsetof(struct lr_tx_queue_result, device_packets),
	  offsetof(struct lr_tx_queue_result, have_device_packets) },
	F("kicks", LR_J_U64, struct lr_tx_queue_result, kicks),
	/* wake-ups the device refused for now (EAGAIN, ENOBUFS): push-back, retried */
	F("kick_errors", LR_J_U64, struct lr_tx_queue_result, kick_errors),
	{ NULL }
};

static const struct lr_jfield tx_device_fields[] = {
	F("tx_packets", LR_J_U64, struct lr_dev_result, packets),
	F("tx_dropped", LR_J_U64, struct lr_dev_result, dropped),
	F("driver_drops", LR_J_U64, struct lr_dev_result, driver_drops),
	{ NULL }
};

static const char *const irqtime_names[] = { "no", "yes", "unknown", NULL };

static const struct lr_jfield tx_cpu_fields[] = {
	F("thread_ns", LR_J_U64, struct lr_tx_cpu, thread_ns),
	F("softirq_ns", LR_J_U64, struct lr_tx_cpu, softirq_ns),
	F("softirq_error_ns", LR_J_U64, struct lr_tx_cpu, softirq_err_ns),
	F("prog_stat_runs", LR_J_U64, struct lr_tx_cpu, prog_stat_runs),
	F("ksoftirqd_seen", LR_J_BOOL, struct lr_tx_cpu, ksoftirqd_seen),
	{ "irq_time_accounting", LR_J_ENUM, offsetof(struct lr_tx_cpu, irqtime), .names = irqtime_names },
	F("kernel_hz", LR_J_UINT, struct lr_tx_cpu, kernel_hz),
	{ NULL }
};

static const struct lr_jfield tx_fields[] = {
	F("packets", LR_J_U64, struct lr_tx_result, packets),
	F("queued", LR_J_U64, struct lr_tx_result, queued),
	F("completed", LR_J_U64, struct lr_tx_result, completed),
	F("bytes", LR_J_U64, struct lr_tx_result, bytes),
	F("pps", LR_J_DOUBLE, struct lr_tx_result, pps),
	F_BPS("bps_l2", tx_bps, FCS_LEN),
	F_BPS("bps_l1", tx_bps, FCS_LEN + L1_EXTRA),
	F("device_tx_dropped", LR_J_U64, struct lr_tx_result, device_dropped),
	F("eot_markers", LR_J_U64, struct lr_tx_result, eot),
	F("latency_every", LR_J_U64, struct lr_tx_result, latency_every),
	{ "per_queue", LR_J_ARRAY, offsetof(struct lr_tx_result, queues), offsetof(struct lr_tx_result, nqueues),
	  sizeof(struct lr_tx_queue_result), .max = LR_TX_MAX_QUEUES, .sub = tx_queue_fields },
	F_OBJ("device", struct lr_tx_result, device, tx_device_fields),
	{ "cpu", LR_J_OBJ_NULL, offsetof(struct lr_tx_result, cpu), offsetof(struct lr_tx_result, have_cpu),
	  .sub = tx_cpu_fields },
	{ NULL }
};

static const struct lr_jfield tx_doc_fields[] = {
	{ "tx", LR_J_OBJ, 0, .sub = tx_fields },
	{ NULL }
};

void lr_tx_result_put(struct json_object *parent, const struct lr_tx_result *r)
{
	lr_jfield_put(parent, tx_doc_fields, r);
}

int lr_tx_result_get(struct json_object *parent, struct lr_tx_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	return lr_jfield_get(parent, tx_doc_fields, r, "", false, err, errlen);
}

/* ---- rx ---- */

/* null until an end-of-test marker arrived: without one the receiver cannot know */
static struct json_object *rx_sent(const struct lr_jfield *f, const void *base)
{
	const struct lr_rx_result *r = base;

	(void)f;
	return r->flows_eot ? json_object_new_uint64(r->sent) : NULL;
}

static int rx_sent_get(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	struct lr_rx_result *r = base;

	r->sent = 0;
	return v ? lr_jfield_uint(v, path, &r->sent, err, errlen) : 0;
}

/* One entry per queue that received: {queue, packets} */
struct rx_queues {
	unsigned int n;
	struct rx_queue {
		unsigned int queue;
		uint64_t packets;
	} q[LR_RX_MAX_QUEUES];
};

static const struct lr_jfield rx_queue_fields[] = {
	{ "queue", LR_J_UINT, offsetof(struct rx_queue, queue), .max = LR_RX_MAX_QUEUES - 1 },
	{ "packets", LR_J_U64, offsetof(struct rx_queue, packets), .min = 1 },
	{ NULL }
};

static const struct lr_jfield rx_queues_field = { "per_queue", LR_J_ARRAY, offsetof(struct rx_queues, q),
						  offsetof(struct rx_queues, n), sizeof(struct rx_queue),
						  .max = LR_RX_MAX_QUEUES, .sub = rx_queue_fields };

static struct json_object *rx_per_queue(const struct lr_jfield *f, const void *base)
{
	const struct lr_rx_result *r = base;
	struct rx_queues qs = { 0 };
	unsigned int i;

	(void)f;
	for (i = 0; i < LR_RX_MAX_QUEUES; i++)
		if (r->queue_packets[i])
			qs.q[qs.n++] = (struct rx_queue){ i, r->queue_packets[i] };
	return lr_jfield_put_value(&rx_queues_field, &qs);
}

static int rx_per_queue_get(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	struct lr_rx_result *r = base;
	struct rx_queues qs;
	unsigned int i;
	int ret;

	ret = lr_jfield_get_value(&rx_queues_field, v, &qs, path, err, errlen);
	for (i = 0; !ret && i < qs.n; i++) {
		if (r->queue_packets[qs.q[i].queue]) {
			snprintf(err, errlen, "%s[%u].queue: queue %u is listed twice", path, i, qs.q[i].queue);
			return -EINVAL;
		}
		r->queue_packets[qs.q[i].queue] = qs.q[i].packets;
	}
	return ret;
}

static const struct lr_jfield rx_device_fields[] = {
	F("rx_packets", LR_J_U64, struct lr_dev_result, packets),
	F("rx_dropped", LR_J_U64, struct lr_dev_result, dropped),
	F("driver_drops", LR_J_U64, struct lr_dev_result, driver_drops),
	{ NULL }
};

static const struct lr_jfield rx_pcap_fields[] = {
	{ "file", LR_J_STR_NULL, offsetof(struct lr_rx_result, pcap_file), .size = LR_RESULT_PATH_MAX },
	F("samples", LR_J_U64, struct lr_rx_result, pcap_written),
	F("dropped", LR_J_U64, struct lr_rx_result, pcap_dropped),
	F("capped", LR_J_U64, struct lr_rx_result, pcap_capped),
	F("every", LR_J_U64, struct lr_rx_result, pcap_every),
	F("snaplen", LR_J_UINT, struct lr_rx_result, pcap_snaplen),
	{ NULL }
};

bool lr_rx_unseen_warn(const struct lr_rx_result *r)
{
	return r->have_unseen && r->unseen > LR_RX_UNSEEN_MIN && r->unseen > r->device.packets / LR_RX_UNSEEN_PER;
}

uint64_t lr_rx_result_runs(const struct lr_rx_result *r)
{
	return r->packets + r->eot + r->foreign + r->bad_flow;
}

double lr_rx_prog_ns_per_run(const struct lr_rx_prog *p)
{
	if (p->stat_runs < LR_PROG_MIN_RUNS)
		return NAN;
	return (double)p->run_ns / (double)p->stat_runs - p->stats_reported_ns;
}

/* The program's own ns per run, calibrated; null with too few runs counted. */
static struct json_object *prog_ns_per_run(const struct lr_jfield *f, const void *base)
{
	double v = lr_rx_prog_ns_per_run(base);

	(void)f;
	return isnan(v) ? NULL : json_object_new_double(v);
}

static int get_derived_null(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	return v ? get_derived(v, base, path, err, errlen) : 0;
}

static const struct lr_jfield rx_prog_fields[] = {
	F("run_ns", LR_J_U64, struct lr_rx_prog, run_ns),
	F("stat_runs", LR_J_U64, struct lr_rx_prog, stat_runs),
	F_FN("ns_per_run", prog_ns_per_run, get_derived_null),
	F("stats_reported_ns", LR_J_DOUBLE, struct lr_rx_prog, stats_reported_ns),
	F("stats_added_ns", LR_J_DOUBLE, struct lr_rx_prog, stats_added_ns),
	F("stats_added_known", LR_J_BOOL, struct lr_rx_prog, stats_added_known),
	F("stats_error_ns", LR_J_DOUBLE, struct lr_rx_prog, stats_error_ns),
	{ NULL }
};

static const struct lr_jfield rx_shared_fields[] = {
	F("flows", LR_J_UINT, struct lr_rx_result, flows_shared),
	F("run_id", LR_J_UINT, struct lr_rx_result, run_ids[0]),
	F("other_run_id", LR_J_UINT, struct lr_rx_result, run_ids[1]),
	{ NULL }
};

static const struct lr_jfield rx_fields[] = {
	F("packets", LR_J_U64, struct lr_rx_result, packets),
	F("bytes", LR_J_U64, struct lr_rx_result, bytes),
	F("pps", LR_J_DOUBLE, struct lr_rx_result, pps),
	F_BPS("bps_l2", rx_bps, FCS_LEN),
	F_BPS("bps_l1", rx_bps, FCS_LEN + L1_EXTRA),
	F("lost", LR_J_I64, struct lr_rx_result, lost),
	F("reordered", LR_J_U64, struct lr_rx_result, late),
	F("duplicates", LR_J_U64, struct lr_rx_result, dups),
	F("foreign", LR_J_U64, struct lr_rx_result, foreign),
	F_FN("sent", rx_sent, rx_sent_get),
	F("tail_settled", LR_J_BOOL, struct lr_rx_result, settled),
	F("flows", LR_J_UINT, struct lr_rx_result, flows),
	F("flows_eot", LR_J_UINT, struct lr_rx_result, flows_eot),
	F("flows_announced", LR_J_UINT, struct lr_rx_result, flows_announced),
	{ "unseen", LR_J_U64_NULL, offsetof(struct lr_rx_result, unseen), offsetof(struct lr_rx_result, have_unseen) },
	{ "shared_flows", LR_J_OBJ_NULL, 0, offsetof(struct lr_rx_result, have_shared), .sub = rx_shared_fields },
	F("eot_markers", LR_J_U64, struct lr_rx_result, eot),
	F("bad_flow", LR_J_U64, struct lr_rx_result, bad_flow),
	F("ring_drops", LR_J_U64, struct lr_rx_result, ring_drops),
	F_FN("per_queue", rx_per_queue, rx_per_queue_get),
	F_OBJ("device", struct lr_rx_result, device, rx_device_fields),
	{ "pcap", LR_J_OBJ_NULL, 0, offsetof(struct lr_rx_result, pcap), .sub = rx_pcap_fields },
	{ "prog", LR_J_OBJ_NULL, offsetof(struct lr_rx_result, prog), offsetof(struct lr_rx_result, have_prog),
	  .sub = rx_prog_fields },
	{ NULL }
};

static const char *const lat_clock_names[] = { "same_host", "estimated", "none", NULL };

static const struct lr_jfield rx_latency_fields[] = {
	F("count", LR_J_U64, struct lr_rx_result, lat_count),
	F("min", LR_J_U64, struct lr_rx_result, lat_min),
	F("p50", LR_J_U64, struct lr_rx_result, lat_p50),
	F("p90", LR_J_U64, struct lr_rx_result, lat_p90),
	F("p99", LR_J_U64, struct lr_rx_result, lat_p99),
	F("p999", LR_J_U64, struct lr_rx_result, lat_p999),
	F("max", LR_J_U64, struct lr_rx_result, lat_max),
	F("mean", LR_J_U64, struct lr_rx_result, lat_mean),
	F("future", LR_J_U64, struct lr_rx_result, lat_future),
	{ "clock", LR_J_ENUM, offsetof(struct lr_rx_result, lat_clock), .names = lat_clock_names },
	F("offset_ns", LR_J_I64, struct lr_rx_result, lat_offset_ns),
	F("error_bound_ns", LR_J_U64, struct lr_rx_result, lat_error_bound_ns),
	F("drift_ppb", LR_J_I64, struct lr_rx_result, lat_drift_ppb),
	F("valid", LR_J_BOOL, struct lr_rx_result, lat_valid),
	{ NULL }
};

static const struct lr_jfield rx_doc_fields[] = {
	F("active_s", LR_J_DOUBLE, struct lr_rx_result, active_s),
	{ "rx", LR_J_OBJ, 0, .sub = rx_fields },
	{ "latency_ns", LR_J_OBJ, 0, .sub = rx_latency_fields },
	{ NULL }
};

void lr_rx_result_put(struct json_object *parent, const struct lr_rx_result *r)
{
	lr_jfield_put(parent, rx_doc_fields, r);
}

/* What one clock rules out: an offset, a bound or a drift between it and itself; a valid "none". */
static int rx_clock_check(const struct lr_rx_result *r, char *err, size_t errlen)
{
	const char *what = NULL;

	if (r->lat_clock == LR_LAT_CLOCK_SAME_HOST && (r->lat_offset_ns || r->lat_error_bound_ns || r->lat_drift_ppb))
		what = "offset_ns, error_bound_ns and drift_ppb are 0 with clock \"same_host\"";
	else if (r->lat_clock == LR_LAT_CLOCK_NONE && r->lat_valid)
		what = "valid is false with clock \"none\"";
	if (!what)
		return 0;
	snprintf(err, errlen, "latency_ns: %s", what);
	return -EINVAL;
}

int lr_rx_result_get(struct json_object *parent, struct lr_rx_result *r, char *err, size_t errlen)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = lr_jfield_get(parent, rx_doc_fields, r, "", false, err, errlen);
	return ret ? ret : rx_clock_check(r, err, errlen);
}

/* ---- round trips ---- */

void lr_rtt_compute(uint64_t stamped, unsigned int flows, const struct lr_rx_result *rx, struct lr_rtt_result *out)
{
	memset(out, 0, sizeof(*out));
	out->flows = flows;
	out->flows_eot = rx->flows_eot;
	out->settled = rx->flows_eot >= flows && rx->settled;
	out->ret.received = rx->packets;
	out->ret.late = rx->late;
	out->ret.dups = rx->dups;
	/* rx.lost: the reflector's totals less what came back, per flow with a marker; open gaps elsewhere */
	out->ret.lost = rx->lost;
	out->fwd.sent = stamped;
	out->fwd.late = rx->fwd_late;
	out->fwd.dups = rx->fwd_dups;
	if (out->settled)
		out->ret.sent = rx->sent;
	else	/* what must have left the reflector for what came back */
		out->ret.sent = (uint64_t)((int64_t)(rx->packets - rx->dups) + rx->lost);
	out->fwd.received = out->ret.sent;
	out->fwd.lost = (int64_t)stamped - (int64_t)(out->fwd.received - out->fwd.dups);
	out->count = rx->lat_count;
	out->min = rx->lat_min;
	out->p50 = rx->lat_p50;
	out->p90 = rx->lat_p90;
	out->p99 = rx->lat_p99;
	out->p999 = rx->lat_p999;
	out->max = rx->lat_max;
	out->mean = rx->lat_mean;
}

static const struct lr_jfield rtt_ns_fields[] = {
	F("min", LR_J_U64, struct lr_rtt_result, min),
	F("p50", LR_J_U64, struct lr_rtt_result, p50),
	F("p90", LR_J_U64, struct lr_rtt_result, p90),
	F("p99", LR_J_U64, struct lr_rtt_result, p99),
	F("p999", LR_J_U64, struct lr_rtt_result, p999),
	F("max", LR_J_U64, struct lr_rtt_result, max),
	F("mean", LR_J_U64, struct lr_rtt_result, mean),
	F("count", LR_J_U64, struct lr_rtt_result, count),
	{ NULL }
};

static const struct lr_jfield rtt_dir_fields[] = {
	F("sent", LR_J_U64, struct lr_rtt_dir, sent),
	F("received", LR_J_U64, struct lr_rtt_dir, received),
	F("lost", LR_J_I64, struct lr_rtt_dir, lost),
	F("reordered", LR_J_U64, struct lr_rtt_dir, late),
	F("duplicates", LR_J_U64, struct lr_rtt_dir, dups),
	{ NULL }
};

static const struct lr_jfield rtt_doc_fields[] = {
	{ "rtt_ns", LR_J_OBJ, 0, .sub = rtt_ns_fields },
	F_OBJ("forward", struct lr_rtt_result, fwd, rtt_dir_fields),
	F_OBJ("return", struct lr_rtt_result, ret, rtt_dir_fields),
	F("rtt_settled", LR_J_BOOL, struct lr_rtt_result, settled),
	{ NULL }
};

void lr_rtt_result_put(struct json_object *parent, const struct lr_rtt_result *r)
{
	lr_jfield_put(parent, rtt_doc_fields, r);
}

int lr_rtt_result_get(struct json_object *parent, struct lr_rtt_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	return lr_jfield_get(parent, rtt_doc_fields, r, "", false, err, errlen);
}

/* ---- --prepare-peer ---- */

static const char *const prep_action_names[] = { "not_veth", "none", "switched_on", "joined", NULL };

static const struct lr_jfield prep_fields[] = {
	{ "action", LR_J_ENUM, offsetof(struct lr_prep_result, action), .names = prep_action_names },
	{ "device", LR_J_STR_NULL, offsetof(struct lr_prep_result, device), .size = LR_PREP_DEVICE_MAX },
	{ "netns", LR_J_STR_NULL, offsetof(struct lr_prep_result, netns), .size = LR_PREP_NETNS_MAX },
	F("xdp", LR_J_BOOL, struct lr_prep_result, xdp),
	F("gro_before", LR_J_BOOL, struct lr_prep_result, gro_before),
	F("switched_on", LR_J_BOOL, struct lr_prep_result, switched_on),
	F("released", LR_J_BOOL, struct lr_prep_result, released),
	F("restored", LR_J_BOOL, struct lr_prep_result, restored),
	F("left_on_for", LR_J_UINT, struct lr_prep_result, left_on_for),
	{ "error", LR_J_STR_NULL, offsetof(struct lr_prep_result, error), .size = LR_PREP_ERROR_MAX },
	{ NULL }
};

static const struct lr_jfield prep_doc_fields[] = {
	{ "prepare_peer", LR_J_OBJ_NULL, 0, offsetof(struct lr_prep_result, asked), .sub = prep_fields },
	{ NULL }
};

void lr_prep_result_put(struct json_object *parent, const struct lr_prep_result *r)
{
	lr_jfield_put(parent, prep_doc_fields, r);
}

int lr_prep_result_get(struct json_object *parent, struct lr_prep_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	return lr_jfield_get(parent, prep_doc_fields, r, "", false, err, errlen);
}
