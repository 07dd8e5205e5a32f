/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC readings. */
#include <time.h>
#include "util/clock.h"

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
