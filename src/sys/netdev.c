/* SPDX-License-Identifier: MIT */
/* Interface facts from ioctl and sysfs: index, MTU, queues, addresses, counters, presence. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sys/netdev.h"
#include "util/log.h"

#define SYSFS_NET "/sys/class/net"

static void count_queues(const char *name, unsigned int *tx, unsigned int *rx)
{
	char path[128];
	struct dirent *de;
	DIR *dir;

	*tx = 0;
	*rx = 0;
	snprintf(path, sizeof(path), SYSFS_NET "/%s/queues", name);
	dir = opendir(path);
	if (!dir) {
		pr_debug("%s: cannot list %s: %s; assuming one queue each way\n", name, path,
			 strerror(errno));
	} else {
		while ((de = readdir(dir))) {
			if (!strncmp(de->d_name, "tx-", 3))
				(*tx)++;
			else if (!strncmp(de->d_name, "rx-", 3))
				(*rx)++;
		}
		closedir(dir);
	}
	if (!*tx)
		*tx = 1;
	if (!*rx)
		*rx = 1;
}

int lr_if_open(const char *name, struct lr_if *ifc, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	size_t len;
	int fd = -1, ret = 0;
	char path[128];

	memset(ifc, 0, sizeof(*ifc));
	if (!name || !name[0]) {
		lr_msg(err, errlen, "no interface name given");
		return -EINVAL;
	}
	len = strlen(name);
	if (len >= IFNAMSIZ) {
		lr_msg(err, errlen, "interface name '%s' is too long (at most %d characters)",
			name, IFNAMSIZ - 1);
		return -EINVAL;
	}
	memcpy(ifc->name, name, len + 1);

	ifc->ifindex = if_nametoindex(name);
	if (!ifc->ifindex) {
		ret = -errno;
		if (ret == -ENODEV || ret == -ENXIO || !ret) {
			lr_msg(err, errlen, "interface '%s' not found", name);
			return -ENODEV;
		}
		lr_msg(err, errlen, "cannot look up interface '%s': %s", name, strerror(-ret));
		return ret;
	}

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot open a socket to query interface '%s': %s", name,
			strerror(-ret));
		goto out;
	}
	memcpy(ifr.ifr_name, name, len + 1);

	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		ret = -errno;
		if (ret == -ENODEV)
			lr_msg(err, errlen, "interface '%s' not found", name);
		else
			lr_msg(err, errlen, "cannot read flags of interface '%s': %s", name,
				strerror(-ret));
		goto out;
	}
	ifc->up = ifr.ifr_flags & IFF_UP;

	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot read MTU of interface '%s': %s", name, strerror(-ret));
		goto out;
	}
	ifc->mtu = ifr.ifr_mtu;

	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot read MAC address of interface '%s': %s", name,
			strerror(-ret));
		goto out;
	}
	memcpy(ifc->mac, ifr.ifr_hwaddr.sa_data, sizeof(ifc->mac));

	lr_if_driver(name, ifc->driver, sizeof(ifc->driver));
	count_queues(name, &ifc->tx_queues, &ifc->rx_queues);
	snprintf(path, sizeof(path), SYSFS_NET "/%s/device", name);
	ifc->physical = !access(path, F_OK);

	pr_debug("%s: ifindex %d mtu %u queues tx %u rx %u driver '%s'%s\n", name, ifc->ifindex,
		 ifc->mtu, ifc->tx_queues, ifc->rx_queues, ifc->driver,
		 ifc->physical ? " physical" : "");

	/* Checked last so a caller that wants to explain the refusal has the facts. */
	if (!ifc->up) {
		lr_msg(err, errlen, "interface '%s' is down", name);
		ret = -ENETDOWN;
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int lr_if_addr(const struct lr_if *ifc, int family, struct in6_addr *out)
{
	const struct in6_addr *fallback = NULL, *best = NULL;
	struct ifaddrs *ifa, *list;
	size_t nlen = strlen(ifc->name);
	int err = 0;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (getifaddrs(&list) < 0)
		return -errno;

	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		/* IPv4 addresses with a label show up under "name:label". */
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family ||
		    strncmp(ifa->ifa_name, ifc->name, nlen) ||
		    (ifa->ifa_name[nlen] && ifa->ifa_name[nlen] != ':'))
			continue;
		if (family == AF_INET) {
			const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;

			memset(out, 0, sizeof(*out));
			memcpy(out->s6_addr, &sin->sin_addr, 4);
			goto out;
		}
		best = &((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;
		if (!IN6_IS_ADDR_LINKLOCAL(best))
			break;
		if (!fallback)
			fallback = best;
		best = NULL;
	}
	if (!best)
		best = fallback;
	if (best)
		*out = *best;
	else
		err = -ENOENT;
out:
	freeifaddrs(list);
	return err;
}

int lr_if_stat(const char *ifname, const char *counter, uint64_t *out)
{
	char path[256], buf[32], *end;
	unsigned long long v;
	int fd, n, err = 0;
	ssize_t len;

	/* Both end up in a path; refuse anything that could walk out of the directory. */
	if (!ifname[0] || !counter[0] || strchr(ifname, '/') || strchr(counter, '/') ||
	    !strcmp(ifname, "..") || !strcmp(counter, ".."))
		return -EINVAL;
	n = snprintf(path, sizeof(path), SYSFS_NET "/%s/statistics/%s", ifname, counter);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0) {
		err = -errno;
		goto out;
	}
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n')) {
		err = -EINVAL;
		goto out;
	}
	*out = v;
out:
	close(fd);
	return err;
}

bool lr_if_present(const struct lr_if *ifc)
{
	char name[IF_NAMESIZE];

	/* by index: a rename is not a disappearance; ENXIO (and only that) says it is gone */
	return if_indextoname((unsigned int)ifc->ifindex, name) || errno != ENXIO;
}
