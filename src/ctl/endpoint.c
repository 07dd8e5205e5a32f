/* SPDX-License-Identifier: MIT */
/* The endpoint's side of the agent protocol: a receiver run on a controller's requests. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "rx/rx.h"
#include "sys/netdev.h"
#include "tx/rate.h"
#include "util/jfield.h"
#include "util/log.h"
#include "util/version.h"

#define SEND_MS		5000
#define WAIT_MAX_MS	60000
#define POLL_US		5000
/* after the markers: they are repeated, and late frames of other queues may still be on their way */
#define LINGER_US	20000

struct endpoint {
	struct lr_recv_opts ro;
	struct lr_rx rx;
	bool prepared;
	int code;	/* why the receiver could not start, for the exit code */
};

static struct json_object *error_msg(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static struct json_object *error_msg(int code, const char *fmt, ...)
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

static struct json_object *on_hello(void)
{
	struct json_object *m = lr_msg_new("hello"), *v = json_object_new_object(), *roles = json_object_new_array();

	json_object_object_add(v, "release", json_object_new_string(lr_release()));
	json_object_object_add(v, "revision", json_object_new_string(lr_revision()));
	json_object_object_add(m, "version", v);
	json_object_array_add(roles, json_object_new_string("rx"));
	json_object_object_add(m, "roles", roles);
	return m;
}

static struct json_object *on_prepare_rx(struct endpoint *e, struct json_object *req)
{
	struct json_object *m;
	char err[512], line[768];
	int ret;

	if (e->prepared)
		return error_msg(LR_EXIT_USAGE, "a receiver is running already");
	if (lr_ctl_prepare_rx_parse(req, &e->ro, err, sizeof(err)))
		return error_msg(LR_EXIT_USAGE, "%s", err);
	e->ro.quiet = true;
	e->ro.verbose = lr_log_level();
	if (e->ro.netns[0] && lr_netns_enter(e->ro.netns, err, sizeof(err))) {
		e->code = LR_EXIT_USAGE;
		return error_msg(e->code, "%s", err);
	}
	ret = lr_rx_begin(&e->ro, &e->rx, line, sizeof(line), err, sizeof(err));
	if (ret) {
		e->code = ret;
		return error_msg(ret, "%s", err);
	}
	e->prepared = true;
	m = lr_msg_new("ready");
	json_object_object_add(m, "line", json_object_new_string(line));
	return m;
}

/* NULL when the receiver can take the request, else the error to answer with. */
static struct json_object *not_ready(const struct endpoint *e)
{
	if (!e->prepared)
		return error_msg(LR_EXIT_USAGE, "no receiver: prepare_rx first");
	if (!lr_if_present(&e->rx.ifc))
		return error_msg(LR_EXIT_RUNTIME, "interface %s disappeared (deleted, or its veth peer's namespace went away)",
				 e->ro.ifname);
	return NULL;
}

struct wait_req {
	unsigned int timeout_ms;
};

static const struct lr_jfield wait_fields[] = {
	{ "timeout_ms", LR_J_UINT, offsetof(struct wait_req, timeout_ms), .max = WAIT_MAX_MS },
	{ NULL }
};

static struct json_object *on_wait(struct endpoint *e, struct json_object *req)
{
	struct json_object *m = not_ready(e);
	struct lr_rx_result *r;
	struct wait_req w;
	uint64_t end;
	char err[256];
	bool complete;
	int ret;

	if (m)
		return m;
	if (lr_msg_get(req, wait_fields, &w, err, sizeof(err)))
		return error_msg(LR_EXIT_USAGE, "%s", err);
	end = lr_now_ns() + (uint64_t)w.timeout_ms * 1000000;
	while (!(complete = lr_rx_complete(&e->rx)) && lr_now_ns() < end)
		usleep(POLL_US);
	usleep(LINGER_US);
	r = malloc(sizeof(*r));
	if (!r)
		return error_msg(LR_EXIT_RUNTIME, "out of memory");
	ret = lr_rx_collect(&e->rx, r);
	if (ret) {
		free(r);
		return error_msg(LR_EXIT_RUNTIME, "cannot read the receiver's counters: %s", strerror(-ret));
	}
	m = lr_msg_new("result");
	json_object_object_add(m, "complete", json_object_new_boolean(complete));
	lr_rx_result_put(m, r);
	free(r);
	return m;
}

static struct json_object *on_reset(struct endpoint *e)
{
	struct json_object *m = not_ready(e);

	if (m)
		return m;
	lr_rx_reset(&e->rx);
	return lr_msg_new("ok");
}

int lr_ctl_serve(int fd)
{
	struct endpoint *e = calloc(1, sizeof(*e));
	bool quit = false;
	int code;

	if (!e)
		return LR_EXIT_RUNTIME;
	while (!quit) {
		struct json_object *req, *rep;
		char err[512];
		const char *type;
		int ret;

		ret = lr_msg_recv(fd, LR_MSG_MAX, -1, &req, err, sizeof(err));
		if (ret == -ECONNRESET)
			break;	/* the controller is gone: end what it started */
		if (ret) {
			/* out of step, or another version: say why, then stop */
			rep = error_msg(LR_EXIT_USAGE, "%s", err);
			quit = true;
		} else {
			type = lr_msg_type(req);
			if (!strcmp(type, "hello"))
				rep = on_hello();
			else if (!strcmp(type, "prepare_rx"))
				rep = on_prepare_rx(e, req);
			else if (!strcmp(type, "reset"))
				rep = on_reset(e);
			else if (!strcmp(type, "wait"))
				rep = on_wait(e, req);
			else if (!strcmp(type, "quit"))
				rep = lr_msg_new("bye"), quit = true;
			else
				rep = error_msg(LR_EXIT_USAGE, "unknown message type '%.32s'", type);
			json_object_put(req);
		}
		/* the capture is in place before bye, so the controller may read it at once */
		if (quit && e->prepared) {
			lr_rx_end(&e->rx);
			e->prepared = false;
		}
		ret = lr_msg_send(fd, rep, SEND_MS, err, sizeof(err));
		json_object_put(rep);
		if (ret)
			break;
	}
	if (e->prepared)
		lr_rx_end(&e->rx);
	code = e->code;
	free(e);
	return code;
}
