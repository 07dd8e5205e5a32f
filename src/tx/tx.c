/* SPDX-License-Identifier: MIT */
/* One stream's sender: checks the interface, builds the template, chooses the engine, runs the workers. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <net/if.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "tx/engine.h"
#include "tx/rate.h"
#include "tx/tx.h"
#include "tx/tx_impl.h"
#include "sys/bpfstats.h"
#include "sys/cost.h"
#include "sys/counters.h"
#include "sys/peer_gro.h"
#include "util/choose.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/result.h"
#include "util/units.h"

#define NS 1000000000ULL

/*
 * A bridge port (the host side of a Docker container's veth) has no address
 * of its own; the bridge (docker0) has the one its containers talk to, so
 * that is the source address. 0, or -errno when there is no such address.
 */
static int master_addr(const struct lr_tx *c, int family, struct in6_addr *out)
{
	char name[IF_NAMESIZE], err[128];
	struct lr_if_link l;
	struct lr_if m;

	if (lr_if_link_get(&c->ifc, &l) || !l.master || !if_indextoname((unsigned int)l.master, name) ||
	    lr_if_open(name, &m, err, sizeof(err)) || lr_if_addr(&m, family, out))
		return -ENOENT;
	pr_info("linerate: %s has no %s address; source address from its master %s\n", c->ifc.name,
		family == AF_INET6 ? "IPv6" : "IPv4", m.name);
	return 0;
}

/*
 * --replay: the capture's frames become the templates. Frames the MTU
 * cannot carry are skipped and said so; with --stamp, markers ride in a
 * copy of the first UDP frame to the test port that has room for a probe.
 */
static int prepare_replay(struct lr_tx *c, struct lr_err *e)
{
	const struct lr_tx_spec *o = c->o;
	/* AF_XDP frames hold 4 KiB; a jumbo replay is not supported yet */
	unsigned int max_len = c->ifc.mtu + LR_ETH_HLEN < 4096 ? c->ifc.mtu + LR_ETH_HLEN : 4096;
	struct lr_pcap_frames *fr = &c->replay_frames;
	uint64_t bytes = 0;
	uint8_t scratch[4096];
	char err[512];
	unsigned int i;
	int ret;

	ret = lr_pcap_read_frames(o->replay, max_len, fr, err, sizeof(err));
	if (ret)
		return lr_err_set(e, LR_EXIT_USAGE, "{replay}: %s", err);
	if (fr->oversize)
		snprintf(c->notice, sizeof(c->notice),
			 "{replay}: skipped %u frame%s longer than %s's MTU allows (%u bytes; the first is frame %u)",
			 fr->oversize, fr->oversize == 1 ? "" : "s", o->ifname, max_len, fr->first_oversize);
	c->replay.fr = fr;
	c->replay.stamp = o->stamp;
	c->replay.dport = o->dst_port;
	c->replay.eot_frame = fr->n;
	for (i = 0; i < fr->n; i++) {
		bytes += fr->f[i].len + LR_FCS_LEN;
		if (c->replay.eot_frame == fr->n) {
			memcpy(scratch, fr->f[i].data, fr->f[i].len);
			if (lr_frame_stamp_udp(scratch, fr->f[i].len, o->dst_port, LR_MAGIC_EOT, 0, 0, 0))
				c->replay.eot_frame = i;
		}
	}
	if (o->stamp && c->replay.eot_frame == fr->n)
		return lr_err_set(e, LR_EXIT_USAGE, "{stamp}: %s has no UDP frame to port %u with room for the probe (%u bytes)",
			       o->replay, o->dst_port, LR_PROBE_LEN);
	c->frame_bytes = (unsigned int)(bytes / fr->n);
	/* the slots and UMEM frames start out as the first frame; every send copies its own */
	memset(&c->tmpl, 0, sizeof(c->tmpl));
	memcpy(c->tmpl.data, fr->f[0].data, fr->f[0].len);
	c->tmpl.len = fr->f[0].len;
	snprintf(c->mac_how, sizeof(c->mac_how), "the capture");
	return 0;
}

