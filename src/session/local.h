/* SPDX-License-Identifier: MIT */
/*
 * An endpoint in this process: a receiver, a sender or a reflector through its whole lifecycle
 * (prepare, start, wait, stop, collect, end), the one place that drives the core's tx and rx for
 * a session. Silent: it returns errors and lines, and the caller says them. The agent's server
 * (ctl/endpoint.c) decodes a request, calls this and encodes the reply.
 */
#ifndef LINERATE_SESSION_LOCAL_H
#define LINERATE_SESSION_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "rx/reflect.h"
#include "rx/rx.h"
#include "rx/spec.h"
#include "sys/peer_gro.h"
#include "tx/spec.h"
#include "tx/tx.h"
#include "util/err.h"

enum lr_local_role { LR_LOCAL_NONE, LR_LOCAL_RX, LR_LOCAL_TX, LR_LOCAL_REFLECT };

/* lr_stop's value when a stop request (not a signal, which sets its number) ends a sender */
#define LR_LOCAL_STOP_REQUESTED	(-1)

/* What a prepared endpoint counts so far (progress): the role's own fields, the others 0. */
struct lr_local_counts {
	uint64_t packets;	/* sent, received or reflected */
	uint64_t queued;	/* sender: frames queued, not yet completed */
	int64_t lost;
	uint64_t reordered, duplicates, foreign;
	uint64_t eot_markers, refused;	/* reflector */
};

/* What a lifecycle step has to say, as it happens; each caller picks what its user is told. */
enum lr_local_note {
	LR_LOCAL_NOTE_NOTICE,	/* the sender's notice (a replay's frames skipped): its settings as {key} */
	LR_LOCAL_NOTE_PEER_HELD,	/* prepare_peer: GRO held on at the veth peer */
	LR_LOCAL_NOTE_PEER_BACK,	/* prepare_peer: GRO put back */
};
typedef void (*lr_local_note_fn)(void *arg, enum lr_local_note kind, const char *line);

struct lr_local {
	enum lr_local_role role;
	bool open, armed, started, joined, finished;	/* a sender: engine open, workers made, released, joined, reported */
	lr_local_note_fn note;	/* NULL: the notes go nowhere */
	void *note_arg;
	char line[LR_RX_LINE_MAX];	/* the prepared test's ready line: its engine and mode */
	/* receiver */
	struct lr_rx_spec rxs;
	struct lr_rx rx;
	uint64_t rx_start_ns;
	/* sender */
	struct lr_tx_spec txs;
	struct lr_tx *tx;
	struct lr_peer_gro pg;	/* prepare_peer: GRO held on at the veth peer until the sender is done */
	struct json_object *tx_doc;	/* its send document, once finished */
	char *tx_summary;	/* its summary lines, once finished */
	/* reflector: it reflects from its prepare to the test's end */
	struct lr_reflect_spec fxs;
	struct lr_reflector refl;
};

void lr_local_init(struct lr_local *l, lr_local_note_fn note, void *arg);

/*
 * Prepares a role (the endpoint holds none): a receiver counting from now, a reflector reflecting
 * from now, a sender checked (and the peer's GRO held, if asked), its engine not yet open. The spec is copied.
 * 0, or an exit code with why in @err (a sender's names its settings as {key}).
 */
int lr_local_prepare_rx(struct lr_local *l, const struct lr_rx_spec *s, struct lr_err *err);
int lr_local_prepare_reflect(struct lr_local *l, const struct lr_reflect_spec *s, struct lr_err *err);
int lr_local_prepare_tx(struct lr_local *l, const struct lr_tx_spec *s, struct lr_err *err);
/*
 * A prepared sender's engine chosen and opened; its line in l->line. Apart from the prepare so that
 * what must be in place before the choice (a receiver on the same interface, the far end's) can be.
 * On failure the endpoint holds nothing again.
 */
int lr_local_open_tx(struct lr_local *l, struct lr_err *err);
/*
 * One sender among a test's streams, its flows numbered from @flow_base of @flows_total. The peer's
 * GRO is not held here whatever the spec says: the test holds it across its streams (and phases).
 */
int lr_local_prepare_stream(struct lr_local *l, const struct lr_tx_spec *s, unsigned int flow_base,
			    unsigned int flows_total, struct lr_err *err);

/*
 * Starts a sender's workers at once (@at_ns 0) or at @at_ns on the stamping clock; a receiver and a
 * reflector run from their prepare (give 0). @go_ns: when they were released, on the stamping clock.
 */
int lr_local_start(struct lr_local *l, uint64_t at_ns, uint64_t *go_ns, struct lr_err *err);
/*
 * lr_local_start() in two halves, for streams released together: a sender's workers made and
 * waiting at the gate (arm), then released at @now_ns on CLOCK_MONOTONIC (go).
 */
int lr_local_arm(struct lr_local *l, struct lr_err *err);
void lr_local_go(struct lr_local *l, uint64_t now_ns);
/* A released sender's workers are all done. */
bool lr_local_done(const struct lr_local *l);
/*
 * A sender's workers joined (one still sending is stopped first; one never released leaves at
 * the gate); the peer's GRO put back. Its counts are then in l->tx; no document is made.
 */
void lr_local_join(struct lr_local *l);
/* prepare_peer: the peer's GRO put back, said as LR_LOCAL_NOTE_PEER_BACK (nothing if not held). */
void lr_local_release_peer(struct lr_local *l);

/* NULL when the prepared role's interface is still there, else the interface's name. */
const char *lr_local_gone(const struct lr_local *l);

int lr_local_counts(struct lr_local *l, struct lr_local_counts *c, struct lr_err *err);

/*
 * Waits up to @timeout_ns for the test to end (a sender's workers done, every marker in): @complete
 * says whether it did. A sender's end is taken: its document and summary are in tx_doc/tx_summary.
 */
int lr_local_wait(struct lr_local *l, uint64_t timeout_ns, bool *complete, struct lr_err *err);

/* The receiver's recv document so far; @r gets its counts. NULL after an error (in @err). */
struct json_object *lr_local_rx_doc(struct lr_local *l, struct lr_rx_result *r, struct lr_err *err);
/* The reflector's reflect document; @x gets its counts. NULL after an error (in @err). */
struct json_object *lr_local_reflect_doc(struct lr_local *l, struct lr_reflect_result *x, struct lr_err *err);

/* A started sender's workers end their data and send their markers, as on SIGINT. */
void lr_local_stop(struct lr_local *l);
/* A receiver's counts from zero: a new window. */
void lr_local_reset(struct lr_local *l);

/*
 * A sender's end (a sender still running is stopped first): its workers joined, its counts
 * collected, its document and summary kept in tx_doc/tx_summary. Nothing for the other roles.
 */
void lr_local_finish(struct lr_local *l);

/* Ends what was prepared: no XDP program, no tap, no thread is left; the endpoint holds none again. */
void lr_local_end(struct lr_local *l);

#endif
