/* SPDX-License-Identifier: MIT */
/* ethtool ioctls: the driver's name, its counters (ETH_SS_STATS), its channel counts and its GRO switch. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "sys/netdev.h"
#include "util/log.h"

/* More counters than any driver has; a larger count is a corrupt answer, not an allocation to make. */
#define ETHTOOL_STATS_MAX	65536

/* SIOCETHTOOL with @data, on a socket of its own; 0 or -errno. */
static int ethtool_ioctl(const char *ifname, void *data)
{
	struct ifreq ifr = { 0 };
	size_t len = strlen(ifname);
	int fd, err = 0;

	if (!len || len >= IFNAMSIZ)
		return -EINVAL;
	memcpy(ifr.ifr_name, ifname, len + 1);
	ifr.ifr_data = data;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

int lr_if_driver(const char *ifname, char *drv, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	int err;

	if (!len)
		return -EINVAL;
	drv[0] = '\0';
	err = ethtool_ioctl(ifname, &info);
	if (err)
		pr_debug("%s: ETHTOOL_GDRVINFO: %s; driver unknown\n", ifname, strerror(-err));
	else
		snprintf(drv, len, "%.*s", (int)strnlen(info.driver, sizeof(info.driver)), info.driver);
	return err;
}

int lr_if_ethtool_stats(const char *ifname, struct lr_ethtool_stats *out)
{
	/* the header and room for the one count it returns (its data[] is a flexible array) */
	union {
		struct ethtool_sset_info hdr;
		uint8_t raw[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)];
	} sset = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_STATS } };
	struct ethtool_gstrings *gs = NULL;
	struct ethtool_stats *st = NULL;
	unsigned int n, i;
	int err;

	memset(out, 0, sizeof(*out));
	err = ethtool_ioctl(ifname, &sset);
	if (err)
		goto out;
	/* The kernel clears the bit of every set the driver does not have. */
	if (!(sset.hdr.sset_mask & (1ULL << ETH_SS_STATS)) || !sset.hdr.data[0]) {
		err = -EOPNOTSUPP;
		goto out;
	}
	n = sset.hdr.data[0];
	if (n > ETHTOOL_STATS_MAX) {
		err = -E2BIG;
		goto out;
	}
	gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	st = calloc(1, sizeof(*st) + (size_t)n * sizeof(uint64_t));
	out->names = calloc(n, sizeof(*out->names));
	out->values = calloc(n, sizeof(*out->values));
	if (!gs || !st || !out->names || !out->values) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * The kernel asks the driver for the count again on each call and writes
	 * that many entries; like ethtool(8) we rely on it not growing between
	 * calls (it changes only with the channel count), and refuse a mismatch.
	 */
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	err = ethtool_ioctl(ifname, gs);
	if (err)
		goto out;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = n;
	err = ethtool_ioctl(ifname, st);
	if (err)
		goto out;
	if (gs->len != n || st->n_stats != n) {
		err = -EAGAIN;
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* A name may fill all ETH_GSTRING_LEN bytes without a NUL; ours have room for one. */
		memcpy(out->names[i], gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		out->names[i][ETH_GSTRING_LEN] = '\0';
		out->values[i] = st->data[i];
	}
	out->n = n;
out:
	if (err)
		lr_ethtool_stats_free(out);
	free(gs);
	free(st);
	return err;
}

void lr_ethtool_stats_free(struct lr_ethtool_stats *s)
{
	free(s->names);
	free(s->values);
	memset(s, 0, sizeof(*s));
}

int lr_ethtool_stats_find(const struct lr_ethtool_stats *s, const char *name, uint64_t *out)
{
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		if (!strcmp(s->names[i], name)) {
			*out = s->values[i];
			return 0;
		}
	}
	return -ENOENT;
}

int lr_ethtool_stats_findq(const struct lr_ethtool_stats *s, const char *fmt, unsigned int queue, uint64_t *out)
{
	char name[LR_ETHTOOL_NAME_LEN];
	int n;

	n = snprintf(name, sizeof(name), fmt, queue);
	if (n < 0 || (size_t)n >= sizeof(name))
		return -ENOENT;
	return lr_ethtool_stats_find(s, name, out);
}

bool lr_ethtool_stat_queue(const char *name, unsigned int *queue, bool *tx, const char **field)
{
	static const char rx_prefix[] = "rx_queue_", tx_prefix[] = "tx_queue_";
	const size_t plen = sizeof(rx_prefix) - 1;
	unsigned long q;
	bool is_tx;
	char *end;

	if (!strncmp(name, rx_prefix, plen))
		is_tx = false;
	else if (!strncmp(name, tx_prefix, plen))
		is_tx = true;
	else
		return false;
	if (!isdigit((unsigned char)name[plen]))
		return false;
	errno = 0;
	q = strtoul(name + plen, &end, 10);
	if (errno || q > UINT_MAX || *end != '_' || !end[1])
		return false;
	if (queue)
		*queue = (unsigned int)q;
	if (tx)
		*tx = is_tx;
	if (field)
		*field = end + 1;
	return true;
}

int lr_if_channels(const char *ifname, struct lr_if_channels *out)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int err;

	memset(out, 0, sizeof(*out));
	err = ethtool_ioctl(ifname, &ch);
	if (err)
		return err;
	out->max_rx = ch.max_rx;
	out->max_tx = ch.max_tx;
	out->max_other = ch.max_other;
	out->max_combined = ch.max_combined;
	out->rx = ch.rx_count;
	out->tx = ch.tx_count;
	out->other = ch.other_count;
	out->combined = ch.combined_count;
	return 0;
}

int lr_if_gro(const char *ifname, bool *on)
{
	struct ethtool_value v = { .cmd = ETHTOOL_GGRO };
	int err;

	err = ethtool_ioctl(ifname, &v);
	if (!err)
		*on = v.data != 0;
	return err;
}

int lr_if_set_gro(const char *ifname, bool on)
{
	struct ethtool_value v = { .cmd = ETHTOOL_SGRO, .data = on };
	bool now = !on;
	int err;

	err = ethtool_ioctl(ifname, &v);
	/* a feature the device cannot change is refused quietly: the kernel keeps the old value */
	if (!err)
		err = lr_if_gro(ifname, &now);
	if (!err && now != on)
		err = -EOPNOTSUPP;
	return err;
}
