/* SPDX-License-Identifier: MIT */
/* The agent protocol's TCP: HOST[:PORT] as users write it, listening, and connecting within a bound. */
#ifndef LINERATE_CTL_NET_H
#define LINERATE_CTL_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "opt/opts.h"

#define LR_CTL_PORT	7446

struct lr_ctl_addr {
	char host[LR_HOSTPORT_MAX];	/* a name or an address, without brackets */
	uint16_t port;
};

/*
 * "HOST", "HOST:PORT", "[IPV6]" or "[IPV6]:PORT"; a bare IPv6 address takes the default port.
 * With @numeric, HOST must be an IPv4 or IPv6 address. 0, or -EINVAL with one line in @err.
 */
int lr_ctl_addr_parse(const char *s, bool numeric, struct lr_ctl_addr *a, char *err, size_t errlen);
/* "HOST:PORT", or "[IPV6]:PORT" for an address with colons. */
void lr_ctl_addr_name(const struct lr_ctl_addr *a, char *buf, size_t len);
/* The same for a socket address (a connection's far end). */
void lr_ctl_sockaddr_name(const struct sockaddr *sa, char *buf, size_t len);
/* Whether @a (numeric) is a loopback address: 127.0.0.0/8, ::1, or 127/8 mapped into IPv6. */
bool lr_ctl_addr_loopback(const struct lr_ctl_addr *a);
/*
 * A listening TCP socket on @a (numeric), non-blocking, its queue SOMAXCONN deep: 0 and the socket
 * in @fd, or -errno with one line.
 */
int lr_ctl_listen(const struct lr_ctl_addr *a, int *fd, char *err, size_t errlen);
/*
 * A TCP connection to @a (a name is resolved), each address tried within @timeout_ms in all:
 * 0 and the socket in @fd (blocking, TCP_NODELAY), or -errno with one line: -ECONNREFUSED,
 * -ETIMEDOUT, -EHOSTUNREACH, -ENOENT (no such host), ...
 */
int lr_ctl_dial(const struct lr_ctl_addr *a, int timeout_ms, int *fd, char *err, size_t errlen);

#endif