/* Interface checks, addresses and the template; every failure here is the user's to fix (exit 2). */
static int prepare(struct lr_tx *c, struct lr_err *e)
{
	const struct lr_tx_spec *o = c->o;
	struct lr_frame_spec spec = { 0 };
	char err[512];
	unsigned int i;
	int ret;

	ret = lr_if_open(o->ifname, &c->ifc, err, sizeof(err));
	if (ret)
		return lr_err_set(e, LR_EXIT_USAGE, "%s", err);
	if (c->ifc.physical && !o->allow_physical)
		return lr_err_set(e, LR_EXIT_USAGE, "%s is a physical NIC; linerate floods it at line rate: add {allow_physical} if you mean it",
			    o->ifname);
	if (o->size - LR_ETH_HLEN - LR_FCS_LEN > c->ifc.mtu)
		return lr_err_set(e, LR_EXIT_USAGE, "{size} %u is larger than %s's MTU %u allows (at most %u with FCS)", o->size,
			    o->ifname, c->ifc.mtu, c->ifc.mtu + LR_ETH_HLEN + LR_FCS_LEN);
	for (i = 0; i < o->nworkers; i++)
		if (o->queues[i] >= c->ifc.tx_queues)
			return lr_err_set(e, LR_EXIT_USAGE, "{queues}: queue %u is beyond %s's %u TX queue%s", o->queues[i], o->ifname,
				    c->ifc.tx_queues, c->ifc.tx_queues == 1 ? "" : "s");

	c->frame_bytes = o->size;
	if (o->replay[0])
		return prepare_replay(c, e);

	spec.family = o->family;
	spec.size = o->size;
	spec.src_port = o->src_port;
	spec.dst_port = o->dst_port;
	spec.dst_ip = o->dst_ip;
	if (o->have_src_ip) {
		spec.src_ip = o->src_ip;
	} else if (lr_if_addr(&c->ifc, o->family, &spec.src_ip) && master_addr(c, o->family, &spec.src_ip)) {
		return lr_err_set(e, LR_EXIT_USAGE, "%s has no %s address: give {src_ip}", o->ifname,
			    o->family == AF_INET6 ? "IPv6" : "IPv4");
	}
	memcpy(spec.src_mac, o->have_src_mac ? o->src_mac : c->ifc.mac, 6);
	if (o->have_dst_mac) {
		memcpy(spec.dst_mac, o->dst_mac, 6);
		snprintf(c->mac_how, sizeof(c->mac_how), "--dst-mac");
	} else if (lr_if_dst_mac(&c->ifc, o->family, &o->dst_ip, spec.dst_mac, c->mac_how, sizeof(c->mac_how),
				 err, sizeof(err))) {
		/* the message names the address, the interface and the next hop, and why resolution failed */
		return lr_err_set(e, LR_EXIT_USAGE, "%s", err);
	}
	ret = lr_frame_build(&spec, &c->tmpl);
	if (ret)
		return lr_err_set(e, LR_EXIT_USAGE, "cannot build a %u-byte frame: %s", o->size, strerror(-ret));
	/*
	 * A run id in every marker, so a receiver sees two senders on one flow;
	 * in round trips in every frame too, so a reflector that stays up
	 * starts each flow's counts over.
	 */
	{
		uint32_t id = 0;

		while (!id)
			if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
				id = (uint32_t)(lr_now_ns() ^ ((uint64_t)getpid() << 16));
		c->tmpl.rtt_id = id;
	}
	return 0;
}

static void close_workers(struct lr_tx *c)
{
	unsigned int i;

	for (i = 0; i < c->nopen; i++) {
		c->ops->close(&c->ws[i]);
		c->ws[i].mode = NULL;
		c->ws[i].note[0] = '\0';
		c->ws[i].batch = 0;
		c->ws[i].slice_ns = 0;
	}
	c->nopen = 0;
}

/* One candidate of the engine choice: probe, then open every worker, or none. */
static int try_engine(void *ctx, const struct lr_cand *cand, char *why, size_t len)
{
	struct lr_tx *c = ctx;
	const struct lr_tx_spec *o = c->o;
	unsigned int i;
	int ret;

	c->ops = cand->data;
	if (lr_test_disabled(c->ops->name)) {
		snprintf(why, len, "disabled by LINERATE_TEST_DISABLE");
		return -EPERM;
	}
	ret = c->ops->probe(&c->ifc, o, why, len);
	if (ret)
		return ret;
	for (i = 0; i < o->nworkers; i++) {
		struct lr_worker *w = &c->ws[i];

		w->ops = c->ops;
		w->errmsg[0] = '\0';
		ret = c->ops->open(w);
		if (ret) {
			snprintf(why, len, "%s", w->errmsg[0] ? w->errmsg : strerror(-ret));
			close_workers(c);
			return ret;
		}
		c->nopen++;
	}
	return 0;
}

