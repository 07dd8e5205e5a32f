/* SPDX-License-Identifier: MIT */
/* Network namespaces: entering one the way `ip netns exec` does (with a /sys that shows it), ids and finding one by id. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* setns(), unshare() */
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include <linux/magic.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "sys/container.h"
#include "sys/netdev.h"
#include "sys/nl.h"
#include "util/log.h"

#define NETNS_RUN_DIR "/run/netns"
#define DOCKER_NETNS_DIR "/run/docker/netns"

/* The namespaces seen so far by a search: each is asked for its id once, however many files name it. */
struct seen {
	size_t n, cap;
	struct seen_ns {
		dev_t dev;
		ino_t ino;
	} *ns;
};


/* NAME, pid:PID, container:NAME or /absolute/path to the file that names the namespace. */
static int netns_path(const char *spec, char *path, size_t len, char *err, size_t errlen)
{
	int n;

	if (lr_container_is_spec(spec)) {
		struct lr_container_spec cs;
		struct lr_container ctr;
		int ret;

		/* Asks docker/podman for the container's PID: a fork and exec, still single-threaded here. */
		ret = lr_container_spec_parse(spec, false, &cs, err, errlen);
		if (!ret)
			ret = lr_container_resolve(cs.name, &ctr, err, errlen);
		if (ret)
			return ret;
		n = snprintf(path, len, "%s", ctr.netns);
	} else if (!strncmp(spec, "pid:", 4)) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(spec + 4, &end, 10);
		if (errno || end == spec + 4 || *end || pid <= 0 || pid > INT_MAX) {
			lr_msg(err, errlen, "network namespace '%s': '%s' is not a process id",
				spec, spec + 4);
			return -EINVAL;
		}
		n = snprintf(path, len, "/proc/%ld/ns/net", pid);
	} else if (spec[0] == '/') {
		n = snprintf(path, len, "%s", spec);
	} else {
		/* A name must stay inside the run directory. */
		if (strchr(spec, '/') || !strcmp(spec, ".") || !strcmp(spec, "..")) {
			lr_msg(err, errlen, "'%s' is not a valid network namespace name", spec);
			return -EINVAL;
		}
		n = snprintf(path, len, NETNS_RUN_DIR "/%s", spec);
	}
	if (n < 0 || (size_t)n >= len) {
		lr_msg(err, errlen, "network namespace name '%.64s...' is too long", spec);
		return -ENAMETOOLONG;
	}
	return 0;
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

static void needs_root(const char *spec, char *err, size_t errlen)
{
	lr_msg(err, errlen, "entering network namespace '%s' needs root (CAP_SYS_ADMIN)", spec);
}

/*
 * setns(CLONE_NEWNET) and unshare(CLONE_NEWNS) change only the calling
 * thread, and unshare(CLONE_NEWNS) fails with EINVAL once threads share the
 * filesystem context. So this must run while the process is still
 * single-threaded: before any worker, reporter or library thread starts.
 * Every thread created later inherits both namespaces.
 *
 * On failure after setns() the process is already in the new network
 * namespace but /sys may still describe the old one; the caller must give up.
 */
int lr_netns_enter(const char *spec, char *err, size_t errlen)
{
	unsigned long sysfs_flags = 0;
	char path[PATH_MAX];
	struct statvfs vfs;
	struct statfs sfs;
	bool had_bpffs;
	int fd, ret;

	if (!spec || !spec[0]) {
		lr_msg(err, errlen, "no network namespace given");
		return -EINVAL;
	}
	ret = netns_path(spec, path, sizeof(path), err, errlen);
	if (ret)
		return ret;

	/*
	 * O_PATH: nothing is opened for reading until the file is known to be a namespace, so a path
	 * naming a device (a watchdog, a tape) or a FIFO is refused below without an open() of it.
	 */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0 && !fstatfs(fd, &sfs) && sfs.f_type == NSFS_MAGIC) {
		char self[64];
		int nfd;

		/* setns() takes no O_PATH handle: the same file again, through the handle, never the path */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		nfd = open(self, O_RDONLY | O_CLOEXEC);
		if (nfd < 0) {
			ret = -errno;
			close(fd);
			fd = -1;
			errno = -ret;
		} else {
			close(fd);
			fd = nfd;
		}
	}
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT || ret == -ESRCH)
			lr_msg(err, errlen, "network namespace '%s' not found", spec);
		else if (ret == -EACCES || ret == -EPERM)
			needs_root(spec, err, errlen);
		else
			lr_msg(err, errlen, "cannot open network namespace '%s' (%s): %s", spec,
				path, strerror(-ret));
		return ret;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != NSFS_MAGIC) {
		lr_msg(err, errlen, "'%s'%s%s%s is not a network namespace (not an nsfs file such as /run/netns/NAME "
		       "or /proc/PID/ns/net)", spec, strcmp(spec, path) ? " (" : "", strcmp(spec, path) ? path : "",
		       strcmp(spec, path) ? ")" : "");
		ret = -EINVAL;
		goto out;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		ret = -errno;
		if (ret == -EPERM)
			needs_root(spec, err, errlen);
		else if (ret == -EINVAL)
			lr_msg(err, errlen, "'%s' (%s) is not a network namespace", spec, path);
		else
			lr_msg(err, errlen, "cannot enter network namespace '%s': %s", spec,
				strerror(-ret));
		goto out;
	}

	/*
	 * sysfs shows the network namespace of whoever mounted it, so /sys must
	 * be mounted again from inside the new one. Do that in a private mount
	 * namespace, slaved so nothing we mount leaks back to the host.
	 */
	had_bpffs = is_bpffs("/sys/fs/bpf");
	if (!statvfs("/sys", &vfs) && (vfs.f_flag & ST_RDONLY))
		sysfs_flags |= MS_RDONLY;

	if (unshare(CLONE_NEWNS) < 0) {
		ret = -errno;
		if (ret == -EPERM)
			needs_root(spec, err, errlen);
		else
			lr_msg(err, errlen, "cannot create a mount namespace for '%s': %s", spec,
				strerror(-ret));
		goto out;
	}
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot make / a slave mount for network namespace '%s': %s",
			spec, strerror(-ret));
		goto out;
	}
	/* Nothing mounted there is fine; a busy one gets the new sysfs on top. */
	if (umount2("/sys", MNT_DETACH) < 0)
		pr_debug("umount /sys: %s; mounting the new sysfs over it\n", strerror(errno));
	if (mount("sysfs", "/sys", "sysfs", sysfs_flags, NULL) < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot mount /sys for network namespace '%s': %s", spec,
			strerror(-ret));
		goto out;
	}
	/* A fresh, empty bpffs: objects pinned outside are not visible here. */
	if (had_bpffs && mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL) < 0)
		pr_debug("mount bpffs on /sys/fs/bpf: %s\n", strerror(errno));

	pr_debug("entered network namespace '%s' (%s)\n", spec, path);
