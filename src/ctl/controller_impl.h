/* SPDX-License-Identifier: MIT */
/* The controller's connection and its one exchange at a time, shared by ctl/controller*.c only. */
#ifndef LINERATE_CONTROLLER_IMPL_H
#define LINERATE_CONTROLLER_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include "ctl/ctl.h"
#include "ctl/host.h"
#include "ctl/net.h"
#include "util/jfield.h"

struct lr_ctl {
	int fd;
	char name[LR_HOSTPORT_MAX + 32];	/* "the agent at HOST:PORT" */
	char agent[LR_HOSTPORT_MAX + 8];	/* "HOST:PORT"; "" for an attached stream */
	pthread_mutex_t lock;	/* one request and its reply at a time */
	int64_t last_ms;	/* the last exchange (under lock) */
	int dead;	/* -errno once an exchange failed (under lock) */
	char why[512];
	pthread_t keepalive;
	bool keepalive_on;
	volatile bool stopping;
	struct lr_host host;
	struct json_object *host_json;
};

/* Under c->lock: one request out (freed here), one message back; a failure kills the connection. */
int lr_ctl_exchange(struct lr_ctl *c, struct json_object *req, int timeout_ms, struct json_object **rep, char *err,
		    size_t errlen);
/*
 * Under c->lock: @m (freed here) is of type @want: 0 and @m in @rep (NULL: freed). An "error" reply:
 * its exit code and message. Another type is out of protocol: the connection is dead then.
 */
int lr_ctl_expect(struct lr_ctl *c, struct json_object *m, const char *req_type, const char *want,
		  struct json_object **rep, char *err, size_t errlen);
/* Sends @req (freed here), receives the reply: see lr_ctl_expect(). Takes c->lock. */
int lr_ctl_call(struct lr_ctl *c, struct json_object *req, const char *want, int timeout_ms, struct json_object **rep,
		char *err, size_t errlen);
/* A reply out of protocol (said in @err): the connection is dead, the two sides out of step; -EBADMSG. */
int lr_ctl_broken(struct lr_ctl *c, const char *err);
/* A reply's keys into @base by @f, strictly: 0, or lr_ctl_broken(). */
int lr_ctl_reply_get(struct lr_ctl *c, struct json_object *m, const struct lr_jfield *f, void *base, char *err,
		     size_t errlen);

#endif
