/* SPDX-License-Identifier: MIT */
/* The agent's --metrics for one session (endpoint_metrics.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ctl/endpoint_metrics.h"
#include "tx/frame.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/report.h"

#define METRICS_EVERY_NS	1000000000ULL	/* the counts read between requests this often */
#define RATE_MIN_NS	100000000ULL	/* a rate over a shorter interval than this would only be noise */

_Static_assert(LR_METRICS_RX_QUEUES == LR_RX_MAX_QUEUES, "the metrics keep every queue a receiver counts");

/* A new test: its identity, counts from zero, running; the tests ended and the last number carried over. */
void lr_endpoint_metrics_begin(struct lr_endpoint_metrics *m, const struct lr_local *l, const char *what,
				const char *ifname)
{
	struct lr_metrics_test *t = &m->mt;
	struct lr_metrics_test last = { 0 };
	struct timespec ts;

	if (!m->shm)
		return;
	if (lr_metrics_read(m->shm, &last)) {
		/* a session before this one died in the middle of a write: there is no writer but us */
		lr_metrics_recover(m->shm);
		lr_metrics_read(m->shm, &last);
	}
	memset(t, 0, sizeof(*t));
	t->cost_sender_ns = t->cost_sender_err_ns = t->cost_receiver_ns = t->cost_receiver_err_ns = NAN;
	t->tests = last.tests;
	t->id = last.id + 1;
	t->role = l->role == LR_LOCAL_RX ? LR_METRICS_RX : l->role == LR_LOCAL_TX ? LR_METRICS_TX : LR_METRICS_REFLECT;
	t->running = 1;
	snprintf(t->name, sizeof(t->name), "%s", what);
	snprintf(t->interface, sizeof(t->interface), "%s", ifname);
	snprintf(t->engine, sizeof(t->engine), "%s",
		 l->role == LR_LOCAL_RX ? l->rx.ops->name : l->role == LR_LOCAL_TX ? lr_tx_ops(l->tx)->name : "xdp");
	clock_gettime(CLOCK_REALTIME, &ts);
	t->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	m->final = false;
	m->prev = 0;
	m->prev_ns = lr_now_ns();
	m->next_ns = m->prev_ns + METRICS_EVERY_NS;
	lr_metrics_publish(m->shm, t);
}

/* Packets per second since the last read, when that is long enough ago to mean something. */
static double metrics_rate(struct lr_endpoint_metrics *m, uint64_t packets, double last)
{
	uint64_t now = lr_now_ns(), dt = now - m->prev_ns;
	double pps;

	if (dt < RATE_MIN_NS)
		return last;
	/* fewer than before: the counts were reset (run's windows) */
	pps = (double)(packets >= m->prev ? packets - m->prev : packets) * 1e9 / (double)dt;
	m->prev = packets;
	m->prev_ns = now;
	return pps;
}

/* A receiver's counts: @result when they are a result's, which no later read replaces. */
void lr_endpoint_metrics_rx(struct lr_endpoint_metrics *m, const struct lr_rx_result *r, bool result)
{
	struct lr_metrics_test *t = &m->mt;

	if (!m->shm || (m->final && !result))
		return;
	t->rx_packets = r->packets;
	t->rx_bytes = r->bytes;
	t->rx_sent = r->sent;
	t->rx_flows_eot = r->flows_eot;
	memcpy(t->rx_queue_packets, r->queue_packets, sizeof(t->rx_queue_packets));
	t->rx_lost = r->lost;
	t->rx_reordered = r->late;
	t->rx_duplicates = r->dups;
	t->rx_pps = result ? r->pps : metrics_rate(m, r->packets, t->rx_pps);
	t->lat_count = r->lat_count;
	t->lat_sum_ns = r->lat_sum;
	t->lat_ns[0] = r->lat_min;
	t->lat_ns[1] = r->lat_p50;
	t->lat_ns[2] = r->lat_p90;
	t->lat_ns[3] = r->lat_p99;
	t->lat_ns[4] = r->lat_p999;
	t->lat_ns[5] = r->lat_max;
	/* the program's calibrated ns per frame, once bpf_stats counted enough runs */
	if (r->have_prog && !isnan(lr_rx_prog_ns_per_run(&r->prog))) {
		t->cost_receiver_ns = lr_rx_prog_ns_per_run(&r->prog);
		t->cost_receiver_err_ns = r->prog.stats_error_ns;
	}
	m->final = m->final || result;
	lr_metrics_publish(m->shm, t);
}

