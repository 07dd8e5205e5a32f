/* SPDX-License-Identifier: MIT */
/* `linerate reflect`: sends round-trip test frames back where they came from, counting them, until told to stop. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "opt/optset.h"
#include "opt/opts.h"
#include "rx/reflect.h"
#include "util/clock.h"
#include "util/idle.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/units.h"

#define NS 1000000000ULL
#define POLL_NS (100 * 1000000ULL)
#define ONCE_LINGER_NS (50 * 1000000ULL)	/* reflect the markers' repeats too before leaving */

LR_CLI_ENTRY(reflect, struct lr_reflect_opts, lr_cmd_reflect)

const struct lr_cli lr_reflect_cli = {
	.cmd = "reflect",
	.summary = "send round-trip test frames back (XDP_TX), counting them, for send --rtt",
	.usage = "-i IFACE [options]",
	.about = "Sends the frames of `linerate send --rtt` back out of the interface they came in on, with\n"
		 "an XDP program: addresses and ports swapped, TTL reset, checksums kept right, and its own\n"
		 "per-flow sequence and end-of-test totals written in, so the sender alone can tell loss\n"
		 "on the way there from loss on the way back. Other frames pass untouched.",
	.opts = &lr_reflect_optset,
	.run = reflect_run,
};

static void on_signal(int sig)
{
	(void)sig;
	lr_stop = 1;
}

static void live_line(struct lr_reflector *r, uint64_t *prev, uint64_t dt)
{
	struct lr_reflect_result x;
	char b[32];

	if (lr_reflector_collect(r, &x))
		return;
	fprintf(stderr, "reflect %s pps  total %llu  markers %llu  passed %llu  device refused %llu\n",
		lr_fmt_si((double)(x.packets - *prev) / ((double)dt / NS), b, sizeof(b)),
		(unsigned long long)x.packets, (unsigned long long)x.eot, (unsigned long long)x.foreign,
		(unsigned long long)(x.dev_tx_dropped + x.dev_drv_drops));
	*prev = x.packets;
}

static void summary(const struct lr_reflector *r, const struct lr_reflect_result *x)
{
	fprintf(stderr, "linerate reflect: %.3f s on %s (XDP %s)\n", x->duration_s, r->ifc.name, x->mode);
	fprintf(stderr, "  reflected %llu data frame%s and %llu marker%s on %u flow%s (%u with markers); passed %llu "
		"other frame%s\n", (unsigned long long)x->packets, lr_s(x->packets), (unsigned long long)x->eot,
		lr_s(x->eot), x->flows, lr_s(x->flows), x->flows_eot, (unsigned long long)x->foreign, lr_s(x->foreign));
	fprintf(stderr, "  forward   lost %lld%s  reordered %llu  duplicates %llu\n", (long long)x->lost,
		x->settled ? "" : " (no marker for every flow: open gaps only)", (unsigned long long)x->late,
		(unsigned long long)x->dups);
	fprintf(stderr, "  device    sent %llu, refused %llu (tx_dropped %llu, driver drops/errors %llu)\n",
		(unsigned long long)x->dev_tx_packets, (unsigned long long)(x->dev_tx_dropped + x->dev_drv_drops),
		(unsigned long long)x->dev_tx_dropped, (unsigned long long)x->dev_drv_drops);
}

int lr_cmd_reflect(const struct lr_reflect_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct lr_reflector r;
	struct lr_reflect_result x;
	uint64_t start, last, now, deadline, prev = 0, complete_at = 0, count;
	const char *stopped = "signal";
	struct lr_idle idle;
	char err[512], line[768], gone[512] = "";
	int ret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->ready_file[0] && lr_out_check("--ready-file", o->ready_file, false, err, sizeof(err))))
		return lr_fail(LR_EXIT_USAGE, "reflect", "%s", err);
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "reflect", "%s", err);
	ret = lr_reflector_open(&o->fx, &r, line, sizeof(line), err, sizeof(err));
	if (ret)
		return lr_fail(ret, "reflect", "%s", err);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "linerate reflect: %s\n", line);
	if (o->ready_file[0] && lr_out_pidfile(o->ready_file, err, sizeof(err))) {
		ret = lr_fail(LR_EXIT_RUNTIME, "reflect", "--ready-file: %s", err);
		goto out;
	}
	start = last = lr_now_ns();
	deadline = o->duration_ns ? start + o->duration_ns : 0;
	lr_idle_init(&idle, o->idle_ns, o->idle_set, start);
	while (!lr_stop) {
		struct timespec ts = { 0, (long)POLL_NS };

		nanosleep(&ts, NULL);
		now = lr_now_ns();
		if (deadline && now >= deadline) {
			stopped = "duration";
			break;
		}
		if (!lr_if_present(&r.ifc)) {
			snprintf(gone, sizeof(gone), "interface %s disappeared %.1f s in; the counts are up to that moment",
				 o->fx.ifname, (double)(now - start) / NS);
			stopped = "interface";
			break;
		}
		if (o->once) {
			if (!complete_at && lr_reflector_complete(&r))
				complete_at = now;
			if (complete_at && now - complete_at >= ONCE_LINGER_NS) {
				stopped = "markers";
				break;
			}
			/* a sender that failed sends no marker: --once must not hold the XDP program for ever */
			if (!complete_at && !lr_reflector_activity(&r, &count) && lr_idle_expired(&idle, count, now)) {
				lr_idle_why(&idle, gone, sizeof(gone));
				stopped = "idle";
				break;
			}
		}
		if (now - last >= NS) {
			if (!o->quiet)
				live_line(&r, &prev, now - last);
			last = now;
		}
	}
	/* detached first: the counts read after are final */
	lr_reflector_stop(&r);
	ret = lr_reflector_collect(&r, &x);
	if (ret) {
		ret = lr_fail(LR_EXIT_RUNTIME, "reflect", "cannot read counters: %s", strerror(-ret));
		goto out;
	}
	summary(&r, &x);
	if (o->json[0]) {
		struct json_object *root = lr_json_doc("reflect");

		json_object_object_add(root, "interface", json_object_new_string(o->fx.ifname));
		json_object_object_add(root, "duration_s", json_object_new_double(x.duration_s));
		json_object_object_add(root, "error", gone[0] ? json_object_new_string(gone) : NULL);
		json_object_object_add(root, "stopped", json_object_new_string(stopped));
		lr_reflect_result_put(root, &x);
		if (lr_json_write(root, o->json, err, sizeof(err)))
			ret = lr_fail(LR_EXIT_RUNTIME, "reflect", "%s", err);
		json_object_put(root);
	}
	if (gone[0])
		ret = lr_fail(LR_EXIT_RUNTIME, "reflect", "%s", gone);
out:
	lr_reflector_close(&r);
	return ret;
}
