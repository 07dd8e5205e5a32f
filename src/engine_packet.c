/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER until the AF_PACKET engine lands (being written now): reports itself unusable. */
#include <errno.h>
#include <stdio.h>
#include "linerate/engine.h"

static int packet_probe(const struct lr_if *ifc, const struct lr_send_opts *o, char *why, size_t len)
{
	(void)ifc;
	(void)o;
	snprintf(why, len, "packet: not built yet");
	return -EOPNOTSUPP;
}

const struct lr_engine_ops lr_engine_packet = {
	.name = "packet",
	.probe = packet_probe,
};