static void metrics_tx(struct lr_endpoint_metrics *m, const struct lr_tx_result *r, bool result)
{
	struct lr_metrics_test *t = &m->mt;
	unsigned int i;

	if (!m->shm || (m->final && !result))
		return;
	t->tx_packets = r->packets;
	t->tx_bytes = r->bytes;
	t->tx_pps = result ? r->pps : metrics_rate(m, r->packets, t->tx_pps);
	t->nqueues = r->nqueues < LR_METRICS_QUEUES ? r->nqueues : LR_METRICS_QUEUES;
	for (i = 0; i < t->nqueues; i++)
		t->queues[i] = (struct lr_metrics_queue){ r->queues[i].queue, r->queues[i].packets };
	/* the workers' own time per frame sent, interrupt work served inside them left out */
	if (r->have_cpu && r->packets && r->cpu.thread_ns >= r->cpu.softirq_ns) {
		t->cost_sender_ns = (double)(r->cpu.thread_ns - r->cpu.softirq_ns) / (double)r->packets;
		t->cost_sender_err_ns = (double)r->cpu.softirq_err_ns / (double)r->packets;
	}
	m->final = m->final || result;
	lr_metrics_publish(m->shm, t);
}

void lr_endpoint_metrics_reflect(struct lr_endpoint_metrics *m, const struct lr_reflect_result *x, bool result)
{
	struct lr_metrics_test *t = &m->mt;

	if (!m->shm || (m->final && !result))
		return;
	t->reflect_packets = x->packets;
	t->reflect_bytes = x->bytes;
	m->final = m->final || result;
	lr_metrics_publish(m->shm, t);
}

/* A finished sender's result: its send document's own numbers, as the controller gets them. */
void lr_endpoint_metrics_tx_result(struct lr_endpoint_metrics *m, const struct lr_local *l)
{
	struct lr_tx_result *r;
	char err[256];

	if (!m->shm || !l->tx_doc || !(r = malloc(sizeof(*r))))
		return;
	if (!lr_tx_result_get(l->tx_doc, r, err, sizeof(err)))
		metrics_tx(m, r, true);
	else
		pr_debug("endpoint: metrics: the send document: %s\n", err);
	free(r);
}

/* The counts read now, unless a result's numbers stand. */
void lr_endpoint_metrics_read(struct lr_endpoint_metrics *m, struct lr_local *l)
{
	if (!m->shm || m->final || l->role == LR_LOCAL_NONE)
		return;
	if (l->role == LR_LOCAL_RX) {
		struct lr_rx_result *r = malloc(sizeof(*r));

		if (r && !lr_rx_collect(&l->rx, r))
			lr_endpoint_metrics_rx(m, r, false);
		free(r);
	} else if (l->role == LR_LOCAL_TX && l->started) {
		/*
		 * The workers' completions only, read atomically as progress reads them: the device's
		 * counters that settle a result are a worker's to snapshot while it runs.
		 */
		struct lr_tx_result *r = calloc(1, sizeof(*r));
		const struct lr_worker *ws;
		unsigned int n, i;

		if (!r)
			return;
		ws = lr_tx_workers(l->tx, &n);
		for (i = 0; i < n && i < LR_TX_MAX_QUEUES; i++) {
			r->queues[i].queue = ws[i].queue;
			r->queues[i].packets = lr_tx_worker_done(&ws[i]);
			r->packets += r->queues[i].packets;
		}
		r->nqueues = i;
		/* an agent's sender sends its template, never a capture: every frame is --size */
		r->bytes = r->packets * (l->txs.size - LR_FCS_LEN);
		metrics_tx(m, r, false);
		free(r);
	} else if (l->role == LR_LOCAL_REFLECT) {
		struct lr_reflect_result x;

		if (!lr_reflector_collect(&l->refl, &x))
			lr_endpoint_metrics_reflect(m, &x, false);
	}
}

/* Between requests: the counts read once a second, so a scrape sees a test move whoever drives it. */
void lr_endpoint_metrics_tick(struct lr_endpoint_metrics *m, struct lr_local *l)
{
	uint64_t now;

	if (!m->shm || l->role == LR_LOCAL_NONE || m->final)
		return;
	now = lr_now_ns();
	if (now < m->next_ns)
		return;
	m->next_ns = now + METRICS_EVERY_NS;
	lr_endpoint_metrics_read(m, l);
}

/* The test ends: the last counts (unless a result's stand), not running, one more test ended. */
void lr_endpoint_metrics_end(struct lr_endpoint_metrics *m, struct lr_local *l)
{
	if (!m->shm || l->role == LR_LOCAL_NONE)
		return;
	if (l->role == LR_LOCAL_TX)
		lr_endpoint_metrics_tx_result(m, l);
	lr_endpoint_metrics_read(m, l);
	m->mt.running = 0;
	m->mt.tests++;
	lr_metrics_publish(m->shm, &m->mt);
}


void lr_endpoint_metrics_reset(struct lr_endpoint_metrics *m, struct lr_local *l)
{
	m->final = false;
	m->prev = 0;
	m->prev_ns = lr_now_ns();
	lr_endpoint_metrics_read(m, l);
}
