/* SPDX-License-Identifier: MIT */
/*
 * Requests as messages. A prepare request holds a command's options, each under a key, as JSON of
 * the option's kind; parsing hands each value to the option table through the option set of a
 * sender, a receiver or a reflector: strings as the option's own text (lr_opt_set()), numbers and
 * lists typed (lr_opt_set_uint(), lr_opt_set_ids()): the same bounds and the same messages.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "ctl/msg.h"
#include "ctl/request.h"
#include "opt/optset.h"
#include "tx/rate.h"
#include "util/jfield.h"
#include "util/version.h"

#define TEXT_MAX	1024	/* the longest string value: far more than any option takes */
#define IDS_MAX		256	/* the longest list of numbers: far more than any option takes */

/* One option of a prepare request. */
struct optkey {
	const char *key;
	enum lr_opt_id id;
	/* its empty value ("", 0, []) says "not given": the command's default rule, as on the CLI */
	bool optional;
};

static const struct optkey rx_keys[] = {
	{ "interface", LR_O_RX_IFACE, true },	/* or address */
	{ "netns", LR_O_NETNS, true },
	{ "engine", LR_O_RX_ENGINE },
	{ "xdp_mode", LR_O_XDP_MODE },
	{ "workers", LR_O_WORKERS },
	{ "dst_port", LR_O_DST_PORT },
	{ "pcap", LR_O_RX_PCAP, true },
	{ "pcap_every", LR_O_RX_PCAP_EVERY },
	{ "snaplen", LR_O_SNAPLEN },
	{ "prog_stats", LR_O_PROG_STATS, true },
	{ NULL }
};

static const struct optkey tx_keys[] = {
	{ "interface", LR_O_TX_IFACE, true },	/* or address */
	{ "netns", LR_O_NETNS, true },
	{ "engine", LR_O_TX_ENGINE },
	{ "xdp_mode", LR_O_XSK_MODE },
	{ "queues", LR_O_QUEUES },
	{ "cpus", LR_O_CPUS, true },
	{ "size", LR_O_SIZE },
	{ "flows", LR_O_FLOWS },
	{ "rate", LR_O_RATE },
	{ "count", LR_O_COUNT, true },
	{ "duration_ns", LR_O_TX_DURATION, true },
	{ "src_ip", LR_O_SRC_IP, true },
	{ "dst_ip", LR_O_DST_IP },
	{ "src_mac", LR_O_SRC_MAC, true },
	{ "dst_mac", LR_O_DST_MAC, true },
	{ "src_port", LR_O_SRC_PORT, true },
	{ "dst_port", LR_O_DST_PORT },
	{ "batch", LR_O_BATCH },
	{ "latency_every", LR_O_LATENCY_EVERY, true },
	{ "prepare_peer", LR_O_PREPARE_PEER, true },	/* version 5 */
	{ NULL }
};

static const struct optkey reflect_keys[] = {
	{ "interface", LR_O_REFLECT_IFACE, true },	/* or address */
	{ "netns", LR_O_NETNS, true },
	{ "dst_port", LR_O_DST_PORT },
	{ "xdp_mode", LR_O_REFLECT_MODE },
	{ NULL }
};

void lr_ctl_spell_tx(const char *key, char *out, size_t len)
{
	const struct optkey *k;
	char name[64];
	size_t n;

	for (n = 0; key[n] && n + 1 < sizeof(name); n++)
		name[n] = key[n] == '_' ? '-' : key[n];
	name[n] = '\0';
	/* the request's key of the option the core named: prepare_tx.duration_ns for {duration} */
	for (k = tx_keys; k->key; k++)
		if (lr_opts[k->id].name && !strcmp(lr_opts[k->id].name, name)) {
			snprintf(out, len, "prepare_tx.%s", k->key);
			return;
		}
	snprintf(out, len, "prepare_tx.%s", key);
}

/* The keys a prepare request has beside its options. */
struct extras {
	char address[LR_CTL_ADDR_TEXT];
	int64_t clock_offset_ns;
	bool route;	/* prepare_tx: the interface the route to dst_ip leaves by */
};

