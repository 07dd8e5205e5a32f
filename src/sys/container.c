/* SPDX-License-Identifier: MIT */
/* container:NAME → PID → /proc/PID/ns/net through a docker-compatible CLI; the host side of its veth. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* setns() */
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "sys/container.h"
#include "sys/netdev.h"
#include "sys/nl.h"
#include "util/clock.h"
#include "util/log.h"

extern char **environ;

#define INSPECT_FORMAT "{{.State.Pid}} {{.State.Running}}"
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define ANSWER_MAX 1024	/* bytes kept of the CLI's stdout and of its stderr; the rest is drained */
#define NETNS_RUN_DIR "/run/netns"

struct cli_answer {
	char out[ANSWER_MAX];
	char err[ANSWER_MAX];
	size_t out_len, err_len;
	int status;	/* as from waitpid(); 0 when the child could not be waited for */
	bool timed_out;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* An executable regular file; directories on PATH named "docker" do not count. */
static bool is_exec(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* Like execvp's search, but done up front so that "not found" is our message, not exec's errno. */
static bool path_search(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	const char *p, *end;

	if (!path)
		path = DEFAULT_PATH;
	for (p = path; *p; p = *end ? end + 1 : end) {
		size_t dlen;
		int n;

		end = strchrnul(p, ':');
		dlen = (size_t)(end - p);
		/*
		 * An empty entry, ".", or any relative one names a place that
		 * depends on the working directory: not where root picks up a
		 * container CLI from.
		 */
		if (!dlen || *p != '/')
			continue;
		n = snprintf(out, len, "%.*s/%s", (int)dlen, p, prog);
		if (n > 0 && (size_t)n < len && is_exec(out))
			return true;
	}
	return false;
}

static int find_cli(const char *name, char *path, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("LINERATE_DOCKER");

	if (env && *env) {
		if (strchr(env, '/')) {
			if (strlen(env) < len && is_exec(env)) {
				snprintf(path, len, "%s", env);
				return 0;
			}
		} else if (path_search(env, path, len)) {
			return 0;
		}
		lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: LINERATE_DOCKER='%s' is not an executable file%s", name,
		       env, strchr(env, '/') ? "" : " on PATH");
		return -ENOENT;
	}
	if (path_search("docker", path, len) || path_search("podman", path, len))
		return 0;
	lr_msg(err, errlen,
	       LR_CONTAINER_PREFIX "%s: no docker or podman on PATH (set LINERATE_DOCKER to a docker-compatible CLI)",
	       name);
	return -ENOENT;
}

/* Appends what @fd has to @buf (keeping at most ANSWER_MAX - 1 bytes); false at EOF or error. */
static bool drain(int fd, char *buf, size_t *len)
{
	char tmp[512];
	ssize_t n;

	n = read(fd, tmp, sizeof(tmp));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	if (*len < ANSWER_MAX - 1) {
		size_t take = (size_t)n < ANSWER_MAX - 1 - *len ? (size_t)n : ANSWER_MAX - 1 - *len;

		memcpy(buf + *len, tmp, take);
		*len += take;
		buf[*len] = '\0';
	}
	return true;
}

/*
 * Runs `CLI container inspect --format ... NAME` with stdin on /dev/null and both outputs
 * captured, for at most LR_CONTAINER_TIMEOUT_MS; a child still running then is killed with its whole
 * process group (a wrapper and what it started).
 * `container inspect` rather than plain `inspect`: an image of the same name must not answer.
 */
static int run_inspect(const char *cli, const char *name, struct cli_answer *a)
{
	char *const argv[] = {
		(char *)cli, "container", "inspect", "--format", INSPECT_FORMAT, (char *)name, NULL,
	};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	bool out_open = true, err_open = true;
	int64_t deadline;
	pid_t pid = -1, w;
	int ret;

	memset(a, 0, sizeof(*a));
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out;
	}
	ret = -posix_spawn_file_actions_init(&fa);
	if (ret)
		goto out;
	/* dup2 clears close-on-exec on the copies, so the child keeps exactly these three. */
	ret = -posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!ret)
		ret = -posix_spawn_file_actions_adddup2(&fa, outp[1], STDOUT_FILENO);
	if (!ret)
		ret = -posix_spawn_file_actions_adddup2(&fa, errp[1], STDERR_FILENO);
	/*
	 * In a process group of its own (pgid = its PID), so that on the
	 * timeout a wrapper script and whatever it started end together.
	 */
	if (!ret)
		ret = -posix_spawnattr_init(&attr);
	if (!ret) {
		ret = -posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
		if (!ret)
			ret = -posix_spawnattr_setpgroup(&attr, 0);
		if (!ret)
			ret = -posix_spawn(&pid, cli, &fa, &attr, argv, environ);
		posix_spawnattr_destroy(&attr);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		pid = -1;
		goto out;
	}
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;

	deadline = lr_now_ms() + LR_CONTAINER_TIMEOUT_MS;
	while (out_open || err_open) {
		struct pollfd pfd[2] = {
			{ .fd = out_open ? outp[0] : -1, .events = POLLIN },
			{ .fd = err_open ? errp[0] : -1, .events = POLLIN },
		};
		int64_t left = deadline - lr_now_ms();
		int n;

		if (left <= 0) {
			a->timed_out = true;
			break;
		}
		n = poll(pfd, 2, (int)left);
		if (n < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (n <= 0)
			continue;
		if (pfd[0].revents)
			out_open = drain(outp[0], a->out, &a->out_len);
		if (pfd[1].revents)
			err_open = drain(errp[0], a->err, &a->err_len);
	}
	/* Both pipes closed: the child is exiting, but it gets no more than the same deadline. */
	while (!a->timed_out && !ret) {
		w = waitpid(pid, &a->status, WNOHANG);
		if (w == pid) {
			pid = -1;
			break;
		}
		if (w < 0 && errno != EINTR) {
			/* SIGCHLD ignored: the kernel reaped it, its status is gone. Judge by the answer. */
			pr_debug("waitpid(%d): %s\n", (int)pid, strerror(errno));
			a->status = 0;
			pid = -1;
			break;
		}
		if (lr_now_ms() >= deadline) {
			a->timed_out = true;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
out:
	if (pid > 0) {
		/* the group, while its leader is not reaped yet: the id cannot have been reused */
		kill(-pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (outp[0] >= 0)
		close(outp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (errp[0] >= 0)
		close(errp[0]);
	if (errp[1] >= 0)
		close(errp[1]);
	return ret;
}

/* The name under /run/netns of the namespace that the current one calls @nsid; "" when none is. */
static void netns_name_of(int nsid, char *name, size_t len)
{
	struct dirent *de;
	DIR *d;

	name[0] = '\0';
	d = opendir(NETNS_RUN_DIR);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd, id = -1;

		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!lr_netns_id(fd, &id) && id == nsid)
			snprintf(name, len, "%s", de->d_name);
		close(fd);
		if (name[0])
			break;
	}
	closedir(d);
}

/* veth reports its peer as an ethtool counter; IFLA_LINK is the fallback. */
static int peer_ifindex_of(const char *ifname, const struct lr_if_link *l)
{
	struct lr_ethtool_stats st;
	uint64_t v;
	int idx = 0;

	if (!lr_if_ethtool_stats(ifname, &st)) {
		if (!lr_ethtool_stats_find(&st, "peer_ifindex", &v) && v && v <= INT_MAX)
			idx = (int)v;
		lr_ethtool_stats_free(&st);
	}
	return idx ? idx : l->link;
}

int lr_container_resolve(const char *name, struct lr_container *out, char *err, size_t errlen)
{
	struct cli_answer a;
	char line[256], proc[32];
	const char *cli;
	struct stat st;
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	ret = find_cli(name, out->cli, sizeof(out->cli), err, errlen);
	if (ret)
		return ret;
	cli = base_name(out->cli);
	pr_info(LR_CONTAINER_PREFIX "%s: asking %s\n", name, out->cli);

	ret = run_inspect(out->cli, name, &a);
	if (ret) {
		lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: cannot run %s: %s", name, out->cli, strerror(-ret));
		return ret;
	}
	if (a.timed_out) {
		lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: %s did not answer within %d s (stopped it)", name, cli,
		       LR_CONTAINER_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	if (!WIFEXITED(a.status) || WEXITSTATUS(a.status)) {
		/* The CLI knows best why: "Error: No such container: web", "Cannot connect to the Docker daemon". */
		lr_container_first_line(a.err, line, sizeof(line));
		if (line[0])
			lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: %s: %s", name, cli, line);
		else if (WIFEXITED(a.status))
			lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: %s container inspect failed (exit status %d)",
			       name, cli, WEXITSTATUS(a.status));
		else
			lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: %s container inspect died (signal %d)", name,
			       cli, WTERMSIG(a.status));
		return -ENOENT;
	}
	ret = lr_container_parse_inspect(name, a.out, &out->pid, err, errlen);
	if (ret)
		return ret;

	/*
	 * The PID is in the daemon's PID namespace; linerate must share it (run it on the host,
	 * not inside another container). Between the answer and here the container may have stopped.
	 */
	snprintf(proc, sizeof(proc), "/proc/%d", out->pid);
	snprintf(out->netns, sizeof(out->netns), "/proc/%d/ns/net", out->pid);
	if (stat(proc, &st) < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: its process %d is gone (%s: no such entry); "
			       "did the container just stop?", name, out->pid, proc);
		else
			lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s: cannot look at %s: %s", name, proc,
			       strerror(-ret));
		return ret;
	}
	pr_info(LR_CONTAINER_PREFIX "%s: PID %d, %s\n", name, out->pid, out->netns);
	return 0;
}

