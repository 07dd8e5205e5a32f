/* SPDX-License-Identifier: MIT */
/*
 * `linerate matrix`: every cell of the plan, each ordered pair of agents a sweep of run's (the
 * sending agent as [tx] agent, the receiving one as [rx] agent), then the table, JSON and CSV.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/ctl.h"
#include "linerate/probe.h"
#include "run/matrix.h"
#include "run/run.h"
#include "tx/frame.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"

#define L1_EXTRA 20	/* preamble, start delimiter and inter-frame gap */

/* What the matrix learnt of an agent when it first reached it. */
struct agent_state {
	struct json_object *host;	/* its hello's host facts; NULL when it could not be reached */
	char error[768];	/* why not ("" when it could): its cells are not tried */
};

struct cell {
	bool ran;	/* measured; else @error says why not */
	char error[1024];
	char tx_ifname[16], rx_ifname[16];
	const char *engine, *mode;
	uint64_t offered_pps;	/* 0: max */
	double window_s;
	bool complete;	/* every end-of-test marker came */
	double loss_pct;
	bool pass;
	char why[160];	/* why it failed its thresholds */
	struct lr_tx_result tx;
	struct lr_rx_result rx;
};

struct matrix {
	const struct lr_matrix_opts *o;
	struct lr_matrix_plan *plan;
	struct lr_matrix_limits limits;
	struct lr_auth_key key;
	bool have_key;
	struct agent_state agents[LR_MATRIX_MAX_AGENTS];
	struct cell *cells;
	unsigned int sizes[LR_MATRIX_MAX_SIZES];	/* --sizes, or the smallest frame of the agents' family */
	unsigned int nsizes;
};

static void on_signal(int sig)
{
	lr_stop = sig;
}

static const struct lr_matrix_agent *agent(const struct matrix *m, unsigned int i)
{
	return &m->plan->agents[i];
}

/* The rate as the option takes it: "max", "20000pps", "2500000000bit". */
static void rate_text(const struct lr_rate *r, char *buf, size_t len)
{
	if (r->kind == LR_RATE_MAX)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)r->value, r->kind == LR_RATE_PPS ? "pps" : "bit");
}

/* ---- the agents, once at the start --------------------------------------------------------------- */

/*
 * Each agent once: reached, its token checked, its host facts kept. One that cannot be reached,
 * is busy or refuses our token now is not tried again: its cells are reported as not run, which
 * bounds the whole matrix when a node is gone.
 */
static void probe_agents(struct matrix *m)
{
	unsigned int i;

	for (i = 0; i < m->plan->nagents && !lr_stop; i++) {
		struct agent_state *st = &m->agents[i];
		struct json_object *host;
		struct lr_ctl *c;
		char err[768];
		int ret;

		ret = lr_ctl_connect(agent(m, i)->name, m->have_key ? &m->key : NULL, &c, err, sizeof(err));
		if (ret) {
			/* what an agent said is quoted: escaped, it stays one line */
			lr_escape(err, st->error, sizeof(st->error));
			fprintf(stderr, "linerate matrix: agent %s (%s): %s: its cells will not run\n", agent(m, i)->name,
				agent(m, i)->entry, st->error);
			continue;
		}
		host = lr_ctl_host_json(c);
		st->host = host ? json_object_get(host) : NULL;
		if (!m->o->quiet) {
			char name[256], kernel[128];

			lr_escape(lr_ctl_host(c)->hostname, name, sizeof(name));
			lr_escape(lr_ctl_host(c)->kernel, kernel, sizeof(kernel));
			fprintf(stderr, "linerate matrix: agent %s (%s): %s, kernel %s, %u CPU%s\n", agent(m, i)->name,
				agent(m, i)->entry, name, kernel, lr_ctl_host(c)->cpus, lr_s(lr_ctl_host(c)->cpus));
		}
		if (lr_ctl_quit(c, err, sizeof(err)))
			pr_debug("matrix: %s's quit: %s\n", agent(m, i)->name, err);
		lr_ctl_close(c);
	}
}

/* ---- the cells ------------------------------------------------------------------------------------- */

