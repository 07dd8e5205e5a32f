/* SPDX-License-Identifier: MIT */
/* `linerate send`: its options, the sending loop with live lines, the summary and the capture. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "opt/optset.h"
#include "opt/opts.h"
#include "ctl/net.h"
#include "ctl/peer.h"
#include "rx/rx.h"
#include "summary/summary.h"
#include "sys/netdev.h"
#include "sys/peer_gro.h"
#include "tx/frame.h"
#include "tx/rate.h"
#include "tx/tx.h"
#include "util/capture.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/result.h"

#define NS 1000000000ULL
#define RTT_WAIT_NS (2 * NS)	/* for the reflected markers, after the last one left */

/* --peer and the options that only go with it. */
static int peer_check(const struct lr_send_opts *o, char *err, size_t errlen)
{
	struct lr_ctl_addr a;
	char why[256];

	if (!o->peer[0] && (o->peer_ifname[0] || o->peer_netns[0] || o->reverse || o->token_file[0] ||
			    o->clock != LR_CLOCK_AUTO)) {
		snprintf(err, errlen, "--peer-interface, --peer-netns, --reverse, --token-file and --clock need --peer HOST");
		return -EINVAL;
	}
	if (!o->peer[0])
		return 0;
	if (lr_ctl_addr_parse(o->peer, false, &a, why, sizeof(why))) {
		snprintf(err, errlen, "--peer: %s", why);
		return -EINVAL;
	}
	if (o->tx.replay[0]) {
		snprintf(err, errlen, "--peer sends the template: --replay is for a local receiver");
		return -EINVAL;
	}
	/* --rtt times the round trip on this side's clock alone: the agent's is not read */
	if (o->tx.rtt && o->clock == LR_CLOCK_ESTIMATE) {
		snprintf(err, errlen, "--clock estimate: --rtt times the round trip on this side's one clock; "
			 "there is no other clock to estimate");
		return -EINVAL;
	}
	/* the agent's sender resolves its own addresses, toward -i's */
	if (o->reverse && (o->tx.have_src_ip || o->tx.have_src_mac || o->tx.have_dst_mac || o->pcap[0])) {
		snprintf(err, errlen, "--reverse: the agent sends, from its interface to -i's address: --src-ip, "
			 "--src-mac, --dst-mac and --pcap describe a sender here");
		return -EINVAL;
	}
	return 0;
}

/* send's own: the --peer options, after the sender's rules. */
static int send_check(void *p, char *err, size_t errlen)
{
	return peer_check(p, err, errlen);
}

LR_CLI_ENTRY(send, struct lr_send_opts, lr_cmd_send)

const struct lr_cli lr_send_cli = {
	.cmd = "send",
	.summary = "blast test frames from pinned per-queue workers (live, AF_XDP or AF_PACKET)",
	.usage = "-i IFACE --dst-ip IP [options]",
	.about = "Blasts UDP test frames from pinned per-queue workers: in-kernel live frames, AF_XDP or\n"
		 "AF_PACKET. Every frame carries a flow id, a sequence number and a timestamp that\n"
		 "`linerate recv` checks. Sizes are Ethernet frame sizes with FCS (RFC 2544); bit rates\n"
		 "are L1 line rates (+20 B a frame).",
	.opts = &lr_send_optset,
	.check = send_check,
	.run = send_run,
};


static void on_signal(int sig)
{
	(void)sig;
	lr_stop = 1;
}

/* The library's error, its settings named as options: the one line of a failed send. */
static int tx_fail(const struct lr_err *e)
{
	char msg[LR_ERR_MAX + 256];

	return lr_fail(e->code, "send", "%s", lr_err_render(e, lr_err_spell_cli, msg, sizeof(msg)));
}

static int send_loop(struct lr_tx *c, const struct lr_send_opts *o, struct lr_peer *peer)
{
	uint64_t prev[LR_MAX_WORKERS] = { 0 }, last, now;
	struct sigaction sa = { .sa_handler = on_signal };
	struct lr_err e;
	char line[1024];

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (lr_tx_start(c, &e))
		return tx_fail(&e);
	lr_tx_ready(c, 2 * NS);
	lr_tx_go(c, lr_now_ns());
	last = lr_tx_start_ns(c);
	for (;;) {
		struct timespec ts = { 0, 50 * 1000000L };

		nanosleep(&ts, NULL);
		if (lr_tx_done(c))
			break;
		/* the far end gone: this end stops too (its markers still go out), the counts so far kept */
		if (peer && !lr_stop && lr_peer_failed(peer))
			lr_stop = 1;
		now = lr_now_ns();
		if (now - last >= NS) {
			if (!o->quiet) {
				lr_tx_live_line(c, prev, now - last, line, sizeof(line));
				fprintf(stderr, "%s\n", line);
			}
			last = now;
		}
	}
	lr_tx_join(c);
	return 0;
}

/*
 * send --rtt: our receiver on -i counts what the reflector sends back,
 * from before the first frame leaves. The test's port is the reflected
 * frames' source port. The receiver's line says where it counts.
 */
