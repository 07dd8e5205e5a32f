/* SPDX-License-Identifier: MIT */
/* bpf_stats: calibrated on an empty program, and sampled a short window at a time. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "sys/bpfstats.h"
#include "util/clock.h"
#include "util/log.h"

#define CAL_REPEAT	200000U
#define CAL_ROUNDS	5

int lr_bpf_prog_stats(int prog_fd, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	*run_ns = info.run_time_ns;
	*runs = info.run_cnt;
	return 0;
}

/* Whether stats are on already, for all programs (the sysctl, or someone's BPF_ENABLE_STATS). */
static bool stats_on(void)
{
	char v[8];

	return lr_read_small("/proc/sys/kernel/bpf_stats_enabled", v, sizeof(v)) > 0 && v[0] == '1';
}

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * ns per run of @repeat runs of @prog_fd on a 64-byte frame, by this
 * thread's CPU time around the call (time others took the CPU for is not
 * in it, as a wall clock's would be); < 0 on error.
 */
static double timed_run(int prog_fd, unsigned int repeat)
{
	unsigned char frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame), .repeat = repeat);
	uint64_t t0 = thread_ns();

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -1;
	return (double)(thread_ns() - t0) / repeat;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int lr_bpf_stats_calibrate(struct lr_stats_cal *out, char *why, size_t len)
{
	/* r0 = XDP_PASS; exit: nothing to time but the run itself */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	double added[CAL_ROUNDS], reported[CAL_ROUNDS], spread;
	/*
	 * The sysctl says only what was last written to it, not whether another
	 * tool holds stats on through BPF_ENABLE_STATS: a run counted while
	 * stats should be off says that too (below).
	 */
	bool already = stats_on();
	int prog, sfd = -1, ret = 0;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	prog = bpf_prog_load(BPF_PROG_TYPE_XDP, "lr_stats_cal", "GPL", insns, 2, NULL);
	if (prog < 0) {
		ret = -errno;
		snprintf(why, len, "cannot load the calibration program: %s", strerror(-ret));
		return ret;
	}
	for (i = 0; i < CAL_ROUNDS; i++) {
		uint64_t rt0 = 0, rc0 = 0, rt1 = 0, rc1 = 0;
		double off = 0, on;

		if (!already) {
			if (lr_bpf_prog_stats(prog, &rt0, &rc0) || (off = timed_run(prog, CAL_REPEAT)) < 0 ||
			    lr_bpf_prog_stats(prog, &rt1, &rc1))
				goto run_err;
			/* counted with ours off: someone else holds them on, all along as far as we can tell */
			if (rc1 != rc0)
				already = true;
		}
		/* on already: nothing to turn on (and no CAP_SYS_ADMIN needed) */
		if (!already) {
			sfd = bpf_enable_stats(BPF_STATS_RUN_TIME);
			if (sfd < 0) {
				ret = -errno;
				snprintf(why, len, "cannot turn bpf_stats on (BPF_ENABLE_STATS): %s%s", strerror(-ret),
					 ret == -EPERM ? " (needs CAP_SYS_ADMIN)" : "");
				goto out;
			}
		}
		if (lr_bpf_prog_stats(prog, &rt0, &rc0) || (on = timed_run(prog, CAL_REPEAT)) < 0 ||
		    lr_bpf_prog_stats(prog, &rt1, &rc1))
			goto run_err;
		if (sfd >= 0)
			close(sfd);
		sfd = -1;
		added[i] = on - off;
		reported[i] = rc1 > rc0 ? (double)(rt1 - rt0) / (double)(rc1 - rc0) : 0;
	}
	qsort(added, CAL_ROUNDS, sizeof(added[0]), cmp_double);
	qsort(reported, CAL_ROUNDS, sizeof(reported[0]), cmp_double);
	out->valid = reported[CAL_ROUNDS / 2] > 0;
	out->already_on = already;
	out->added_known = !already;
	out->reported_ns = reported[CAL_ROUNDS / 2];
	out->added_ns = already ? 0 : added[CAL_ROUNDS / 2];
	/* half the range of the middle rounds (an interrupted round is an outlier), at least 1 ns */
	spread = (reported[CAL_ROUNDS - 2] - reported[1]) / 2;
	if (!already && (added[CAL_ROUNDS - 2] - added[1]) / 2 > spread)
		spread = (added[CAL_ROUNDS - 2] - added[1]) / 2;
	out->err_ns = spread > 1 ? spread : 1;
	if (!out->valid) {
		ret = -EIO;
		snprintf(why, len, "bpf_stats counted no run of the calibration program");
		goto out;
	}
	pr_debug("bpf_stats calibration: +%.1f ns a run, %.1f ns of it inside the reported time (+-%.1f)%s\n",
		 out->added_ns, out->reported_ns, out->err_ns, already ? "; stats were on already" : "");
	goto out;
run_err:
	ret = -errno;
	snprintf(why, len, "cannot run the calibration program (BPF_PROG_RUN): %s", strerror(-ret));
out:
	if (sfd >= 0)
		close(sfd);
	close(prog);
	return ret;
}

struct lr_bpf_sampler {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool kick;	/* open a window now */
};

/* Waits @ns, or until stopped or (@kickable) kicked; true when stopped. */
static bool nap(struct lr_bpf_sampler *s, uint64_t ns, bool kickable)
{
	uint64_t until = lr_now_ns() + ns;
	struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ULL), .tv_nsec = (long)(until % 1000000000ULL) };
	bool stop;

	pthread_mutex_lock(&s->lock);
	while (!s->stop && !(kickable && s->kick) && lr_now_ns() < until)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT)
			break;
	if (kickable)
		s->kick = false;
	stop = s->stop;
	pthread_mutex_unlock(&s->lock);
	return stop;
}

static void *sampler_thread(void *arg)
{
	struct lr_bpf_sampler *s = arg;
	/* the first window soon after the start, so that a short test gets one too */
	uint64_t wait = 30000000ULL;

	for (;;) {
		int fd;

		if (nap(s, wait, true))
			break;
		wait = LR_STATS_PERIOD_NS - LR_STATS_WINDOW_NS;
		fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (fd < 0)
			continue;
		nap(s, LR_STATS_WINDOW_NS, false);
		close(fd);
	}
	return NULL;
}

int lr_bpf_sampler_start(struct lr_bpf_sampler **out, char *why, size_t len)
{
	struct lr_bpf_sampler *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!s) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* signals stay with the caller's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->thread, NULL, sampler_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		snprintf(why, len, "cannot start the bpf_stats sampler: %s", strerror(err));
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return -err;
	}
	*out = s;
	return 0;
}

void lr_bpf_sampler_kick(struct lr_bpf_sampler *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->kick = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void lr_bpf_sampler_stop(struct lr_bpf_sampler *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