static const struct lr_jfield rx_extra_fields[] = {
	{ "address", LR_J_STR, offsetof(struct extras, address), .size = LR_CTL_ADDR_TEXT },
	{ "clock_offset_ns", LR_J_I64, offsetof(struct extras, clock_offset_ns) },
	{ NULL }
};

static const struct lr_jfield tx_extra_fields[] = {
	{ "address", LR_J_STR, offsetof(struct extras, address), .size = LR_CTL_ADDR_TEXT },
	{ "route", LR_J_BOOL, offsetof(struct extras, route) },
	{ NULL }
};

static const struct lr_jfield reflect_extra_fields[] = {
	{ "address", LR_J_STR, offsetof(struct extras, address), .size = LR_CTL_ADDR_TEXT },
	{ NULL }
};

static const void *field(const struct lr_bind *b, const void *base)
{
	return (const char *)base + b->off;
}

/* The given flag of @b, or true when it has none: an address or a MAC not given holds nothing to send. */
static bool given(const struct lr_bind *b, const void *base)
{
	return !b->given || *(const bool *)((const char *)base + b->given - 1);
}

static uint64_t load_uint(const void *f, unsigned int size)
{
	switch (size) {
	case 1:
		return *(const uint8_t *)f;
	case 2:
		return *(const uint16_t *)f;
	case 4:
		return *(const uint32_t *)f;
	default:
		return *(const uint64_t *)f;
	}
}

/* The option's value in @base as JSON of its kind; an address or a MAC not given is "". */
static struct json_object *opt_put(const struct lr_bind *b, const void *base)
{
	const struct lr_kind *k = lr_opts[b->id].kind;
	const void *f = field(b, base);
	const struct lr_rate *rate = f;
	const uint8_t *mac = f;
	struct json_object *a;
	char text[64];
	unsigned int i, n;

	switch (k->type) {
	case LR_T_STRING:
	case LR_T_IFNAME:
	case LR_T_NETNS:
		return json_object_new_string(f);
	case LR_T_IP:
		if (!given(b, base) || !inet_ntop(*(const int *)((const char *)base + b->aux - 1), f, text, sizeof(text)))
			text[0] = '\0';
		return json_object_new_string(text);
	case LR_T_MAC:
		text[0] = '\0';
		if (given(b, base))
			snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
				 mac[4], mac[5]);
		return json_object_new_string(text);
	case LR_T_RATE:
		snprintf(text, sizeof(text), rate->kind == LR_RATE_MAX ? "max" :
					     rate->kind == LR_RATE_PPS ? "%llupps" : "%llubit",
			 (unsigned long long)rate->value);
		return json_object_new_string(text);
	case LR_T_CHOICE:
		return json_object_new_string(k->choices[load_uint(f, b->size)].name);
	case LR_T_COUNT:
	case LR_T_DURATION:
		return json_object_new_int64((int64_t)load_uint(f, b->size));
	case LR_T_IDLIST:
		a = json_object_new_array();
		n = *(const unsigned int *)((const char *)base + b->aux - 1);
		for (i = 0; i < n; i++)
			json_object_array_add(a, json_object_new_int64(((const unsigned int *)f)[i]));
		return a;
	case LR_T_FLAG:
		return json_object_new_boolean(*(const bool *)f);
	default:
		return NULL;
	}
}

static struct json_object *opts_put(struct json_object *m, const struct lr_optset *set, const struct optkey *keys,
				    const void *base)
{
	for (; keys->key; keys++)
		json_object_object_add(m, keys->key, opt_put(lr_optset_bind(set, keys->id), base));
	return m;
}

static int wrong(const char *path, const char *want, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: expected %s", path, want);
	return -EINVAL;
}

/* An unsigned integer of @v. */
static int uint_of(struct json_object *v, const char *path, uint64_t *x, char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return wrong(path, "an unsigned integer", err, errlen);
	*x = json_object_get_uint64(v);
	return 0;
}

