/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for a TX worker's end-of-test markers: a burst larger than the ring goes out in
 * pieces the ring can take, every flow's marker in every round; a ring that never frees fails
 * the worker with a message, never a silent success.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tx/engine.h"

#define RING 256
#define FLOWS 5000	/* markers per round: far more than the ring holds */

struct fake {
	unsigned int inflight;	/* queued, not yet completed */
	unsigned int max_budget;	/* the largest piece asked for */
	bool stuck;	/* the device never completes */
	bool stuck_eot;	/* it completes data frames, then no marker */
	unsigned int flows;	/* 0: FLOWS */
	unsigned int *marker;	/* markers queued, per flow index */
};

static int fake_tx(struct lr_worker *w, unsigned int budget)
{
	struct fake *f = w->engine;
	unsigned int n = RING - f->inflight, i;

	if (budget > f->max_budget)
		f->max_budget = budget;
	if (n > budget)
		n = budget;
	for (i = 0; i < n; i++) {
		if (w->eot_phase)
			f->marker[w->flow_cur]++;
		if (++w->flow_cur == w->nflows)
			w->flow_cur = 0;
	}
	f->inflight += n;
	if (w->eot_phase)
		w->stats.eot += n;
	else
		w->stats.queued += n;
	return (int)n;
}

static int fake_drain(struct lr_worker *w)
{
	struct fake *f = w->engine;

	if (!f->stuck && !(f->stuck_eot && w->eot_phase)) {
		w->stats.completed += f->inflight;
		f->inflight = 0;
	}
	return (int)f->inflight;
}

/* completions come with every call, as a device's do */
static int fake_tx_completing(struct lr_worker *w, unsigned int budget)
{
	fake_drain(w);
	return fake_tx(w, budget);
}

static const struct lr_engine_ops fake_ops = {
	.name = "fake",
	.tx = fake_tx_completing,
	.drain = fake_drain,
};

static void run_worker(struct fake *f, struct lr_worker *w, struct lr_tx_spec *o)
{
	static const volatile int go = 1;
	static const volatile uint64_t no_deadline;
	unsigned int flows = f->flows ? f->flows : FLOWS;

	memset(o, 0, sizeof(*o));
	o->batch = 64;
	o->eot_repeat = 3;
	memset(w, 0, sizeof(*w));
	assert_int_equal(lr_workers_plan(w, 1, flows, 10, 0, flows), 0);
	w->spec = o;
	w->ops = &fake_ops;
	w->engine = f;
	w->go = &go;
	w->deadline_ns = &no_deadline;
	w->cpu = (unsigned int)sched_getcpu();
	f->marker = calloc(flows, sizeof(*f->marker));
	assert_non_null(f->marker);
	lr_worker_run(w);
}

static void test_markers_in_pieces(void **state)
{
	struct fake f = { 0 };
	struct lr_worker w;
	struct lr_tx_spec o;
	unsigned int i;

	(void)state;
	run_worker(&f, &w, &o);
	assert_int_equal(w.err, 0);
	assert_true(w.stats.queued == 10);
	assert_true(w.stats.eot == 3ULL * FLOWS);
	/* never more than one batch per call: a ring with room for less is never asked for all */
	assert_true(f.max_budget <= o.batch);
	for (i = 0; i < FLOWS; i++)
		assert_int_equal(f.marker[i], 3);
	free(f.marker);
	free(w.flow_seq);
}

static void test_markers_stuck_ring_fails(void **state)
{
	struct fake f = { .stuck = true };
	struct lr_worker w;
	struct lr_tx_spec o;

	(void)state;
	/* the data frames fill 10 slots; the markers then find RING - 10 free and no more */
	run_worker(&f, &w, &o);
	assert_int_equal(w.err, -ETIMEDOUT);
	assert_true(w.stats.eot == RING - 10);
	assert_string_equal(w.errmsg, "4754 of the 5000 end-of-test markers of round 1 (one per flow) could not be "
				      "queued in 2 s: the receiver cannot settle those flows");
	free(f.marker);
	free(w.flow_seq);
}

/* markers the ring took but the device never sent: queued is not sent, and the send fails */
static void test_markers_not_completed_fails(void **state)
{
	struct fake f = { .stuck_eot = true, .flows = 100 };
	struct lr_worker w;
	struct lr_tx_spec o;

	(void)state;
	run_worker(&f, &w, &o);
	assert_int_equal(w.err, -ETIMEDOUT);
	assert_true(w.stats.eot == 100);
	assert_string_equal(w.errmsg, "100 frames of round 1 of the end-of-test markers still not completed by the "
				      "device after 2 s: the receiver may not settle every flow");
	free(f.marker);
	free(w.flow_seq);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markers_in_pieces),
		cmocka_unit_test(test_markers_stuck_ring_fails),
		cmocka_unit_test(test_markers_not_completed_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
