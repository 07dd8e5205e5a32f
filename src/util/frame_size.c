/* SPDX-License-Identifier: MIT */
/* The smallest test frame per address family: headers, UDP, the probe and the FCS, at least 64 bytes. */
#include <sys/socket.h>
#include "linerate/probe.h"
#include "util/frame_size.h"

unsigned int lr_frame_min_size(int family)
{
	unsigned int l3 = family == AF_INET6 ? 40 : 20;
	unsigned int n = LR_ETH_HLEN + l3 + 8 + LR_PROBE_LEN + LR_FCS_LEN;

	return n < LR_MIN_FRAME ? LR_MIN_FRAME : n;
}