/*
 * @v, of the JSON type the option's kind takes, into the field @b names in @base through the
 * option table: strings as the option's own text, numbers, lists and flags typed. The empty value
 * ("", 0, [], false) of an @optional key leaves the default. 0, or -EINVAL with "PATH: why".
 */
static int opt_get(const struct lr_bind *b, bool optional, struct json_object *v, const char *path, void *base,
		   char *err, size_t errlen)
{
	uint64_t ids[IDS_MAX], x;
	size_t i, n;

	switch (lr_opts[b->id].kind->type) {
	case LR_T_STRING:
	case LR_T_IFNAME:
	case LR_T_NETNS:
	case LR_T_IP:
	case LR_T_MAC:
	case LR_T_RATE:
	case LR_T_CHOICE:
		if (!json_object_is_type(v, json_type_string))
			return wrong(path, "a string", err, errlen);
		if ((size_t)json_object_get_string_len(v) >= TEXT_MAX ||
		    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v)) {
			snprintf(err, errlen, "%s: too long, or holds a NUL character", path);
			return -EINVAL;
		}
		if (optional && !json_object_get_string_len(v))
			return 0;
		return lr_opt_set(b, base, path, json_object_get_string(v), err, errlen);
	case LR_T_COUNT:
	case LR_T_DURATION:
		if (uint_of(v, path, &x, err, errlen))
			return -EINVAL;
		if (optional && !x)
			return 0;
		return lr_opt_set_uint(b, base, path, x, err, errlen);
	case LR_T_IDLIST:
		if (!json_object_is_type(v, json_type_array))
			return wrong(path, "an array of unsigned integers", err, errlen);
		n = json_object_array_length(v);
		for (i = 0; i < n && i < IDS_MAX; i++)
			if (uint_of(json_object_array_get_idx(v, i), path, &ids[i], err, errlen))
				return -EINVAL;
		if (n > IDS_MAX) {
			snprintf(err, errlen, "%s: %zu entries, far more than any command takes", path, n);
			return -EINVAL;
		}
		if (optional && !n)
			return 0;
		return lr_opt_set_ids(b, base, path, ids, (unsigned int)n, err, errlen);
	case LR_T_FLAG:
		if (!json_object_is_type(v, json_type_boolean))
			return wrong(path, "true or false", err, errlen);
		if (!json_object_get_boolean(v) && optional)
			return 0;
		return lr_opt_set(b, base, path, NULL, err, errlen);
	default:
		snprintf(err, errlen, "%s: internal: no message form for this option", path);
		return -EINVAL;
	}
}

/* Each option of @keys from @msg through the option table into @base; then the extras; no other key. */
static int opts_get(struct json_object *msg, const struct lr_optset *set, const struct optkey *keys,
		    const struct lr_jfield *extra_fields, struct extras *extras, void *base, char *err, size_t errlen)
{
	const char *type = lr_msg_type(msg);
	const struct optkey *k;
	char path[96];
	int ret;

	for (k = keys; k->key; k++) {
		struct json_object *v;

		snprintf(path, sizeof(path), "%s.%s", type, k->key);
		if (!json_object_object_get_ex(msg, k->key, &v)) {
			snprintf(err, errlen, "%s: missing", path);
			return -EINVAL;
		}
		ret = opt_get(lr_optset_bind(set, k->id), k->optional, v, path, base, err, errlen);
		if (ret)
			return ret;
	}
	ret = lr_jfield_get(msg, extra_fields, extras, type, false, err, errlen);
	if (ret)
		return ret;
	json_object_object_foreach(msg, key, val)
	{
		bool known = !strcmp(key, "type") || !strcmp(key, "v") || lr_jfield_named(extra_fields, key);

		(void)val;
		for (k = keys; !known && k->key; k++)
			known = !strcmp(key, k->key);
		if (!known) {
			snprintf(err, errlen, "%s.%.64s: unknown key", type, key);
			return -EINVAL;
		}
	}
	return 0;
}