/* Cells [@first, @end) did not run: why (one line, kept and printed per cell). */
static void cells_failed(struct matrix *m, unsigned int first, unsigned int end, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void cells_failed(struct matrix *m, unsigned int first, unsigned int end, const char *fmt, ...)
{
	char msg[1024];
	unsigned int i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (i = first; i < end; i++) {
		const struct lr_matrix_cell_id *id = &m->plan->cells[i];
		struct cell *c = &m->cells[i];

		c->ran = false;
		lr_escape(msg, c->error, sizeof(c->error));
		fprintf(stderr, "linerate matrix: cell %u/%u, %s -> %s, %u B: not run: %s\n", i + 1, m->plan->ncells,
			agent(m, id->tx)->name, agent(m, id->rx)->name, id->size, c->error);
	}
}

/* The sweep of one ordered pair, as run would have it from a file with [tx] agent and [rx] agent. */
static void pair_cfg(const struct matrix *m, unsigned int tx, unsigned int rx, struct lr_cfg *cfg)
{
	const struct lr_matrix_opts *o = m->o;
	struct lr_cfg_stream *st = &cfg->streams[0];
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->name, sizeof(cfg->name), "matrix");
	cfg->mode = LR_RUN_SWEEP;
	cfg->duration_ns = o->duration_ns;
	cfg->count = o->count;
	cfg->repeat = 1;
	/* run's own verdict is not the matrix's: lr_matrix_judge() decides */
	cfg->max_loss = 1.0;
	cfg->tx_engine = o->engine;
	cfg->batch = 64;
	cfg->dst_port = o->dst_port;
	cfg->nsizes = m->nsizes;
	for (i = 0; i < m->nsizes; i++)
		cfg->sizes[i] = m->sizes[i];
	cfg->nrates = 1;
	cfg->rates[0] = o->rate;
	snprintf(cfg->tx_agent, sizeof(cfg->tx_agent), "%s", agent(m, tx)->name);
	snprintf(cfg->rx_agent, sizeof(cfg->rx_agent), "%s", agent(m, rx)->name);
	/* the far end's address, the one it was reached at: it counts there, the sender routes there */
	cfg->tx_route = true;
	snprintf(cfg->rx_address, sizeof(cfg->rx_address), "%s", agent(m, rx)->address);
	cfg->rx_workers = 1;
	cfg->nstreams = 1;
	lr_tx_spec_default(&st->tx);
	st->tx.size = 0;	/* each step's size */
	st->tx.family = agent(m, rx)->a.family;
	st->tx.dst_ip = agent(m, rx)->a.addr;
	st->tx.flows = o->flows ? o->flows : 1;	/* one queue: one flow unless told */
	st->tx.src_port = lr_src_port_base(st->tx.flows);
	st->share = 1.0;
	st->tx.nworkers = 1;
	lr_cfg_stream_settle(&st->tx);
}

/* What step @s measured, into cell @c, and its verdict. */
static void cell_set(struct matrix *m, struct cell *c, const struct lr_run *r, const struct lr_step *s)
{
	c->ran = true;
	snprintf(c->tx_ifname, sizeof(c->tx_ifname), "%s", r->tx_ifname);
	snprintf(c->rx_ifname, sizeof(c->rx_ifname), "%s", r->rx.ifname);
	c->engine = r->tx_engine ? r->tx_engine : "";
	c->mode = s->mode ? s->mode : "";
	c->offered_pps = s->offered_pps;
	c->window_s = s->window_s;
	c->complete = s->complete;
	c->loss_pct = s->loss_pct;
	c->tx = s->tx;
	c->rx = s->rx;
	c->pass = lr_matrix_judge(&m->limits, s->complete, s->loss_pct, s->rx.pps, c->why, sizeof(c->why));
}

