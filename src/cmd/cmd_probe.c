/* SPDX-License-Identifier: MIT */
/* `linerate probe`: what the kernel and one interface offer, as a table or JSON; its options. */
/*
 * JSON (--json FILE|-), stable keys:
 *
 *   command            "probe"
 *   interface          the name given with -i
 *   kernel             uname release
 *   link {
 *     ifindex          in the probed namespace
 *     driver           ethtool driver name, "" when the device reports none
 *     kind             rtnetlink link kind ("veth", "bridge", ...), "" for a plain device
 *     physical         true when a device sits behind it in sysfs
 *     admin_up         IFF_UP
 *     oper_state       "up", "down", "lowerlayerdown", "dormant", "unknown", ...
 *     mtu
 *     mac              "aa:bb:cc:dd:ee:ff"
 *     tx_queues, rx_queues        queues the stack uses now (sysfs)
 *     channels         null when ETHTOOL_GCHANNELS is unsupported, else
 *                      { rx, tx, other, combined, max_rx, max_tx, max_other, max_combined }
 *     veth_peer_ifindex           null unless a veth; an ifindex in the peer's namespace
 *   }
 *   xdp_features       null before Linux 6.3 (no "netdev" netlink family), else {
 *     raw              NETDEV_XDP_ACT_* bits as a number
 *     flags            their names: "basic", "redirect", "ndo_xmit", "xsk_zerocopy",
 *                      "hw_offload", "rx_sg", "ndo_xmit_sg"
 *     zc_max_segs      null unless xsk_zerocopy is advertised
 *   }
 *   capabilities {     each { state: "yes"|"no"|"likely"|"unknown", detail: text,
 *                             error: errno name ("EOPNOTSUPP") or null }
 *     afxdp_socket             socket(AF_XDP) opens
 *     afxdp_zerocopy           a TX-only AF_XDP socket binds to queue 0 with XDP_ZEROCOPY
 *     afxdp_copy               ... with XDP_COPY
 *     afxdp_need_wakeup        a bind with XDP_USE_NEED_WAKEUP succeeded
 *     xdp_native               the driver advertises native XDP (xdp_features "basic")
 *     xdp_generic              the kernel loads XDP programs; generic mode works on any device
 *     xdp_ndo_xmit             the device takes XDP_REDIRECTed frames (veth: only while the
 *                              peer has XDP or GRO)
 *     xsk_zerocopy_advertised  the driver advertises AF_XDP zero-copy
 *     af_packet                socket(AF_PACKET, SOCK_RAW) opens
 *     live_frames              BPF_PROG_RUN in live-frames mode runs the live program (on a
 *                              frame it drops: nothing is sent)
 *   }
 *   queue_counters     [ { name, queue, direction: "rx"|"tx", field, value } ], the driver's
 *                      ethtool counters named rx_queue_N_* / tx_queue_N_* (empty when none)
 *
 * "unknown" means the probe could not tell, mostly for want of privileges. Exit 0 whenever the
 * probe ran, whatever it found; 2 for bad input (unknown interface or namespace).
 */
#define _GNU_SOURCE	/* strerrorname_np() */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "sys/caps.h"
#include "tx/engine.h"
#include "util/log.h"
#include "util/report.h"

/* Where each option lands in struct lr_probe_opts. */
#define BIND(id, f, ...)	{ id, LR_FIELD(struct lr_probe_opts, f), __VA_ARGS__ }

static const struct lr_bind probe_binds[] = {
	BIND(LR_O_PROBE_IFACE, ifname),
	BIND(LR_O_NETNS, netns),
	BIND(LR_O_PROBE_JSON, json),
	BIND(LR_O_PROBE_VERBOSE, verbose),
};

static const struct lr_optset probe_optset = {
	LR_OPTSET(probe_binds, struct lr_probe_opts),
};

LR_CLI_ENTRY(probe, struct lr_probe_opts, lr_cmd_probe)

