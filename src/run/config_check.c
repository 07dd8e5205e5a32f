/* SPDX-License-Identifier: MIT */
/* `linerate run` INI files checked as a whole once read: what no key can check alone, and the streams resolved. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "opt/opt.h"
#include "linerate/probe.h"
#include "run/config.h"
#include "run/config_impl.h"
#include "tx/frame.h"

static const char *family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

static const char *addr_str(const struct in6_addr *a, int family, char *buf, size_t len)
{
	if (!inet_ntop(family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * One stream: [tx] alone, or a [stream] with [tx]'s values where it has
 * none of its own. Checks what send checks for one command line.
 */
static int resolve_stream(struct parser *p, const struct sdef *d, struct lr_cfg_stream *s)
{
	const struct sdef *tx = &p->tx;
	const struct sec *sec = &d->sec;
	bool implicit = d == tx;
	const struct sdef *src = sec->kline[LR_O_SRC_IP] ? d : tx;
	const struct sdef *dst = sec->kline[LR_O_DST_IP] ? d : tx;
	char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];
	unsigned int i, min;

	memset(s, 0, sizeof(*s));
	strcpy(s->name, implicit ? "" : d->name);
	s->line = sec->line;
	lr_tx_spec_default(&s->tx);

	if (!dst->sec.kline[LR_O_DST_IP]) {
		if (implicit)
			return fail(p, sec->line, "[tx] missing key 'dst_ip' (the receiver's address)");
		return fail(p, sec->line, "%s missing key 'dst_ip', and [tx] gives none", d->title);
	}
	s->tx.dst_ip = dst->dst_ip;
	s->tx.family = dst->dst_family;
	if (src->sec.kline[LR_O_SRC_IP]) {
		s->tx.have_src_ip = true;
		s->tx.src_ip = src->src_ip;
		if (src->src_family != s->tx.family)
			return fail(p, key_line(sec, sec->kline[LR_O_SRC_IP] ? LR_O_SRC_IP : LR_O_DST_IP),
				    "%s src_ip: '%s'%s is %s but dst_ip '%s'%s is %s; use one address family",
				    d->title, addr_str(&src->src_ip, src->src_family, a1, sizeof(a1)),
				    src == d ? "" : " (from [tx])", family_name(src->src_family),
				    addr_str(&dst->dst_ip, dst->dst_family, a2, sizeof(a2)),
				    dst == d ? "" : " (from [tx])", family_name(dst->dst_family));
	}
	if (sec->kline[LR_O_SRC_MAC] || tx->sec.kline[LR_O_SRC_MAC]) {
		s->tx.have_src_mac = true;
		memcpy(s->tx.src_mac, (sec->kline[LR_O_SRC_MAC] ? d : tx)->src_mac, 6);
	}
	if (sec->kline[LR_O_DST_MAC] || tx->sec.kline[LR_O_DST_MAC]) {
		s->tx.have_dst_mac = true;
		memcpy(s->tx.dst_mac, (sec->kline[LR_O_DST_MAC] ? d : tx)->dst_mac, 6);
	}

	/*
	 * Queues and CPUs come as a pair: a stream with queues of its own does
	 * not take [tx]'s CPUs, which belong to [tx]'s queues.
	 */
	if (sec->kline[LR_O_QUEUES] || implicit) {
		s->tx.nworkers = d->nqueues;
		memcpy(s->tx.queues, d->queues, sizeof(s->tx.queues));
	} else {
		s->tx.nworkers = tx->nqueues;
		memcpy(s->tx.queues, tx->queues, sizeof(s->tx.queues));
	}
	if (sec->kline[LR_O_CPUS] || (!sec->kline[LR_O_QUEUES] && tx->sec.kline[LR_O_CPUS])) {
		const struct sdef *cd = sec->kline[LR_O_CPUS] ? d : tx;

		if (cd->ncpus != s->tx.nworkers)
			return fail(p, key_line(sec, LR_O_CPUS),
				    "%s cpus: %u CPU%s%s for %u queue%s%s; give one CPU per queue", d->title, cd->ncpus,
				    cd->ncpus == 1 ? "" : "s", cd == d ? "" : " (from [tx])", s->tx.nworkers,
				    s->tx.nworkers == 1 ? "" : "s",
				    sec->kline[LR_O_QUEUES] || implicit ? "" : " (from [tx])");
		s->tx.cpus_set = true;
		memcpy(s->tx.cpus, cd->cpus, sizeof(s->tx.cpus));
	}
	/* flows: given, or one per queue (a key left out reads 0, below any flow count) */
	s->tx.flows = (sec->kline[LR_O_FLOWS] ? d : tx)->flows;
	if (!s->tx.flows)
		s->tx.flows = s->tx.nworkers;
	if (sec->kline[LR_O_SRC_PORT] || tx->sec.kline[LR_O_SRC_PORT])
		s->tx.src_port = (sec->kline[LR_O_SRC_PORT] ? d : tx)->src_port;
	else
		s->tx.src_port = lr_src_port_base(s->tx.flows);

	min = lr_frame_min_size(s->tx.family);
	if (implicit) {
		s->tx.size = 0;
		s->share = 1.0;
		for (i = 0; i < p->cfg->nsizes; i++)
			if (p->cfg->sizes[i] < min)
				return fail(p, key_line(sec, LR_O_SIZE),
					    "[tx] %s: %u bytes%s cannot carry the probe over %s; the minimum is %u",
					    sec->kline[LR_O_SIZE] ? key_name(sec, LR_O_SIZE) : "size", p->cfg->sizes[i],
					    sec->kline[LR_O_SIZE] ? "" : " (the default)", family_name(s->tx.family), min);
	} else {
		if (!sec->kline[LR_O_STREAM_SIZE])
			return fail(p, sec->line, "%s missing key 'size' (its frame size, %u..%u)", d->title, min,
				    LR_MAX_FRAME);
		s->tx.size = d->size;
		if (s->tx.size < min)
			return fail(p, key_line(sec, LR_O_STREAM_SIZE),
				    "%s size: %u bytes cannot carry the probe over %s; the minimum is %u", d->title,
				    s->tx.size, family_name(s->tx.family), min);
	}
	if (s->tx.flows < s->tx.nworkers)
		return fail(p, key_line(sec, sec->kline[LR_O_FLOWS] ? LR_O_FLOWS : LR_O_QUEUES),
			    "%s flows: %u flow%s for %u queues; each queue's worker needs a flow of its own (flows >= %u)",
			    d->title, s->tx.flows, s->tx.flows == 1 ? "" : "s", s->tx.nworkers, s->tx.nworkers);
	if ((uint32_t)s->tx.src_port + s->tx.flows - 1 > 65535)
		return fail(p, key_line(sec, sec->kline[LR_O_SRC_PORT] ? LR_O_SRC_PORT : LR_O_FLOWS),
			    "%s src_port: %u + flows %u runs past port 65535", d->title, s->tx.src_port, s->tx.flows);
	lr_cfg_stream_settle(&s->tx);
	return 0;
}

