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
#include "cmd/opts.h"
#include "ctl/net.h"
#include "ctl/peer.h"
#include "rx/rx.h"
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

/* Where each option lands in struct lr_send_opts; AT(): a second field or the given flag. */
#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_send_opts, f), __VA_ARGS__ }
#define AT(f)			LR_AT(struct lr_send_opts, f)

static const struct lr_bind send_binds[] = {
	BIND(LR_O_TX_IFACE, tx.ifname),
	BIND(LR_O_DST_IP, tx.dst_ip, AT(tx.dst_family), AT(tx.have_dst_ip)),
	BIND(LR_O_SRC_IP, tx.src_ip, AT(tx.src_family), AT(tx.have_src_ip)),
	BIND(LR_O_DST_MAC, tx.dst_mac, 0, AT(tx.have_dst_mac)),
	BIND(LR_O_SRC_MAC, tx.src_mac, 0, AT(tx.have_src_mac)),
	BIND(LR_O_SRC_PORT, tx.src_port, 0, AT(tx.src_port_set)),
	BIND(LR_O_DST_PORT, tx.dst_port),
	BIND(LR_O_SIZE, tx.size),
	BIND(LR_O_FLOWS, tx.flows),
	BIND(LR_O_RATE, tx.rate),
	BIND(LR_O_COUNT, tx.count),
	BIND(LR_O_TX_DURATION, tx.duration_ns),
	BIND(LR_O_QUEUES, tx.queues, AT(tx.nworkers)),
	BIND(LR_O_CPUS, tx.cpus, AT(tx.ncpus), AT(tx.cpus_set)),
	BIND(LR_O_TX_ENGINE, tx.engine),
	BIND(LR_O_XSK_MODE, tx.xsk_mode),
	BIND(LR_O_BATCH, tx.batch),
	BIND(LR_O_LATENCY_EVERY, tx.latency_every),
	BIND(LR_O_NETNS, netns),
	BIND(LR_O_JSON, json),
	BIND(LR_O_QUIET, quiet),
	BIND(LR_O_VERBOSE, verbose),
	BIND(LR_O_ALLOW_PHYSICAL, tx.allow_physical),
	BIND(LR_O_TX_PCAP, pcap),
	BIND(LR_O_PCAP_COUNT, pcap_count),
	BIND(LR_O_TX_PCAP_EVERY, pcap_every),
	BIND(LR_O_PCAP_MAX_BYTES, pcap_max_bytes),
	BIND(LR_O_REPLAY, tx.replay),
	BIND(LR_O_REPLAY_TIMING, tx.replay_timing),
	BIND(LR_O_LOOPS, tx.loops, 0, AT(tx.loops_set)),
	BIND(LR_O_STAMP, tx.stamp),
	BIND(LR_O_RTT, tx.rtt),
	BIND(LR_O_PREPARE_PEER, tx.prepare_peer),
	BIND(LR_O_PEER, peer),
	BIND(LR_O_PEER_IFACE, peer_ifname),
	BIND(LR_O_PEER_NETNS, peer_netns),
	BIND(LR_O_REVERSE, reverse),
	BIND(LR_O_TOKEN_FILE, token_file),
	BIND(LR_O_CLOCK, clock),
};

static void send_init(void *p)
{
	struct lr_send_opts *o = p;

	o->tx.eot_repeat = 5;
}

static const char *family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

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