static void cell_line(const struct matrix *m, unsigned int i)
{
	const struct lr_matrix_cell_id *id = &m->plan->cells[i];
	const struct cell *c = &m->cells[i];
	char b1[32], lat[64] = "";

	if (m->o->quiet)
		return;
	if (c->rx.lat_valid && c->rx.lat_count)
		snprintf(lat, sizeof(lat), ", p99 %.1f us", c->rx.lat_p99 / 1e3);
	fprintf(stderr, "linerate matrix: cell %u/%u, %s -> %s, %u B: tx %llu, rx %llu, lost %lld (%.3f%%), rx %s pps%s%s: "
		"%s%s%s\n", i + 1, m->plan->ncells, agent(m, id->tx)->name, agent(m, id->rx)->name, id->size,
		(unsigned long long)c->tx.packets, (unsigned long long)c->rx.packets, (long long)c->rx.lost, c->loss_pct,
		lr_fmt_si(c->rx.pps, b1, sizeof(b1)), lat, c->complete ? "" : " (markers missing)",
		c->pass ? "pass" : "FAIL", c->pass ? "" : ": ", c->why);
}

/* Connects to agent @i for a cell: 0, or an exit code with why in @err. */
static int connect_agent(struct matrix *m, unsigned int i, struct lr_ctl **c, char *err, size_t errlen)
{
	return lr_ctl_connect(agent(m, i)->name, m->have_key ? &m->key : NULL, c, err, errlen);
}

/* Cells [@first, @end): one ordered pair at every size, on one session with each agent. */
static void run_pair(struct matrix *m, unsigned int first, unsigned int end)
{
	const struct lr_matrix_cell_id *id = &m->plan->cells[first];
	struct lr_run_opts ro = { .quiet = true, .verbose = m->o->verbose };
	struct lr_ctl *rxc = NULL, *txc = NULL;
	char err[1024], why[1024] = "";
	struct lr_cfg *cfg = NULL;
	struct lr_run *r = NULL;
	unsigned int k;
	int ret;

	if (m->agents[id->tx].error[0]) {
		cells_failed(m, first, end, "tx agent %s was not reached at the start: %s", agent(m, id->tx)->name,
			     m->agents[id->tx].error);
		return;
	}
	if (m->agents[id->rx].error[0]) {
		cells_failed(m, first, end, "rx agent %s was not reached at the start: %s", agent(m, id->rx)->name,
			     m->agents[id->rx].error);
		return;
	}
	if (connect_agent(m, id->rx, &rxc, err, sizeof(err))) {
		cells_failed(m, first, end, "rx agent: %s", err);
		return;
	}
	if (connect_agent(m, id->tx, &txc, err, sizeof(err))) {
		cells_failed(m, first, end, "tx agent: %s", err);
		lr_ctl_close(rxc);
		return;
	}
	cfg = malloc(sizeof(*cfg));
	r = calloc(1, sizeof(*r));
	if (!cfg || !r) {
		cells_failed(m, first, end, "out of memory");
		goto out;
	}
	pair_cfg(m, id->tx, id->rx, cfg);
	r->cfg = cfg;
	r->o = &ro;
	r->rx.ctl = rxc;
	r->rx.remote = true;
	r->tx_ctl = txc;
	r->engine = cfg->tx_engine;
	r->why = why;
	r->whylen = sizeof(why);
	ret = lr_run_steps(r);
	for (k = 0; k < r->nsteps && first + k < end; k++) {
		cell_set(m, &m->cells[first + k], r, &r->steps[k]);
		cell_line(m, first + k);
	}
	if (first + k < end) {
		if (lr_stop)
			cells_failed(m, first + k, end, "interrupted by %s", lr_stop == SIGINT ? "SIGINT" : "SIGTERM");
		else
			cells_failed(m, first + k, end, "%s", why[0] ? why : ret ? "failed (no reason given)" : "no result");
	}
out:
	if (r && r->rx.ctl) {
		/* the receiver's agent: quit (its receiver ended, detached) and closed; the sender's below */
		lr_run_rx_stop(r);
		rxc = NULL;
	}
	if (r)
		free(r->steps);
	lr_ctl_close(rxc);
	if (lr_ctl_quit(txc, err, sizeof(err)))
		pr_debug("matrix: %s's quit: %s\n", agent(m, id->tx)->name, err);
	lr_ctl_close(txc);
	free(r);
	free(cfg);
}

