/* SPDX-License-Identifier: MIT */
/* The one clock of the user-space side: CLOCK_MONOTONIC, for deadlines, rates and probe stamps. */
#ifndef LINERATE_UTIL_CLOCK_H
#define LINERATE_UTIL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: the clock bpf_ktime_get_ns() reads, so BPF and user space agree. */
uint64_t lr_now_ns(void);
/* The same in milliseconds, for poll() deadlines. */
int64_t lr_now_ms(void);

#endif
