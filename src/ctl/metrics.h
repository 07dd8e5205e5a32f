/* SPDX-License-Identifier: MIT */
/*
 * The agent's Prometheus metrics (docs/metrics.md): the state a session shares with the agent's
 * parent (one struct behind a seqlock), its text exposition (format 0.0.4), and the HTTP exchange.
 */
#ifndef LINERATE_CTL_METRICS_H
#define LINERATE_CTL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LR_METRICS_QUEUES	16	/* a sender's per-queue series, at most */
#define LR_METRICS_RX_QUEUES	64	/* a receiver's: every queue rx.per_queue can name (LR_RX_MAX_QUEUES) */
#define LR_METRICS_HEAD_MAX	4096	/* a request's line and headers, at most */
#define LR_METRICS_PAGE_MAX	32768	/* the rendered page, at most (it takes 5 to 11 KiB) */
#define LR_METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

enum lr_metrics_role { LR_METRICS_NONE = 0, LR_METRICS_RX, LR_METRICS_TX, LR_METRICS_REFLECT };

/* Latency figures, in this order: min (quantile 0), p50, p90, p99, p999, max (quantile 1). */
enum { LR_METRICS_NQ = 6 };

struct lr_metrics_queue {
	uint32_t queue;
	uint64_t packets;
};

/*
 * What sessions publish: the current or last test, and how many tests ended. Plain data only
 * (copied word by word through the seqlock); strings NUL-terminated.
 */
struct lr_metrics_test {
	uint64_t tests;	/* tests ended since the agent started */
	uint64_t id;	/* this test's number: 1, 2, ...; 0 before the first */
	uint32_t role;	/* enum lr_metrics_role */
	uint32_t running;	/* prepared and not yet ended */
	char name[128];	/* "rx on ul0 in h2": what the agent's log and busy replies call it */
	char interface[16];
	char engine[16];
	double start_time;	/* prepared at, Unix time in seconds */
	/* a sender's */
	uint64_t tx_packets, tx_bytes;
	double tx_pps;
	uint32_t nqueues;
	struct lr_metrics_queue queues[LR_METRICS_QUEUES];
	/* a receiver's */
	uint64_t rx_packets, rx_bytes;
	uint64_t rx_sent;	/* what the end-of-test markers say was sent (rx.sent), if rx_flows_eot */
	uint32_t rx_flows_eot;	/* flows whose marker came; 0: no "sent" yet (null in the JSON) */
	uint64_t rx_queue_packets[LR_METRICS_RX_QUEUES];	/* by RX queue; 0: no series, as per_queue */
	int64_t rx_lost;
	uint64_t rx_reordered, rx_duplicates;
	double rx_pps;
	uint64_t lat_count, lat_sum_ns;
	uint64_t lat_ns[LR_METRICS_NQ];
	/* a reflector's */
	uint64_t reflect_packets, reflect_bytes;
	/*
	 * CPU per packet of this endpoint's own part (docs/cost.md), NaN until known: a sender's
	 * workers (at its end), a receiver's XDP program per frame (with --prog-stats); their errors
	 */
	double cost_sender_ns, cost_sender_err_ns;
	double cost_receiver_ns, cost_receiver_err_ns;
};

/*
 * The shared region (mmap MAP_SHARED before the fork): one writer at a time, the session that runs
 * (or the parent once that session's process is gone); the parent reads.
 */
struct lr_metrics_shm {
	uint64_t seq;	/* odd while a write is under way */
	uint64_t w[(sizeof(struct lr_metrics_test) + 7) / 8];
};

/* What the agent's parent knows itself. */
struct lr_metrics_agent {
	const char *release, *revision;
	double start_time;	/* Unix time in seconds */
	bool busy;	/* a session runs */
	uint64_t sessions;	/* authenticated connections handed to a session */
	uint64_t refused_busy, refused_error;
	/* before authentication: over the cap of such connections, past the handshake's deadlines */
	uint64_t refused_full, refused_timeout;
};

/* Writes @t to @m. A write left half-done by a writer that died is completed over, not waited for. */
void lr_metrics_publish(struct lr_metrics_shm *m, const struct lr_metrics_test *t);
/* A consistent copy of @m into @t: 0, or -EAGAIN when a write stayed under way through every retry. */
int lr_metrics_read(const struct lr_metrics_shm *m, struct lr_metrics_test *t);

/*
 * Once the writer's process is gone (the agent's parent reaped it): a test it left running is
 * counted as ended and no longer running, and a write it left half-done is completed over.
 */
void lr_metrics_recover(struct lr_metrics_shm *m);

/* The page: @a and @t as exposition text into @buf. Its length, or -ENOSPC. */
int lr_metrics_render(const struct lr_metrics_agent *a, const struct lr_metrics_test *t, char *buf, size_t len);

/* What a request asks, once its head is complete. */
struct lr_metrics_req {
	int status;	/* 200, or 400 (malformed), 404 (another path), 405 (another method), 431 (too long) */
	bool head;	/* HEAD: the same headers, no body */
	bool metrics;	/* 200 for /metrics: the caller renders the page; else / (a pointer to it) */
};

/*
 * The request head in @buf (the @len bytes read so far; the reader stops at LR_METRICS_HEAD_MAX):
 * 0 while it is incomplete, 1 with @r filled once it is complete or cannot be.
 */
int lr_metrics_http_parse(const char *buf, size_t len, struct lr_metrics_req *r);
/*
 * The whole response to @r into @out: status line, Content-Type, Content-Length, Connection:
 * close, and @body (the page, for /metrics; else ignored: the answer has a line of its own).
 * Its length, or -ENOSPC.
 */
int lr_metrics_http_reply(const struct lr_metrics_req *r, const char *body, size_t bodylen, char *out, size_t outlen);

#endif