const struct lr_cli lr_probe_cli = {
	.cmd = "probe",
	.summary = "what the kernel and an interface offer: AF_XDP modes, XDP, AF_PACKET",
	.usage = "-i IFACE [options]",
	.about = "Reports what the kernel and IFACE offer linerate: AF_XDP sockets, zero-copy and copy mode,\n"
		 "need_wakeup, native and generic XDP, AF_PACKET, and the interface's driver, MTU and queues.\n"
		 "The AF_XDP modes are tried for real: a TX-only socket is bound to queue 0 for a moment\n"
		 "(zero-copy may make a NIC driver reconfigure that queue). No XDP program is attached.",
	.opts = &probe_optset,
	.run = probe_run,
};

struct probe_ctx {
	const struct lr_probe_opts *o;
	struct lr_if ifc;
	struct lr_caps caps;
	struct lr_ethtool_stats stats;
	int stats_err;
};

static const char *mac_str(const uint8_t mac[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	return buf;
}

static const char *oper_state(const struct probe_ctx *c)
{
	return c->caps.have_link ? lr_if_operstate_name(c->caps.link.operstate) : "unknown";
}

static void xdp_flags_str(uint64_t f, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < LR_XDP_ACT_COUNT && off < len; i++) {
		if (f & (1ULL << i))
			off += snprintf(buf + off, len - off, "%s%s", off ? " " : "", lr_xdp_act_name(1ULL << i));
	}
	if (!off)
		snprintf(buf, len, "none");
}

/* "rx 2 (max 2), tx 2 (max 2)": only the kinds of channel the driver has. */
static void channels_str(const struct lr_if_channels *ch, char *buf, size_t len)
{
	const struct {
		const char *name;
		unsigned int now, max;
	} kinds[] = {
		{ "rx", ch->rx, ch->max_rx },
		{ "tx", ch->tx, ch->max_tx },
		{ "other", ch->other, ch->max_other },
		{ "combined", ch->combined, ch->max_combined },
	};
	size_t off = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && off < len; i++) {
		if (kinds[i].max)
			off += snprintf(buf + off, len - off, "%s%s %u (max %u)", off ? ", " : "", kinds[i].name,
					kinds[i].now, kinds[i].max);
	}
	if (!off)
		snprintf(buf, len, "none reported");
}

static void print_table(const struct probe_ctx *c, FILE *out)
{
	const struct lr_caps *caps = &c->caps;
	const struct lr_if *ifc = &c->ifc;
	char mac[18], buf[160];
	bool any = false;
	unsigned int i;

	fprintf(out, "linerate probe: %s, kernel %s\n\n", ifc->name, caps->kernel);
	fprintf(out, "Interface\n");
	fprintf(out, "  %-16s %d\n", "ifindex", ifc->ifindex);
	fprintf(out, "  %-16s %s (%s%s%s)\n", "driver", ifc->driver[0] ? ifc->driver : "-",
		caps->link.kind[0] ? caps->link.kind : "", caps->link.kind[0] ? ", " : "",
		ifc->physical ? "physical" : "virtual");
	fprintf(out, "  %-16s admin %s, oper %s\n", "state", ifc->up ? "up" : "down", oper_state(c));
	fprintf(out, "  %-16s %u\n", "mtu", ifc->mtu);
	fprintf(out, "  %-16s %s\n", "mac", mac_str(ifc->mac, mac, sizeof(mac)));
	fprintf(out, "  %-16s tx %u, rx %u\n", "queues", ifc->tx_queues, ifc->rx_queues);
	if (caps->have_channels) {
		channels_str(&caps->channels, buf, sizeof(buf));
		fprintf(out, "  %-16s %s\n", "channels", buf);
	} else {
		fprintf(out, "  %-16s not reported by the driver\n", "channels");
	}
	if (caps->veth_peer_ifindex)
		fprintf(out, "  %-16s ifindex %d (in the peer's namespace)\n", "veth peer", caps->veth_peer_ifindex);
	if (caps->have_xdp) {
		xdp_flags_str(caps->xdp.features, buf, sizeof(buf));
		fprintf(out, "  %-16s %s (0x%llx)\n", "xdp features", buf, (unsigned long long)caps->xdp.features);
	} else {
		fprintf(out, "  %-16s not reported (%s)\n", "xdp features",
			caps->xdp_err == -EOPNOTSUPP ? "kernel before 6.3" : strerror(-caps->xdp_err));
	}

	fprintf(out, "\n%-26s %-8s %s\n", "Capability", "State", "Detail");
	for (i = 0; i < LR_CAP_COUNT; i++)
		fprintf(out, "%-26s %-8s %s\n", lr_cap_label(i), lr_cap_state_name(caps->cap[i].state),
			caps->cap[i].detail);

	if (!c->o->verbose)
		return;
	fprintf(out, "\nPer-queue driver counters (ethtool -S)\n");
	if (c->stats_err) {
		fprintf(out, "  none: %s\n", c->stats_err == -EOPNOTSUPP ? "the driver has no counters"
									: strerror(-c->stats_err));
		return;
	}
	for (i = 0; i < c->stats.n; i++) {
		if (!lr_ethtool_stat_queue(c->stats.names[i], NULL, NULL, NULL))
			continue;
		fprintf(out, "  %-32s %llu\n", c->stats.names[i], (unsigned long long)c->stats.values[i]);
		any = true;
	}
	if (!any)
		fprintf(out, "  none named rx_queue_N_* or tx_queue_N_*\n");
}

