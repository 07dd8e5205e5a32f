/* SPDX-License-Identifier: MIT */
/* recv's JSON document, from a result and its context, and back (the summary's words: summary/). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "linerate/probe.h"
#include "rx/report.h"
#include "rx/rx.h"
#include "util/frame_size.h"
#include "util/jfield.h"
#include "util/log.h"
#include "util/report.h"
#include "util/result.h"
#include "util/units.h"


/* The document's own keys beside the result (frame_size is derived, so only written). */
static const struct lr_jfield context_fields[] = {
	{ "engine", LR_J_STR, offsetof(struct lr_rx_context, engine), .size = sizeof(((struct lr_rx_context *)0)->engine), .min = 1 },
	{ "mode", LR_J_STR, offsetof(struct lr_rx_context, mode), .size = sizeof(((struct lr_rx_context *)0)->mode) },
	{ "interface", LR_J_STR, offsetof(struct lr_rx_context, ifname), .size = sizeof(((struct lr_rx_context *)0)->ifname), .min = 1 },
	{ "duration_s", LR_J_DOUBLE, offsetof(struct lr_rx_context, secs) },
	{ "error", LR_J_STR_NULL, offsetof(struct lr_rx_context, error), .size = sizeof(((struct lr_rx_context *)0)->error) },
	{ NULL }
};

void lr_rx_context_of(struct lr_rx_context *x, const struct lr_rx *rx, const char *ifname)
{
	snprintf(x->engine, sizeof(x->engine), "%s", rx->ops->name);
	snprintf(x->mode, sizeof(x->mode), "%s", rx->mode);
	snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
}

struct json_object *lr_rx_doc(const struct lr_rx_context *x, const struct lr_rx_result *r)
{
	double frame = lr_rx_result_frame_bytes(r);
	struct json_object *root = lr_json_doc("recv");

	json_object_object_add(root, "engine", json_object_new_string(x->engine));
	json_object_object_add(root, "mode", json_object_new_string(x->mode));
	json_object_object_add(root, "interface", json_object_new_string(x->ifname));
	json_object_object_add(root, "duration_s", json_object_new_double(x->secs));
	json_object_object_add(root, "frame_size", json_object_new_int((int)(r->packets ? frame + LR_FCS_LEN : 0)));
	json_object_object_add(root, "error", x->error[0] ? json_object_new_string(x->error) : NULL);
	json_object_object_add(root, "stopped", x->stopped[0] ? json_object_new_string(x->stopped) : NULL);
	lr_rx_result_put(root, r);
	return root;
}

int lr_rx_doc_get(struct json_object *doc, struct lr_rx_context *x, struct lr_rx_result *r, char *err,
		  size_t errlen)
{
	int ret = lr_jfield_get(doc, context_fields, x, "", false, err, errlen);

	x->pcap = NULL;
	return ret ? ret : lr_rx_result_get(doc, r, err, errlen);
}
