/* SPDX-License-Identifier: MIT */
/*
 * The in-process endpoint: one lifecycle for a receiver, a sender and a reflector, whoever drives
 * it (the agent's server today).
 */
#define _GNU_SOURCE	/* open_memstream() */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "rx/report.h"
#include "session/local.h"
#include "summary/summary.h"
#include "sys/netdev.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/report.h"

#define POLL_US		5000
/* after the markers: they are repeated, and late frames of other queues may still be on their way */
#define LINGER_US	20000
#define READY_NS	(2 * 1000000000ULL)	/* the sender's workers pinned and waiting */

void lr_local_init(struct lr_local *l, lr_local_note_fn note, void *arg)
{
	memset(l, 0, sizeof(*l));
	l->note = note;
	l->note_arg = arg;
}

static void note(const struct lr_local *l, enum lr_local_note kind, const char *line)
{
	if (l->note)
		l->note(l->note_arg, kind, line);
}

static int prepared(const struct lr_local *l, struct lr_err *err)
{
	if (l->role != LR_LOCAL_NONE)
		return lr_err_set(err, LR_EXIT_USAGE, "a test is prepared already");
	return 0;
}

int lr_local_prepare_rx(struct lr_local *l, const struct lr_rx_spec *s, struct lr_err *err)
{
	char msg[LR_RX_LINE_MAX];
	int ret = prepared(l, err);

	if (ret)
		return ret;
	l->rxs = *s;
	ret = lr_rx_begin(&l->rxs, &l->rx, l->line, sizeof(l->line), msg, sizeof(msg));
	if (ret)
		return lr_err_set(err, ret, "%s", msg);
	l->rx_start_ns = lr_now_ns();
	l->role = LR_LOCAL_RX;
	return 0;
}

int lr_local_prepare_reflect(struct lr_local *l, const struct lr_reflect_spec *s, struct lr_err *err)
{
	char msg[LR_RX_LINE_MAX];
	int ret = prepared(l, err);

	if (ret)
		return ret;
	l->fxs = *s;
	ret = lr_reflector_open(&l->fxs, &l->refl, l->line, sizeof(l->line), msg, sizeof(msg));
	if (ret)
		return lr_err_set(err, ret, "%s", msg);
	l->role = LR_LOCAL_REFLECT;
	return 0;
}

/* A sender: its spec checked, the peer's GRO held when @hold and asked for; its engine not yet open. */
static int tx_prepare(struct lr_local *l, const struct lr_tx_spec *s, unsigned int flow_base, unsigned int flows_total,
		      bool hold, struct lr_err *err)
{
	char msg[512];
	int ret = prepared(l, err);

	if (ret)
		return ret;
	l->txs = *s;
	/* the interface, the size, the queues, the addresses: bad input is refused before the peer is touched */
	ret = lr_tx_prepare(&l->txs, flow_base, flows_total, &l->tx, err);
	if (ret)
		return ret;
	if (lr_tx_notice(l->tx))
		note(l, LR_LOCAL_NOTE_NOTICE, lr_tx_notice(l->tx));
	/* before the sender's engine is chosen, and before it has a thread: the guardian is forked */
	if (hold && l->txs.prepare_peer) {
		ret = lr_peer_gro_hold(l->txs.ifname, &l->pg, msg, sizeof(msg));
		if (ret) {
			lr_tx_close(l->tx);
			l->tx = NULL;
			return lr_err_set(err, ret, "%s", msg);
		}
		lr_peer_gro_start_line(&l->pg.r, l->txs.ifname, msg, sizeof(msg));
		note(l, LR_LOCAL_NOTE_PEER_HELD, msg);
	}
	l->role = LR_LOCAL_TX;
	return 0;
}

int lr_local_prepare_tx(struct lr_local *l, const struct lr_tx_spec *s, struct lr_err *err)
{
	return tx_prepare(l, s, 0, s->flows, true, err);
}

