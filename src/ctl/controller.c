/* SPDX-License-Identifier: MIT */
/*
 * The controller's connection to an endpoint (TCP to an agent, or run's socketpair): one exchange
 * at a time, each reply checked strictly, a keepalive that pings while nothing else is asked.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl/controller_impl.h"
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "util/clock.h"
#include "util/jfield.h"

#define TICK_NS		50000000L	/* the keepalive thread's look at the clock */
#define LAST_WORD_MS	50	/* a message already sent by an endpoint that closed the stream */

int lr_ctl_attach(int fd, const char *name, struct lr_ctl **out)
{
	struct lr_ctl *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = fd;
	snprintf(c->name, sizeof(c->name), "%s", name);
	pthread_mutex_init(&c->lock, NULL);
	c->last_ms = lr_now_ms();
	*out = c;
	return 0;
}

const char *lr_ctl_name(const struct lr_ctl *c)
{
	return c->name;
}

const char *lr_ctl_agent(const struct lr_ctl *c)
{
	return c->agent;
}

const struct lr_host *lr_ctl_host(const struct lr_ctl *c)
{
	return &c->host;
}

struct json_object *lr_ctl_host_json(const struct lr_ctl *c)
{
	return c->host_json;
}

int lr_ctl_exchange(struct lr_ctl *c, struct json_object *req, int timeout_ms, struct json_object **rep, char *err,
		    size_t errlen)
{
	int ret;

	*rep = NULL;
	if (c->dead) {
		json_object_put(req);
		snprintf(err, errlen, "%s", c->why);
		return c->dead;
	}
	ret = lr_msg_send(c->fd, req, timeout_ms, err, errlen);
	json_object_put(req);
	if (ret == -EPIPE || ret == -ECONNRESET) {
		/* the endpoint closed the stream: its last word, if it left one, says why */
		char why[128];
		bool reset = ret == -ECONNRESET;

		ret = lr_msg_recv(c->fd, LR_MSG_MAX, LAST_WORD_MS, rep, why, sizeof(why)) ? -ECONNRESET : 0;
		if (ret)
			snprintf(err, errlen, "%s", reset ? "the connection was reset" : "the connection was closed");
	} else if (!ret) {
		ret = lr_msg_recv(c->fd, LR_MSG_MAX, timeout_ms, rep, err, errlen);
	}
	if (ret == -EPROTOTYPE) {
		char said[256];

		snprintf(said, sizeof(said), "%s", err);
		snprintf(err, errlen, "%s is not a linerate agent (it answered %s)", c->agent[0] ? c->agent : c->name,
			 said);
	}
	c->last_ms = lr_now_ms();
	if (ret) {
		c->dead = ret;
		snprintf(c->why, sizeof(c->why), "%s", err);
	}
	return ret;
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

int lr_ctl_expect(struct lr_ctl *c, struct json_object *m, const char *req_type, const char *want,
		  struct json_object **rep, char *err, size_t errlen)
{
	struct error_reply e;
	int ret = 0;

	if (!strcmp(lr_msg_type(m), "error")) {
		ret = lr_msg_get(m, error_fields, &e, err, errlen);
		if (!ret)
			snprintf(err, errlen, "%s", e.message);
		ret = ret ? -EBADMSG : (int)e.code;
		/* the endpoint's last word: it ended the test and closes the stream, so no call can follow */
		if (ret > 0 && !strncmp(e.message, LR_CTL_ENDED, strlen(LR_CTL_ENDED))) {
			c->dead = -ECONNABORTED;
			snprintf(c->why, sizeof(c->why), "%s", err);
		}
	} else if (strcmp(lr_msg_type(m), want)) {
		snprintf(err, errlen, "the answer to '%s' was '%.32s', not '%s'", req_type, lr_msg_type(m), want);
		ret = -EBADMSG;
	}
	if (ret < 0) {
		c->dead = ret;
		snprintf(c->why, sizeof(c->why), "%s", err);
	}
	if (!ret && rep)
		*rep = m;
	else
		json_object_put(m);
	return ret;
}

int lr_ctl_call(struct lr_ctl *c, struct json_object *req, const char *want, int timeout_ms, struct json_object **rep,
		char *err, size_t errlen)
{
	struct json_object *m;
	char type[32];
	int ret;

	snprintf(type, sizeof(type), "%s", lr_msg_type(req));
	pthread_mutex_lock(&c->lock);
	ret = lr_ctl_exchange(c, req, timeout_ms, &m, err, errlen);
	if (!ret)
		ret = lr_ctl_expect(c, m, type, want, rep, err, errlen);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int lr_ctl_broken(struct lr_ctl *c, const char *err)
{
	pthread_mutex_lock(&c->lock);
	c->dead = -EBADMSG;
	snprintf(c->why, sizeof(c->why), "%s", err);
	pthread_mutex_unlock(&c->lock);
	return -EBADMSG;
}

int lr_ctl_reply_get(struct lr_ctl *c, struct json_object *m, const struct lr_jfield *f, void *base, char *err,
		     size_t errlen)
{
	return lr_msg_get(m, f, base, err, errlen) ? lr_ctl_broken(c, err) : 0;
}

/* ---- the keepalive ------------------------------------------------------------------------------ */

/* Under c->lock: a ping; any failure, an error answered to it too (the agent stopping), kills the connection. */
static void ping_locked(struct lr_ctl *c)
{
	struct json_object *m;
	char err[512];
	int ret;

	ret = lr_ctl_exchange(c, lr_msg_new("ping"), LR_CTL_REPLY_MS, &m, err, sizeof(err));
	if (!ret)
		ret = lr_ctl_expect(c, m, "ping", "pong", NULL, err, sizeof(err));
	if (ret > 0) {
		c->dead = -ECONNABORTED;
		snprintf(c->why, sizeof(c->why), "%s", err);
	}
}

static void *keepalive(void *arg)
{
	struct lr_ctl *c = arg;
	struct timespec tick = { 0, TICK_NS };

	while (!c->stopping) {
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&c->lock);
		if (!c->dead && lr_now_ms() - c->last_ms >= LR_CTL_PING_MS)
			ping_locked(c);
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

int lr_ctl_keepalive(struct lr_ctl *c)
{
	int ret = pthread_create(&c->keepalive, NULL, keepalive, c);

	c->keepalive_on = !ret;
	return -ret;
}

bool lr_ctl_dead(struct lr_ctl *c, char *err, size_t errlen)
{
	bool dead;

	pthread_mutex_lock(&c->lock);
	dead = c->dead != 0;
	if (dead)
		snprintf(err, errlen, "%s", c->why);
	pthread_mutex_unlock(&c->lock);
	return dead;
}

void lr_ctl_close(struct lr_ctl *c)
{
	if (!c)
		return;
	c->stopping = true;
	if (c->keepalive_on)
		pthread_join(c->keepalive, NULL);
	close(c->fd);
	json_object_put(c->host_json);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
