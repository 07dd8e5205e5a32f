/* SPDX-License-Identifier: MIT */
/* run's ends on agents ([tx] agent, [rx] agent): connecting, their clocks, and a sender an agent runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/ctl.h"
#include "run/run.h"
#include "util/clock.h"
#include "util/log.h"

#define NS 1000000000ULL
/* a remote sender's window may run this much past its duration before it counts as stuck */
#define TX_SLACK_NS (10 * NS)
#define TX_WAIT_MS 500

int lr_run_agent_connect(const char *section, const char *hostport, const char *token_file, struct lr_ctl **out)
{
	struct lr_auth_key key;
	char err[1024];
	int ret;

	if (token_file[0] && lr_auth_load(token_file, &key, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "run", "%s token_file: %s", section, err);
	ret = lr_ctl_connect(hostport, token_file[0] ? &key : NULL, out, err, sizeof(err));
	if (ret)
		return lr_fail(ret > 0 ? ret : LR_EXIT_RUNTIME, "run", "%s agent: %s", section, err);
	return 0;
}

/* A failed estimate, said once: the matrix (quiet) says it in its steps' latency_ns.clock "none". */
static void clock_failed(const struct lr_run *r, struct lr_ctl *failed, const char *err)
{
	if (failed && !r->o->quiet)
		fprintf(stderr, "linerate run: clock: no estimate of %s's clock (%s): latency will not be valid\n",
			lr_ctl_name(failed), err);
}

int lr_run_clocks_before(struct lr_run *r, int64_t *rx_offset_ns)
{
	struct lr_ctl *failed;
	char err[512];

	if (lr_clock_window_begin(&r->clock, r->rx.remote ? r->rx.ctl : NULL, r->tx_ctl,
				  r->cfg->clock == LR_CLOCK_ESTIMATE, &failed, err, sizeof(err)))
		clock_failed(r, failed, err);
	*rx_offset_ns = lr_clock_window_offset(&r->clock);
	if (r->clock.state == LR_CLOCK_ESTIMATED && !r->o->quiet)
		fprintf(stderr, "linerate run: clock: the receiver's clock minus the sender's is %lld ns, within %llu ns\n",
			(long long)*rx_offset_ns, (unsigned long long)lr_clock_window_bound(&r->clock));
	return 0;
}

void lr_run_clocks_after(struct lr_run *r)
{
	struct lr_clock_report rep;
	struct lr_ctl *failed = NULL;
	unsigned int i;
	char err[512];
	bool ok;

	if (r->clock.state == LR_CLOCK_SAME)
		return;
	ok = r->clock.state == LR_CLOCK_ESTIMATED && !lr_clock_window_end(&r->clock, &rep, &failed, err, sizeof(err));
	if (!ok && failed)
		clock_failed(r, failed, err);
	/* one estimate for the whole run: every step's latency is judged against the same bound */
	for (i = 0; i < r->nsteps; i++)
		lr_clock_apply(&r->steps[i].rx, ok ? &rep : NULL);
}

/* The engine and mode a remote sender names, as the static strings the report keeps. */
static const char *intern(const char *s)
{
	static const char *const known[] = { "live", "afxdp", "packet", "prog_run", "zerocopy", "copy", "tpacket_v2",
					     "mixed", NULL };
	unsigned int i;

	for (i = 0; known[i]; i++)
		if (!strcmp(s, known[i]))
			return known[i];
	return "remote";
}

static const char *doc_string(struct json_object *doc, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(doc, key, &v) && json_object_is_type(v, json_type_string) ?
		       json_object_get_string(v) : "";
}

/*
 * How long a remote sender's window may take before it counts as stuck: its duration, else its
 * count at its rate; a count at the max rate, a minute.
 */
static uint64_t tx_window_ns(const struct lr_send_opts *o, uint64_t window_ns)
{
	uint64_t pps = o->tx.rate.kind == LR_RATE_MAX ? 0 : lr_rate_pps(&o->tx.rate, o->tx.size);
	uint64_t by_count = !o->tx.count ? 0 : pps ? (uint64_t)((double)o->tx.count / (double)pps * NS) : 60 * NS;

	if (window_ns && (!by_count || window_ns < by_count))
		return window_ns;
	return by_count;
}

int lr_run_remote_tx(struct lr_run *r, const struct lr_send_opts *o, uint64_t window_ns, struct lr_step *s)
{
	uint64_t deadline = lr_now_ns() + tx_window_ns(o, window_ns) + TX_SLACK_NS;
	struct json_object *doc = NULL, *v;
	struct lr_ctl_ready rd;
	char err[1024], *summary = NULL;
	bool complete = false, stopped = false;
	int ret;

	ret = lr_ctl_prepare_tx(r->tx_ctl, o, NULL, r->cfg->tx_route, &rd, err, sizeof(err));
	if (!ret)
		snprintf(r->tx_ifname, sizeof(r->tx_ifname), "%s", rd.ifname);
	if (!ret && !r->banner_done && !r->o->quiet)
		fprintf(stderr, "linerate run: sender (%s) %s\n", lr_ctl_name(r->tx_ctl), rd.line);
	if (!ret)
		ret = lr_ctl_start(r->tx_ctl, 0, NULL, err, sizeof(err));
	while (!ret && !complete) {
		/* a signal here ends the remote sender's data as it ends a local one's: markers still go */
		if (lr_stop && !stopped) {
			stopped = true;
			ret = lr_ctl_stop(r->tx_ctl, err, sizeof(err));
			continue;
		}
		if (lr_now_ns() > deadline) {
			snprintf(err, sizeof(err), "the sender did not finish within %llu s of its window",
				 (unsigned long long)(TX_SLACK_NS / NS));
			ret = -1;
			break;
		}
		ret = lr_ctl_wait_tx(r->tx_ctl, TX_WAIT_MS, &complete, &doc, &summary, err, sizeof(err));
	}
	free(summary);
	if (ret && !strncmp(err, LR_CTL_ENDED, strlen(LR_CTL_ENDED))) {
		/* the agent's last word: as it said it, with its address */
		json_object_put(doc);
		return lr_run_fail(r, LR_EXIT_RUNTIME, "[tx] agent %s: %s", lr_ctl_agent(r->tx_ctl), err);
	}
	if (ret) {
		json_object_put(doc);
		return lr_run_fail(r, ret > 0 ? ret : LR_EXIT_RUNTIME, "[tx] %s%s", ret > 0 ? "" : "agent: ", err);
	}
	if (!r->banner_done) {
		r->tx_engine = intern(doc_string(doc, "engine"));
		r->engine = lr_engine_kind_of(r->tx_engine);
		r->banner_done = true;
	}
	/* the agent held the peer's GRO for this phase: the last phase's word is the one that stands */
	if (r->cfg->prepare_peer && lr_prep_result_get(doc, &r->prep, err, sizeof(err)))
		pr_warn("linerate run: [tx] agent: its prepare_peer: %s\n", err);
	if (s) {
		ret = lr_tx_result_get(doc, &s->tx, err, sizeof(err));
		if (ret) {
			json_object_put(doc);
			return lr_run_fail(r, LR_EXIT_RUNTIME, "[tx] agent: its result: %s", err);
		}
		s->window_s = json_object_object_get_ex(doc, "duration_s", &v) ? json_object_get_double(v) : 0;
		s->mode = intern(doc_string(doc, "mode"));
		/* the sender's CPUs are the agent's: this host's split would say nothing of them */
		s->ncpu = 0;
	}
	json_object_put(doc);
	return 0;
}