int lr_local_open_tx(struct lr_local *l, struct lr_err *err)
{
	int ret;

	if (l->role != LR_LOCAL_TX || l->open)
		return lr_err_set(err, LR_EXIT_USAGE, "no sender prepared");
	ret = lr_tx_engine_open(l->tx, err);
	if (ret) {
		/* the endpoint holds nothing again, as if the prepare had failed */
		lr_peer_gro_release(&l->pg);
		lr_tx_close(l->tx);
		l->tx = NULL;
		l->role = LR_LOCAL_NONE;
		return ret;
	}
	snprintf(l->line, sizeof(l->line), "%s", lr_tx_engine_line(l->tx));
	l->open = true;
	return 0;
}

int lr_local_prepare_stream(struct lr_local *l, const struct lr_tx_spec *s, unsigned int flow_base,
			    unsigned int flows_total, struct lr_err *err)
{
	int ret = tx_prepare(l, s, flow_base, flows_total, false, err);

	return ret ? ret : lr_local_open_tx(l, err);
}

/*
 * Sleeps until @at on CLOCK_MONOTONIC (lr_now_ns()), the last stretch spun for a start within
 * microseconds; a signal that stops the endpoint cuts it short.
 */
static void sleep_until(uint64_t at)
{
	const uint64_t spin = 200000;	/* the usual lateness of a timer's wake-up, with margin */
	uint64_t now;

	while ((now = lr_now_ns()) + spin < at && !lr_stop) {
		struct timespec ts = { .tv_sec = (time_t)((at - spin) / 1000000000ULL),
				       .tv_nsec = (long)((at - spin) % 1000000000ULL) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	while (lr_now_ns() < at && !lr_stop)
		;
}

int lr_local_arm(struct lr_local *l, struct lr_err *err)
{
	if (l->role == LR_LOCAL_NONE)
		return lr_err_set(err, LR_EXIT_USAGE, "nothing prepared");
	if (l->armed || l->started)
		return lr_err_set(err, LR_EXIT_USAGE, "started already");
	if (l->role == LR_LOCAL_TX && !l->open)
		return lr_err_set(err, LR_EXIT_USAGE, "the sender's engine is not open: lr_local_open_tx() first");
	if (l->role == LR_LOCAL_TX) {
		if (lr_tx_start(l->tx, err))
			return err ? err->code : LR_EXIT_RUNTIME;
		lr_tx_ready(l->tx, READY_NS);
	}
	l->armed = true;
	return 0;
}

void lr_local_go(struct lr_local *l, uint64_t now_ns)
{
	if (l->role == LR_LOCAL_TX && l->armed)
		lr_tx_go(l->tx, now_ns);
	l->started = true;
}

int lr_local_start(struct lr_local *l, uint64_t at_ns, uint64_t *go_ns, struct lr_err *err)
{
	uint64_t now;
	int ret;

	*go_ns = lr_now_bpf_ns();
	ret = lr_local_arm(l, err);
	if (ret)
		return ret;
	if (l->role == LR_LOCAL_TX) {
		/* the stamping clock is CLOCK_MONOTONIC less this namespace's offset */
		if (at_ns)
			sleep_until(at_ns + (uint64_t)lr_timens_offset_ns());
		now = lr_now_ns();
		lr_local_go(l, now);
		*go_ns = now - (uint64_t)lr_timens_offset_ns();
	}
	l->started = true;
	return 0;
}

bool lr_local_done(const struct lr_local *l)
{
	return l->role == LR_LOCAL_TX && l->started && lr_tx_done(l->tx);
}

void lr_local_join(struct lr_local *l)
{
	if (l->role != LR_LOCAL_TX || !l->tx || !l->armed || l->joined)
		return;
	/* released and still sending: its data ended and its markers sent, as on SIGINT */
	if (l->started && !lr_tx_done(l->tx) && !lr_stop)
		lr_stop = LR_LOCAL_STOP_REQUESTED;
	lr_tx_join(l->tx);
	l->joined = true;
}

void lr_local_release_peer(struct lr_local *l)
{
	char pline[512], full[560];

	if (!l->pg.pid)
		return;
	lr_peer_gro_release(&l->pg);
	lr_peer_gro_end_line(&l->pg.r, pline, sizeof(pline));
	snprintf(full, sizeof(full), "--prepare-peer: %s", pline);
	note(l, LR_LOCAL_NOTE_PEER_BACK, full);
}

const char *lr_local_gone(const struct lr_local *l)
{
	if (l->role == LR_LOCAL_RX && !lr_if_present(&l->rx.ifc))
		return l->rxs.ifname;
	if (l->role == LR_LOCAL_REFLECT && !lr_if_present(&l->refl.ifc))
		return l->fxs.ifname;
	return NULL;
}

int lr_local_counts(struct lr_local *l, struct lr_local_counts *c, struct lr_err *err)
{
	memset(c, 0, sizeof(*c));
	if (l->role == LR_LOCAL_REFLECT) {
		struct lr_reflect_result x;
		int ret = lr_reflector_collect(&l->refl, &x);

		if (ret)
			return lr_err_set(err, LR_EXIT_RUNTIME, "cannot read the reflector's counters: %s", strerror(-ret));
		c->packets = x.packets;
		c->eot_markers = x.eot;
		c->foreign = x.foreign;
		c->refused = x.dev_tx_dropped + x.dev_drv_drops;
	} else if (l->role == LR_LOCAL_TX) {
		const struct lr_worker *ws;
		unsigned int n, i;

		ws = lr_tx_workers(l->tx, &n);
		for (i = 0; l->started && i < n; i++) {
			c->packets += lr_tx_worker_done(&ws[i]);
			c->queued += __atomic_load_n(&ws[i].stats.queued, __ATOMIC_RELAXED);
		}
	} else if (l->role == LR_LOCAL_RX) {
		struct lr_rx_result *r = malloc(sizeof(*r));
		int ret = r ? lr_rx_collect(&l->rx, r) : -ENOMEM;

		if (ret) {
			free(r);
			return lr_err_set(err, LR_EXIT_RUNTIME, "cannot read the receiver's counters: %s", strerror(-ret));
		}
		c->packets = r->packets;
		c->lost = r->lost;
		c->reordered = r->late;
		c->duplicates = r->dups;
		c->foreign = r->foreign;
		free(r);
	}
	return 0;
}

void lr_local_finish(struct lr_local *l)
{
	const struct lr_prep_result *prep;
	char error[LR_WHY_MAX + 32] = "", line[LR_WHY_MAX + 32];
	struct lr_tx_result r;
	unsigned int i, n;
	size_t len = 0;
	double secs;
	char *text = NULL;
	FILE *f;

	/* a receiver or a reflector is started too (start at_ns 0): it has no sender to finish */
	if (l->role != LR_LOCAL_TX || !l->tx || l->finished || !l->started)
		return;
	lr_local_join(l);
	/* the test is over for the peer: put back before the report, which says how it went */
	lr_local_release_peer(l);
	prep = l->txs.prepare_peer ? &l->pg.r : NULL;
	lr_tx_collect(l->tx, &r, &secs);
	/* the lines `linerate send` would print: the workers' failures, then the summary */
	f = open_memstream(&text, &len);
	lr_tx_workers(l->tx, &n);
	for (i = 0; i < n; i++) {
		if (!lr_tx_worker_error(l->tx, i, line, sizeof(line)))
			continue;
		if (f)
			fprintf(f, "linerate send: %s\n", line);
		if (!error[0])
			snprintf(error, sizeof(error), "%s", line);
	}
	if (f) {
		struct lr_tx_about a;

		lr_tx_describe(l->tx, &a);
		lr_send_summary(f, &a, &r, secs, prep);
		fclose(f);
	}
	l->tx_summary = text ? text : strdup("");
	l->tx_doc = lr_tx_doc(l->tx, &r, secs, error, NULL, prep);
	l->finished = true;
}

int lr_local_wait(struct lr_local *l, uint64_t timeout_ns, bool *complete, struct lr_err *err)
{
	uint64_t end = lr_now_ns() + timeout_ns;

	*complete = false;
	if (l->role == LR_LOCAL_NONE)
		return lr_err_set(err, LR_EXIT_USAGE, "nothing prepared");
	if (l->role == LR_LOCAL_TX) {
		if (!l->started)
			return lr_err_set(err, LR_EXIT_USAGE, "the sender has not started: start first");
		while (!(*complete = lr_tx_done(l->tx)) && lr_now_ns() < end)
			usleep(POLL_US);
		if (*complete)
			lr_local_finish(l);
		return 0;
	}
	/* every flow's marker counted (or reflected); then their repeats */
	if (l->role == LR_LOCAL_REFLECT)
		while (!(*complete = lr_reflector_complete(&l->refl)) && lr_now_ns() < end)
			usleep(POLL_US);
	else
		while (!(*complete = lr_rx_complete(&l->rx)) && lr_now_ns() < end)
			usleep(POLL_US);
	usleep(LINGER_US);
	return 0;
}

struct json_object *lr_local_rx_doc(struct lr_local *l, struct lr_rx_result *r, struct lr_err *err)
{
	struct lr_rx_context x = { .secs = (double)(lr_now_ns() - l->rx_start_ns) / 1e9 };
	int ret = lr_rx_collect(&l->rx, r);

	if (ret) {
		lr_err_set(err, LR_EXIT_RUNTIME, "cannot read the receiver's counters: %s", strerror(-ret));
		return NULL;
	}
	lr_rx_context_of(&x, &l->rx, l->rxs.ifname);
	return lr_rx_doc(&x, r);
}

struct json_object *lr_local_reflect_doc(struct lr_local *l, struct lr_reflect_result *x, struct lr_err *err)
{
	struct json_object *doc;
	int ret = lr_reflector_collect(&l->refl, x);

	if (ret) {
		lr_err_set(err, LR_EXIT_RUNTIME, "cannot read the reflector's counters: %s", strerror(-ret));
		return NULL;
	}
	doc = lr_json_doc("reflect");
	json_object_object_add(doc, "interface", json_object_new_string(l->fxs.ifname));
	json_object_object_add(doc, "duration_s", json_object_new_double(x->duration_s));
	json_object_object_add(doc, "error", NULL);
	lr_reflect_result_put(doc, x);
	return doc;
}

void lr_local_stop(struct lr_local *l)
{
	/* the workers' own stop: they end their data and send their markers, as on SIGINT */
	if (l->role == LR_LOCAL_TX && l->started && !lr_stop)
		lr_stop = LR_LOCAL_STOP_REQUESTED;
}

void lr_local_reset(struct lr_local *l)
{
	if (l->role == LR_LOCAL_RX)
		lr_rx_reset(&l->rx);
}

void lr_local_end(struct lr_local *l)
{
	lr_local_join(l);
	if (l->role == LR_LOCAL_RX)
		lr_rx_end(&l->rx);
	if (l->role == LR_LOCAL_REFLECT) {
		/* detached first (frames pass from then on), then its maps and program freed */
		lr_reflector_stop(&l->refl);
		lr_reflector_close(&l->refl);
	}
	lr_tx_close(l->tx);
	l->tx = NULL;
	/* a sender that never started (or a session cut short): its hold goes too */
	lr_peer_gro_release(&l->pg);
	json_object_put(l->tx_doc);
	l->tx_doc = NULL;
	free(l->tx_summary);
	l->tx_summary = NULL;
	l->role = LR_LOCAL_NONE;
	l->open = l->armed = l->started = l->joined = l->finished = false;
}