/* The CPUs this process may run on (its affinity mask, which taskset and cpusets narrow), in order. */
static unsigned int allowed_cpus(unsigned int *out, unsigned int max)
{
	cpu_set_t set;
	unsigned int n = 0;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			out[n++] = (unsigned int)cpu;
	return n;
}

/* Worker @i's CPU: the one --cpus names, else the queue's index into the CPUs we may use. */
static unsigned int worker_cpu(const struct lr_tx_spec *o, unsigned int i, const unsigned int *allowed,
			       unsigned int nallowed)
{
	if (o->cpus_set)
		return o->cpus[i];
	return nallowed ? allowed[o->queues[i] % nallowed] : o->queues[i];
}

int lr_tx_check_cpus(const struct lr_tx_spec *o, char *err, size_t errlen)
{
	unsigned int allowed[CPU_SETSIZE], n, i, k;

	n = allowed_cpus(allowed, CPU_SETSIZE);
	if (!n || !o->cpus_set)
		return 0;
	for (i = 0; i < o->nworkers; i++) {
		for (k = 0; k < n && allowed[k] != o->cpus[i]; k++)
			;
		if (k == n) {
			snprintf(err, errlen, "CPU %u is not one this process may run on (%u CPU%s: %u-%u%s)",
				 o->cpus[i], n, n == 1 ? "" : "s", allowed[0], allowed[n - 1],
				 allowed[n - 1] - allowed[0] + 1 == n ? "" : ", with gaps");
			return -EINVAL;
		}
	}
	return 0;
}

static int open_engine(struct lr_tx *c, struct lr_err *e)
{
	static const struct lr_cand all[] = {
		{ "live", try_engine, &lr_engine_live },
		{ "afxdp", try_engine, &lr_engine_afxdp },
		{ "packet", try_engine, &lr_engine_packet },
	};
	const struct lr_tx_spec *o = c->o;
	const struct lr_cand *cands = all;
	uint64_t pps = lr_rate_pps(&o->rate, c->frame_bytes);
	unsigned int allowed[CPU_SETSIZE], nallowed = allowed_cpus(allowed, CPU_SETSIZE);
	struct lr_choice ch;
	char why[LR_CHOICE_WHY_MAX(3)];
	unsigned int i, n = 3;
	size_t off;
	int ret;

	if (o->engine == LR_ENGINE_LIVE)
		n = 1;
	else if (o->engine == LR_ENGINE_AFXDP)
		cands = &all[1], n = 1;
	else if (o->engine == LR_ENGINE_PACKET)
		cands = &all[2], n = 1;
	else if (o->replay[0] || o->rate.kind != LR_RATE_MAX)
		/*
		 * live sends a template only, and paces in bursts of 500 us of the
		 * rate (one BPF_PROG_RUN each; 50 ms without the holding tap), where
		 * AF_XDP paces in ~50 us bursts: auto keeps live for unpaced sending
		 */
		cands = &all[1], n = 2;

	/* a capture's own timing has no rate to size the default from: every frame */
	c->latency_every = o->replay_timing && !o->latency_every ? 1 : lr_latency_every(o->latency_every, pps);
	c->ws = calloc(o->nworkers, sizeof(*c->ws));
	if (!c->ws)
		return lr_err_set(e, LR_EXIT_RUNTIME, "out of memory");
	ret = lr_workers_plan(c->ws, o->nworkers, o->flows, o->count, c->flow_base, c->flows_total);
	if (ret)
		return lr_err_set(e, LR_EXIT_RUNTIME, "cannot plan workers: %s", strerror(-ret));
	for (i = 0; i < o->nworkers; i++) {
		struct lr_worker *w = &c->ws[i];

		w->queue = o->queues[i];
		w->cpu = worker_cpu(o, i, allowed, nallowed);
		w->spec = o;
		w->ifc = &c->ifc;
		w->tmpl = &c->tmpl;
		w->go = &c->go;
		w->deadline_ns = &c->deadline_ns;
		w->data_end = &c->data_end;
		w->pps = pps ? pps / o->nworkers + (i < pps % o->nworkers) : 0;
		if (pps && !w->pps)
			w->pps = 1;
		w->stamp_mask = c->latency_every - 1;
		w->rt_offset = lr_realtime_offset();
		if (o->replay[0]) {
			/* one worker (the CLI insists): the whole capture, loops times */
			uint64_t all = (uint64_t)c->replay_frames.n * o->loops;

			w->replay = &c->replay;
			if (all && (!w->limit || all < w->limit))
				w->limit = all;
		}
	}

	ret = lr_choose(cands, n, c, &ch);
	if (ret) {
		/* the reason of the engine the user asked for, or of the last fallback */
		const char *last = ch.tried[ch.ntried - 1].why;

		if (n > 1) {
			lr_choice_why(&ch, why, sizeof(why));
			return lr_err_set(e, ret == -ENOMEM ? LR_EXIT_RUNTIME : LR_EXIT_USAGE, "no engine can send on %s%s",
					  o->ifname, why);
		}
		return lr_err_set(e, ret == -ENOMEM ? LR_EXIT_RUNTIME : LR_EXIT_USAGE, "%s", last);
	}
	/* the choice in words, for the caller to print: the engine, its mode, the queues and CPUs, and why */
	lr_choice_why(&ch, why, sizeof(why));
	off = (size_t)snprintf(c->engine_line, sizeof(c->engine_line), "engine %s, %s mode on %s queue%s",
			       c->ops->name, c->ws[0].mode, o->ifname, o->nworkers > 1 ? "s" : "");
	for (i = 0; i < o->nworkers && off < sizeof(c->engine_line); i++)
		off += (size_t)snprintf(c->engine_line + off, sizeof(c->engine_line) - off, "%s%u (cpu %u)",
					i ? ", " : " ", c->ws[i].queue, c->ws[i].cpu);
	if (off < sizeof(c->engine_line))
		snprintf(c->engine_line + off, sizeof(c->engine_line) - off, "%s%s%s", c->ws[0].note[0] ? ": " : "",
			 c->ws[0].note, why);
	return 0;
}

