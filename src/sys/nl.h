/* SPDX-License-Identifier: MIT */
/*
 * Netlink through libmnl, for src/sys/ only: one request on a fresh socket and its answers,
 * attribute tables, and the checks a raw message gets before a parser reads it.
 */
#ifndef LINERATE_NL_H
#define LINERATE_NL_H

#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

#include <libmnl/libmnl.h>

/* Room for any request of ours: the headers and a few small attributes. */
#define LR_NL_REQ_LEN 256

struct lr_nl_req {
	union {
		struct nlmsghdr nh;
		char buf[LR_NL_REQ_LEN];
	};
};

/*
 * Looks at one answer: 0 when it is the one sought (no further answers are
 * handed over), -ENOENT when it is about something else, another -errno when
 * it is malformed.
 */
typedef int (*lr_nl_parse_fn)(const struct nlmsghdr *m, void *arg);

/*
 * Starts @req as an acknowledged request of @type with @flags and a zeroed
 * family header of @hdrlen bytes, which it returns; attributes follow with
 * mnl_attr_put*().
 */
void *lr_nl_req_init(struct lr_nl_req *req, uint16_t type, uint16_t flags, size_t hdrlen);
/*
 * Sends @req on a fresh socket of protocol @bus (NETLINK_ROUTE, NETLINK_GENERIC)
 * and reads the answers to the kernel's acknowledgement or error, or to the end
 * of a dump even after @parse failed, handing each one to @parse until it
 * returns other than -ENOENT. The kernel's error first, else @parse's result:
 * -ENOENT when no answer was the one sought. With no @parse, the kernel's
 * acknowledgement: 0 or -errno.
 */
int lr_nl_talk(int bus, struct lr_nl_req *req, lr_nl_parse_fn parse, void *arg);
/* @parse on a message the caller holds (unit tests): -EBADMSG when @len does not hold all of it. */
int lr_nl_msg_parse(const void *msg, size_t len, lr_nl_parse_fn parse, void *arg);

/*
 * Checks that @m is of @type (0: any) and holds a family header of @hdrlen
 * bytes, and puts the attributes after that header in @tb: for each type
 * below @n the first attribute of that type, else NULL. -ENOENT for another
 * message type, -EBADMSG when @m is too short.
 */
int lr_nl_parse(const struct nlmsghdr *m, uint16_t type, size_t hdrlen, const struct nlattr **tb, size_t n);
/* The same for the attributes nested in @a. */
void lr_nl_parse_nested(const struct nlattr *a, const struct nlattr **tb, size_t n);

/* Copies the first @len bytes of @a's payload to @out: 0, or -EINVAL when @a is NULL or shorter. */
int lr_nl_attr_get(const struct nlattr *a, void *out, size_t len);
/* The same for a payload of exactly @len bytes (an address). */
int lr_nl_attr_get_exact(const struct nlattr *a, void *out, size_t len);
/* A string attribute into @out (@len bytes with the NUL, truncated); "" when @a is NULL. */
void lr_nl_attr_str(const struct nlattr *a, char *out, size_t len);

#endif
