/* SPDX-License-Identifier: MIT */
/* One message at a time over a stream: a 4-byte big-endian length, then that many bytes of JSON. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "ctl/msg.h"
#include "tx/rate.h"
#include "util/clock.h"

#define HDR_LEN 4
#define TYPE_MAX 32
#define FOREIGN_MAX	64	/* of another protocol's first line, quoted */
#define FOREIGN_MS	200	/* the rest of that line, once its first bytes are in */

struct json_object *lr_msg_new(const char *type)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "type", json_object_new_string(type));
	json_object_object_add(m, "v", json_object_new_int(LR_MSG_VERSION));
	return m;
}

struct json_object *lr_msg_error(int code, const char *fmt, ...)
{
	struct json_object *m = lr_msg_new("error");
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object_object_add(m, "code", json_object_new_int(code));
	json_object_object_add(m, "message", json_object_new_string(text));
	return m;
}

const char *lr_msg_type(struct json_object *msg)
{
	struct json_object *t;

	return json_object_object_get_ex(msg, "type", &t) ? json_object_get_string(t) : "";
}

int lr_msg_get(struct json_object *msg, const struct lr_jfield *f, void *base, char *err, size_t errlen)
{
	const char *type = lr_msg_type(msg);
	int ret;

	ret = lr_jfield_get(msg, f, base, type, false, err, errlen);
	if (ret)
		return ret;
	json_object_object_foreach(msg, key, val)
	{
		(void)val;
		if (strcmp(key, "type") && strcmp(key, "v") && !lr_jfield_named(f, key)) {
			snprintf(err, errlen, "%s.%.64s: unknown key", type, key);
			return -EINVAL;
		}
	}
	return 0;
}

/* Waits until @fd is ready for @events, or the deadline (-1: none) has passed: 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = -1;
		int n;

		/*
		 * Past the deadline, what is there already is still taken: a process that was stopped
		 * (SIGSTOP, a debugger) finds its peer's messages waiting, not a timeout.
		 */
		if (deadline >= 0) {
			left = deadline - lr_now_ms();
			if (left < 0)
				left = 0;
		}
		n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		/* readable, writable, hung up or failed: the read or send that follows says which */
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* All @len bytes into @buf, @got of them so far: 0, -ECONNRESET at the end of the stream, -ETIMEDOUT, -errno. */
static int read_full(int fd, void *buf, size_t len, int64_t deadline, size_t *got)
{
	*got = 0;
	while (*got < len) {
		ssize_t n;
		int ret = wait_fd(fd, POLLIN, deadline);

		if (ret)
			return ret;
		n = read(fd, (char *)buf + *got, len - *got);
		if (n > 0)
			*got += (size_t)n;
		else if (!n)
			return -ECONNRESET;
		else if (errno == ECONNRESET)
			return -ENOTCONN;	/* a reset, not an end: read_failed() tells them apart */
		else if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
	return 0;
}

static int write_full(int fd, const char *buf, size_t len, int64_t deadline)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n;
		int ret = wait_fd(fd, POLLOUT, deadline);

		if (ret)
			return ret;
		/* MSG_NOSIGNAL: a peer gone is -EPIPE here, not a SIGPIPE that ends the process */
		n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0)
			off += (size_t)n;
		else if (errno != EINTR && errno != EAGAIN)
			return -errno;
	}
	return 0;
}

int lr_msg_frame(struct json_object *msg, char **frame, size_t *len, char *err, size_t errlen)
{
	/*
	 * A hello goes out over lines (JSON's whitespace, the same object): a server of another
	 * protocol that reads a line first (HTTP) answers it at once, and is told apart by its
	 * answer, instead of waiting in silence for a line that never ends.
	 */
	int flags = strcmp(lr_msg_type(msg), "hello") ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_PRETTY;
	const char *text = json_object_to_json_string_ext(msg, flags | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(text);
	uint32_t be;
	char *buf;

	if (n > LR_MSG_MAX) {
		snprintf(err, errlen, "a '%s' message of %zu bytes is over the limit of %u", lr_msg_type(msg), n,
			 LR_MSG_MAX);
		return -EMSGSIZE;
	}
	buf = malloc(HDR_LEN + n);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	be = htonl((uint32_t)n);
	memcpy(buf, &be, HDR_LEN);
	memcpy(buf + HDR_LEN, text, n);
	*frame = buf;
	*len = HDR_LEN + n;
	return 0;
}

int lr_msg_send(int fd, struct json_object *msg, int timeout_ms, char *err, size_t errlen)
{
	size_t len;
	char *buf;
	int ret;

	ret = lr_msg_frame(msg, &buf, &len, err, errlen);
	if (ret)
		return ret;
	ret = write_full(fd, buf, len, timeout_ms < 0 ? -1 : lr_now_ms() + timeout_ms);
	free(buf);
	if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "cannot send a '%s' message: the peer took none of it for %d ms", lr_msg_type(msg),
			 timeout_ms);
	else if (ret)
		snprintf(err, errlen, "cannot send a '%s' message: %s", lr_msg_type(msg), strerror(-ret));
	return ret;
}