static void close_engine(struct lr_tx *c)
{
	unsigned int i;

	close_workers(c);
	if (c->ws)
		for (i = 0; i < c->o->nworkers; i++)
			free(c->ws[i].flow_seq);
	free(c->ws);
}

static uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Data frames the device completed: markers are queued only after all data completed. */
uint64_t lr_tx_worker_done(const struct lr_worker *w)
{
	uint64_t done = load(&w->stats.completed), q = load(&w->stats.queued);

	return done < q ? done : q;
}

void lr_tx_live_line(struct lr_tx *c, uint64_t *prev, uint64_t dt_ns, char *line, size_t len)
{
	const struct lr_tx_spec *o = c->o;
	char b1[32];
	uint64_t tot = 0, dtot = 0;
	unsigned int i;
	size_t off;
	double s = (double)dt_ns / NS;

	for (i = 0; i < o->nworkers; i++) {
		uint64_t v = lr_tx_worker_done(&c->ws[i]);

		dtot += v - prev[i];
		tot += v;
	}
	off = (size_t)snprintf(line, len, "tx %s pps  %.3f Gbit/s L2  %.3f Gbit/s L1  total %llu",
			       lr_fmt_si((double)dtot / s, b1, sizeof(b1)), dtot * c->frame_bytes * 8.0 / s / 1e9,
			       dtot * (c->frame_bytes + 20) * 8.0 / s / 1e9, (unsigned long long)tot);
	if (o->nworkers > 1) {
		for (i = 0; i < o->nworkers && off + 64 < len; i++) {
			uint64_t v = lr_tx_worker_done(&c->ws[i]);

			off += (size_t)snprintf(line + off, len - off, "%s q%u %s", i ? "," : "  |",
						c->ws[i].queue, lr_fmt_si((double)(v - prev[i]) / s, b1, sizeof(b1)));
		}
	}
	for (i = 0; i < o->nworkers; i++)
		prev[i] = lr_tx_worker_done(&c->ws[i]);
}

/*
 * The device's own per-queue TX packet counters, where the driver exposes
 * them under the common ethtool name (virtio_net, ixgbe, ...; veth has
 * none): the check on which queue each worker's frames really left by.
 */