int lr_container_veth_find(const struct lr_container_spec *spec, struct lr_container_veth *out, char *err,
			   size_t errlen)
{
	const char *ifname = spec->ifname[0] ? spec->ifname : LR_CONTAINER_DEFAULT_IF;
	int self_fd = -1, ctr_fd = -1, ret, our_id = -1, peer_id = -1;
	struct lr_if_link link = { .link_nsid = -1 }, back;
	struct stat self_st, ctr_st;
	char where[sizeof(LR_CONTAINER_PREFIX) + LR_CONTAINER_NAME_MAX + IF_NAMESIZE], third[NAME_MAX + 1];
	struct lr_if ifc = { 0 };
	bool same;

	memset(out, 0, sizeof(*out));
	snprintf(out->ifname, sizeof(out->ifname), "%s", ifname);
	snprintf(where, sizeof(where), LR_CONTAINER_PREFIX "%s:%s", spec->name, ifname);
	ret = lr_container_resolve(spec->name, &out->ctr, err, errlen);
	if (ret)
		return ret;

	self_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self_fd < 0) {
		ret = -errno;
		lr_msg(err, errlen, "%s: cannot open our own network namespace: %s", where, strerror(-ret));
		goto out;
	}
	ctr_fd = open(out->ctr.netns, O_RDONLY | O_CLOEXEC);
	if (ctr_fd < 0) {
		ret = -errno;
		if (ret == -EACCES || ret == -EPERM)
			lr_msg(err, errlen, "%s: opening %s needs root (CAP_SYS_ADMIN)", where, out->ctr.netns);
		else
			lr_msg(err, errlen, "%s: cannot open %s: %s", where, out->ctr.netns, strerror(-ret));
		goto out;
	}
	if (fstat(self_fd, &self_st) < 0 || fstat(ctr_fd, &ctr_st) < 0) {
		ret = -errno;
		lr_msg(err, errlen, "%s: fstat of a namespace: %s", where, strerror(-ret));
		goto out;
	}
	same = self_st.st_dev == ctr_st.st_dev && self_st.st_ino == ctr_st.st_ino;

	if (setns(ctr_fd, CLONE_NEWNET) < 0) {
		ret = -errno;
		if (ret == -EPERM)
			lr_msg(err, errlen, "%s: entering %s needs root (CAP_SYS_ADMIN)", where, out->ctr.netns);
		else
			lr_msg(err, errlen, "%s: cannot enter %s: %s", where, out->ctr.netns, strerror(-ret));
		goto out;
	}

	/* Inside: only netlink and ioctls, on sockets made here; /sys still shows the caller's namespace. */
	out->ifindex = (int)if_nametoindex(ifname);
	if (!out->ifindex) {
		ret = -ENODEV;
		lr_msg(err, errlen, LR_CONTAINER_PREFIX "%s has no interface '%s'", spec->name, ifname);
		goto back;
	}
	snprintf(ifc.name, sizeof(ifc.name), "%s", ifname);
	ifc.ifindex = out->ifindex;
	ret = lr_if_link_get(&ifc, &link);
	if (ret) {
		lr_msg(err, errlen, "%s: cannot read its link (RTM_GETLINK): %s", where, strerror(-ret));
		goto back;
	}
	if (strcmp(link.kind, "veth")) {
		char drv[40];

		ret = -EMEDIUMTYPE;
		lr_if_driver(ifname, drv, sizeof(drv));
		if (link.kind[0])
			lr_msg(err, errlen, "%s is a %s, not a veth", where, link.kind);
		else if (drv[0])
			lr_msg(err, errlen, "%s is not a veth (no link kind; driver '%s')", where, drv);
		else
			lr_msg(err, errlen, "%s is not a veth (it has no link kind)", where);
		goto back;
	}
	out->peer_ifindex = peer_ifindex_of(ifname, &link);
	if (out->peer_ifindex <= 0) {
		ret = -ENOENT;
		lr_msg(err, errlen, "%s: the kernel reports no peer for this veth", where);
		goto back;
	}
	/* Which namespace the container calls ours; the peer is here when the ids agree. */
	if (!same) {
		ret = lr_netns_id(self_fd, &our_id);
		if (ret) {
			lr_msg(err, errlen, "%s: cannot ask for namespace ids (RTM_GETNSID): %s", where,
			       strerror(-ret));
			goto back;
		}
	}
	peer_id = link.link_nsid;
	if (same ? peer_id >= 0 : (peer_id < 0 || peer_id != our_id)) {
		ret = -EXDEV;
		third[0] = '\0';
		if (peer_id >= 0)
			netns_name_of(peer_id, third, sizeof(third));
		if (peer_id < 0)
			lr_msg(err, errlen, "%s: its peer (ifindex %d) is inside the container too, not in this "
			       "network namespace", where, out->peer_ifindex);
		else if (third[0])
			lr_msg(err, errlen, "%s: its peer (ifindex %d) is in network namespace '%s', not in this one "
			       "(run there: --netns %s)", where, out->peer_ifindex, third, third);
		else
			lr_msg(err, errlen, "%s: its peer (ifindex %d) is in another network namespace, not in this "
			       "one", where, out->peer_ifindex);
	}
