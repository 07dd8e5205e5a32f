/* SPDX-License-Identifier: MIT */
/*
 * The metrics listener of the agent's parent: non-blocking sockets only, a fixed table of
 * scrapers, each with a deadline; a slow or hostile one loses its connection, never the loop's time.
 */
#define _GNU_SOURCE	/* accept4() */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "ctl/exporter.h"
#include "util/clock.h"

#define BACKLOG		128
#define REPLY_HEAD_MAX	512	/* a response's status line and headers, and an error's line of text */

struct client {
	int fd;	/* -1: a free slot */
	int64_t deadline_ms;
	size_t got;	/* bytes of the request head read */
	char *out;	/* the response, once the head is read */
	size_t len, sent;
	char head[LR_METRICS_HEAD_MAX];
};

struct lr_exporter {
	int lfd;
	const struct lr_metrics_shm *shm;
	struct client c[LR_EXPORTER_CLIENTS];
	char page[LR_METRICS_PAGE_MAX];
	/* where each fd of the last lr_exporter_fds() went: -1 the listener, else a slot */
	int slot[LR_EXPORTER_FDS];
};

static void drop_client(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->got = c->len = c->sent = 0;
}

int lr_exporter_open(const struct lr_ctl_addr *addr, const struct lr_metrics_shm *shm, struct lr_exporter **out,
		     char *err, size_t errlen)
{
	struct lr_exporter *x = calloc(1, sizeof(*x));
	unsigned int i;
	int ret;

	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = lr_ctl_listen(addr, &x->lfd, err, errlen);
	if (ret) {
		free(x);
		return ret;
	}
	/*
	 * A deeper queue than the control port's: connections that come in a burst while the loop
	 * is busy would otherwise see their handshake dropped, and retry only a second later.
	 */
	listen(x->lfd, BACKLOG);
	fcntl(x->lfd, F_SETFL, fcntl(x->lfd, F_GETFL) | O_NONBLOCK);
	x->shm = shm;
	for (i = 0; i < LR_EXPORTER_CLIENTS; i++)
		x->c[i].fd = -1;
	*out = x;
	return 0;
}

int lr_exporter_fds(struct lr_exporter *x, struct pollfd *p, int *timeout_ms)
{
	int64_t now = lr_now_ms();
	unsigned int i;
	int n = 0;

	p[n] = (struct pollfd){ .fd = x->lfd, .events = POLLIN };
	x->slot[n++] = -1;
	for (i = 0; i < LR_EXPORTER_CLIENTS; i++) {
		struct client *c = &x->c[i];
		int64_t left;

		if (c->fd < 0)
			continue;
		left = c->deadline_ms - now;
		if (left < *timeout_ms)
			*timeout_ms = left > 0 ? (int)left : 0;
		p[n] = (struct pollfd){ .fd = c->fd, .events = c->out ? POLLOUT : POLLIN };
		x->slot[n++] = (int)i;
	}
	return n;
}

/* The head is in (or cannot be): the response, rendered now, becomes what is left to send. */
static void queue_response(struct lr_exporter *x, struct client *c, const struct lr_metrics_agent *a)
{
	struct lr_metrics_test t;
	struct lr_metrics_req r;
	int body = 0, n;
	size_t size;

	lr_metrics_http_parse(c->head, c->got, &r);
	if (r.status == 200 && r.metrics) {
		if (lr_metrics_read(x->shm, &t))
			r.status = 503;
		else if ((body = lr_metrics_render(a, &t, x->page, sizeof(x->page))) < 0)
			r.status = 500;
		if (r.status != 200) {
			r.metrics = false;
			body = 0;
		}
	}
	size = (size_t)body + REPLY_HEAD_MAX;
	c->out = malloc(size);
	n = c->out ? lr_metrics_http_reply(&r, x->page, (size_t)body, c->out, size) : -ENOMEM;
	if (n < 0) {
		drop_client(c);
		return;
	}
	c->len = (size_t)n;
	c->sent = 0;
	c->deadline_ms = lr_now_ms() + LR_EXPORTER_WRITE_MS;
}

