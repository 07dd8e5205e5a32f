/* SPDX-License-Identifier: MIT */
/* The sender's result as data: what it was, its workers' errors, its JSON document (words: summary/). */
#include <stdio.h>
#include <string.h>
#include "sys/peer_gro.h"
#include "tx/tx_impl.h"
#include "util/report.h"
#include "util/result.h"
#include "util/units.h"

void lr_tx_describe(const struct lr_tx *c, struct lr_tx_about *a)
{
	const struct lr_tx_spec *o = c->o;

	a->engine = c->ops->name;
	a->mode = lr_tx_mode(c);
	a->ifname = o->ifname;
	a->mac_how = c->mac_how;
	a->nworkers = o->nworkers;
	a->frame_bytes = c->frame_bytes;
	a->flows = o->flows;
	a->replay = o->replay[0] != '\0';
	a->stamp = o->stamp;
	a->drops_completed = c->ops->drops_completed;
}

bool lr_tx_worker_error(const struct lr_tx *c, unsigned int i, char *buf, size_t len)
{
	const struct lr_worker *w = &c->ws[i];

	if (i >= c->o->nworkers || !w->err)
		return false;
	snprintf(buf, len, "worker %u: %s", w->index, w->errmsg[0] ? w->errmsg : strerror(-w->err));
	return true;
}

struct json_object *lr_tx_doc(const struct lr_tx *c, const struct lr_tx_result *r, double secs, const char *error,
			      const struct lr_rtt_result *rtt, const struct lr_prep_result *prep)
{
	static const struct lr_prep_result not_asked = { .asked = false };
	const struct lr_tx_spec *o = c->o;
	struct json_object *root = lr_json_doc("send");

	json_object_object_add(root, "engine", json_object_new_string(c->ops->name));
	json_object_object_add(root, "mode", json_object_new_string(lr_tx_mode(c)));
	json_object_object_add(root, "interface", json_object_new_string(o->ifname));
	json_object_object_add(root, "duration_s", json_object_new_double(secs));
	json_object_object_add(root, "frame_size", json_object_new_int((int)c->frame_bytes));
	json_object_object_add(root, "flows", json_object_new_int((int)o->flows));
	json_object_object_add(root, "error", error && error[0] ? json_object_new_string(error) : NULL);
	lr_tx_result_put(root, r);
	if (rtt)
		lr_rtt_result_put(root, rtt);
	lr_prep_result_put(root, prep ? prep : &not_asked);
	return root;
}

const char *lr_tx_engine_line(const struct lr_tx *c)
{
	return c->engine_line;
}

const char *lr_tx_notice(const struct lr_tx *c)
{
	return c->notice[0] ? c->notice : NULL;
}