static int queue_counters(const struct lr_tx *c, uint64_t *out)
{
	struct lr_ethtool_stats st;
	unsigned int i;
	int ret;

	ret = lr_if_ethtool_stats(c->o->ifname, &st);
	if (ret)
		return ret;
	for (i = 0; i < c->o->nworkers && !ret; i++)
		ret = lr_ethtool_stats_findq(&st, "tx_queue_%u_packets", c->ws[i].queue, &out[i]);
	lr_ethtool_stats_free(&st);
	return ret;
}

/* The device's drop counter (tx_dropped: on a veth it also holds the XDP frames its peer's ring refused). */
static int dev_drops(const struct lr_tx *c, uint64_t *out)
{
	return lr_if_stat(c->o->ifname, "tx_dropped", out);
}

static void snap_data_end(void *arg)
{
	struct lr_tx *c = arg;

	c->have_dropped_data = c->have_dropped && !dev_drops(c, &c->tx_dropped_data);
}

int lr_tx_start(struct lr_tx *c, struct lr_err *e)
{
	const struct lr_tx_spec *o = c->o;
	unsigned int i;
	int ret;

	c->have_dropped = !dev_drops(c, &c->tx_dropped0);
	c->data_end = (struct lr_data_end){ .n = o->nworkers, .snap = snap_data_end, .arg = c };
	c->have_dropped_data = false;
	c->have_qdev = !queue_counters(c, c->qdev0);
	lr_dev_counters_read(o->ifname, &c->dev0);
	lr_ksoftirqd_find(c->ksoftirqd, LR_MAX_CPUS);
	for (i = 0; i < o->nworkers; i++) {
		ret = pthread_create(&c->ws[i].thread, NULL, lr_worker_run, &c->ws[i]);
		if (ret) {
			__atomic_store_n(&c->go, -1, __ATOMIC_RELEASE);
			for (; i > 0; i--)
				pthread_join(c->ws[i - 1].thread, NULL);
			for (i = 0; i < o->nworkers; i++)
				c->ws[i].started = false;
			return lr_err_set(e, LR_EXIT_RUNTIME, "cannot start worker thread: %s", strerror(ret));
		}
		c->ws[i].started = true;
	}
	return 0;
}

/* The live program's runs bpf_stats counted so far, on worker @i; 0 without one. */
static uint64_t prog_runs(const struct lr_tx *c, unsigned int i)
{
	uint64_t run_ns, runs = 0;

	if (!c->ws[i].have_prog || lr_bpf_prog_stats(c->ws[i].prog_fd, &run_ns, &runs))
		return 0;
	return runs;
}

void lr_tx_ready(struct lr_tx *c, uint64_t timeout_ns)
{
	uint64_t end = lr_now_ns() + timeout_ns;
	unsigned int i;

	for (i = 0; i < c->o->nworkers; i++)
		while (c->ws[i].started && !__atomic_load_n(&c->ws[i].ready, __ATOMIC_ACQUIRE) &&
		       !__atomic_load_n(&c->ws[i].done, __ATOMIC_ACQUIRE) && lr_now_ns() < end)
			sched_yield();
	/* the cost split's readings at the start: here, so that the caller's clock starts after them */
	for (i = 0; i < c->o->nworkers; i++)
		c->prog_runs0[i] = prog_runs(c, i);
	lr_ksoftirqd_read(c->ksoftirqd, c->ksirq0, LR_MAX_CPUS);
	lr_cpu_times_read(&c->cpu0);
}

void lr_tx_go(struct lr_tx *c, uint64_t now_ns)
{
	c->start_ns = now_ns;
	c->deadline_ns = c->o->duration_ns ? now_ns + c->o->duration_ns : 0;
	__atomic_store_n(&c->go, 1, __ATOMIC_RELEASE);
}

