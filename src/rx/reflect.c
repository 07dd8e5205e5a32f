/* SPDX-License-Identifier: MIT */
/* The reflector: loads the embedded program, picks the XDP mode XDP_TX can work in, attaches by bpf_link, counts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "rx/reflect.h"
#include "rx/rx.h"
#include "util/choose.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/report.h"
#include "reflect.skel.h"

#define NS 1000000000ULL

/*
 * Where XDP_TX can go. In native mode a veth hands a frame sent back to its
 * peer's ring, and wakes the peer's NAPI only when the peer runs a native
 * XDP program: a peer that has only GRO on (its NAPI, so this end advertises
 * ndo_xdp_xmit all the same) is not woken, and frames sent back sit in its
 * ring until something else wakes it, or are refused once it is full (seen
 * on Linux 6.18; veth_xdp_flush() tests the peer's xdp_prog). A peer with
 * neither drops them. So native on a veth needs native XDP at the peer,
 * which the peer's own link attributes tell (IFLA_XDP). Generic XDP_TX
 * transmits through the device's normal path instead, which works behind a
 * bridge, vxlan or macvlan. Another device: native when its driver has XDP,
 * else generic.
 */
static enum lr_xdp_mode pick_mode(const struct lr_reflector *r, char *why, size_t len)
{
	struct lr_if_xdp feat = { 0 };
	struct lr_if_link peer;
	int ret;

	if (!strcmp(r->ifc.driver, "veth")) {
		if (!lr_if_veth_peer(&r->ifc, &peer) && peer.xdp_native) {
			snprintf(why, len, "its veth peer %s runs native XDP, so it takes XDP_TX frames", peer.name);
			return LR_XDP_NATIVE;
		}
		snprintf(why, len, "its veth peer runs no native XDP, so native XDP_TX frames would be dropped or held "
			 "there (--xdp-mode native if the peer will run linerate's receiver)");
		return LR_XDP_GENERIC;
	}
	ret = lr_if_xdp_features(r->ifc.ifindex, &feat);
	if (!ret && !(feat.features & LR_XDP_ACT_BASIC)) {
		snprintf(why, len, "%s (%s) has no native XDP", r->ifc.name, r->ifc.driver[0] ? r->ifc.driver : "driver "
			 "unknown");
		return LR_XDP_GENERIC;
	}
	snprintf(why, len, "the driver (%s) has native XDP", r->ifc.driver[0] ? r->ifc.driver : "unknown");
	return LR_XDP_NATIVE;
}

static int attach(struct lr_reflector *r, enum lr_xdp_mode mode, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	int prog_fd = bpf_program__fd(r->skel->progs.xdp_reflect);
	int e;

	lopts.flags = mode == LR_XDP_NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
	r->link_fd = bpf_link_create(prog_fd, r->ifc.ifindex, BPF_XDP, &lopts);
	if (r->link_fd >= 0) {
		r->mode = mode == LR_XDP_NATIVE ? "native" : "generic";
		return 0;
	}
	e = -errno;
	if (e == -EBUSY || e == -EEXIST)
		snprintf(err, errlen, "%s already has an XDP program attached; detach it first (ip link set dev %s xdp off)",
			 r->ifc.name, r->ifc.name);
	else if (e == -EPERM)
		snprintf(err, errlen, "attaching XDP to %s needs root (CAP_NET_ADMIN, CAP_BPF)", r->ifc.name);
	else
		snprintf(err, errlen, "cannot attach the reflector (%s mode) to %s: %s",
			 mode == LR_XDP_NATIVE ? "native" : "generic", r->ifc.name, strerror(-e));
	return e;
}

void lr_reflector_stop(struct lr_reflector *r)
{
	if (r->link_fd >= 0) {
		close(r->link_fd);
		r->link_fd = -1;
	}
}

void lr_reflector_close(struct lr_reflector *r)
{
	lr_reflector_stop(r);
	if (r->flows)
		munmap(r->flows, r->flows_len);
	reflect__destroy(r->skel);
	free(r->sources);
	r->flows = NULL;
	r->skel = NULL;
	r->sources = NULL;
}