/* Every cell in order, an ordered pair at a time. */
static void run_cells(struct matrix *m)
{
	const struct lr_matrix_plan *p = m->plan;
	unsigned int i = 0, j;

	while (i < p->ncells) {
		for (j = i + 1; j < p->ncells && p->cells[j].tx == p->cells[i].tx && p->cells[j].rx == p->cells[i].rx &&
				p->cells[j].pair == p->cells[i].pair;
		     j++)
			;
		if (lr_stop)
			cells_failed(m, i, j, "interrupted by %s", lr_stop == SIGINT ? "SIGINT" : "SIGTERM");
		else
			run_pair(m, i, j);
		i = j;
	}
}

/* ---- the report -------------------------------------------------------------------------------------- */

static unsigned int name_width(const struct matrix *m)
{
	unsigned int i, w = 8;

	for (i = 0; i < m->plan->nagents; i++)
		if (strlen(agent(m, i)->name) > w)
			w = (unsigned int)strlen(agent(m, i)->name);
	return w;
}

/* The agent's hostname from its hello, escaped into @buf; "" when it was not reached. */
static const char *hostname_of(const struct matrix *m, unsigned int i, char *buf, size_t len)
{
	struct json_object *v;

	buf[0] = '\0';
	if (m->agents[i].host && json_object_object_get_ex(m->agents[i].host, "hostname", &v))
		lr_escape(json_object_get_string(v), buf, len);
	return buf;
}

static void print_table(const struct matrix *m)
{
	const struct lr_matrix_opts *o = m->o;
	FILE *out = !strcmp(o->json, "-") || !strcmp(o->csv, "-") ? stderr : stdout;
	int w = (int)name_width(m);
	char b1[32], b2[32], host[256];
	unsigned int i;

	fprintf(out, "\nagents:\n");
	for (i = 0; i < m->plan->nagents; i++)
		fprintf(out, "  %-*s  %-20s  from %s%s%s\n", w, agent(m, i)->name,
			m->agents[i].error[0] ? "(not reached)" : hostname_of(m, i, host, sizeof(host)), agent(m, i)->entry,
			m->agents[i].error[0] ? ": " : "", m->agents[i].error);
	fprintf(out, "\n%-4s %-*s %-*s %5s %10s %10s %7s %8s %10s %9s %8s %8s  %s\n", "cell", w, "tx agent", w,
		"rx agent", "size", "tx pkts", "rx pkts", "lost", "loss %", "rx pps", "L1 Mb/s", "p50 us", "p99 us",
		"pass");
	for (i = 0; i < m->plan->ncells; i++) {
		const struct lr_matrix_cell_id *id = &m->plan->cells[i];
		const struct cell *c = &m->cells[i];
		bool lat = c->ran && c->rx.lat_valid && c->rx.lat_count;

		fprintf(out, "%-4u %-*s %-*s %5u ", i + 1, w, agent(m, id->tx)->name, w, agent(m, id->rx)->name, id->size);
		if (!c->ran) {
			fprintf(out, "error: %s\n", c->error);
			continue;
		}
		snprintf(b1, sizeof(b1), "%.1f", c->rx.lat_p50 / 1e3);
		snprintf(b2, sizeof(b2), "%.1f", c->rx.lat_p99 / 1e3);
		fprintf(out, "%10llu %10llu %7lld %8.3f %10.0f %9.2f %8s %8s  %s%s%s\n", (unsigned long long)c->tx.packets,
			(unsigned long long)c->rx.packets, (long long)c->rx.lost, c->loss_pct, c->rx.pps,
			c->rx.pps * (id->size + L1_EXTRA) * 8 / 1e6, lat ? b1 : "-", lat ? b2 : "-", c->pass ? "yes" : "NO",
			c->pass ? "" : ": ", c->why);
	}
}

static struct json_object *agent_json(const struct matrix *m, unsigned int i)
{
	const struct lr_matrix_agent *g = agent(m, i);
	struct json_object *a = json_object_new_object();

