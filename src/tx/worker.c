/* SPDX-License-Identifier: MIT */
/* Pinned TX worker threads: pacing, batching, the drain and the end-of-test markers. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include "tx/engine.h"
#include "tx/rate.h"
#include "util/clock.h"
#include "util/log.h"

#define NS 1000000000ULL
#define DRAIN_TIMEOUT_NS (2 * NS)
#define EOT_GAP_NS (2 * 1000000ULL)	/* between repeats of the markers */
#define SPIN_NS 1000000ULL	/* pacing waits shorter than this spin */

int lr_workers_plan(struct lr_worker *ws, unsigned int n, unsigned int flows, uint64_t count, unsigned int base,
		    unsigned int total)
{
	unsigned int i;

	if (!n || flows < n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct lr_worker *w = &ws[i];

		/* flow f belongs to worker f % n: each sequence has one writer and one queue */
		w->index = i;
		w->flow_first = base + i;
		w->flow_stride = n;
		w->nflows = (flows - i + n - 1) / n;
		w->flows_total = total;
		w->flow_cur = 0;
		w->flow_seq = calloc(w->nflows, sizeof(*w->flow_seq));
		if (!w->flow_seq)
			return -ENOMEM;
		w->limit = count ? count / n + (i < count % n) : 0;
	}
	return 0;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NS), .tv_nsec = (long)(ns % NS) };

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* Waits until every queued frame is completed or the timeout passes; returns frames still out. */
static int drain(struct lr_worker *w, uint64_t timeout_ns)
{
	uint64_t end = lr_now_ns() + timeout_ns;
	int left;

	for (;;) {
		left = w->ops->drain(w);
		if (left <= 0 || lr_now_ns() >= end)
			return left;
		sleep_ns(20000);
	}
}

/*
 * Every worker's data is out: the last one in takes the device's counters,
 * then markers may go. A worker that never ran arrives without waiting.
 */
/* This thread's CPU time, ns: exact (the scheduler's own account), interrupts served inside it included. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static void data_end_barrier(struct lr_worker *w, bool wait)
{
	struct lr_data_end *d = w->data_end;
	uint64_t end;

	if (!d)
		return;
	if (__atomic_add_fetch(&d->arrived, 1, __ATOMIC_ACQ_REL) == d->n) {
		if (d->snap)
			d->snap(d->arg);
		__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
		return;
	}
	if (!wait)
		return;
	end = lr_now_ns() + 5 * NS;
	while (!__atomic_load_n(&d->done, __ATOMIC_ACQUIRE) && lr_now_ns() < end)
		sleep_ns(100000);
}

/* Frames per tx() call: the worker's own (set by open), the engine's, or --batch. */
static unsigned int worker_batch(const struct lr_worker *w)
{
	return w->batch ? w->batch : w->ops->batch ? w->ops->batch : w->spec->batch;
}

/*
 * Every owned flow's marker, eot_repeat times. A burst goes in pieces of
 * one batch: a ring takes what it has room for, never more than it holds
 * (an AF_XDP reservation is all or nothing), so a worker with more flows
 * than ring slots waits on completions between pieces. A round that could
 * not queue all its markers in time fails the send: the receiver could not
 * settle the flows left out, and a clean exit would hide it.
 */
static int send_markers(struct lr_worker *w)
{
	const unsigned int batch = worker_batch(w);
	unsigned int r;
	int n;

	/* a replay with no UDP frame to the test port that the probe fits in has nothing to carry markers */
	if (w->replay && w->replay->eot_frame == w->replay->fr->n)
		return 0;
	w->eot_phase = true;
	for (r = 0; r < w->spec->eot_repeat; r++) {
		unsigned int left = w->nflows;
		uint64_t end = lr_now_ns() + DRAIN_TIMEOUT_NS;

		w->flow_cur = 0;
		while (left && lr_now_ns() < end) {
			n = w->ops->tx(w, left < batch ? left : batch);
			if (n < 0)
				return n;
			left -= (unsigned int)n;
			if (!n)
				sleep_ns(20000);
		}
		if (left) {
			snprintf(w->errmsg, sizeof(w->errmsg),
				 "%u of the %u end-of-test markers of round %u (one per flow) could not be queued in %llu s: "
				 "the receiver cannot settle those flows",
				 left, w->nflows, r + 1, (unsigned long long)(DRAIN_TIMEOUT_NS / NS));
			return -ETIMEDOUT;
		}
		/* queued is not sent: a marker the device never completed settles nothing */
		n = drain(w, DRAIN_TIMEOUT_NS);
		if (n < 0)
			return n;
		if (n > 0) {
			snprintf(w->errmsg, sizeof(w->errmsg),
				 "%d frames of round %u of the end-of-test markers still not completed by the device after %llu s: "
				 "the receiver may not settle every flow",
				 n, r + 1, (unsigned long long)(DRAIN_TIMEOUT_NS / NS));
			return -ETIMEDOUT;
		}
		sleep_ns(EOT_GAP_NS);
	}
	return 0;
}

/*
 * Nothing is due for @wait ns: reap completions, then wait. Only waits
 * longer than SPIN_NS sleep, and the last SPIN_NS of them spins: a sleep
 * wakes 50 us late on average, and on a VM whose idle vCPU was halted,
 * milliseconds late. That lag could only be caught up in bursts a policer
 * downstream would count against us. So paced sending above 1 kpps per
 * worker keeps its core busy, which the CPU split will show.
 */