int lr_reflector_open(const struct lr_reflect_spec *o, struct lr_reflector *r, char *line, size_t linelen, char *err,
		      size_t errlen)
{
	enum lr_xdp_mode mode;
	char note[256] = "";
	int ret, ncpus;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->link_fd = -1;
	if (lr_if_open(o->ifname, &r->ifc, err, errlen))
		return LR_EXIT_USAGE;
	if (r->ifc.physical && !o->allow_physical) {
		snprintf(err, errlen, "%s is a physical NIC; the reflector sends test frames back out of it at whatever "
			 "rate they come: add --allow-physical if you mean it", o->ifname);
		return LR_EXIT_USAGE;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		snprintf(err, errlen, "cannot count CPUs");
		return LR_EXIT_RUNTIME;
	}
	r->nsources = ncpus;
	r->sources = calloc((size_t)ncpus, sizeof(*r->sources));
	r->skel = reflect__open();
	if (!r->sources || !r->skel) {
		snprintf(err, errlen, "cannot open the embedded reflector: %s", strerror(errno ? errno : ENOMEM));
		ret = LR_EXIT_RUNTIME;
		goto fail;
	}
	r->skel->rodata->cfg_dport = o->dst_port;
	ret = reflect__load(r->skel);
	if (ret) {
		if (ret == -EPERM || (ret == -EACCES && geteuid() != 0))
			snprintf(err, errlen, "loading the reflector needs root (CAP_BPF, CAP_NET_ADMIN)");
		else
			snprintf(err, errlen, "cannot load the reflector: %s (run with -vv for the verifier log)",
				 strerror(-ret));
		ret = ret == -EPERM ? LR_EXIT_USAGE : LR_EXIT_RUNTIME;
		goto fail;
	}
	r->flows_len = sizeof(struct lr_flow_state) * LR_MAX_FLOWS;
	r->flows = mmap(NULL, r->flows_len, PROT_READ, MAP_SHARED, bpf_map__fd(r->skel->maps.flows), 0);
	if (r->flows == MAP_FAILED) {
		r->flows = NULL;
		snprintf(err, errlen, "cannot map the reflector's flow table: %s", strerror(errno));
		ret = LR_EXIT_RUNTIME;
		goto fail;
	}
	if (o->xdp_mode == LR_XDP_AUTO) {
		mode = pick_mode(r, r->why, sizeof(r->why));
	} else {
		mode = o->xdp_mode;
		snprintf(r->why, sizeof(r->why), "as asked (--xdp-mode)");
		if (mode == LR_XDP_NATIVE && pick_mode(r, note, sizeof(note)) == LR_XDP_GENERIC &&
		    !strcmp(r->ifc.driver, "veth"))
			snprintf(r->why, sizeof(r->why), "as asked; but its veth peer runs no native XDP yet: frames sent "
				 "back are dropped there (counted as refused: tx_dropped), or held while it has GRO on, "
				 "until it does");
	}
	lr_dev_counters_read(o->ifname, &r->dev0);
	ret = attach(r, mode, err, errlen);
	/* no native XDP after all (the features were not reported): generic, and say so */
	if (ret && o->xdp_mode == LR_XDP_AUTO && mode == LR_XDP_NATIVE && ret != -EBUSY && ret != -EEXIST &&
	    ret != -EPERM) {
		snprintf(r->why, sizeof(r->why), "native XDP unavailable on %s (%s)", o->ifname, strerror(-ret));
		ret = attach(r, LR_XDP_GENERIC, err, errlen);
	}
	if (ret) {
		ret = ret == -EPERM || ret == -EBUSY || ret == -EEXIST ? LR_EXIT_USAGE : LR_EXIT_RUNTIME;
		goto fail;
	}
	r->start_ns = lr_now_ns();
	snprintf(line, linelen, "reflecting on %s, XDP %s mode: %s; round-trip frames to UDP port %u go back, "
		 "everything else passes", o->ifname, r->mode, r->why, o->dst_port);
	return 0;
fail:
	lr_reflector_close(r);
	return ret;
}

bool lr_reflector_complete(const struct lr_reflector *r)
{
	return lr_flows_complete(r->flows);
}

int lr_reflector_activity(struct lr_reflector *r, uint64_t *count)
{
	__u32 key = 0;
	int i;

	if (bpf_map__lookup_elem(r->skel->maps.rx_counters, &key, sizeof(key), r->sources,
				 sizeof(*r->sources) * (size_t)r->nsources, 0))
		return -errno;
	*count = 0;
	for (i = 0; i < r->nsources; i++)
		*count += r->sources[i].packets + r->sources[i].eot;
	return 0;
}

