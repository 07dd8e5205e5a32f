/* SPDX-License-Identifier: MIT */
/*
 * Containers as network namespaces: `container:NAME[:IFNAME]` specs, asking a docker-compatible CLI
 * for the container's PID, and finding the host side of the container's veth (`linerate veth`).
 */
#ifndef LINERATE_CONTAINER_H
#define LINERATE_CONTAINER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <net/if.h>

#define LR_CONTAINER_PREFIX "container:"
#define LR_CONTAINER_NAME_MAX 128	/* with the NUL; Docker IDs are 64 hex digits, names rarely long */
#define LR_CONTAINER_DEFAULT_IF "eth0"
#define LR_CONTAINER_TIMEOUT_MS 10000	/* for one `inspect` answer */

struct lr_container_spec {
	char name[LR_CONTAINER_NAME_MAX];
	char ifname[IF_NAMESIZE];	/* "" when the spec names none */
};

/* The first non-blank line of @s, unprintable bytes as '?', for messages. */
void lr_container_first_line(const char *s, char *line, size_t len);

/* True when @s starts with "container:" (it is then for lr_container_spec_parse()). */
bool lr_container_is_spec(const char *s);
/*
 * "container:NAME", or with @allow_if also "container:NAME:IFNAME". NAME is a Docker/Podman
 * container name or ID: [A-Za-z0-9][A-Za-z0-9_.-]*. -EINVAL with a message in @err.
 */
int lr_container_spec_parse(const char *spec, bool allow_if, struct lr_container_spec *out, char *err,
			    size_t errlen);
/*
 * The answer to `inspect --format '{{.State.Pid}} {{.State.Running}}'`: "1234 true" (one line,
 * trailing newline allowed). -ESRCH when the container is not running (false, or PID 0),
 * -EINVAL for anything else; the message names the container.
 */
int lr_container_parse_inspect(const char *name, const char *answer, int *pid, char *err, size_t errlen);

struct lr_container {
	char name[LR_CONTAINER_NAME_MAX];
	char cli[PATH_MAX];	/* the CLI that answered */
	int pid;	/* in the PID namespace of the CLI's daemon, which must be ours */
	char netns[64];	/* /proc/PID/ns/net */
};

/*
 * Asks $LINERATE_DOCKER, else docker, else podman from PATH for a running container's PID
 * (fork/exec, no shell, at most LR_CONTAINER_TIMEOUT_MS) and checks that /proc/PID/ns/net is
 * there. -errno with one line for the user in @err, the spec ("container:NAME") first.
 */
int lr_container_resolve(const char *name, struct lr_container *out, char *err, size_t errlen);

/* A container's veth and its peer, the host side. */
struct lr_container_veth {
	struct lr_container ctr;
	char ifname[IF_NAMESIZE];	/* in the container */
	int ifindex;	/* in the container */
	char peer_ifname[IF_NAMESIZE];	/* in the caller's namespace */
	int peer_ifindex;
};

/*
 * Enters the container's network namespace, checks that @spec's interface (eth0 when it names
 * none) is a veth, finds its peer in the caller's namespace and comes back. -ENODEV for a
 * missing interface, -EMEDIUMTYPE for one that is not a veth, -EXDEV when the peer lives in
 * another namespace; other -errno from resolving or the system. Must run single-threaded.
 */
int lr_container_veth_find(const struct lr_container_spec *spec, struct lr_container_veth *out, char *err,
			   size_t errlen);

#endif