	json_object_object_add(a, "agent", json_object_new_string(g->name));
	json_object_object_add(a, "address", json_object_new_string(g->address));
	json_object_object_add(a, "port", json_object_new_int(g->port));
	json_object_object_add(a, "entry", json_object_new_string(g->entry));
	json_object_object_add(a, "host", json_object_get(m->agents[i].host));
	json_object_object_add(a, "error", m->agents[i].error[0] ? json_object_new_string(m->agents[i].error) : NULL);
	return a;
}

static struct json_object *str_or_null(const char *s)
{
	return s && s[0] ? json_object_new_string(s) : NULL;
}

static struct json_object *cell_json(const struct matrix *m, unsigned int i)
{
	const struct lr_matrix_cell_id *id = &m->plan->cells[i];
	const struct cell *c = &m->cells[i];
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "tx_agent", json_object_new_string(agent(m, id->tx)->name));
	json_object_object_add(o, "rx_agent", json_object_new_string(agent(m, id->rx)->name));
	json_object_object_add(o, "size", json_object_new_int((int)id->size));
	json_object_object_add(o, "pair", json_object_new_int((int)id->pair));
	json_object_object_add(o, "error", c->ran ? NULL : json_object_new_string(c->error));
	json_object_object_add(o, "pass", json_object_new_boolean(c->ran && c->pass));
	json_object_object_add(o, "fail_reason", c->ran && !c->pass ? json_object_new_string(c->why) : NULL);
	json_object_object_add(o, "tx_interface", c->ran ? str_or_null(c->tx_ifname) : NULL);
	json_object_object_add(o, "rx_interface", c->ran ? str_or_null(c->rx_ifname) : NULL);
	json_object_object_add(o, "engine", c->ran ? str_or_null(c->engine) : NULL);
	json_object_object_add(o, "mode", c->ran ? str_or_null(c->mode) : NULL);
	json_object_object_add(o, "offered_pps", c->ran && c->offered_pps ? json_object_new_uint64(c->offered_pps) : NULL);
	json_object_object_add(o, "window_s", c->ran ? json_object_new_double(c->window_s) : NULL);
	json_object_object_add(o, "complete", c->ran ? json_object_new_boolean(c->complete) : NULL);
	json_object_object_add(o, "loss_pct", c->ran ? json_object_new_double(c->loss_pct) : NULL);
	if (c->ran) {
		lr_tx_result_put(o, &c->tx);
		lr_rx_result_put(o, &c->rx);
	} else {
		json_object_object_add(o, "tx", NULL);
		json_object_object_add(o, "active_s", NULL);
		json_object_object_add(o, "rx", NULL);
		json_object_object_add(o, "latency_ns", NULL);
	}
	return o;
}

static void count_cells(const struct matrix *m, unsigned int *passed, unsigned int *failed, unsigned int *errors)
{
	unsigned int i;

	*passed = *failed = *errors = 0;
	for (i = 0; i < m->plan->ncells; i++) {
		if (!m->cells[i].ran)
			(*errors)++;
		else if (m->cells[i].pass)
			(*passed)++;
		else
			(*failed)++;
	}
}