/*
 * Why reading the @len bytes of a message's length (@body false) or body stopped after @got: one
 * line in @err, and the error to return. Nothing of a message yet is not a truncated message.
 */
static int read_failed(int ret, size_t got, size_t len, bool body, int timeout_ms, char *err, size_t errlen)
{
	const char *what = body ? "body" : "length";

	if (ret == -ENOTCONN) {
		/* an RST: the peer's process or host died with data unread, or it aborted */
		snprintf(err, errlen, "the connection was reset");
		return -ECONNRESET;
	}
	if (ret == -ECONNRESET && !got && !body) {
		snprintf(err, errlen, "the connection was closed");
		return ret;
	}
	if (ret == -ECONNRESET) {
		snprintf(err, errlen, "truncated message: the connection closed after %zu of the %zu bytes of its %s",
			 got, len, what);
		return -EPROTO;
	}
	if (ret == -ETIMEDOUT && !got && !body)
		snprintf(err, errlen, "no message within %d ms", timeout_ms);
	else if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "truncated message: %zu of the %zu bytes of its %s came in %d ms", got, len, what,
			 timeout_ms);
	else
		snprintf(err, errlen, "cannot read a message: %s", strerror(-ret));
	return ret;
}

/* A type is a word: what messages quote of it can never break a line or run long. */
static bool type_ok(const char *t, size_t len)
{
	size_t i;

	if (!len || len > TYPE_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || t[i] == '_'))
			return false;
	return true;
}

/* @buf (@len bytes) as one JSON object with "type" and "v" of our version, or NULL and -errno. */
static int parse_msg(const char *buf, size_t len, struct json_object **out, char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new_ex(LR_MSG_DEPTH);
	struct json_object *obj, *type, *v;
	enum json_tokener_error jerr;
	size_t end;

	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!obj || jerr != json_tokener_success || end != len) {
		snprintf(err, errlen, "a message that is not JSON: %s at byte %zu of %zu",
			 jerr == json_tokener_continue ? "it ends early" :
			 jerr == json_tokener_success  ? "bytes after the object" :
							 json_tokener_error_desc(jerr),
			 end, len);
		json_object_put(obj);
		return -EBADMSG;
	}
	if (!json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, "type", &type) ||
	    !json_object_is_type(type, json_type_string) || !json_object_object_get_ex(obj, "v", &v) ||
	    !json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "a message that is not an object with a string \"type\" and an integer \"v\"");
		json_object_put(obj);
		return -EBADMSG;
	}
	if (!type_ok(json_object_get_string(type), (size_t)json_object_get_string_len(type))) {
		snprintf(err, errlen, "a message whose \"type\" is not a word of 1..%d lower-case letters and '_'",
			 TYPE_MAX);
		json_object_put(obj);
		return -EBADMSG;
	}
	if (json_object_get_int64(v) != LR_MSG_VERSION) {
		snprintf(err, errlen, "a '%.32s' message of protocol version %lld; this side speaks version %d",
			 json_object_get_string(type), (long long)json_object_get_int64(v), LR_MSG_VERSION);
		json_object_put(obj);
		return -EPROTONOSUPPORT;
	}
	*out = obj;
	return 0;
}

/* Four printable ASCII bytes where a length belongs: "HTTP", "SSH-", "GET ": another protocol's text. */
static bool text_start(const unsigned char *b)
{
	unsigned int i;

	for (i = 0; i < HDR_LEN; i++)
		if (b[i] < 0x20 || b[i] > 0x7e)
			return false;
	return true;
}

/*
 * The peer speaks another protocol: its first line (what more of it comes within FOREIGN_MS, up
 * to FOREIGN_MAX bytes, to the end of the line) quoted in @err, printable bytes only.
 */
