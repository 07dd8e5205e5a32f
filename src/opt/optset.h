/* SPDX-License-Identifier: MIT */
/*
 * An option set: which options of the one table a struct takes, where each lands, and the rules
 * no single option can say. The command line, a run file and the agent protocol fill a sender, a
 * receiver or a reflector through the same set, so they share defaults, bounds and checks.
 */
#ifndef LINERATE_OPTSET_H
#define LINERATE_OPTSET_H

#include <stddef.h>
#include "opt/opt.h"

struct lr_optset {
	const struct lr_bind *binds;	/* in the order --help lists them */
	unsigned int nbinds;
	size_t size;	/* of the struct they land in */
	void (*init)(void *o);	/* defaults the table cannot give (after the table's); may be NULL */
	/* what no single option can say, and defaults that depend on others; may be NULL */
	int (*check)(void *o, char *err, size_t errlen);
};

/* In an initializer: @table's bindings into @type. */
#define LR_OPTSET(table, type) .binds = (table), .nbinds = sizeof(table) / sizeof((table)[0]), .size = sizeof(type)

/* The senders, receivers and reflectors of every front end (struct lr_send_opts and the others). */
extern const struct lr_optset lr_send_optset, lr_recv_optset, lr_reflect_optset;

/* Zeroes @o, then applies the table's defaults and s->init. */
void lr_optset_defaults(const struct lr_optset *s, void *o);
/* Where option @id lands in @s's struct, or NULL when @s does not take it. */
const struct lr_bind *lr_optset_bind(const struct lr_optset *s, enum lr_opt_id id);

#endif