static int write_json(const struct matrix *m)
{
	const struct lr_matrix_opts *o = m->o;
	const struct lr_matrix_plan *p = m->plan;
	struct json_object *root = lr_json_doc("matrix"), *a, *t;
	unsigned int i, passed, failed, errors;
	char err[512], rate[64];
	int ret;

	a = json_object_new_array();
	for (i = 0; i < p->nagents; i++)
		json_object_array_add(a, agent_json(m, i));
	json_object_object_add(root, "agents", a);
	a = json_object_new_array();
	for (i = 0; i < p->npairs; i++) {
		struct json_object *pr = json_object_new_array();

		json_object_array_add(pr, json_object_new_string(agent(m, p->pairs[i].a)->name));
		json_object_array_add(pr, json_object_new_string(agent(m, p->pairs[i].b)->name));
		json_object_array_add(a, pr);
	}
	json_object_object_add(root, "pairs", a);
	json_object_object_add(root, "pairs_file", str_or_null(o->pairs));
	a = json_object_new_array();
	for (i = 0; i < m->nsizes; i++)
		json_object_array_add(a, json_object_new_int((int)m->sizes[i]));
	json_object_object_add(root, "sizes", a);
	rate_text(&o->rate, rate, sizeof(rate));
	json_object_object_add(root, "rate", json_object_new_string(rate));
	json_object_object_add(root, "count", o->count ? json_object_new_uint64(o->count) : NULL);
	json_object_object_add(root, "duration_s", o->duration_ns ? json_object_new_double(o->duration_ns / 1e9) : NULL);
	t = json_object_new_object();
	json_object_object_add(t, "max_loss_pct", m->limits.max_loss_set ? json_object_new_double(m->limits.max_loss * 100) : NULL);
	json_object_object_add(t, "min_pps", m->limits.min_pps_set ? json_object_new_uint64(m->limits.min_pps) : NULL);
	json_object_object_add(root, "thresholds", t);
	a = json_object_new_array();
	for (i = 0; i < p->ncells; i++)
		json_object_array_add(a, cell_json(m, i));
	json_object_object_add(root, "cells", a);
	count_cells(m, &passed, &failed, &errors);
	t = json_object_new_object();
	json_object_object_add(t, "cells", json_object_new_int((int)p->ncells));
	json_object_object_add(t, "passed", json_object_new_int((int)passed));
	json_object_object_add(t, "failed", json_object_new_int((int)failed));
	json_object_object_add(t, "errors", json_object_new_int((int)errors));
	json_object_object_add(root, "summary", t);
	ret = lr_json_write(root, o->json, err, sizeof(err));
	json_object_put(root);
	if (ret)
		lr_err_line("linerate matrix: ", err);
	return ret;
}

/* A CSV field: quoted, its quotes doubled. */
static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_rows(FILE *f, const struct matrix *m)
{
	unsigned int i;

	fprintf(f, "cell,tx_agent,rx_agent,size,tx_interface,rx_interface,engine,tx_packets,rx_packets,lost,loss_pct,"
		   "tx_pps,rx_pps,rx_bps_l2,rx_bps_l1,p50_ns,p99_ns,latency_valid,pass,error\n");
	for (i = 0; i < m->plan->ncells; i++) {
		const struct lr_matrix_cell_id *id = &m->plan->cells[i];
		const struct cell *c = &m->cells[i];

		fprintf(f, "%u,%s,%s,%u,", i + 1, agent(m, id->tx)->name, agent(m, id->rx)->name, id->size);
		if (!c->ran) {
			fprintf(f, ",,,,,,,,,,,,,,0,");
			csv_str(f, c->error);
			fputc('\n', f);
			continue;
		}
		fprintf(f, "%s,%s,%s,%llu,%llu,%lld,%.4f,%.0f,%.0f,%.0f,%.0f,%llu,%llu,%d,%d,\n", c->tx_ifname, c->rx_ifname,
			c->engine, (unsigned long long)c->tx.packets, (unsigned long long)c->rx.packets,
			(long long)c->rx.lost, c->loss_pct, c->tx.pps, c->rx.pps, c->rx.pps * id->size * 8,
			c->rx.pps * (id->size + L1_EXTRA) * 8, (unsigned long long)c->rx.lat_p50,
			(unsigned long long)c->rx.lat_p99, c->rx.lat_valid, c->pass);
	}
}

static void csv_fill(FILE *f, const void *arg)
{
	csv_rows(f, arg);
}

static int write_csv(const struct matrix *m)
{
	char err[512];

	if (lr_out_stream(m->o->csv, csv_fill, m, err, sizeof(err)))
		return lr_fail(LR_EXIT_RUNTIME, "matrix", "--csv: %s", err);
	return 0;
}

/* ---- the command --------------------------------------------------------------------------------------- */

