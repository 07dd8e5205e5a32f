/* SPDX-License-Identifier: MIT */
/* Host facts for hello: names, boot id, clock namespace, and the served namespace's interfaces. */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/utsname.h>
#include "ctl/host.h"
#include "sys/netdev.h"
#include "util/clock.h"
#include "util/jfield.h"

#define BOOT_ID_FILE	"/proc/sys/kernel/random/boot_id"

int lr_host_boot_id_parse(const char *text, char out[LR_BOOT_ID_LEN + 1])
{
	size_t i;

	for (i = 0; i < LR_BOOT_ID_LEN; i++) {
		char c = text[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -EINVAL;
	}
	if (text[i] != '\n' || text[i + 1])
		return -EINVAL;
	memcpy(out, text, LR_BOOT_ID_LEN);
	out[LR_BOOT_ID_LEN] = '\0';
	return 0;
}

int lr_host_boot_id(char out[LR_BOOT_ID_LEN + 1])
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(BOOT_ID_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return lr_host_boot_id_parse(buf, out);
}

/* The slot of @name in @h, made when new; NULL when the list is full. */
static struct lr_host_if *if_slot(struct lr_host *h, const char *name)
{
	struct lr_host_if *i;
	unsigned int k;

	for (k = 0; k < h->nifs; k++)
		if (!strcmp(h->ifs[k].name, name))
			return &h->ifs[k];
	if (h->nifs == LR_HOST_MAX_IFS)
		return NULL;
	i = &h->ifs[h->nifs++];
	snprintf(i->name, sizeof(i->name), "%s", name);
	return i;
}

/* Prefix length of a netmask. */
static unsigned int prefix_len(const struct sockaddr *mask)
{
	const unsigned char *b;
	unsigned int n = 0, len, k;

	if (!mask)
		return 0;
	if (mask->sa_family == AF_INET) {
		b = (const unsigned char *)&((const struct sockaddr_in *)(const void *)mask)->sin_addr;
		len = 4;
	} else {
		b = (const unsigned char *)&((const struct sockaddr_in6 *)(const void *)mask)->sin6_addr;
		len = 16;
	}
	for (k = 0; k < len; k++)
		n += (unsigned int)__builtin_popcount(b[k]);
	return n;
}

/* The address of @sa (AF_INET or AF_INET6) as text: 0, or -EAFNOSUPPORT. */
static int addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *a;

	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return -EAFNOSUPPORT;
	a = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr :
				       (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	return inet_ntop(sa->sa_family, a, buf, (socklen_t)len) ? 0 : -EINVAL;
}

static int read_ifaces(struct lr_host *h)
{
	struct ifaddrs *all, *a;
	char text[INET6_ADDRSTRLEN];
	unsigned int k;

	if (getifaddrs(&all))
		return -errno;
	for (a = all; a; a = a->ifa_next) {
		struct lr_host_if *i = if_slot(h, a->ifa_name);

		if (!i || addr_text(a->ifa_addr, text, sizeof(text)) || i->naddrs == LR_HOST_MAX_ADDRS)
			continue;
		snprintf(i->addrs[i->naddrs++], LR_HOST_ADDR_LEN, "%s/%u", text, prefix_len(a->ifa_netmask));
	}
	freeifaddrs(all);
	for (k = 0; k < h->nifs; k++) {
		struct lr_host_if *i = &h->ifs[k];
		struct lr_if_link l;
		char path[64 + IF_NAMESIZE];
		int idx = (int)if_nametoindex(i->name);

		if (idx && !lr_if_link_query(idx, -1, &l))
			snprintf(i->kind, sizeof(i->kind), "%s", l.kind);
		/* as lr_if_open() tells: a device behind the interface in sysfs (of this namespace) */
		snprintf(path, sizeof(path), "/sys/class/net/%s/device", i->name);
		i->physical = !access(path, F_OK);
	}
	return 0;
}

int lr_host_read(struct lr_host *h)
{
	struct utsname u;
	long cpus;
	int ret;

	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1))
		snprintf(h->hostname, sizeof(h->hostname), "unknown");
	if (!uname(&u))
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	h->cpus = cpus > 0 ? (unsigned int)cpus : 1;
	h->timens_monotonic_ns = lr_timens_offset_ns();
	ret = lr_host_boot_id(h->boot_id);
	if (ret)
		return ret;
	return read_ifaces(h);
}

/* ---- the JSON of the facts ---------------------------------------------------------------------- */

static struct json_object *addrs_put(const struct lr_jfield *f, const void *base)
{
	const struct lr_host_if *i = base;
	struct json_object *a = json_object_new_array();
	unsigned int k;

	(void)f;
	for (k = 0; k < i->naddrs; k++)
		json_object_array_add(a, json_object_new_string(i->addrs[k]));
	return a;
}

/* "198.18.0.1/24", "fd00::1/64": an address and a prefix length that fits its family. */
static bool addr_ok(const char *s)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	struct in6_addr a;
	char *end;
	unsigned long plen;
	int family;

	if (!slash || (size_t)(slash - s) >= sizeof(host) || !slash[1])
		return false;
	memcpy(host, s, (size_t)(slash - s));
	host[slash - s] = '\0';
	family = strchr(host, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, host, &a) != 1 || slash[1] < '0' || slash[1] > '9')
		return false;
	plen = strtoul(slash + 1, &end, 10);
	return !*end && plen <= (family == AF_INET ? 32UL : 128UL);
}