void lr_cfg_stream_settle(struct lr_tx_spec *tx)
{
	tx->have_dst_ip = true;
	tx->dst_family = tx->family;
	tx->src_family = tx->have_src_ip ? tx->family : 0;
	tx->ncpus = tx->nworkers;
}

static int resolve_streams(struct parser *p)
{
	struct lr_cfg *c = p->cfg;
	const struct sdef *last;
	double total_share = 0;
	uint32_t total_flows = 0;
	unsigned int i, j, q, nshares = 0;
	int ret;

	if (!p->ndefs) {
		c->nstreams = 1;
		return resolve_stream(p, &p->tx, &c->streams[0]);
	}
	last = &p->defs[p->ndefs - 1];
	for (i = 0; i < p->ndefs; i++) {
		ret = resolve_stream(p, &p->defs[i], &c->streams[i]);
		if (ret)
			return ret;
		total_flows += c->streams[i].tx.flows;
		if (p->defs[i].sec.kline[LR_O_SHARE]) {
			nshares++;
			total_share += p->defs[i].share;
		}
	}
	c->nstreams = p->ndefs;
	if (total_flows > LR_MAX_FLOWS)
		return fail(p, last->sec.line,
			    "%s flows: the streams add up to %u flows; at most %u (flow ids are shared by all streams)",
			    last->title, total_flows, LR_MAX_FLOWS);

	/* AF_XDP binds one socket per queue; AF_PACKET does not bind to a queue at all. */
	if (c->tx_engine == LR_ENGINE_AFXDP) {
		for (i = 0; i < c->nstreams; i++)
			for (j = 0; j < i; j++)
				for (q = 0; q < c->streams[i].tx.nworkers; q++) {
					const struct sdef *d = &p->defs[i];
					unsigned int k;

					for (k = 0; k < c->streams[j].tx.nworkers; k++)
						if (c->streams[i].tx.queues[q] == c->streams[j].tx.queues[k])
							return fail(p, key_line(&d->sec, LR_O_QUEUES),
								    "%s queues: queue %u%s is also used by %s; with [tx] engine = afxdp "
								    "each queue takes one stream (use other queues or engine = packet)",
								    d->title, c->streams[i].tx.queues[q],
								    d->sec.kline[LR_O_QUEUES] ? "" : " (from [tx])",
								    p->defs[j].title);
				}
	}

	/* All shares or none (equal shares); normalised so they sum to exactly 1. */
	if (nshares && nshares != p->ndefs) {
		for (i = 0; i < p->ndefs; i++)
			if (!p->defs[i].sec.kline[LR_O_SHARE])
				return fail(p, p->defs[i].sec.line,
					    "%s missing key 'share': give every stream a share, or none for equal shares",
					    p->defs[i].title);
	}
	if (nshares) {
		/* within 0.01 % of the rate: the shares as people write them (33.33, 33.33, 33.34) */
		if (total_share < 1 - 1e-4 || total_share > 1 + 1e-4)
			return fail(p, last->sec.line, "%s share: the shares add up to %.9g%%; they must add up to 100%%",
				    last->title, total_share * 100);
		for (i = 0; i < p->ndefs; i++)
			c->streams[i].share = p->defs[i].share / total_share;
	} else {
		for (i = 0; i < p->ndefs; i++)
			c->streams[i].share = 1.0 / p->ndefs;
	}
	return 0;
}

