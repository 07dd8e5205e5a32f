/* SPDX-License-Identifier: MIT */
/* HOST[:PORT] parsing, the agent's listening socket, and connecting with a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "ctl/net.h"
#include "util/clock.h"
#include "util/units.h"

/* A DNS name: labels of letters, digits and '-', dot-separated (RFC 1123), at most 253 characters. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (!n || n > 253)
		return false;
	for (; *s; s++) {
		if (*s == '.') {
			if (!label)
				return false;
			label = 0;
		} else if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
			   *s == '-') {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return true;
}

static int family_of(const char *host)
{
	struct in6_addr a;

	if (inet_pton(AF_INET, host, &a) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, host, &a) == 1)
		return AF_INET6;
	return 0;
}

int lr_ctl_addr_parse(const char *s, bool numeric, struct lr_ctl_addr *a, char *err, size_t errlen)
{
	const char *host = s, *port = NULL, *end;
	uint64_t p = LR_CTL_PORT;
	size_t hlen;

	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end || (end[1] && end[1] != ':')) {
			snprintf(err, errlen, "'%s' is not [IPV6] or [IPV6]:PORT", s);
			return -EINVAL;
		}
		host = s + 1;
		hlen = (size_t)(end - host);
		port = end[1] ? end + 2 : NULL;
	} else {
		end = strchr(s, ':');
		/* two colons or more: a bare IPv6 address, which takes the default port */
		if (end && !strchr(end + 1, ':')) {
			hlen = (size_t)(end - s);
			port = end + 1;
		} else {
			hlen = strlen(s);
		}
	}
	if (!hlen || hlen >= sizeof(a->host)) {
		snprintf(err, errlen, "'%s' has no host, or one too long", s);
		return -EINVAL;
	}
	memcpy(a->host, host, hlen);
	a->host[hlen] = '\0';
	if (port && (!*port || strspn(port, "0123456789") != strlen(port) || lr_parse_count(port, 1, 65535, &p))) {
		snprintf(err, errlen, "'%s': '%s' is not a port (1..65535)", s, port);
		return -EINVAL;
	}
	a->port = (uint16_t)p;
	if (family_of(a->host) == AF_INET6 && s[0] != '[' && port) {
		snprintf(err, errlen, "'%s': write an IPv6 address with a port as [ADDRESS]:PORT", s);
		return -EINVAL;
	}
	if (s[0] == '[' && family_of(a->host) != AF_INET6) {
		snprintf(err, errlen, "'%s': only an IPv6 address goes in brackets", s);
		return -EINVAL;
	}
	if (!family_of(a->host) && (numeric || !valid_name(a->host))) {
		snprintf(err, errlen, "'%s' is not %s", a->host,
			 numeric ? "an IPv4 or IPv6 address" : "a host name or an IPv4 or IPv6 address");
		return -EINVAL;
	}
	return 0;
}

void lr_ctl_addr_name(const struct lr_ctl_addr *a, char *buf, size_t len)
{
	bool v6 = strchr(a->host, ':') != NULL;

	snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", a->host, v6 ? "]" : "", a->port);
}

void lr_ctl_sockaddr_name(const struct sockaddr *sa, char *buf, size_t len)
{
	struct lr_ctl_addr a = { "?", 0 };

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, a.host, sizeof(a.host));
		a.port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, a.host, sizeof(a.host));
		a.port = ntohs(in6->sin6_port);
	}
	lr_ctl_addr_name(&a, buf, len);
}

bool lr_ctl_addr_loopback(const struct lr_ctl_addr *a)
{
	struct in6_addr v6;
	struct in_addr v4;

	if (inet_pton(AF_INET, a->host, &v4) == 1)
		return (ntohl(v4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, a->host, &v6) != 1)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&v6))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

/* @a (numeric) as a socket address. */
static socklen_t sockaddr_of(const struct lr_ctl_addr *a, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *in6 = (void *)ss;
	struct sockaddr_in *in = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family_of(a->host) == AF_INET) {
		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		inet_pton(AF_INET, a->host, &in->sin_addr);
		return sizeof(*in);
	}
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(a->port);
	inet_pton(AF_INET6, a->host, &in6->sin6_addr);
	return sizeof(*in6);
}

int lr_ctl_listen(const struct lr_ctl_addr *a, int *fd, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(a, &ss);
	char name[LR_HOSTPORT_MAX + 8];
	int s, one = 1, ret;

	lr_ctl_addr_name(a, name, sizeof(name));
	s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot make a socket for %s: %s", name, strerror(-ret));
		return ret;
	}
	/* a restarted agent takes its port back at once, not after TIME_WAIT */
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/*
	 * The deepest queue the kernel allows (net.core.somaxconn caps it): a burst of connections,
	 * idle ones from a flood among them, waits there for the loop's accept, not dropped.
	 */
	if (bind(s, (struct sockaddr *)&ss, len) || listen(s, SOMAXCONN)) {
		ret = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s%s", name, strerror(-ret),
			 ret == -EADDRNOTAVAIL ? " (no interface here has that address)" :
			 ret == -EADDRINUSE    ? " (another agent?)" : "");
		close(s);
		return ret;
	}
	*fd = s;
	return 0;
}

/* One address within @deadline (ms on lr_now_ms()): 0 and the socket, or -errno. */
static int dial_one(const struct addrinfo *ai, int64_t deadline, int *fd)
{
	int s, ret, soerr = 0, one = 1;
	socklen_t sl = sizeof(soerr);

	s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	if (s < 0)
		return -errno;
	if (connect(s, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		ret = -errno;
		goto fail;
	}
	for (;;) {
		struct pollfd p = { .fd = s, .events = POLLOUT };
		int64_t left = deadline - lr_now_ms();
		int n;

		if (left <= 0) {
			ret = -ETIMEDOUT;
			goto fail;
		}
		n = poll(&p, 1, (int)left);
		if (n > 0)
			break;
		if (n < 0 && errno != EINTR) {
			ret = -errno;
			goto fail;
		}
	}
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
		ret = soerr ? -soerr : -errno;
		goto fail;
	}
	/* back to blocking: lr_msg_*() poll before every read and write, with their own deadlines */
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	/* a request and its reply are one small segment each: Nagle would only delay the clock exchanges */
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fd = s;
	return 0;
fail:
	close(s);
	return ret;
}

int lr_ctl_dial(const struct lr_ctl_addr *a, int timeout_ms, int *fd, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG }, *res, *ai;
	int64_t deadline = lr_now_ms() + timeout_ms;
	char port[8], name[LR_HOSTPORT_MAX + 8];
	int ret, gai;

	lr_ctl_addr_name(a, name, sizeof(name));
	snprintf(port, sizeof(port), "%u", a->port);
	if (family_of(a->host))
		hints.ai_flags = AI_NUMERICHOST;
	gai = getaddrinfo(a->host, port, &hints, &res);
	if (gai) {
		snprintf(err, errlen, "cannot resolve %s: %s", a->host, gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
		return -ENOENT;
	}
	ret = -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		ret = dial_one(ai, deadline, fd);
		if (!ret || ret == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "cannot connect to %s: no answer within %d ms (a firewall, or no route?)", name,
			 timeout_ms);
	else if (ret == -ECONNREFUSED)
		snprintf(err, errlen, "cannot connect to %s: connection refused (is 'linerate agent' listening there?)",
			 name);
	else if (ret)
		snprintf(err, errlen, "cannot connect to %s: %s", name, strerror(-ret));
	return ret;
}