static int addrs_get(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	struct lr_host_if *i = base;
	size_t k, n;

	if (!json_object_is_type(v, json_type_array)) {
		snprintf(err, errlen, "%s: expected an array", path);
		return -EINVAL;
	}
	n = json_object_array_length(v);
	if (n > LR_HOST_MAX_ADDRS) {
		snprintf(err, errlen, "%s: %zu entries, at most %d", path, n, LR_HOST_MAX_ADDRS);
		return -EINVAL;
	}
	for (k = 0; k < n; k++) {
		struct json_object *e = json_object_array_get_idx(v, k);
		const char *s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;

		if (!s || strlen(s) >= LR_HOST_ADDR_LEN || !addr_ok(s)) {
			snprintf(err, errlen, "%s[%zu]: not an address with a prefix length (\"198.18.0.1/24\")", path, k);
			return -EINVAL;
		}
		snprintf(i->addrs[k], LR_HOST_ADDR_LEN, "%s", s);
	}
	i->naddrs = (unsigned int)n;
	return 0;
}

#define F(k, t, type, m)	{ k, t, offsetof(type, m) }
#define S(k, type, m)		{ k, LR_J_STR, offsetof(type, m), .size = sizeof(((type *)0)->m) }

static const struct lr_jfield if_fields[] = {
	{ "name", LR_J_STR, offsetof(struct lr_host_if, name), .size = IF_NAMESIZE, .min = 1 },
	S("kind", struct lr_host_if, kind),
	F("physical", LR_J_BOOL, struct lr_host_if, physical),
	{ "addresses", LR_J_CUSTOM, .put = addrs_put, .get = addrs_get },
	{ NULL }
};

static int boot_id_get(struct json_object *v, void *base, const char *path, char *err, size_t errlen)
{
	struct lr_host *h = base;
	char text[LR_BOOT_ID_LEN + 2];

	if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) != LR_BOOT_ID_LEN) {
		snprintf(err, errlen, "%s: not a boot id (36 characters, 8-4-4-4-12 hex digits)", path);
		return -EINVAL;
	}
	snprintf(text, sizeof(text), "%s\n", json_object_get_string(v));
	if (lr_host_boot_id_parse(text, h->boot_id)) {
		snprintf(err, errlen, "%s: not a boot id (36 characters, 8-4-4-4-12 hex digits)", path);
		return -EINVAL;
	}
	return 0;
}

static struct json_object *boot_id_put(const struct lr_jfield *f, const void *base)
{
	(void)f;
	return json_object_new_string(((const struct lr_host *)base)->boot_id);
}

static const struct lr_jfield host_fields[] = {
	{ "hostname", LR_J_STR, offsetof(struct lr_host, hostname), .size = sizeof(((struct lr_host *)0)->hostname),
	  .min = 1 },
	{ "boot_id", LR_J_CUSTOM, .put = boot_id_put, .get = boot_id_get },
	S("kernel", struct lr_host, kernel),
	{ "cpus", LR_J_UINT, offsetof(struct lr_host, cpus), .min = 1, .max = 1U << 20 },
	F("timens_monotonic_ns", LR_J_I64, struct lr_host, timens_monotonic_ns),
	{ "interfaces", LR_J_ARRAY, offsetof(struct lr_host, ifs), offsetof(struct lr_host, nifs),
	  sizeof(struct lr_host_if), .max = LR_HOST_MAX_IFS, .sub = if_fields },
	{ NULL }
};

static const struct lr_jfield host_field = { "host", LR_J_OBJ, 0, .sub = host_fields };

void lr_host_put(struct json_object *parent, const struct lr_host *h)
{
	json_object_object_add(parent, "host", lr_jfield_put_value(&host_field, h));
}

int lr_host_get(struct json_object *parent, struct lr_host *h, char *err, size_t errlen)
{
	struct json_object *v;

	memset(h, 0, sizeof(*h));
	if (!json_object_object_get_ex(parent, "host", &v)) {
		snprintf(err, errlen, "host: missing");
		return -EINVAL;
	}
	return lr_jfield_get_value(&host_field, v, h, "host", err, errlen);
}

int lr_host_iface_of(const char *address, char ifname[IF_NAMESIZE], char *err, size_t errlen)
{
	struct ifaddrs *all, *a;
	struct in6_addr want;
	char text[INET6_ADDRSTRLEN];
	int family = strchr(address, ':') ? AF_INET6 : AF_INET, ret = -ENOENT;

	if (inet_pton(family, address, &want) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", address);
		return -EINVAL;
	}
	/* compared as text of the canonical form: "fd00:0::1" and "fd00::1" are one address */
	inet_ntop(family, &want, text, sizeof(text));
	if (getifaddrs(&all)) {
		ret = -errno;
		snprintf(err, errlen, "cannot list this namespace's addresses: %s", strerror(-ret));
		return ret;
	}
	for (a = all; a && ret; a = a->ifa_next) {
		char have[INET6_ADDRSTRLEN];

		if (a->ifa_addr && a->ifa_addr->sa_family == family && !addr_text(a->ifa_addr, have, sizeof(have)) &&
		    !strcmp(have, text)) {
			snprintf(ifname, IF_NAMESIZE, "%s", a->ifa_name);
			ret = 0;
		}
	}
	freeifaddrs(all);
	if (ret)
		snprintf(err, errlen, "no interface holds %s in this network namespace", text);
	return ret;
}