/* The interface, the address to find it by, or (prepare_tx) the route: exactly one of them. */
static int target_check(const char *type, const char *ifname, const char *address, bool route, char *err,
			size_t errlen)
{
	struct in6_addr a;

	if (!ifname[0] && !address[0] && !route) {
		snprintf(err, errlen, "%s.interface: empty, and no address%s to find the interface by", type,
			 strcmp(type, "prepare_tx") ? "" : " or route");
		return -EINVAL;
	}
	if (address[0] && inet_pton(strchr(address, ':') ? AF_INET6 : AF_INET, address, &a) != 1) {
		snprintf(err, errlen, "%s.address: '%s' is not an IPv4 or IPv6 address", type, address);
		return -EINVAL;
	}
	if (ifname[0] && address[0]) {
		snprintf(err, errlen, "%s.address: give the interface or the address to find it by, not both", type);
		return -EINVAL;
	}
	if (route && (ifname[0] || address[0])) {
		snprintf(err, errlen, "%s.route: true, and %s given too: the interface is found one way only", type,
			 ifname[0] ? "an interface" : "an address");
		return -EINVAL;
	}
	return 0;
}

struct json_object *lr_ctl_prepare_rx_msg(const struct lr_recv_opts *o, const char *address)
{
	struct json_object *m = opts_put(lr_msg_new("prepare_rx"), &lr_recv_optset, rx_keys, o);

	json_object_object_add(m, "address", json_object_new_string(address ? address : ""));
	json_object_object_add(m, "clock_offset_ns", json_object_new_int64(o->rx.clock_offset_ns));
	return m;
}

int lr_ctl_prepare_rx_parse(struct json_object *msg, struct lr_recv_opts *o, char address[LR_CTL_ADDR_TEXT],
			    char *err, size_t errlen)
{
	struct extras x;
	int ret;

	lr_recv_opts_default(o);
	ret = opts_get(msg, &lr_recv_optset, rx_keys, rx_extra_fields, &x, o, err, errlen);
	if (!ret)
		ret = target_check("prepare_rx", o->rx.ifname, x.address, false, err, errlen);
	if (ret)
		return ret;
	o->rx.clock_offset_ns = x.clock_offset_ns;
	/* a message holds every key: none of them is a choice the user made against the engine */
	o->rx.workers_set = o->rx.xdp_mode_set = false;
	memcpy(address, x.address, LR_CTL_ADDR_TEXT);
	return 0;
}

struct json_object *lr_ctl_prepare_tx_msg(const struct lr_send_opts *o, const char *address, bool route)
{
	struct json_object *m = opts_put(lr_msg_new("prepare_tx"), &lr_send_optset, tx_keys, o);

	json_object_object_add(m, "address", json_object_new_string(address ? address : ""));
	json_object_object_add(m, "route", json_object_new_boolean(route));
	return m;
}

int lr_ctl_prepare_tx_parse(struct json_object *msg, struct lr_send_opts *o, char address[LR_CTL_ADDR_TEXT],
			    bool *route, char *err, size_t errlen)
{
	struct extras x;
	size_t n;
	int ret;

	lr_send_opts_default(o);
	ret = opts_get(msg, &lr_send_optset, tx_keys, tx_extra_fields, &x, o, err, errlen);
	if (!ret)
		ret = target_check("prepare_tx", o->tx.ifname, x.address, x.route, err, errlen);
	if (ret)
		return ret;
	/* how the options go together: send's own checks, which also settle the defaults that depend on others */
	n = (size_t)snprintf(err, errlen, "prepare_tx: ");
	ret = lr_send_optset.check(o, err + n, errlen > n ? errlen - n : 0);
	if (ret)
		return ret;
	err[0] = '\0';
	memcpy(address, x.address, LR_CTL_ADDR_TEXT);
	*route = x.route;
	return 0;
}

struct json_object *lr_ctl_prepare_reflect_msg(const struct lr_reflect_opts *o, const char *address)
{
	struct json_object *m = opts_put(lr_msg_new("prepare_reflect"), &lr_reflect_optset, reflect_keys, o);

	json_object_object_add(m, "address", json_object_new_string(address ? address : ""));
	return m;
}