bool lr_tx_done(const struct lr_tx *c)
{
	unsigned int i;

	for (i = 0; i < c->o->nworkers; i++)
		if (!__atomic_load_n(&c->ws[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/*
 * After the workers: their CPU time by CPU, and the interrupt work inside it
 * that the per-CPU split and ksoftirqd's own time tell apart (sys/cost.h).
 */
static void cpu_account(struct lr_tx *c)
{
	const struct lr_tx_spec *o = c->o;
	struct lr_cost_cpus cc = { 0 };
	uint64_t ks1[LR_MAX_CPUS];
	unsigned int i, k;

	lr_cpu_times_read(&c->cpu1);
	memset(&c->cpu, 0, sizeof(c->cpu));
	lr_tx_cost_cpus(c, &cc);
	if (!cc.n)
		return;
	for (k = 0; k < cc.n; k++)
		c->cpu.thread_ns += cc.thread_ns[k];
	for (i = 0; i < o->nworkers; i++) {
		uint64_t runs = prog_runs(c, i);

		c->cpu.prog_stat_runs += runs > c->prog_runs0[i] ? runs - c->prog_runs0[i] : 0;
	}
	lr_ksoftirqd_read(c->ksoftirqd, ks1, LR_MAX_CPUS);
	lr_cost_sender_irq(&cc, &c->cpu0, &c->cpu1, c->ksirq0, ks1, &c->cpu);
	c->have_cpu = c->cpu0.n && c->cpu1.n;
}

void lr_tx_cost_cpus(const struct lr_tx *c, struct lr_cost_cpus *acc)
{
	unsigned int i;

	for (i = 0; i < c->o->nworkers; i++) {
		const struct lr_worker *w = &c->ws[i];

		/* a worker that never ran (or whose clock failed) spoils the sum: none then */
		if (!w->cpu_ns1 || w->cpu_ns1 < w->cpu_ns0) {
			acc->n = 0;
			return;
		}
		lr_cost_cpus_add(acc, w->cpu, w->cpu_ns1 - w->cpu_ns0);
	}
}

void lr_tx_join(struct lr_tx *c)
{
	unsigned int i;
	bool joined = false;

	if (!c->ws)
		return;
	/* workers started but never released (a later stream failed to start): they leave at the gate */
	if (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
		__atomic_store_n(&c->go, -1, __ATOMIC_RELEASE);
	for (i = 0; i < c->o->nworkers; i++)
		if (c->ws[i].started) {
			pthread_join(c->ws[i].thread, NULL);
			c->ws[i].started = false;
			joined = true;
		}
	if (joined && c->start_ns)
		cpu_account(c);
}

int lr_tx_dropped_at_data_end(const struct lr_tx *c, uint64_t *out)
{
	if (!c->have_dropped_data)
		return -ENODATA;
	*out = c->tx_dropped_data;
	return 0;
}

const struct lr_engine_ops *lr_tx_ops(const struct lr_tx *c)
{
	return c->ops;
}

/* The workers' mode, read after the test: a socket may have fallen back (zero-copy to copy) on the way. */
const char *lr_tx_mode(const struct lr_tx *c)
{
	unsigned int i;

	for (i = 1; i < c->o->nworkers; i++)
		if (!c->ws[i].mode || !c->ws[0].mode || strcmp(c->ws[i].mode, c->ws[0].mode))
			return "mixed";
	return c->ws[0].mode;
}

const struct lr_worker *lr_tx_workers(const struct lr_tx *c, unsigned int *n)
{
	*n = c->o->nworkers;
	return c->ws;
}

uint64_t lr_tx_start_ns(const struct lr_tx *c)
{
	return c->start_ns;
}

_Static_assert(LR_TX_MAX_QUEUES >= LR_MAX_WORKERS, "a tx result holds every worker");

void lr_tx_collect(struct lr_tx *c, struct lr_tx_result *r, double *secs)
{
	const struct lr_tx_spec *o = c->o;
	uint64_t qdev[LR_MAX_WORKERS] = { 0 }, end = 0, dropped = 0;
	bool have_qdev = c->have_qdev && !queue_counters(c, qdev);
	struct lr_dev_counters now, d;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < o->nworkers; i++) {
		const struct lr_worker *w = &c->ws[i];

		r->completed += lr_tx_worker_done(w);
		r->queued += w->stats.queued;
		r->eot += w->stats.eot;
		if (w->end_ns > end)
			end = w->end_ns;
	}
	/* data frames only: the count taken when the last worker's data was done, before its markers */
	if (c->have_dropped_data)
		dropped = c->tx_dropped_data - c->tx_dropped0;
	else if (c->have_dropped && !dev_drops(c, &dropped))
		dropped -= c->tx_dropped0;
	r->device_dropped = dropped;
	/*
	 * A completion only says the kernel is done with the frame. Where the
	 * engine does not retry them, frames the device dropped (on veth: the
	 * peer's receive ring was full) were not put on the wire and are not
	 * counted as sent.
	 */
	r->packets = r->completed;
	if (c->ops->drops_completed)
		r->packets -= dropped < r->completed ? dropped : r->completed;
	r->bytes = r->packets * (c->frame_bytes - LR_FCS_LEN);
	*secs = end > c->start_ns ? (double)(end - c->start_ns) / NS : 0;
	r->pps = *secs > 0 ? r->packets / *secs : 0;
	/* a vanished interface reads as all zeros: no delta then, rather than one that wrapped */
	if (lr_if_present(&c->ifc)) {
		lr_dev_counters_read(o->ifname, &now);
		lr_dev_counters_delta(&d, &c->dev0, &now);
		r->device = (struct lr_dev_result){ d.tx_packets, d.tx_dropped, d.drv_drops };
	}
	r->latency_every = c->latency_every;
	r->nqueues = o->nworkers;
	for (i = 0; i < o->nworkers; i++) {
		const struct lr_worker *w = &c->ws[i];
		struct lr_tx_queue_result *q = &r->queues[i];

		q->queue = w->queue;
		q->cpu = w->cpu;
		q->packets = lr_tx_worker_done(w);
		q->pps = *secs > 0 ? q->packets / *secs : 0;
		q->ring_full = w->stats.ring_full;
		q->kicks = w->stats.kicks;
		q->kick_errors = w->stats.kick_errors;
		q->have_device_packets = have_qdev;
		q->device_packets = have_qdev ? qdev[i] - c->qdev0[i] : 0;
	}
	r->have_cpu = c->have_cpu;
	r->cpu = c->cpu;
}

int lr_tx_prepare(const struct lr_tx_spec *o, unsigned int flow_base, unsigned int flows_total, struct lr_tx **out,
		  struct lr_err *err)
{
	struct lr_tx *c;
	int ret;

	lr_err_clear(err);
	c = calloc(1, sizeof(*c));
	if (!c)
		return lr_err_set(err, LR_EXIT_RUNTIME, "out of memory");
	c->o = o;
	c->flow_base = flow_base;
	c->flows_total = flows_total;
	ret = prepare(c, err);
	if (ret) {
		lr_tx_close(c);
		return ret;
	}
	*out = c;
	return 0;
}

int lr_tx_engine_open(struct lr_tx *c, struct lr_err *err)
{
	lr_err_clear(err);
	return open_engine(c, err);
}

int lr_tx_open(const struct lr_tx_spec *o, unsigned int flow_base, unsigned int flows_total, struct lr_tx **out,
	       struct lr_err *err)
{
	struct lr_tx *c;
	int ret;

	ret = lr_tx_prepare(o, flow_base, flows_total, &c, err);
	if (ret)
		return ret;
	ret = lr_tx_engine_open(c, err);
	if (ret) {
		lr_tx_close(c);
		return ret;
	}
	*out = c;
	return 0;
}

void lr_tx_close(struct lr_tx *c)
{
	if (!c)
		return;
	lr_tx_join(c);
	close_engine(c);
	lr_pcap_frames_free(&c->replay_frames);
	free(c);
}

unsigned int lr_tx_snaplen(const struct lr_tx *c)
{
	/* a replay's frames differ in length: room for the longest an AF_XDP frame holds */
	return c->o->replay[0] ? 4096 : c->tmpl.len;
}

void lr_tx_sample(struct lr_tx *c, struct lr_sampler *smp, unsigned int producer, uint64_t every, uint64_t count)
{
	unsigned int i, n = c->o->nworkers;

	for (i = 0; i < n; i++) {
		struct lr_worker *w = &c->ws[i];

		w->sampler = smp;
		w->sample_producer = producer + i;
		w->sample_every = every;
		/* the first @count frames of the test, split like the frames themselves */
		w->sample_left = every ? 0 : count / n + (i < count % n);
		w->stamped = 0;
	}
}


enum lr_engine_kind lr_engine_kind_of(const char *name)
{
	static const struct {
		const struct lr_engine_ops *ops;
		enum lr_engine_kind kind;
	} all[] = {
		{ &lr_engine_live, LR_ENGINE_LIVE },
		{ &lr_engine_afxdp, LR_ENGINE_AFXDP },
		{ &lr_engine_packet, LR_ENGINE_PACKET },
	};
	unsigned int i;

	for (i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(name, all[i].ops->name))
			return all[i].kind;
	return LR_ENGINE_AUTO;
}