static void on_readable(struct lr_exporter *x, struct client *c, const struct lr_metrics_agent *a)
{
	struct lr_metrics_req r;
	ssize_t n;

	n = recv(c->fd, c->head + c->got, sizeof(c->head) - c->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop_client(c);	/* gone before it asked for anything */
		return;
	}
	c->got += (size_t)n;
	if (lr_metrics_http_parse(c->head, c->got, &r))
		queue_response(x, c, a);
}

static void on_writable(struct client *c)
{
	ssize_t n = send(c->fd, c->out + c->sent, c->len - c->sent, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop_client(c);
		return;
	}
	c->sent += (size_t)n;
	if (c->sent == c->len) {
		/*
		 * Connection: close. What the scraper sent beyond its head (a body, a head too long) is
		 * read away first, within a bound: closing with unread bytes would send a reset, which
		 * can cost the scraper the answer it has not read yet.
		 */
		char sink[4096];
		unsigned int i;

		for (i = 0; i < 16 && recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++)
			;
		drop_client(c);
	}
}

/*
 * A slot for a new connection: a free one; else the one that has kept its request longest (a
 * scraper asks at once, so connections that do not are the ones to lose); else, every slot
 * answering, none.
 */
static struct client *slot_for_new(struct lr_exporter *x)
{
	struct client *old = NULL;
	unsigned int i;

	for (i = 0; i < LR_EXPORTER_CLIENTS; i++) {
		struct client *c = &x->c[i];

		if (c->fd < 0)
			return c;
		if (!c->out && (!old || c->deadline_ms < old->deadline_ms))
			old = c;
	}
	if (old)
		drop_client(old);
	return old;
}

/*
 * The connections waiting, a bounded number per call. A scraper's request is usually in by the
 * time its connection is accepted, so it is read, and answered, at once: a slot is held only by a
 * connection that has not asked yet, or not taken its answer.
 */
static void accept_some(struct lr_exporter *x, const struct lr_metrics_agent *a)
{
	struct client *c;
	unsigned int i;
	int fd;

	for (i = 0; i < 2 * LR_EXPORTER_CLIENTS; i++) {
		fd = accept4(x->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;	/* EAGAIN: none left; anything else: nothing to do about it here */
		c = slot_for_new(x);
		if (!c) {
			close(fd);	/* a scraper retries at its next interval */
			continue;
		}
		c->fd = fd;
		c->deadline_ms = lr_now_ms() + LR_EXPORTER_READ_MS;
		on_readable(x, c, a);
		if (c->fd >= 0 && c->out)
			on_writable(c);
	}
}

void lr_exporter_serve(struct lr_exporter *x, const struct pollfd *p, int n, const struct lr_metrics_agent *a)
{
	int64_t now = lr_now_ms();
	unsigned int i;
	int k;

	for (k = 0; k < n; k++) {
		struct client *c;

		if (!p[k].revents)
			continue;
		if (x->slot[k] < 0) {
			accept_some(x, a);
			continue;
		}
		c = &x->c[x->slot[k]];
		if (c->fd != p[k].fd)
			continue;
		if (c->out && (p[k].revents & (POLLOUT | POLLERR | POLLHUP)))
			on_writable(c);
		else if (!c->out && (p[k].revents & (POLLIN | POLLERR | POLLHUP)))
			on_readable(x, c, a);
	}
	/* deadlines: a request not in, or a response not taken, in time */
	for (i = 0; i < LR_EXPORTER_CLIENTS; i++)
		if (x->c[i].fd >= 0 && now >= x->c[i].deadline_ms)
			drop_client(&x->c[i]);
}

void lr_exporter_close(struct lr_exporter *x)
{
	unsigned int i;

	if (!x)
		return;
	for (i = 0; i < LR_EXPORTER_CLIENTS; i++)
		drop_client(&x->c[i]);
	close(x->lfd);
	free(x);
}