static struct json_object *json_cap(const struct lr_cap *cap)
{
	struct json_object *j = json_object_new_object();
	const char *name = cap->err ? strerrorname_np(-cap->err) : NULL;

	json_object_object_add(j, "state", json_object_new_string(lr_cap_state_name(cap->state)));
	json_object_object_add(j, "detail", json_object_new_string(cap->detail));
	json_object_object_add(j, "error", name ? json_object_new_string(name) : NULL);
	return j;
}

static struct json_object *json_link(const struct probe_ctx *c)
{
	const struct lr_caps *caps = &c->caps;
	const struct lr_if *ifc = &c->ifc;
	struct json_object *j = json_object_new_object(), *ch = NULL;
	char mac[18];

	json_object_object_add(j, "ifindex", json_object_new_int(ifc->ifindex));
	json_object_object_add(j, "driver", json_object_new_string(ifc->driver));
	json_object_object_add(j, "kind", json_object_new_string(caps->link.kind));
	json_object_object_add(j, "physical", json_object_new_boolean(ifc->physical));
	json_object_object_add(j, "admin_up", json_object_new_boolean(ifc->up));
	json_object_object_add(j, "oper_state", json_object_new_string(oper_state(c)));
	json_object_object_add(j, "mtu", json_object_new_int((int)ifc->mtu));
	json_object_object_add(j, "mac", json_object_new_string(mac_str(ifc->mac, mac, sizeof(mac))));
	json_object_object_add(j, "tx_queues", json_object_new_int((int)ifc->tx_queues));
	json_object_object_add(j, "rx_queues", json_object_new_int((int)ifc->rx_queues));
	if (caps->have_channels) {
		ch = json_object_new_object();
		json_object_object_add(ch, "rx", json_object_new_int((int)caps->channels.rx));
		json_object_object_add(ch, "tx", json_object_new_int((int)caps->channels.tx));
		json_object_object_add(ch, "other", json_object_new_int((int)caps->channels.other));
		json_object_object_add(ch, "combined", json_object_new_int((int)caps->channels.combined));
		json_object_object_add(ch, "max_rx", json_object_new_int((int)caps->channels.max_rx));
		json_object_object_add(ch, "max_tx", json_object_new_int((int)caps->channels.max_tx));
		json_object_object_add(ch, "max_other", json_object_new_int((int)caps->channels.max_other));
		json_object_object_add(ch, "max_combined", json_object_new_int((int)caps->channels.max_combined));
	}
	json_object_object_add(j, "channels", ch);
	json_object_object_add(j, "veth_peer_ifindex",
			       caps->veth_peer_ifindex ? json_object_new_int(caps->veth_peer_ifindex) : NULL);
	return j;
}

static struct json_object *json_xdp(const struct lr_caps *caps)
{
	struct json_object *j, *flags;
	unsigned int i;