static int rtt_begin(const struct lr_send_opts *o, struct lr_recv_opts *ro, struct lr_rx *rx)
{
	char err[LR_RX_LINE_MAX], line[LR_RX_LINE_MAX];
	int ret;

	lr_recv_opts_default(ro);
	snprintf(ro->rx.ifname, sizeof(ro->rx.ifname), "%s", o->tx.ifname);
	ro->rx.dst_port = o->tx.dst_port;
	ro->quiet = true;
	ro->verbose = o->verbose;
	ret = lr_rx_begin(&ro->rx, rx, line, sizeof(line), err, sizeof(err));
	if (ret)
		return lr_fail(ret, "send", "--rtt: cannot count the frames that come back: %s", err);
	if (!o->silent)
		fprintf(stderr, "linerate send: --rtt: %s\n", line);
	return 0;
}

/* Once the sender is done: the reflected markers, every flow's, or 2 s; then the result. */
static int rtt_end(const struct lr_send_opts *o, struct lr_rx *rx, const struct lr_tx *c, struct lr_rtt_result *rtt)
{
	struct lr_tx_result tr;
	struct lr_rx_result *r;
	bool complete;
	double secs;
	int ret;

	complete = lr_rx_wait_back(rx, o->tx.flows, RTT_WAIT_NS);
	rx->ops->stop(rx);
	r = malloc(sizeof(*r));
	if (!r)
		return lr_fail(LR_EXIT_RUNTIME, "send", "out of memory");
	ret = lr_rx_collect(rx, r);
	if (ret) {
		free(r);
		return lr_fail(LR_EXIT_RUNTIME, "send", "--rtt: cannot read the counters: %s", strerror(-ret));
	}
	/* settled only if flows 0 .. flows - 1 are the ones whose markers came back */
	r->settled = r->settled && complete;
	lr_tx_collect((struct lr_tx *)c, &tr, &secs);
	/* the markers announce the frames stamped: those handed to the device, whatever it did with them */
	lr_rtt_compute(tr.queued, o->tx.flows, r, rtt);
	free(r);
	return 0;
}

/*
 * --prepare-peer: GRO on at the veth peer after the input is checked (bad input changes nothing),
 * before the engine is chosen (so auto can take live), and before any thread exists (the guardian
 * is forked). Its line goes before the engine's.
 */
static int prepare_peer(const struct lr_send_opts *o, struct lr_peer_gro *pg)
{
	char err[512], line[512];
	int ret;

	ret = lr_peer_gro_hold(o->tx.ifname, pg, err, sizeof(err));
	if (ret)
		return lr_fail(ret, "send", "%s", err);
	if (!o->silent) {
		lr_peer_gro_start_line(&pg->r, o->tx.ifname, line, sizeof(line));
		fprintf(stderr, "linerate send: %s\n", line);
	}
	return 0;
}

/*
 * The summary on stderr and, with --json, the document, with @rtt (--rtt; NULL: none), @peer (NULL:
 * none; the caller keeps its reference) under "peer" (--peer) and @prep (--prepare-peer; NULL: not
 * asked) under "prepare_peer"; the exit code. After the workers are joined.
 */