back:
	if (setns(self_fd, CLONE_NEWNET) < 0) {
		int e = -errno;

		/* Staying in the container's namespace and carrying on would be wrong in every way. */
		lr_msg(err, errlen, "%s: cannot return to our network namespace: %s", where, strerror(-e));
		ret = e;
		goto out;
	}
	if (ret)
		goto out;

	/* Back home: the peer by index, and it must point back at the container's interface. */
	if (!if_indextoname((unsigned int)out->peer_ifindex, out->peer_ifname)) {
		ret = -ENODEV;
		lr_msg(err, errlen, "%s: its peer ifindex %d is not here (the veth just went away?)", where,
		       out->peer_ifindex);
		goto out;
	}
	snprintf(ifc.name, sizeof(ifc.name), "%s", out->peer_ifname);
	ifc.ifindex = out->peer_ifindex;
	ret = lr_if_link_get(&ifc, &back);
	if (!ret && (strcmp(back.kind, "veth") || peer_ifindex_of(out->peer_ifname, &back) != out->ifindex))
		ret = -ESTALE;
	if (ret) {
		lr_msg(err, errlen, "%s: %s (ifindex %d) here is not its peer (%s)", where, out->peer_ifname,
		       out->peer_ifindex, ret == -ESTALE ? "it does not point back" : strerror(-ret));
		goto out;
	}
	pr_info("%s (ifindex %d): peer %s, ifindex %d\n", where, out->ifindex, out->peer_ifname,
		 out->peer_ifindex);
out:
	if (ctr_fd >= 0)
		close(ctr_fd);
	if (self_fd >= 0)
		close(self_fd);
	return ret;
}
