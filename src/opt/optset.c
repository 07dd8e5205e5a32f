/* SPDX-License-Identifier: MIT */
/* The option sets of a sender, a receiver and a reflector: one for the CLI, run files and the wire. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "opt/optset.h"
#include "opt/opts.h"
#include "tx/frame.h"
#include "util/capture.h"
#include "util/units.h"

void lr_optset_defaults(const struct lr_optset *s, void *o)
{
	memset(o, 0, s->size);
	lr_opt_defaults(s->binds, s->nbinds, o);
	if (s->init)
		s->init(o);
}

const struct lr_bind *lr_optset_bind(const struct lr_optset *s, enum lr_opt_id id)
{
	unsigned int i;

	for (i = 0; i < s->nbinds; i++)
		if (s->binds[i].id == id)
			return &s->binds[i];
	return NULL;
}

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
	/* a replay ends with its last loop; everything else with 10 s unless told */
	if (!o->tx.count && !o->tx.duration_ns && !(o->tx.replay[0] && o->tx.loops))
		o->tx.duration_ns = 10ULL * 1000000000ULL;
	return 0;
}

const struct lr_optset lr_send_optset = {
	LR_OPTSET(send_binds, struct lr_send_opts),
	.init = send_init,
	.check = send_check,
};

void lr_send_opts_default(struct lr_send_opts *o)
{
	lr_optset_defaults(&lr_send_optset, o);
}

void lr_tx_spec_default(struct lr_tx_spec *tx)
{
	struct lr_send_opts *o = malloc(sizeof(*o));

	/* the send options' other fields are paths, large for a stack: the table writes their defaults too */
	if (!o) {
		memset(tx, 0, sizeof(*tx));
		return;
	}
	lr_send_opts_default(o);
	*tx = o->tx;
	free(o);
}

#undef BIND
#undef AT

/* Where each option lands in struct lr_recv_opts; AT(): a second field or the given flag. */
#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_recv_opts, f), __VA_ARGS__ }
#define AT(f)			LR_AT(struct lr_recv_opts, f)

static const struct lr_bind recv_binds[] = {
	BIND(LR_O_RX_IFACE, rx.ifname),
	BIND(LR_O_DST_PORT, rx.dst_port),
	BIND(LR_O_RX_DURATION, duration_ns),
	BIND(LR_O_ONCE, once),
	BIND(LR_O_IDLE_TIMEOUT, idle_ns, 0, AT(idle_set)),
	BIND(LR_O_PASS, rx.pass),
	BIND(LR_O_RX_ENGINE, rx.engine),
	BIND(LR_O_XDP_MODE, rx.xdp_mode, 0, AT(rx.xdp_mode_set)),
	BIND(LR_O_WORKERS, rx.workers, 0, AT(rx.workers_set)),
	BIND(LR_O_READY_FILE, ready_file),
	BIND(LR_O_NETNS, netns),
	BIND(LR_O_JSON, json),
	BIND(LR_O_RX_PCAP, rx.pcap),
	BIND(LR_O_RX_PCAP_EVERY, rx.pcap_every),
	BIND(LR_O_PCAP_FOREIGN, rx.pcap_foreign),
	BIND(LR_O_SNAPLEN, rx.snaplen),
	BIND(LR_O_PROG_STATS, rx.prog_stats),
	BIND(LR_O_PCAP_MAX_BYTES, rx.pcap_max_bytes),
	BIND(LR_O_QUIET, quiet),
	BIND(LR_O_VERBOSE, verbose),
};

static int recv_check(void *p, char *err, size_t errlen)
{
	struct lr_recv_opts *o = p;

	/* options of one engine given with the other: refused, not silently ignored */
	if (o->rx.engine == LR_RX_ENGINE_XDP && o->rx.workers_set) {
		snprintf(err, errlen, "--workers sets AF_PACKET receive threads, but --engine xdp has none (XDP counts "
			 "in the softirq of every CPU that receives); drop one of the two");
		return -EINVAL;
	}
	if (o->rx.engine == LR_RX_ENGINE_PACKET && o->rx.xdp_mode_set) {
		snprintf(err, errlen, "--xdp-mode is an XDP attach mode, but --engine packet uses no XDP; drop one of the two");
		return -EINVAL;
	}
	if (o->idle_set && !o->once) {
		snprintf(err, errlen, "--idle-timeout bounds the wait of --once; without --once recv counts until "
			 "--duration or a signal");
		return -EINVAL;
	}
	if (!o->rx.pcap[0] && (o->rx.pcap_every != 1 || o->rx.pcap_foreign || o->rx.snaplen != LR_PCAP_DEFAULT_SNAPLEN ||
			    o->rx.pcap_max_bytes)) {
		snprintf(err, errlen, "--pcap-every, --pcap-foreign, --snaplen and --pcap-max-bytes need --pcap FILE");
		return -EINVAL;
	}
	return 0;
}

const struct lr_optset lr_recv_optset = {
	LR_OPTSET(recv_binds, struct lr_recv_opts),
	.check = recv_check,
};

void lr_recv_opts_default(struct lr_recv_opts *o)
{
	lr_optset_defaults(&lr_recv_optset, o);
}

#undef BIND
#undef AT

#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_reflect_opts, f), __VA_ARGS__ }
#define AT(f)			LR_AT(struct lr_reflect_opts, f)

static const struct lr_bind reflect_binds[] = {
	BIND(LR_O_REFLECT_IFACE, fx.ifname),
	BIND(LR_O_DST_PORT, fx.dst_port),
	BIND(LR_O_REFLECT_MODE, fx.xdp_mode),
	BIND(LR_O_REFLECT_DURATION, duration_ns),
	BIND(LR_O_REFLECT_ONCE, once),
	BIND(LR_O_IDLE_TIMEOUT, idle_ns, 0, AT(idle_set)),
	BIND(LR_O_READY_FILE, ready_file),
	BIND(LR_O_NETNS, netns),
	BIND(LR_O_JSON, json),
	BIND(LR_O_ALLOW_PHYSICAL, fx.allow_physical),
	BIND(LR_O_QUIET, quiet),
	BIND(LR_O_VERBOSE, verbose),
};

static int reflect_check(void *p, char *err, size_t errlen)
{
	const struct lr_reflect_opts *o = p;

	if (o->idle_set && !o->once) {
		snprintf(err, errlen, "--idle-timeout bounds the wait of --once; without --once reflect runs until "
			 "--duration or a signal");
		return -EINVAL;
	}
	return 0;
}

const struct lr_optset lr_reflect_optset = {
	LR_OPTSET(reflect_binds, struct lr_reflect_opts),
	.check = reflect_check,
};

void lr_reflect_opts_default(struct lr_reflect_opts *o)
{
	lr_optset_defaults(&lr_reflect_optset, o);
}
