/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC readings, and the stamping clock: CLOCK_MONOTONIC less the time namespace's offset. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util/clock.h"
#include "util/log.h"

#define NSEC_PER_SEC	1000000000LL
#define TIMENS_FILE	"/proc/self/timens_offsets"
#define TIMENS_MAX	512	/* two lines of at most 32 bytes today: more is not the kernel's file */

/*
 * Written once under timens_once, read-only afterwards: a cache of a fact that cannot change while
 * the process runs, so that stamping a batch costs no file read.
 */
static pthread_once_t timens_once = PTHREAD_ONCE_INIT;
static int64_t timens_offset;

uint64_t lr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int64_t lr_now_ms(void)
{
	return (int64_t)(lr_now_ns() / 1000000);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Digits at *p (after an optional '-' when @sign), into @out; *p moves past them. */
static int parse_int(const char **p, bool sign, int64_t max, int64_t *out)
{
	const char *s = *p;
	bool neg = false;
	int64_t v = 0;

	if (sign && *s == '-') {
		neg = true;
		s++;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		/* accumulated negative when negative, so INT64_MIN itself is representable */
		if (__builtin_mul_overflow(v, 10, &v) ||
		    (neg ? __builtin_sub_overflow(v, *s - '0', &v) : __builtin_add_overflow(v, *s - '0', &v)))
			return -EINVAL;
	}
	if (v > max)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

/* One "NAME SECS NSECS" line at *p, up to and past its newline (or the end of the text). */
static int parse_line(const char **p, bool *monotonic, int64_t *ns)
{
	const char *s = *p, *name = s;
	int64_t sec, nsec;
	size_t len;

	while (*s >= 'a' && *s <= 'z')
		s++;
	len = (size_t)(s - name);
	if (!len || !is_blank(*s))
		return -EINVAL;
	while (is_blank(*s))
		s++;
	if (parse_int(&s, true, INT64_MAX, &sec) || !is_blank(*s))
		return -EINVAL;
	while (is_blank(*s))
		s++;
	if (parse_int(&s, false, NSEC_PER_SEC - 1, &nsec))
		return -EINVAL;
	while (is_blank(*s))
		s++;
	if (*s != '\n' && *s != '\0')
		return -EINVAL;
	/*
	 * The kernel keeps nsec in 0..1e9-1 also for negative offsets: -1.5 s is "-2 500000000".
	 * Such a pair is summed from sec + 1 down, so that the most negative offset does not pass
	 * below INT64_MIN on the way.
	 */
	if (sec < 0 && nsec) {
		sec++;
		nsec -= NSEC_PER_SEC;
	}
	if (__builtin_mul_overflow(sec, NSEC_PER_SEC, ns) || __builtin_add_overflow(*ns, nsec, ns))
		return -EINVAL;
	*monotonic = len == strlen("monotonic") && !memcmp(name, "monotonic", len);
	*p = *s ? s + 1 : s;
	return 0;
}

int lr_timens_parse(const char *text, int64_t *offset_ns)
{
	const char *p = text;
	bool seen = false, mono;
	int64_t ns, off = 0;

	while (*p) {
		if (parse_line(&p, &mono, &ns))
			return -EINVAL;
		if (!mono)
			continue;
		if (seen)
			return -EINVAL;
		seen = true;
		off = ns;
	}
	*offset_ns = off;
	return 0;
}

int lr_timens_read(const char *path, int64_t *offset_ns)
{
	char buf[TIMENS_MAX + 1];
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	*offset_ns = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* a file of /proc may come in several reads; one byte past the limit says it is too long */
	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err)
		return err;
	if (len >= TIMENS_MAX || memchr(buf, '\0', len))
		return -EINVAL;
	buf[len] = '\0';
	return lr_timens_parse(buf, offset_ns);
}

static void timens_load(void)
{
	int err = lr_timens_read(TIMENS_FILE, &timens_offset);

	if (err) {
		pr_warn("cannot read %s (%s): assuming no time namespace; latency is wrong inside one\n",
			TIMENS_FILE, strerror(-err));
		timens_offset = 0;
	}
}

int64_t lr_timens_offset_ns(void)
{
	pthread_once(&timens_once, timens_load);
	return timens_offset;
}

uint64_t lr_now_bpf_ns(void)
{
	return lr_now_ns() - (uint64_t)lr_timens_offset_ns();
}