int lr_cfg_validate(struct parser *p)
{
	struct lr_cfg *c = p->cfg;
	const struct sec *tx = &p->tx.sec;
	int ret;

	if (!tx->line)
		return fail(p, 1, "missing section [tx] (interface = ..., dst_ip = ...; see configs/reference.ini)");
	if (!p->rx.line)
		return fail(p, 1, "missing section [rx] (interface = ...; see configs/reference.ini)");
	if (!c->tx_ifname[0])
		return fail(p, tx->line, "[tx] missing key 'interface' (the interface to send on)");
	if (!c->rx_ifname[0])
		return fail(p, p->rx.line, "[rx] missing key 'interface' (the interface to count on)");
	if (p->tx.sec.kline[LR_O_SRC_IP] && p->tx.sec.kline[LR_O_DST_IP] && p->tx.src_family != p->tx.dst_family) {
		int src = tx->kline[LR_O_SRC_IP], dst = tx->kline[LR_O_DST_IP];
		char a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];

		return fail(p, src > dst ? src : dst, "[tx] src_ip: '%s' is %s but dst_ip '%s' is %s; use one address family",
			    addr_str(&p->tx.src_ip, p->tx.src_family, a1, sizeof(a1)), family_name(p->tx.src_family),
			    addr_str(&p->tx.dst_ip, p->tx.dst_family, a2, sizeof(a2)), family_name(p->tx.dst_family));
	}
	/* options of one receive engine given with the other engine: refused, not silently ignored */
	if (c->rx_engine == LR_RX_ENGINE_XDP && p->rx.kline[LR_O_WORKERS])
		return fail(p, p->rx.kline[LR_O_WORKERS],
			    "[rx] workers: AF_PACKET receive threads, but engine = xdp has none (XDP counts on every "
			    "CPU that receives); remove one of the two");
	if (c->rx_engine == LR_RX_ENGINE_PACKET && p->rx.kline[LR_O_XDP_MODE])
		return fail(p, p->rx.kline[LR_O_XDP_MODE],
			    "[rx] xdp_mode: an XDP attach mode, but engine = packet uses no XDP; remove one of the two");
	if (lr_run_mode_search(c->mode) && c->nrates > 1) {
		return fail(p, key_line(tx, LR_O_RATE),
			    "[tx] %s: conflicts with [test] mode = %s, which searches below one upper bound; "
			    "give one rate (max, 1Mpps)", key_name(tx, LR_O_RATE),
			    c->mode == LR_RUN_THROUGHPUT ? "throughput" : "rtt-throughput");
	}
	/* round trips: [rx] is a reflector, which counts in XDP and captures nothing; the return is counted here */
	if (lr_run_mode_rtt(c->mode)) {
		static const enum lr_opt_id rx_only[] = { LR_O_RX_ENGINE, LR_O_WORKERS, LR_O_RX_PCAP, LR_O_RX_PCAP_EVERY,
							  LR_O_SNAPLEN };
		unsigned int i;

		for (i = 0; i < sizeof(rx_only) / sizeof(rx_only[0]); i++)
			if (p->rx.kline[rx_only[i]])
				return fail(p, p->rx.kline[rx_only[i]],
					    "[rx] %s: with mode = rtt [rx] runs a reflector (XDP), which takes only "
					    "interface, netns, xdp_mode, agent and token_file", lr_opts[rx_only[i]].key);
		if (p->test.kline[LR_O_MAX_P99])
			return fail(p, p->test.kline[LR_O_MAX_P99],
				    "[test] max_p99: one-way latency, which a round trip does not measure; use max_rtt_p99");
		if (c->tx_agent[0])
			return fail(p, tx->kline[LR_O_RUN_AGENT],
				    "[tx] agent: with mode = rtt the sender counts what comes back on its own interface, "
				    "so it runs here; put the reflector on the agent ([rx] agent)");
		if (p->test.kline[LR_O_RUN_CLOCK] && c->clock)
			return fail(p, p->test.kline[LR_O_RUN_CLOCK],
				    "[test] clock: a round trip is timed on the sender's one clock; there is no other "
				    "clock to estimate");
	} else if (p->test.kline[LR_O_MAX_RTT_P99]) {
		return fail(p, p->test.kline[LR_O_MAX_RTT_P99],
			    "[test] max_rtt_p99: a round-trip threshold; it needs mode = rtt or rtt-throughput");
	}
	/* a remote sender is one send on the agent's host: one stream, its capture not ours to write */
	if (c->tx_agent[0] && p->ndefs)
		return fail(p, tx->kline[LR_O_RUN_AGENT],
			    "[tx] agent: a remote sender runs one stream; the [stream] sections need senders here");
	if (c->tx_agent[0] && c->tx_pcap[0])
		return fail(p, tx->kline[LR_O_TX_PCAP],
			    "[tx] pcap: samples of a remote sender's frames would be written on the agent's host; "
			    "capture at the receiver ([rx] pcap) or run the sender here");
	if (c->tx_token_file[0] && !c->tx_agent[0])
		return fail(p, tx->kline[LR_O_RUN_TOKEN_FILE], "[tx] token_file: there is no [tx] agent to give it to");
	if (c->rx_token_file[0] && !c->rx_agent[0])
		return fail(p, p->rx.kline[LR_O_RUN_TOKEN_FILE], "[rx] token_file: there is no [rx] agent to give it to");
	if (p->ndefs && c->nsizes > 1) {
		return fail(p, key_line(tx, LR_O_SIZE),
			    "[tx] %s: conflicts with the [stream] sections, which give each stream its own size; "
			    "give at most one size here (it is ignored)", key_name(tx, LR_O_SIZE));
	}
	ret = resolve_streams(p);
	if (ret)
		return ret;
	if (p->ndefs) {
		double mean = 0;
		unsigned int i;

		/*
		 * Each stream has its own size, so steps differ in rate only. The one
		 * step size is the share-weighted mean frame size: the size that turns
		 * a bit rate into the packets per second the streams then split.
		 */
		for (i = 0; i < c->nstreams; i++)
			mean += c->streams[i].share * c->streams[i].tx.size;
		c->nsizes = 1;
		c->sizes[0] = (unsigned int)(mean + 0.5);
	}
	if (!p->test.kline[LR_O_TRIAL])
		c->trial_ns = c->duration_ns;
	return 0;
}
