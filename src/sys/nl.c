/* SPDX-License-Identifier: MIT */
/* Netlink plumbing on libmnl: one request and its answers, attribute tables for the parsers. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>

#include <libmnl/libmnl.h>

#include "sys/nl.h"

/* Large enough for a full page of dump messages; the kernel never sends more per datagram. */
#define NL_BUFSZ 32768
/* Each request has a socket of its own, so one sequence number serves all. */
#define NL_SEQ 1

struct talk {
	lr_nl_parse_fn parse;
	void *arg;
	int found;	/* -ENOENT until @parse took an answer or found one malformed */
	int status;	/* the kernel's, from NLMSG_ERROR or NLMSG_DONE */
};

struct attr_table {
	const struct nlattr **tb;
	size_t n;
};

static int talk_data(const struct nlmsghdr *m, void *data)
{
	struct talk *t = data;

	/* After the answer sought (or a broken one) the rest is only read, to reach the end. */
	if (t->parse && t->found == -ENOENT)
		t->found = t->parse(m, t->arg);
	return MNL_CB_OK;
}

/* NLMSG_ERROR (the acknowledgement when its error is 0) and NLMSG_DONE both end the answers. */
static int talk_end(const struct nlmsghdr *m, void *data)
{
	const void *p = mnl_nlmsg_get_payload(m);
	size_t len = mnl_nlmsg_get_payload_len(m);
	struct talk *t = data;
	int status = 0;

	if (m->nlmsg_type == NLMSG_ERROR) {
		if (len < sizeof(struct nlmsgerr))
			status = -EBADMSG;
		else
			status = ((const struct nlmsgerr *)p)->error;
	} else if (len >= sizeof(int)) {
		/* Since Linux 4.x NLMSG_DONE carries the dump's status. */
		memcpy(&status, p, sizeof(int));
	}
	if (status < 0)
		t->status = status;
	return MNL_CB_STOP;
}

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct attr_table *at = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type < at->n && !at->tb[type])
		at->tb[type] = a;
	return MNL_CB_OK;
}

void *lr_nl_req_init(struct lr_nl_req *req, uint16_t type, uint16_t flags, size_t hdrlen)
{
	struct nlmsghdr *nh = mnl_nlmsg_put_header(req->buf);

	nh->nlmsg_type = type;
	/* Acknowledged, so that the answers to a request that is not a dump end too. */
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	return mnl_nlmsg_put_extra_header(nh, hdrlen);
}

int lr_nl_talk(int bus, struct lr_nl_req *req, lr_nl_parse_fn parse, void *arg)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = talk_end, [NLMSG_DONE] = talk_end };
	struct talk t = { .parse = parse, .arg = arg, .found = -ENOENT };
	int ret = MNL_CB_OK, err = 0;
	struct mnl_socket *nl;
	unsigned int portid;
	char *buf = NULL;
	ssize_t n;

	nl = mnl_socket_open2(bus, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	buf = malloc(NL_BUFSZ);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	req->nh.nlmsg_seq = NL_SEQ;
	if (mnl_socket_sendto(nl, &req->nh, req->nh.nlmsg_len) < 0) {
		err = -errno;
		goto out;
	}
	while (ret == MNL_CB_OK) {
		n = mnl_socket_recvfrom(nl, buf, NL_BUFSZ);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EPIPE;
			goto out;
		}
		/* Checks each answer's sequence number and port id; an interrupted dump is an error (EINTR). */
		ret = mnl_cb_run2(buf, (size_t)n, NL_SEQ, portid, talk_data, &t, ctl, MNL_ARRAY_SIZE(ctl));
		if (ret < 0) {
			err = -errno;
			goto out;
		}
	}
	if (t.status)
		err = t.status;
	else if (parse)
		err = t.found;
out:
	free(buf);
	mnl_socket_close(nl);
	return err;
}

int lr_nl_msg_parse(const void *msg, size_t len, lr_nl_parse_fn parse, void *arg)
{
	const struct nlmsghdr *m = msg;

	/* mnl_nlmsg_ok() on the message's own length, once it is known to fit in @len: no int overflow */
	if (len < sizeof(*m) || m->nlmsg_len > len || !mnl_nlmsg_ok(m, (int)m->nlmsg_len))
		return -EBADMSG;
	return parse(m, arg);
}

int lr_nl_parse(const struct nlmsghdr *m, uint16_t type, size_t hdrlen, const struct nlattr **tb, size_t n)
{
	struct attr_table at = { .tb = tb, .n = n };

	memset(tb, 0, n * sizeof(*tb));
	if (type && m->nlmsg_type != type)
		return -ENOENT;
	if (mnl_nlmsg_get_payload_len(m) < hdrlen)
		return -EBADMSG;
	mnl_attr_parse(m, (unsigned int)hdrlen, attr_cb, &at);
	return 0;
}

void lr_nl_parse_nested(const struct nlattr *a, const struct nlattr **tb, size_t n)
{
	struct attr_table at = { .tb = tb, .n = n };

	memset(tb, 0, n * sizeof(*tb));
	mnl_attr_parse_nested(a, attr_cb, &at);
}

int lr_nl_attr_get(const struct nlattr *a, void *out, size_t len)
{
	if (!a || mnl_attr_get_payload_len(a) < len)
		return -EINVAL;
	/* memcpy: a u64 payload is only 4-byte aligned (the kernel may pad before it, or not) */
	memcpy(out, mnl_attr_get_payload(a), len);
	return 0;
}

int lr_nl_attr_get_exact(const struct nlattr *a, void *out, size_t len)
{
	if (!a || mnl_attr_get_payload_len(a) != len)
		return -EINVAL;
	return lr_nl_attr_get(a, out, len);
}

void lr_nl_attr_str(const struct nlattr *a, char *out, size_t len)
{
	const char *s = a ? mnl_attr_get_payload(a) : "";
	size_t n = a ? strnlen(s, mnl_attr_get_payload_len(a)) : 0;

	if (!len)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}
