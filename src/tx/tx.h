/* SPDX-License-Identifier: MIT */
/* One stream's sender as a library: interface checks, template, engine choice, pinned workers. */
#ifndef LINERATE_TX_H
#define LINERATE_TX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tx/spec.h"
#include "tx/engine.h"
#include "util/err.h"
#include "util/result.h"

struct lr_tx;

struct json_object;

/*
 * Checks the interface, builds the template, chooses and opens the engine
 * and plans the workers: flow ids flow_base .. flow_base + o->flows - 1 of
 * a test with @flows_total flows. Returns an exit code: 0, or 1/2 with the
 * reason in @err (settings named {key}: util/err.h); nothing is left open
 * on failure. The library prints nothing: the caller says what it wants of
 * lr_tx_notice() and lr_tx_engine_line().
 */
int lr_tx_open(const struct lr_tx_spec *o, unsigned int flow_base, unsigned int flows_total, struct lr_tx **out,
	       struct lr_err *err);
/*
 * lr_tx_open() in two steps, for a caller that changes something between the checks and the engine
 * (--prepare-peer): first the interface checks and the template, every failure the user's (exit
 * 2, one line), nothing left open on failure; then the engine and the workers, after which
 * lr_tx_close() frees @t whether that succeeded or not.
 */
int lr_tx_prepare(const struct lr_tx_spec *o, unsigned int flow_base, unsigned int flows_total, struct lr_tx **out,
		  struct lr_err *err);
int lr_tx_engine_open(struct lr_tx *t, struct lr_err *err);
/* What to tell the user before the test (a replay's skipped frames), {key} spelled; NULL: nothing. */
const char *lr_tx_notice(const struct lr_tx *t);
/* The engine chosen, its mode, queues and CPUs, and why (after lr_tx_engine_open()). */
const char *lr_tx_engine_line(const struct lr_tx *t);
/* The CPUs given name only CPUs this process may run on (its affinity mask). 0, or -EINVAL with one line. */
int lr_tx_check_cpus(const struct lr_tx_spec *o, char *err, size_t errlen);
/* Starts the worker threads; they wait for lr_tx_go(). Exit code, the reason in @err. */
int lr_tx_start(struct lr_tx *t, struct lr_err *err);
/*
 * Waits until every worker is pinned and waiting (or @timeout_ns passed), so the clock starts fair;
 * then takes the cost split's readings at the start (before the caller reads its clock for go).
 */
void lr_tx_ready(struct lr_tx *t, uint64_t timeout_ns);
/* Releases the workers now; a duration in the options runs from @now_ns. */
void lr_tx_go(struct lr_tx *t, uint64_t now_ns);
bool lr_tx_done(const struct lr_tx *t);
void lr_tx_join(struct lr_tx *t);
void lr_tx_close(struct lr_tx *t);

/* Samples for a pcap: one in @every frames, or the first @count, into @smp (rings @producer + worker index). */
void lr_tx_sample(struct lr_tx *t, struct lr_sampler *smp, unsigned int producer, uint64_t every, uint64_t count);

/*
 * The interface's tx_dropped as read when the last worker's data was done,
 * before any end-of-test marker: diff it with a reading taken before the
 * start for the data frames the device dropped. -ENODATA if not taken.
 */
int lr_tx_dropped_at_data_end(const struct lr_tx *t, uint64_t *out);
const struct lr_engine_ops *lr_tx_ops(const struct lr_tx *t);
/* The mode the workers ran in ("zerocopy", "copy", ...), or "mixed" when they differ. */
const char *lr_tx_mode(const struct lr_tx *t);
const struct lr_worker *lr_tx_workers(const struct lr_tx *t, unsigned int *n);
uint64_t lr_tx_start_ns(const struct lr_tx *t);
/* Bytes a sample of one frame needs: the template's length, or room for a replay's longest. */
unsigned int lr_tx_snaplen(const struct lr_tx *t);
/*
 * The live line (tx pps, L2/L1 Gbit/s, per queue) over @dt_ns since @prev (per-worker totals,
 * updated), into @line of @len bytes.
 */
void lr_tx_live_line(struct lr_tx *t, uint64_t *prev, uint64_t dt_ns, char *line, size_t len);
/* After lr_tx_join(): worker @i's failure as "worker N: why" in @buf; false when it had none. */
bool lr_tx_worker_error(const struct lr_tx *t, unsigned int i, char *buf, size_t len);
/* What a sender is, for its summary's words (summary/summary.h): strings owned by the sender. */
struct lr_tx_about {
	const char *engine, *mode, *ifname;
	const char *mac_how;	/* where the destination MAC came from */
	unsigned int nworkers, flows;
	unsigned int frame_bytes;	/* per frame incl. FCS (a replay's mean) */
	bool replay, stamp;	/* a capture replayed; with the probe stamped in */
	bool drops_completed;	/* the engine's device drops are losses (else pushed back and resent) */
};
void lr_tx_describe(const struct lr_tx *t, struct lr_tx_about *a);
/*
 * The send document (`send --json`) of a collected result: @error (NULL or "": none), @rtt under
 * its keys (NULL: none), @prep under "prepare_peer" (NULL: not asked). The caller puts it.
 */
struct json_object *lr_tx_doc(const struct lr_tx *t, const struct lr_tx_result *r, double secs, const char *error,
			      const struct lr_rtt_result *rtt, const struct lr_prep_result *prep);
/* The result (util/result.h) and, in @secs, the span from the start to the last worker's data end. After lr_tx_join(). */
void lr_tx_collect(struct lr_tx *t, struct lr_tx_result *r, double *secs);
struct lr_cost_cpus;
/* Adds the workers' CPU time, by CPU, to @acc (sys/cost.h); @acc->n is 0 when one never ran. After lr_tx_join(). */
void lr_tx_cost_cpus(const struct lr_tx *t, struct lr_cost_cpus *acc);
/* Data frames the device completed on worker @w (markers excluded). */
uint64_t lr_tx_worker_done(const struct lr_worker *w);

#endif