int lr_reflector_collect(struct lr_reflector *r, struct lr_reflect_result *out)
{
	struct lr_rx_counters *s;
	struct lr_dev_counters now, d;
	struct lr_flow_totals t;
	__u32 key = 0;

	if (bpf_map__lookup_elem(r->skel->maps.rx_counters, &key, sizeof(key), r->sources,
				 sizeof(*r->sources) * (size_t)r->nsources, 0))
		return -errno;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	lr_rx_counters_sum(r->sources, r->nsources, s);
	memset(out, 0, sizeof(*out));
	out->mode = r->mode;
	out->packets = s->packets;
	out->bytes = s->bytes;
	out->eot = s->eot;
	out->foreign = s->foreign;
	out->bad_flow = s->bad_flow;
	lr_flow_totals(r->flows, &t);
	out->flows = t.flows;
	out->flows_eot = t.flows_eot;
	out->fwd_received = t.packets;
	out->sent = t.sent;
	out->lost = t.lost;
	out->late = t.late;
	out->dups = t.dups;
	out->settled = t.settled;
	out->lat_count = s->lat_count;
	out->lat_min = s->lat_min;
	out->lat_max = s->lat_max;
	out->lat_p50 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.50, s->lat_min, s->lat_max);
	out->lat_p99 = lr_lat_quantile(s->lat_hist, LR_LAT_BUCKETS, s->lat_count, 0.99, s->lat_min, s->lat_max);
	if (lr_if_present(&r->ifc)) {
		lr_dev_counters_read(r->o->ifname, &now);
		lr_dev_counters_delta(&d, &r->dev0, &now);
		out->dev_tx_packets = d.tx_packets;
		out->dev_tx_dropped = d.tx_dropped;
		/*
		 * A veth adds its queues' XDP_TX (and ndo_xdp_xmit) errors to its
		 * own tx_dropped, and its receive drops to rx_dropped: its driver
		 * counters hold no refusal tx_dropped lacks, and adding them would
		 * count every refused frame twice.
		 */
		out->dev_drv_drops = strcmp(r->ifc.driver, "veth") ? d.drv_drops : 0;
	}
	out->duration_s = (double)(lr_now_ns() - r->start_ns) / NS;
	free(s);
	return 0;
}

void lr_reflect_result_put(struct json_object *parent, const struct lr_reflect_result *r)
{
	struct json_object *o = json_object_new_object(), *fw = json_object_new_object(),
			   *dev = json_object_new_object(), *lat = json_object_new_object();

#define U64(obj, k, v) json_object_object_add(obj, k, json_object_new_uint64(v))
	json_object_object_add(o, "mode", json_object_new_string(r->mode ? r->mode : ""));
	U64(o, "packets", r->packets);
	U64(o, "bytes", r->bytes);
	U64(o, "eot_markers", r->eot);
	U64(o, "foreign", r->foreign);
	U64(o, "bad_flow", r->bad_flow);
	U64(o, "flows", r->flows);
	U64(o, "flows_eot", r->flows_eot);
	json_object_object_add(o, "tail_settled", json_object_new_boolean(r->settled));
	json_object_object_add(fw, "sent", r->flows_eot ? json_object_new_uint64(r->sent) : NULL);
	U64(fw, "received", r->fwd_received);
	json_object_object_add(fw, "lost", json_object_new_int64(r->lost));
	U64(fw, "reordered", r->late);
	U64(fw, "duplicates", r->dups);
	json_object_object_add(o, "forward", fw);
	U64(dev, "tx_packets", r->dev_tx_packets);
	U64(dev, "tx_dropped", r->dev_tx_dropped);
	U64(dev, "driver_drops", r->dev_drv_drops);
	json_object_object_add(o, "device", dev);
	U64(lat, "count", r->lat_count);
	U64(lat, "min", r->lat_min);
	U64(lat, "p50", r->lat_p50);
	U64(lat, "p99", r->lat_p99);
	U64(lat, "max", r->lat_max);
	json_object_object_add(lat, "clock", json_object_new_string("same-host-only"));
	json_object_object_add(o, "forward_latency_ns", lat);
	json_object_object_add(parent, "reflect", o);
#undef U64
}