static int report(struct lr_tx *c, const struct lr_send_opts *o, struct json_object *peer,
		  const struct lr_rtt_result *rtt, const struct lr_prep_result *prep)
{
	char err[256], error[LR_WHY_MAX + 32] = "", line[LR_WHY_MAX + 32];
	struct lr_tx_result *r;
	struct lr_tx_about a;
	struct json_object *v;
	unsigned int i, n;
	double secs;
	int code = LR_EXIT_OK;

	lr_tx_workers(c, &n);
	for (i = 0; i < n; i++) {
		if (!lr_tx_worker_error(c, i, line, sizeof(line)))
			continue;
		lr_err_line("linerate send: ", line);
		if (!error[0])
			snprintf(error, sizeof(error), "%s", line);
		code = LR_EXIT_RUNTIME;
	}
	/* the far end (send --peer) did not finish its test: the document's error says so too */
	if (!error[0] && peer && json_object_object_get_ex(peer, "error", &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(error, sizeof(error), "%s", json_object_get_string(v));
	r = malloc(sizeof(*r));
	if (!r)
		return lr_fail(LR_EXIT_RUNTIME, "send", "out of memory");
	lr_tx_collect(c, r, &secs);
	fputc('\n', stderr);
	lr_tx_describe(c, &a);
	lr_send_summary(stderr, &a, r, secs, prep);
	if (rtt)
		lr_rtt_summary(stderr, rtt, o->tx.dst_port);
	if (o->json[0]) {
		struct json_object *root = lr_tx_doc(c, r, secs, error, rtt, prep);

		if (peer)
			json_object_object_add(root, "peer", json_object_get(peer));
		if (lr_json_write(root, o->json, err, sizeof(err))) {
			lr_err_line("linerate send: ", err);
			code = LR_EXIT_RUNTIME;
		}
		json_object_put(root);
	}
	free(r);
	return code;
}

/* The local send, with the agent's receiver around it when there is one. */
static int send_here(const struct lr_send_opts *o, struct lr_peer *peer)
{
	struct lr_peer_gro pg = { .pid = 0 };
	struct lr_pcap_writer *pw = NULL;
	struct lr_sampler *smp = NULL;
	struct lr_tx *c = NULL;
	struct lr_recv_opts ro;
	struct lr_rx rx = { 0 };
	struct lr_rtt_result rtt;
	bool have_rtt = false;
	struct lr_err e;
	char err[512];
	int ret;

	/* the capture file first: an unwritable path fails before any interface is touched */
	if (o->pcap[0] && lr_pcap_open(o->pcap, o->pcap_max_bytes, 0, &pw, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "send", "--pcap: %s", err);
	/* the interface, the size, the queues, the addresses: checked before anything is changed */
	ret = lr_tx_prepare(&o->tx, 0, o->tx.flows, &c, &e);
	if (ret) {
		ret = tx_fail(&e);
		goto fail;
	}
	if (lr_tx_notice(c)) {
		char msg[LR_ERR_MAX];

		lr_err_line("linerate send: ", lr_err_spell_text(lr_tx_notice(c), lr_err_spell_cli, msg, sizeof(msg)));
	}
	if (o->tx.prepare_peer && (ret = prepare_peer(o, &pg)))
		goto fail;
	/* the agent's receiver, or with --rtt its reflector (then our own receiver counts what comes back) */
	if (peer && (ret = lr_peer_prepare(peer)))
		goto fail;
	if (o->tx.rtt && (ret = rtt_begin(o, &ro, &rx)))
		goto fail;
	ret = lr_tx_engine_open(c, &e);
	if (ret) {
		ret = tx_fail(&e);
		goto fail;
	}
	if (!o->silent)
		fprintf(stderr, "linerate send: %s\n", lr_tx_engine_line(c));
	if (pw) {
		ret = lr_sampler_open(pw, o->tx.nworkers, lr_tx_snaplen(c), &smp);
		if (ret) {
			ret = lr_fail(LR_EXIT_RUNTIME, "send", "--pcap: cannot start the sampler: %s", strerror(-ret));
			goto fail;
		}
		lr_tx_sample(c, smp, 0, o->pcap_every, o->pcap_count);
	}
	ret = send_loop(c, o, peer);
	if (!ret && o->tx.rtt) {
		ret = rtt_end(o, &rx, c, &rtt);
		have_rtt = !ret;
	}
	if (peer)
		lr_peer_collect(peer);
	/* the workers are done: the peer goes back before the report, which says how it went */
	lr_peer_gro_release(&pg);
	if (!ret)
		ret = report(c, o, peer ? lr_peer_json(peer) : NULL, have_rtt ? &rtt : NULL,
			     o->tx.prepare_peer ? &pg.r : NULL);
	if (smp) {
		uint64_t dropped = lr_sampler_dropped(smp);

		lr_sampler_close(smp);
		fprintf(stderr, "  pcap      %s: %llu frame%s written, %llu skipped by the size cap, %llu dropped (sample ring full)\n",
			o->pcap, (unsigned long long)lr_pcap_records(pw), lr_s(lr_pcap_records(pw)),
			(unsigned long long)lr_pcap_capped(pw),
			(unsigned long long)dropped);
		if (lr_pcap_close(pw, err, sizeof(err)) && !ret)
			ret = lr_fail(LR_EXIT_RUNTIME, "send", "--pcap: %s", err);
		pw = NULL;
	}
	lr_tx_close(c);
	lr_rx_end(&rx);
	if (pw && lr_pcap_close(pw, err, sizeof(err)) && !ret)
		ret = lr_fail(LR_EXIT_RUNTIME, "send", "--pcap: %s", err);
	if (peer) {
		int pret = lr_peer_report(peer);

		ret = ret ? ret : pret;
	}
	return ret;
fail:
	if (smp)
		lr_sampler_close(smp);
	if (pw)
		lr_pcap_abort(pw);
	lr_tx_close(c);
	lr_rx_end(&rx);
	lr_peer_gro_release(&pg);
	return ret;
}

int lr_cmd_send(const struct lr_send_opts *o)
{
	struct lr_peer *peer = NULL;
	char err[512];
	int ret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	/* outputs and CPUs before any interface is touched: a bad one is a usage error, not a lost test */
	if ((o->json[0] && lr_out_check("--json", o->json, true, err, sizeof(err))) ||
	    (o->pcap[0] && lr_out_check("--pcap", o->pcap, false, err, sizeof(err))) ||
	    (lr_tx_check_cpus(&o->tx, err + 8, sizeof(err) - 8) && (memcpy(err, "--cpus: ", 8), 1)))
		return lr_fail(LR_EXIT_USAGE, "send", "%s", err);
	/* the agent is reached from where send started, before --netns is entered */
	if (o->peer[0] && (ret = lr_peer_open(o, &peer)))
		return ret;
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		ret = lr_fail(LR_EXIT_USAGE, "send", "%s", err);
	else if (peer && o->reverse)
		ret = lr_peer_reverse(peer);
	else
		ret = send_here(o, peer);
	lr_peer_close(peer);
	return ret;
}
