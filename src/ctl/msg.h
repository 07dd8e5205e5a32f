/* SPDX-License-Identifier: MIT */
/*
 * Framing of the agent protocol: each message a 4-byte big-endian length and a JSON object with
 * "type" and "v", over any stream (a socketpair to a child, TCP to an agent). Nothing else here.
 */
#ifndef LINERATE_CTL_MSG_H
#define LINERATE_CTL_MSG_H

#include <stddef.h>
#include <json-c/json.h>
#include "util/jfield.h"

#define LR_MSG_VERSION	7	/* "v": bumped when a message changes incompatibly */
#define LR_MSG_MAX	(1U << 20)	/* the largest message either side accepts */
#define LR_MSG_DEPTH	16	/* JSON nesting accepted: results nest three deep */

/* {"type": @type, "v": LR_MSG_VERSION}, to which the caller adds its keys. */
struct json_object *lr_msg_new(const char *type);
/* An "error" reply: @code the exit code it stands for (1 runtime, 2 bad input), one line of @fmt. */
struct json_object *lr_msg_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The "type" of a message that lr_msg_recv() accepted. */
const char *lr_msg_type(struct json_object *msg);
/*
 * The keys of @msg into @base by @f, strictly: every field present and valid, and no key but
 * those and "type" and "v". 0, or -EINVAL with "TYPE.KEY: why" in @err.
 */
int lr_msg_get(struct json_object *msg, const struct lr_jfield *f, void *base, char *err, size_t errlen);

/*
 * @msg as one frame, its length first, into @frame (the caller's to free) and @len: 0, or -errno
 * with one line in @err (-EMSGSIZE over LR_MSG_MAX, -ENOMEM).
 */
int lr_msg_frame(struct json_object *msg, char **frame, size_t *len, char *err, size_t errlen);
/*
 * Sends @msg as one frame within @timeout_ms (-1: no limit). 0, or -errno with one line in @err:
 * -ETIMEDOUT, -EMSGSIZE (over LR_MSG_MAX), -EPIPE (the peer is gone), ...
 */
int lr_msg_send(int fd, struct json_object *msg, int timeout_ms, char *err, size_t errlen);
/*
 * Receives one frame of at most @max bytes within @timeout_ms (-1: no limit) into @out, a JSON
 * object with a string "type" and "v" equal to LR_MSG_VERSION. 0, or -errno with one line in @err:
 * -ECONNRESET the peer closed the stream between two messages, or reset it ("the connection was
 * reset"); -EPROTO it closed in the middle of one (truncated); -ETIMEDOUT; -EMSGSIZE a length
 * over @max (the stream is out of step then); -EBADMSG not one JSON object with "type" and "v";
 * -EPROTONOSUPPORT another protocol version;
 * -EPROTOTYPE text where a length belongs (an HTTP or SSH server, a client of another protocol),
 * @err then holds only its first line, quoted ('HTTP/1.0 400 Bad request'), for the caller to place.
 * Interrupted by a signal, it carries on until the deadline; a message already there when the
 * deadline has passed is still taken.
 */
int lr_msg_recv(int fd, size_t max, int timeout_ms, struct json_object **out, char *err, size_t errlen);

/*
 * A frame read a piece at a time from a non-blocking stream, as it comes (the agent's parent
 * reads many handshakes at once). Zeroed to begin; lr_msg_reader_reset() frees a partial one.
 */
struct lr_msg_reader {
	unsigned char hdr[4];
	size_t got;	/* bytes of this frame so far, its length included */
	size_t len;	/* its body's length, once the length is in */
	char *buf;
};

/*
 * Reads what @fd has of one frame of at most @max bytes, and never a byte past it: 1 with the
 * message in @out once it is whole (the reader is ready for the next), 0 while more must come,
 * or -errno as lr_msg_recv() says (but never -ETIMEDOUT: deadlines are the caller's), the reader
 * reset. @r->got says whether anything came yet.
 */
int lr_msg_read(struct lr_msg_reader *r, int fd, size_t max, struct json_object **out, char *err, size_t errlen);
void lr_msg_reader_reset(struct lr_msg_reader *r);

#endif
