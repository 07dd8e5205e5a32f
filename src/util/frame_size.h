/* SPDX-License-Identifier: MIT */
/*
 * Ethernet frame sizes as RFC 2544 counts them (FCS included): the bounds a test frame keeps to and
 * the smallest one that carries a probe. Pure arithmetic, for senders, receivers and captures alike.
 */
#ifndef LINERATE_UTIL_FRAME_SIZE_H
#define LINERATE_UTIL_FRAME_SIZE_H

#define LR_FCS_LEN	4
#define LR_MIN_FRAME	64
#define LR_MAX_FRAME	9018	/* jumbo, incl. FCS */

/* Smallest frame (incl. FCS) that carries a probe for @family. */
unsigned int lr_frame_min_size(int family);

#endif
