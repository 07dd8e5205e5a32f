/* SPDX-License-Identifier: MIT */
/* The controller's side of the agent protocol: one request, one reply, each checked strictly. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "util/capture.h"
#include "util/jfield.h"
#include "util/version.h"

#define HELLO_MS	5000
#define PREPARE_MS	15000	/* entering a container's namespace may ask its CLI (up to 10 s) */
#define RESET_MS	5000
#define WAIT_EXTRA_MS	5000	/* beyond the wait asked for: the endpoint's own linger and collection */
#define QUIT_MS		5000	/* the capture is renamed into place first */

/* In the order of enum lr_rx_engine_kind and enum lr_xdp_mode. */
static const char *const rx_engines[] = { "auto", "xdp", "packet", NULL };
static const char *const xdp_modes[] = { "auto", "native", "generic", NULL };

/* prepare_rx: as strict as recv's own options (bounds and names as the CLI takes them) */
static const struct lr_jfield prepare_rx_fields[] = {
	{ "interface", LR_J_STR, offsetof(struct lr_recv_opts, ifname), .size = IF_NAMESIZE, .min = 1 },
	{ "netns", LR_J_STR, offsetof(struct lr_recv_opts, netns), .size = LR_PATH_MAX },
	{ "engine", LR_J_ENUM, offsetof(struct lr_recv_opts, engine), .names = rx_engines },
	{ "xdp_mode", LR_J_ENUM, offsetof(struct lr_recv_opts, xdp_mode), .names = xdp_modes },
	{ "workers", LR_J_UINT, offsetof(struct lr_recv_opts, workers), .min = 1, .max = LR_MAX_WORKERS },
	{ "dst_port", LR_J_U16, offsetof(struct lr_recv_opts, dst_port), .min = 1 },
	{ "pcap", LR_J_STR, offsetof(struct lr_recv_opts, pcap), .size = LR_PATH_MAX },
	{ "pcap_every", LR_J_U64, offsetof(struct lr_recv_opts, pcap_every), .min = 1, .max = UINT32_MAX },
	{ "snaplen", LR_J_UINT, offsetof(struct lr_recv_opts, snaplen), .min = LR_RX_SNAP_MIN, .max = LR_RX_SNAP_MAX },
	{ NULL }
};

struct json_object *lr_ctl_prepare_rx_msg(const struct lr_recv_opts *o)
{
	struct json_object *m = lr_msg_new("prepare_rx");

	lr_jfield_put(m, prepare_rx_fields, o);
	return m;
}

int lr_ctl_prepare_rx_parse(struct json_object *msg, struct lr_recv_opts *o, char *err, size_t errlen)
{
	lr_recv_opts_default(o);
	return lr_msg_get(msg, prepare_rx_fields, o, err, errlen);
}

struct error_reply {
	unsigned int code;
	char message[1024];
};

static const struct lr_jfield error_fields[] = {
	{ "code", LR_J_UINT, offsetof(struct error_reply, code), .min = 1, .max = 255 },
	{ "message", LR_J_STR, offsetof(struct error_reply, message), .size = sizeof(((struct error_reply *)0)->message) },
	{ NULL }
};

/*
 * Sends @req (and frees it), receives the reply: 0 and the reply in @rep (the caller's to free;
 * NULL: freed here) when its type is @want; the endpoint's exit code and message for "error".
 */
static int call(int fd, struct json_object *req, const char *want, int timeout_ms, struct json_object **rep,
		char *err, size_t errlen)
{
	struct json_object *m;
	struct error_reply e;
	char type[32];
	int ret;

	snprintf(type, sizeof(type), "%s", lr_msg_type(req));
	ret = lr_msg_send(fd, req, timeout_ms, err, errlen);
	json_object_put(req);
	if (ret)
		return ret;
	ret = lr_msg_recv(fd, LR_MSG_MAX, timeout_ms, &m, err, errlen);
	if (ret)
		return ret;
	if (!strcmp(lr_msg_type(m), "error")) {
		ret = lr_msg_get(m, error_fields, &e, err, errlen);
		if (!ret)
			snprintf(err, errlen, "%s", e.message);
		json_object_put(m);
		return ret ? -EBADMSG : (int)e.code;
	}
	if (strcmp(lr_msg_type(m), want)) {
		snprintf(err, errlen, "the answer to '%s' was '%.32s', not '%s'", type, lr_msg_type(m), want);
		json_object_put(m);
		return -EBADMSG;
	}
	if (rep)
		*rep = m;
	else
		json_object_put(m);
	return 0;
}

int lr_ctl_hello(int fd, char *err, size_t errlen)
{
	struct json_object *req = lr_msg_new("hello"), *v = json_object_new_object();

	json_object_object_add(v, "release", json_object_new_string(lr_release()));
	json_object_object_add(v, "revision", json_object_new_string(lr_revision()));
	json_object_object_add(req, "version", v);
	return call(fd, req, "hello", HELLO_MS, NULL, err, errlen);
}

struct ready_reply {
	char line[1024];
};

static const struct lr_jfield ready_fields[] = {
	{ "line", LR_J_STR, offsetof(struct ready_reply, line), .size = sizeof(((struct ready_reply *)0)->line) },
	{ NULL }
};

int lr_ctl_prepare_rx(int fd, const struct lr_recv_opts *o, char *line, size_t linelen, char *err, size_t errlen)
{
	struct json_object *m;
	struct ready_reply r;
	int ret;

	ret = call(fd, lr_ctl_prepare_rx_msg(o), "ready", PREPARE_MS, &m, err, errlen);
	if (ret)
		return ret;
	ret = lr_msg_get(m, ready_fields, &r, err, errlen);
	json_object_put(m);
	if (ret)
		return -EBADMSG;
	snprintf(line, linelen, "%s", r.line);
	return 0;
}

int lr_ctl_reset(int fd, char *err, size_t errlen)
{
	return call(fd, lr_msg_new("reset"), "ok", RESET_MS, NULL, err, errlen);
}

int lr_ctl_wait(int fd, uint64_t timeout_ns, bool *complete, struct lr_rx_result *r, char *err, size_t errlen)
{
	struct json_object *req = lr_msg_new("wait"), *m, *c;
	unsigned int ms = (unsigned int)(timeout_ns / 1000000);
	int ret;

	json_object_object_add(req, "timeout_ms", json_object_new_int64(ms));
	ret = call(fd, req, "result", (int)(ms + WAIT_EXTRA_MS), &m, err, errlen);
	if (ret)
		return ret;
	ret = lr_rx_result_get(m, r, err, errlen);
	if (!ret && (!json_object_object_get_ex(m, "complete", &c) || !json_object_is_type(c, json_type_boolean))) {
		snprintf(err, errlen, "result.complete: missing, or not true or false");
		ret = -EINVAL;
	}
	if (!ret)
		*complete = json_object_get_boolean(c);
	json_object_put(m);
	return ret ? -EBADMSG : 0;
}

int lr_ctl_quit(int fd, char *err, size_t errlen)
{
	return call(fd, lr_msg_new("quit"), "bye", QUIT_MS, NULL, err, errlen);
}
