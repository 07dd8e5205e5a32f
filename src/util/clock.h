/* SPDX-License-Identifier: MIT */
/*
 * The user-space clocks: CLOCK_MONOTONIC for deadlines, pacing and rates, and the stamping clock,
 * the one bpf_ktime_get_ns() reads, for probe stamps and whatever is compared with a BPF reading.
 */
#ifndef LINERATE_UTIL_CLOCK_H
#define LINERATE_UTIL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: inside a time namespace, the host's plus the namespace's offset. */
uint64_t lr_now_ns(void);
/* The same in milliseconds, for poll() deadlines. */
int64_t lr_now_ms(void);

/*
 * The stamping clock in nanoseconds: the host's CLOCK_MONOTONIC, which bpf_ktime_get_ns() reads in
 * any namespace. It is lr_now_ns() less lr_timens_offset_ns(), so a stamp taken in user space and
 * one taken by BPF agree, in a time namespace too (docs/counting.md).
 */
uint64_t lr_now_bpf_ns(void);
/*
 * This process's time-namespace offset of CLOCK_MONOTONIC in ns (0 outside one), read from
 * /proc/self/timens_offsets on first use and kept: a running process never changes time namespace
 * (linerate enters network namespaces only). A file that cannot be read or parsed is warned about
 * once and taken as 0, the behaviour without time namespaces.
 */
int64_t lr_timens_offset_ns(void);

/*
 * The text of /proc/PID/timens_offsets, strictly: lines "NAME SECS NSECS" (NAME lower-case letters,
 * SECS a signed integer, NSECS 0..999999999, separated by blanks), as the kernel writes them. 0 and
 * the monotonic offset in @offset_ns (0 when no line names "monotonic"), or -EINVAL for anything
 * else: another shape, a repeated monotonic line, an offset beyond 64-bit nanoseconds.
 */
int lr_timens_parse(const char *text, int64_t *offset_ns);
/* Reads and parses @path: 0 with 0 in @offset_ns when it does not exist (no time namespaces); -errno. */
int lr_timens_read(const char *path, int64_t *offset_ns);

#endif