	if (!caps->have_xdp)
		return NULL;
	j = json_object_new_object();
	flags = json_object_new_array();
	for (i = 0; i < LR_XDP_ACT_COUNT; i++)
		if (caps->xdp.features & (1ULL << i))
			json_object_array_add(flags, json_object_new_string(lr_xdp_act_name(1ULL << i)));
	json_object_object_add(j, "raw", json_object_new_uint64(caps->xdp.features));
	json_object_object_add(j, "flags", flags);
	json_object_object_add(j, "zc_max_segs",
			       caps->xdp.zc_max_segs ? json_object_new_int64(caps->xdp.zc_max_segs) : NULL);
	return j;
}

static struct json_object *json_queue_counters(const struct probe_ctx *c)
{
	struct json_object *arr = json_object_new_array();
	const char *field;
	unsigned int i, q;
	bool tx;

	for (i = 0; i < c->stats.n; i++) {
		struct json_object *e;

		if (!lr_ethtool_stat_queue(c->stats.names[i], &q, &tx, &field))
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "name", json_object_new_string(c->stats.names[i]));
		json_object_object_add(e, "queue", json_object_new_int64(q));
		json_object_object_add(e, "direction", json_object_new_string(tx ? "tx" : "rx"));
		json_object_object_add(e, "field", json_object_new_string(field));
		json_object_object_add(e, "value", json_object_new_uint64(c->stats.values[i]));
		json_object_array_add(arr, e);
	}
	return arr;
}

static int write_json(const struct probe_ctx *c)
{
	struct json_object *root, *caps;
	char err[LR_PATH_MAX + 128];
	unsigned int i;
	int ret;

	root = lr_json_doc("probe");
	json_object_object_add(root, "interface", json_object_new_string(c->ifc.name));
	json_object_object_add(root, "kernel", json_object_new_string(c->caps.kernel));
	json_object_object_add(root, "link", json_link(c));
	json_object_object_add(root, "xdp_features", json_xdp(&c->caps));
	caps = json_object_new_object();
	for (i = 0; i < LR_CAP_COUNT; i++)
		json_object_object_add(caps, lr_cap_key(i), json_cap(&c->caps.cap[i]));
	json_object_object_add(root, "capabilities", caps);
	json_object_object_add(root, "queue_counters", json_queue_counters(c));
	ret = lr_json_write(root, c->o->json, err, sizeof(err));
	json_object_put(root);
	if (ret)
		return lr_fail(LR_EXIT_RUNTIME, "probe", "%s", err);
	return LR_EXIT_OK;
}

/* Runs the live program for real on one frame it drops: nothing is sent. sys cannot, being below tx. */
static void probe_live(struct probe_ctx *c)
{
	char why[200];
	int ret;

	ret = lr_live_try(c->ifc.ifindex, why, sizeof(why));
	lr_caps_set_live(&c->caps, ret, why);
}

int lr_cmd_probe(const struct lr_probe_opts *o)
{
	struct probe_ctx c = { .o = o };
	char err[LR_PATH_MAX + 128];
	int ret;

	lr_log_set_level(o->verbose);
	lr_log_hook_libs();
	/* First: the interface, /sys and every socket below belong to the namespace. */
	if (o->netns[0] && lr_netns_enter(o->netns, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "probe", "%s", err);
	if (o->json[0] && lr_json_check_path(o->json, err, sizeof(err)))
		return lr_fail(LR_EXIT_USAGE, "probe", "%s", err);
	/* A link that is down is still worth probing: its state is one of the findings. */
	ret = lr_if_open(o->ifname, &c.ifc, err, sizeof(err));
	if (ret && ret != -ENETDOWN)
		return lr_fail(LR_EXIT_USAGE, "probe", "%s", err);

	lr_caps_probe(&c.ifc, &c.caps);
	probe_live(&c);
	c.stats_err = lr_if_ethtool_stats(c.ifc.name, &c.stats);
	if (c.stats_err)
		pr_debug("%s: ethtool stats: %s\n", c.ifc.name, strerror(-c.stats_err));

	/* With JSON on stdout the table would corrupt it; with JSON in a file both are wanted. */
	if (strcmp(o->json, "-"))
		print_table(&c, stdout);
	ret = o->json[0] ? write_json(&c) : LR_EXIT_OK;
	lr_ethtool_stats_free(&c.stats);
	return ret;
}