static int quote_foreign(int fd, const char *head, char *err, size_t errlen)
{
	char line[FOREIGN_MAX + 1];
	int64_t deadline = lr_now_ms() + FOREIGN_MS;
	size_t n = HDR_LEN, i;

	memcpy(line, head, HDR_LEN);
	while (n < FOREIGN_MAX && !memchr(line, '\n', n) && !memchr(line, '\r', n) && !wait_fd(fd, POLLIN, deadline)) {
		ssize_t got = read(fd, line + n, FOREIGN_MAX - n);

		if (got <= 0)
			break;
		n += (size_t)got;
	}
	for (i = 0; i < n && line[i] != '\r' && line[i] != '\n'; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e)
			line[i] = '?';
	line[i] = '\0';
	/* a quote inside would end the quote early: the line is the peer's, not ours to trust */
	for (n = 0; n < i; n++)
		if (line[n] == '\'')
			line[n] = '"';
	snprintf(err, errlen, "'%s%s'", line, i == FOREIGN_MAX ? "..." : "");
	return -EPROTOTYPE;
}

int lr_msg_recv(int fd, size_t max, int timeout_ms, struct json_object **out, char *err, size_t errlen)
{
	int64_t deadline = timeout_ms < 0 ? -1 : lr_now_ms() + timeout_ms;
	uint32_t be;
	size_t len, got;
	char *buf;
	int ret;

	*out = NULL;
	ret = read_full(fd, &be, HDR_LEN, deadline, &got);
	if (ret)
		return read_failed(ret, got, HDR_LEN, false, timeout_ms, err, errlen);
	len = ntohl(be);
	if (len > max && text_start((const unsigned char *)&be))
		return quote_foreign(fd, (const char *)&be, err, errlen);
	if (len > max || len > INT_MAX) {
		snprintf(err, errlen, "a message of %zu bytes is over the limit of %zu", len, max);
		return -EMSGSIZE;
	}
	if (!len) {
		snprintf(err, errlen, "an empty message");
		return -EBADMSG;
	}
	buf = malloc(len);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = read_full(fd, buf, len, deadline, &got);
	if (ret)
		ret = read_failed(ret, got, len, true, timeout_ms, err, errlen);
	else
		ret = parse_msg(buf, len, out, err, errlen);
	free(buf);
	return ret;
}

void lr_msg_reader_reset(struct lr_msg_reader *r)
{
	free(r->buf);
	*r = (struct lr_msg_reader){ 0 };
}

int lr_msg_read(struct lr_msg_reader *r, int fd, size_t max, struct json_object **out, char *err, size_t errlen)
{
	*out = NULL;
	for (;;) {
		bool body = r->got >= HDR_LEN;
		size_t want = body ? HDR_LEN + r->len - r->got : HDR_LEN - r->got;
		char *to = body ? r->buf + (r->got - HDR_LEN) : (char *)r->hdr + r->got;
		ssize_t n;
		int ret;

		/* never past this message: what follows it is for whoever reads the stream next */
		n = read(fd, to, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			ret = n ? -errno : -ECONNRESET;
			ret = read_failed(ret, body ? r->got - HDR_LEN : r->got, body ? r->len : HDR_LEN, body, 0, err,
					  errlen);
			lr_msg_reader_reset(r);
			return ret;
		}
		r->got += (size_t)n;
		if (r->got == HDR_LEN) {
			uint32_t be;

			memcpy(&be, r->hdr, HDR_LEN);
			r->len = ntohl(be);
			ret = 0;
			if (r->len > max && text_start(r->hdr)) {
				/* another protocol's text; only what came is quoted: this reader never waits */
				char head[HDR_LEN + 1];
				unsigned int i;

				for (i = 0; i < HDR_LEN; i++)
					head[i] = r->hdr[i] == '\'' ? '"' : (char)r->hdr[i];
				head[HDR_LEN] = '\0';
				snprintf(err, errlen, "'%s...'", head);
				ret = -EPROTOTYPE;
			} else if (r->len > max || r->len > INT_MAX) {
				snprintf(err, errlen, "a message of %zu bytes is over the limit of %zu", r->len, max);
				ret = -EMSGSIZE;
			} else if (!r->len) {
				snprintf(err, errlen, "an empty message");
				ret = -EBADMSG;
			} else if (!(r->buf = malloc(r->len))) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
			}
			if (ret) {
				lr_msg_reader_reset(r);
				return ret;
			}
		}
		if (r->got > HDR_LEN && r->got == HDR_LEN + r->len) {
			ret = parse_msg(r->buf, r->len, out, err, errlen);
			lr_msg_reader_reset(r);
			return ret ? ret : 1;
		}
	}
}