/* What no single option can say: requirements, contradictions, and defaults that depend on others. */
static int send_check(void *p, char *err, size_t errlen)
{
	struct lr_send_opts *o = p;
	char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];

	if (!o->tx.have_dst_ip && !o->tx.replay[0]) {
		snprintf(err, errlen, "missing --dst-ip (see 'linerate send --help')");
		return -EINVAL;
	}
	/* the sender learns of --pcap only that it is sampled */
	o->tx.sampled = o->pcap[0] != '\0';
	if (o->tx.have_src_ip && o->tx.have_dst_ip && o->tx.src_family != o->tx.dst_family) {
		snprintf(err, errlen, "--src-ip: '%s' is %s but --dst-ip '%s' is %s; use one address family",
			 inet_ntop(o->tx.src_family, &o->tx.src_ip, a1, sizeof(a1)), family_name(o->tx.src_family),
			 inet_ntop(o->tx.dst_family, &o->tx.dst_ip, a2, sizeof(a2)), family_name(o->tx.dst_family));
		return -EINVAL;
	}
	o->tx.family = o->tx.have_dst_ip ? o->tx.dst_family : o->tx.have_src_ip ? o->tx.src_family : 0;
	if (o->tx.replay[0]) {
		if (o->tx.nworkers != 1) {
			snprintf(err, errlen, "--replay sends the capture in order from one worker: give one queue");
			return -EINVAL;
		}
		if (o->tx.replay_timing && o->tx.rate.kind != LR_RATE_MAX) {
			snprintf(err, errlen, "--replay-timing and --rate both set the pace: give one");
			return -EINVAL;
		}
		if (o->tx.latency_every && !o->tx.stamp) {
			snprintf(err, errlen, "--latency-every needs --stamp with --replay: a replay writes no probe without it");
			return -EINVAL;
		}
	} else if (o->tx.replay_timing || o->tx.loops_set || o->tx.stamp) {
		snprintf(err, errlen, "--%s needs --replay FILE",
			 o->tx.replay_timing ? "replay-timing" : o->tx.loops_set ? "loops" : "stamp");
		return -EINVAL;
	}
	if (o->tx.rtt && o->tx.replay[0]) {
		snprintf(err, errlen, "--rtt sends round-trip frames of its own: --replay sends a capture's");
		return -EINVAL;
	}
	if (o->tx.rtt && o->reverse) {
		snprintf(err, errlen, "--rtt measures from this side, which sends and counts what comes back: drop --reverse");
		return -EINVAL;
	}
	if (o->pcap_every && o->pcap_count) {
		snprintf(err, errlen, "--pcap-count and --pcap-every both choose the samples: give one");
		return -EINVAL;
	}
	if ((o->pcap_every || o->pcap_count || o->pcap_max_bytes) && !o->pcap[0]) {
		snprintf(err, errlen, "--pcap-count, --pcap-every and --pcap-max-bytes need --pcap FILE");
		return -EINVAL;
	}
	if (o->pcap[0] && !o->pcap_every && !o->pcap_count)
		o->pcap_count = LR_PCAP_DEFAULT_COUNT;
	if (o->tx.cpus_set && o->tx.ncpus != o->tx.nworkers) {
		snprintf(err, errlen, "--cpus lists %u CPU%s but --queues lists %u queue%s; give one CPU per queue",
			 o->tx.ncpus, lr_s(o->tx.ncpus), o->tx.nworkers, lr_s(o->tx.nworkers));
		return -EINVAL;
	}
	if (o->tx.size < lr_frame_min_size(o->tx.family)) {
		snprintf(err, errlen, "--size: %u bytes cannot carry the probe over %s; the minimum is %u",
			 o->tx.size, family_name(o->tx.family), lr_frame_min_size(o->tx.family));
		return -EINVAL;
	}
	/* 0: not given (the smallest flow count is 1); each worker needs one, so that many */
	if (!o->tx.flows)
		o->tx.flows = o->tx.nworkers;
	if (o->tx.flows < o->tx.nworkers) {
		snprintf(err, errlen, "--flows %u is fewer than the %u workers; each worker needs a flow of its own",
			 o->tx.flows, o->tx.nworkers);
		return -EINVAL;
	}
	if (!o->tx.src_port_set)
		o->tx.src_port = lr_src_port_base(o->tx.flows);
	if ((uint32_t)o->tx.src_port + o->tx.flows - 1 > 65535) {
		snprintf(err, errlen, "--src-port %u + --flows %u runs past port 65535", o->tx.src_port, o->tx.flows);
		return -EINVAL;
	}
	if (peer_check(o, err, errlen))
		return -EINVAL;
	/* a replay ends with its last loop; everything else with 10 s unless told */
	if (!o->tx.count && !o->tx.duration_ns && !(o->tx.replay[0] && o->tx.loops))
		o->tx.duration_ns = 10ULL * 1000000000ULL;
	return 0;
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
	LR_BINDS(send_binds),
	.size = sizeof(struct lr_send_opts),
	.init = send_init,
	.check = send_check,
	.run = send_run,
};

void lr_send_opts_default(struct lr_send_opts *o)
{
	lr_cli_defaults(&lr_send_cli, o);
}

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
	lr_tx_summary(stderr, c, r, secs, prep);
	if (rtt)
		lr_tx_rtt_summary(stderr, rtt, o->tx.dst_port);
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