/* The plan from the options: 0, or an exit code after one line. */
static int make_plan(struct matrix *m, struct lr_matrix_plan *p)
{
	const struct lr_matrix_opts *o = m->o;
	char err[1024];

	if (lr_matrix_agents(p, (const char(*)[LR_HOSTPORT_MAX])o->agents, o->nagents, o->family, lr_matrix_resolve, err,
			     sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "matrix", "%s", err);
	if (o->pairs[0] ? lr_matrix_pairs_load(p, o->pairs, lr_matrix_resolve, err, sizeof(err)) :
			  lr_matrix_pairs_all(p, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "matrix", "%s", err);
	/* unless told, the smallest frame that carries the probe over the agents' family */
	m->nsizes = o->sizes_set ? o->nsizes : 1;
	memcpy(m->sizes, o->sizes, sizeof(m->sizes));
	if (!o->sizes_set)
		m->sizes[0] = lr_frame_min_size(p->family);
	if (lr_matrix_cells(p, m->sizes, m->nsizes, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "matrix", "%s", err);
	return 0;
}

/* Everything checked before any agent is asked anything: 0, or an exit code after one line. */
static int check_before_start(struct matrix *m)
{
	const struct lr_matrix_opts *o = m->o;
	char err[1024];

	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->csv[0] && lr_out_check("--csv", o->csv, true, err, sizeof(err))))
		return lr_fail(LR_EXIT_USAGE, "matrix", "%s", err);
	if (lr_auth_init())
		return lr_fail(LR_EXIT_RUNTIME, "matrix", "libsodium cannot start (no source of randomness?)");
	if (o->token_file[0]) {
		if (lr_auth_load(o->token_file, &m->key, err, sizeof(err)))
			return lr_fail(LR_EXIT_USAGE, "matrix", "--token-file: %s", err);
		m->have_key = true;
	}
	m->limits = (struct lr_matrix_limits){
		.max_loss_set = o->max_loss_set, .max_loss = o->max_loss,
		.min_pps_set = o->min_pps_set, .min_pps = o->min_pps,
	};
	return 0;
}

/* 1 when a cell could not run, else 3 when one missed a threshold, else 0. */
static int exit_code(const struct matrix *m)
{
	unsigned int passed, failed, errors;

	count_cells(m, &passed, &failed, &errors);
	return errors ? LR_EXIT_RUNTIME : failed ? LR_EXIT_THRESHOLD : LR_EXIT_OK;
}

int lr_cmd_matrix(const struct lr_matrix_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct lr_matrix_plan *p = calloc(1, sizeof(*p));
	struct matrix *m = calloc(1, sizeof(*m));
	unsigned int i, passed, failed, errors;
	int ret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	if (!p || !m) {
		free(p);
		free(m);
		return lr_fail(LR_EXIT_RUNTIME, "matrix", "out of memory");
	}
	m->o = o;
	m->plan = p;
	ret = check_before_start(m);
	if (!ret)
		ret = make_plan(m, p);
	if (!ret) {
		m->cells = calloc(p->ncells, sizeof(*m->cells));
		if (!m->cells)
			ret = lr_fail(LR_EXIT_RUNTIME, "matrix", "out of memory");
	}
	if (ret)
		goto out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!o->quiet)
		fprintf(stderr, "linerate matrix: %u agents, %u pair%s, %u cells (%u size%s each way)\n", p->nagents,
			p->npairs, p->npairs == 1 ? "" : "s", p->ncells, m->nsizes, m->nsizes == 1 ? "" : "s");
	probe_agents(m);
	run_cells(m);
	print_table(m);
	ret = exit_code(m);
	if (o->json[0] && write_json(m))
		ret = LR_EXIT_RUNTIME;
	if (o->csv[0] && write_csv(m))
		ret = LR_EXIT_RUNTIME;
	count_cells(m, &passed, &failed, &errors);
	if (!o->quiet || errors || failed)
		fprintf(stderr, "linerate matrix: %u cells: %u passed, %u failed a threshold, %u could not run\n",
			p->ncells, passed, failed, errors);
	if (lr_stop)
		ret = 128 + lr_stop;
out:
	for (i = 0; i < p->nagents; i++)
		json_object_put(m->agents[i].host);
	free(m->cells);
	lr_matrix_plan_free(p);
	free(p);
	free(m);
	return ret;
}