out:
	close(fd);
	return ret;
}

static int nsid_parse_msg(const struct nlmsghdr *m, void *arg)
{
	const struct nlattr *tb[NETNSA_MAX + 1];
	int err;

	err = lr_nl_parse(m, RTM_NEWNSID, sizeof(struct rtgenmsg), tb, MNL_ARRAY_SIZE(tb));
	if (err)
		return err;
	/* An answer without the id says nothing about it. */
	return lr_nl_attr_get(tb[NETNSA_NSID], arg, sizeof(int32_t)) ? -ENOENT : 0;
}

int lr_netns_id(int fd, int *nsid)
{
	struct lr_nl_req req;
	struct rtgenmsg *g;

	g = lr_nl_req_init(&req, RTM_GETNSID, 0, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(&req.nh, NETNSA_FD, (uint32_t)fd);
	return lr_nl_talk(NETLINK_ROUTE, &req, nsid_parse_msg, nsid);
}

/* True when @st's namespace was seen before; else it is added (an allocation failure: seen, so skipped). */
static bool seen_before(struct seen *s, const struct stat *st)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->ns[i].dev == st->st_dev && s->ns[i].ino == st->st_ino)
			return true;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct seen_ns *ns = realloc(s->ns, cap * sizeof(*ns));

		if (!ns)
			return true;
		s->ns = ns;
		s->cap = cap;
	}
	s->ns[s->n++] = (struct seen_ns){ st->st_dev, st->st_ino };
	return false;
}

/* @path when it names a namespace not seen yet whose id is @nsid: its fd, else -1. */
static int try_path(const char *path, int nsid, struct seen *s)
{
	struct stat st;
	int fd, id = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || seen_before(s, &st) || lr_netns_id(fd, &id) || id != nsid) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Every entry of @dir as DIR/ENTRY@suffix (only numeric entries with @numeric); the first that is @nsid. */
static int scan_dir(const char *dir, const char *suffix, bool numeric, int nsid, struct seen *s, char *path,
		    size_t len)
{
	struct dirent *de;
	int fd = -1;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while (fd < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (numeric && !isdigit((unsigned char)de->d_name[0])))
			continue;
		if ((size_t)snprintf(path, len, "%s/%s%s", dir, de->d_name, suffix) >= len)
			continue;
		fd = try_path(path, nsid, s);
	}
	closedir(d);
	return fd;
}

int lr_netns_find(int nsid, int *fd, char *label, size_t len)
{
	struct seen s = { 0 };
	char path[PATH_MAX];
	struct stat self;
	int ret = 0;

	*fd = -1;
	label[0] = '\0';
	/* our own namespace is not the one sought: a peer here has no namespace id */
	if (!stat("/proc/thread-self/ns/net", &self))
		seen_before(&s, &self);
	/* names first, so a message can say the one the user knows */
	*fd = scan_dir(NETNS_RUN_DIR, "", false, nsid, &s, path, sizeof(path));
	if (*fd >= 0) {
		snprintf(label, len, "%s", path + sizeof(NETNS_RUN_DIR));
		goto out;
	}
	*fd = scan_dir(DOCKER_NETNS_DIR, "", false, nsid, &s, path, sizeof(path));
	if (*fd < 0)
		*fd = scan_dir("/proc", "/ns/net", true, nsid, &s, path, sizeof(path));
	if (*fd < 0) {
		ret = -ENOENT;
		goto out;
	}
	/* /proc/PID/ns/net as --netns spells it */
	if (!strncmp(path, "/proc/", 6))
		snprintf(label, len, "pid:%.*s", (int)strcspn(path + 6, "/"), path + 6);
	else
		snprintf(label, len, "%s", path);
out:
	free(s.ns);
	return ret;
}