static int idle(struct lr_worker *w, uint64_t wait, uint64_t *late_ns)
{
	int n = w->ops->drain(w);
	uint64_t t0, want = 0, took;

	if (n < 0)
		return n;
	t0 = lr_now_ns();
	if (wait > SPIN_NS) {
		want = wait - SPIN_NS < 10 * SPIN_NS ? wait - SPIN_NS : 10 * SPIN_NS;
		sleep_ns(want);
	} else {
		sched_yield();
	}
	/* how much later than asked it came back: a slice of another thread's, on a busy CPU */
	took = lr_now_ns() - t0;
	if (late_ns)
		*late_ns = took > want ? took - want : 0;
	return 0;
}

/*
 * Replay at the capture's own timing: frame i of loop l is due at
 * start + l * (span + mean gap) + (ts_i - ts_0). Whatever is due goes out
 * in one batch; waits spin or sleep as in paced sending.
 */
static int send_timed(struct lr_worker *w)
{
	const struct lr_pcap_frames *fr = w->replay->fr;
	const uint64_t base = fr->f[0].ts_ns, span = fr->f[fr->n - 1].ts_ns - base;
	const uint64_t loop_ns = span + (fr->n > 1 ? span / (fr->n - 1) : 1000);
	const uint64_t timens = (uint64_t)lr_timens_offset_ns();
	uint64_t start = lr_now_ns(), now, i, due = 0;
	unsigned int k;
	int n;

	for (;;) {
		if (lr_stop)
			break;
		now = lr_now_ns();
		if (*w->deadline_ns && now >= *w->deadline_ns)
			break;
		i = w->stats.queued;
		if (w->limit && i >= w->limit)
			break;
		for (k = 0; k < w->spec->batch && (!w->limit || i + k < w->limit); k++) {
			uint64_t j = i + k;

			due = start + (j / fr->n) * loop_ns + (fr->f[j % fr->n].ts_ns - base);
			if (due > now)
				break;
		}
		if (!k) {
			uint64_t wait = due - now;

			n = idle(w, wait, NULL);
			if (n < 0)
				return n;
			continue;
		}
		w->stamp_ns = now - timens;
		n = w->ops->tx(w, k);
		if (n < 0)
			return n;
	}
	return 0;
}

static int send_data(struct lr_worker *w)
{
	const unsigned int batch = worker_batch(w);
	const uint64_t slice_ns = w->slice_ns ? w->slice_ns : w->ops->slice_ns;
	const uint64_t timens = (uint64_t)lr_timens_offset_ns();
	struct lr_pacer pacer;
	uint64_t now, want, allow;
	int n;

	if (w->replay && w->spec->replay_timing)
		return send_timed(w);
	now = lr_now_ns();
	lr_pacer_init(&pacer, w->pps, lr_pace_burst(w->pps, batch, slice_ns), now);
	/* an engine with a costly tx() sends a slice of the rate per call, more when calls get slow */
	if (slice_ns)
		lr_pacer_costly(&pacer, batch);
	for (;;) {
		if (lr_stop)
			break;
		now = lr_now_ns();
		if (*w->deadline_ns && now >= *w->deadline_ns)
			break;
		want = batch;
		if (w->limit) {
			uint64_t left = w->limit - w->stats.queued;

			if (!left)
				break;
			if (left < want)
				want = left;
		}
		allow = lr_pacer_allow(&pacer, now, want);
		/* a costly call goes only with a whole burst (or the last frames) */
		if (!allow) {
			uint64_t wait = lr_pacer_wait_ns(&pacer, now), late;

			n = idle(w, wait, &late);
			if (n < 0)
				return n;
			lr_pacer_late(&pacer, late);
			continue;
		}
		/*
		 * One timestamp per batch (it is queued to the kernel as one), on the stamping clock:
		 * @now is CLOCK_MONOTONIC, which a time namespace shifts and bpf_ktime_get_ns() does not.
		 */
		w->stamp_ns = now - timens;
		n = w->ops->tx(w, (unsigned int)allow);
		if (n < 0)
			return n;
		lr_pacer_consume(&pacer, (uint64_t)n);
		if (pacer.costly)
			lr_pacer_call(&pacer, lr_now_ns() - now);
	}
	return 0;
}

void *lr_worker_run(void *arg)
{
	struct lr_worker *w = arg;
	cpu_set_t set;
	int err, left;

	/* paced sends sleep for tens of microseconds: keep the default 50 us slack out of it */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err) {
		w->err = -err;
		snprintf(w->errmsg, sizeof(w->errmsg), "cannot pin worker %u to CPU %u: %s", w->index, w->cpu,
			 strerror(err));
		data_end_barrier(w, false);
		__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
		return NULL;
	}
	err = w->ops->arm ? w->ops->arm(w) : 0;
	if (err) {
		w->err = err;
		data_end_barrier(w, false);
		__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&w->ready, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		sched_yield();
	if (__atomic_load_n(w->go, __ATOMIC_ACQUIRE) < 0)
		goto out;

	w->cpu_ns0 = thread_cpu_ns();
	err = send_data(w);
	if (!err) {
		left = drain(w, DRAIN_TIMEOUT_NS);
		if (left < 0)
			err = left;
		else if (left > 0)
			pr_warn("worker %u: %d frames still not completed by the device after 2 s\n", w->index, left);
	}
	w->end_ns = lr_now_ns();
	data_end_barrier(w, true);
	/*
	 * Markers after a signal too (it ends the data, not the test): they
	 * settle the receiver's loss. The engines retry the device's push-back
	 * (ENOBUFS) themselves, so an error here means the path is broken and
	 * no marker would get through.
	 */
	if (!err)
		err = send_markers(w);
	w->err = err;
	w->cpu_ns1 = thread_cpu_ns();
out:
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return NULL;
}
