/* SPDX-License-Identifier: MIT */
/*
 * A C struct ⇄ JSON object through one table of its fields: the table renders the object and
 * parses it back strictly (every key present, of its type, in its bounds; no unknown key).
 */
#ifndef LINERATE_JFIELD_H
#define LINERATE_JFIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

enum lr_jtype {
	LR_J_U64 = 1,	/* uint64_t */
	LR_J_I64,	/* int64_t */
	LR_J_UINT,	/* unsigned int */
	LR_J_U16,	/* uint16_t */
	LR_J_DOUBLE,	/* double, finite */
	LR_J_BOOL,	/* bool */
	LR_J_STR,	/* char[size]; "" allowed unless min is 1 */
	LR_J_STR_NULL,	/* char[size]; null when "" */
	LR_J_ENUM,	/* int-sized enum, rendered as names[value] */
	LR_J_U64_NULL,	/* uint64_t; null when the bool at @flag is false */
	LR_J_OBJ,	/* the nested object of @sub, at @off */
	LR_J_OBJ_NULL,	/* the same, or null when the bool at @flag is false */
	LR_J_ARRAY,	/* @count (unsigned int, at @flag) elements of @sub, @size bytes apart, at most @max */
	LR_J_CUSTOM,	/* @put and @get do the work */
};

struct lr_jfield {
	const char *key;
	enum lr_jtype type;
	size_t off;	/* of the member in the struct */
	size_t flag;	/* offset of the bool that says "present" (_NULL types) or of the count (ARRAY) */
	size_t size;	/* STR: the buffer's size; ARRAY: an element's size */
	uint64_t min, max;	/* integer bounds (max 0: the type's own); STR: min 1 refuses ""; CUSTOM: for put */
	const struct lr_jfield *sub;	/* OBJ, ARRAY: the nested fields, ended by a NULL key */
	const char *const *names;	/* ENUM: the name of each value, ended by NULL */
	struct json_object *(*put)(const struct lr_jfield *f, const void *base);	/* CUSTOM: the value; NULL: null */
	/* CUSTOM: 0, or -EINVAL with "@path: why" in @err */
	int (*get)(struct json_object *v, void *base, const char *path, char *err, size_t errlen);
};

/* The members of @base named by @f (ended by a NULL key) added to @obj, in table order. */
void lr_jfield_put(struct json_object *obj, const struct lr_jfield *f, const void *base);
/*
 * Fills @base from @obj by @f: 0, or -EINVAL with "PATH: why" in @err, PATH being @where
 * (the object's own path, "" at the top) and the key, such as "rx.per_queue[2].packets".
 * With @closed, a key of @obj that @f does not name is refused too.
 */
int lr_jfield_get(struct json_object *obj, const struct lr_jfield *f, void *base, const char *where, bool closed,
		  char *err, size_t errlen);
/* One field's value alone, as lr_jfield_put() and lr_jfield_get() render and read it (@path: its name in errors). */
struct json_object *lr_jfield_put_value(const struct lr_jfield *f, const void *base);
int lr_jfield_get_value(const struct lr_jfield *f, struct json_object *v, void *base, const char *path, char *err,
			size_t errlen);
/* Whether @f names @key. */
bool lr_jfield_named(const struct lr_jfield *f, const char *key);
/* For CUSTOM fields: a finite number (int or double), an unsigned integer at @v. 0 or -EINVAL. */
int lr_jfield_number(struct json_object *v, const char *path, double *out, char *err, size_t errlen);
int lr_jfield_uint(struct json_object *v, const char *path, uint64_t *out, char *err, size_t errlen);

#endif