int lr_ctl_prepare_reflect_parse(struct json_object *msg, struct lr_reflect_opts *o,
				 char address[LR_CTL_ADDR_TEXT], char *err, size_t errlen)
{
	struct extras x;
	int ret;

	lr_reflect_opts_default(o);
	ret = opts_get(msg, &lr_reflect_optset, reflect_keys, reflect_extra_fields, &x, o, err, errlen);
	if (!ret)
		ret = target_check("prepare_reflect", o->fx.ifname, x.address, false, err, errlen);
	if (ret)
		return ret;
	/* duration, once, json and ready_file are reflect's alone: their defaults (until the test ends, no file) */
	memcpy(address, x.address, LR_CTL_ADDR_TEXT);
	return 0;
}

/* ---- the small requests ------------------------------------------------------------------------- */

static int nonce_check(const char *type, const char *key, const char *hex, char *err, size_t errlen)
{
	if (lr_auth_hex_ok(hex))
		return 0;
	snprintf(err, errlen, "%s.%s: not %d lower-case hex digits", type, key, LR_AUTH_HEX);
	return -EINVAL;
}

struct json_object *lr_ctl_hello_msg(const char *nonce)
{
	struct json_object *m = lr_msg_new("hello"), *v = json_object_new_object();

	json_object_object_add(v, "release", json_object_new_string(lr_release()));
	json_object_object_add(v, "revision", json_object_new_string(lr_revision()));
	json_object_object_add(m, "version", v);
	json_object_object_add(m, "nonce", json_object_new_string(nonce));
	return m;
}

#define STR(k, type, m)	{ k, LR_J_STR, offsetof(type, m), .size = sizeof(((type *)0)->m) }

static const struct lr_jfield version_fields[] = {
	STR("release", struct lr_ctl_hello_req, release),
	STR("revision", struct lr_ctl_hello_req, revision),
	{ NULL }
};

static const struct lr_jfield hello_fields[] = {
	{ "version", LR_J_OBJ, 0, .sub = version_fields },
	STR("nonce", struct lr_ctl_hello_req, nonce),
	{ NULL }
};

int lr_ctl_hello_parse(struct json_object *msg, struct lr_ctl_hello_req *h, char *err, size_t errlen)
{
	int ret = lr_msg_get(msg, hello_fields, h, err, errlen);

	return ret ? ret : nonce_check("hello", "nonce", h->nonce, err, errlen);
}

static const struct lr_jfield wait_fields[] = {
	{ "timeout_ms", LR_J_UINT, 0, .max = LR_CTL_WAIT_MAX_MS },
	{ NULL }
};

int lr_ctl_wait_parse(struct json_object *msg, unsigned int *timeout_ms, char *err, size_t errlen)
{
	return lr_msg_get(msg, wait_fields, timeout_ms, err, errlen);
}

static const struct lr_jfield start_fields[] = {
	{ "at_ns", LR_J_U64, 0 },
	{ NULL }
};

struct json_object *lr_ctl_start_msg(uint64_t at_ns)
{
	struct json_object *m = lr_msg_new("start");

	lr_jfield_put(m, start_fields, &at_ns);
	return m;
}

int lr_ctl_start_parse(struct json_object *msg, uint64_t *at_ns, char *err, size_t errlen)
{
	return lr_msg_get(msg, start_fields, at_ns, err, errlen);
}

static const struct lr_jfield clock_fields[] = {
	{ "t1", LR_J_U64, 0 },
	{ NULL }
};

int lr_ctl_clock_parse(struct json_object *msg, uint64_t *t1, char *err, size_t errlen)
{
	return lr_msg_get(msg, clock_fields, t1, err, errlen);
}

static const struct lr_jfield auth_fields[] = {
	{ "proof", LR_J_STR, 0, .size = LR_AUTH_HEX + 1 },
	{ NULL }
};

int lr_ctl_auth_parse(struct json_object *msg, char proof[LR_AUTH_HEX + 1], char *err, size_t errlen)
{
	int ret = lr_msg_get(msg, auth_fields, proof, err, errlen);

	return ret ? ret : nonce_check("auth", "proof", proof, err, errlen);
}
