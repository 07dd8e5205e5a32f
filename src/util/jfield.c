/* SPDX-License-Identifier: MIT */
/* Field tables: one description of a struct renders its JSON object and parses it back, strictly. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "util/jfield.h"

static const void *at(const void *base, size_t off)
{
	return (const char *)base + off;
}

static bool flag_of(const void *base, const struct lr_jfield *f)
{
	return *(const bool *)at(base, f->flag);
}

struct json_object *lr_jfield_put_value(const struct lr_jfield *f, const void *base)
{
	const void *p = at(base, f->off);
	struct json_object *o;
	unsigned int i, n;

	switch (f->type) {
	case LR_J_U64:
		return json_object_new_uint64(*(const uint64_t *)p);
	case LR_J_I64:
		return json_object_new_int64(*(const int64_t *)p);
	case LR_J_UINT:
		return json_object_new_int64(*(const unsigned int *)p);
	case LR_J_U16:
		return json_object_new_int(*(const uint16_t *)p);
	case LR_J_DOUBLE:
		return json_object_new_double(*(const double *)p);
	case LR_J_BOOL:
		return json_object_new_boolean(*(const bool *)p);
	case LR_J_STR:
		return json_object_new_string(p);
	case LR_J_STR_NULL:
		return *(const char *)p ? json_object_new_string(p) : NULL;
	case LR_J_ENUM:
		for (i = 0; f->names[i]; i++)
			if ((int)i == *(const int *)p)
				return json_object_new_string(f->names[i]);
		return NULL;	/* no name: a value the table does not know, which the reader refuses */
	case LR_J_U64_NULL:
		return flag_of(base, f) ? json_object_new_uint64(*(const uint64_t *)p) : NULL;
	case LR_J_OBJ_NULL:
		if (!flag_of(base, f))
			return NULL;
		/* fall through */
	case LR_J_OBJ:
		o = json_object_new_object();
		lr_jfield_put(o, f->sub, p);
		return o;
	case LR_J_ARRAY:
		o = json_object_new_array();
		n = *(const unsigned int *)at(base, f->flag);
		for (i = 0; i < n; i++) {
			struct json_object *e = json_object_new_object();

			lr_jfield_put(e, f->sub, at(p, i * f->size));
			json_object_array_add(o, e);
		}
		return o;
	case LR_J_CUSTOM:
		return f->put(f, base);
	}
	return NULL;
}

void lr_jfield_put(struct json_object *obj, const struct lr_jfield *f, const void *base)
{
	for (; f->key; f++)
		json_object_object_add(obj, f->key, lr_jfield_put_value(f, base));
}

static const char *type_name(struct json_object *v)
{
	return json_type_to_name(json_object_get_type(v));
}

static int type_error(const char *path, const char *want, struct json_object *v, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: expected %s, got %s", path, want, v ? type_name(v) : "null");
	return -EINVAL;
}

/* An integer in [min, max]: json-c holds it as int64 or, above INT64_MAX, as uint64. */
static int get_uint(struct json_object *v, const char *path, uint64_t min, uint64_t max, uint64_t *out, char *err,
		    size_t errlen)
{
	uint64_t x;

	if (!json_object_is_type(v, json_type_int))
		return type_error(path, "an unsigned integer", v, err, errlen);
	if (json_object_get_int64(v) < 0) {
		snprintf(err, errlen, "%s: %lld is negative", path, (long long)json_object_get_int64(v));
		return -EINVAL;
	}
	x = json_object_get_uint64(v);
	if (x < min || x > max) {
		snprintf(err, errlen, "%s: %llu is out of range (%llu..%llu)", path, (unsigned long long)x,
			 (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

int lr_jfield_uint(struct json_object *v, const char *path, uint64_t *out, char *err, size_t errlen)
{
	return get_uint(v, path, 0, UINT64_MAX, out, err, errlen);
}

int lr_jfield_number(struct json_object *v, const char *path, double *out, char *err, size_t errlen)
{
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return type_error(path, "a number", v, err, errlen);
	*out = json_object_get_double(v);
	if (!isfinite(*out)) {
		snprintf(err, errlen, "%s: not a finite number", path);
		return -EINVAL;
	}
	return 0;
}

static int get_str(const struct lr_jfield *f, struct json_object *v, char *p, const char *path, char *err,
		   size_t errlen)
{
	const char *s;
	size_t len;

	if (!json_object_is_type(v, json_type_string))
		return type_error(path, "a string", v, err, errlen);
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len != strlen(s)) {
		snprintf(err, errlen, "%s: holds a NUL character", path);
		return -EINVAL;
	}
	if (len >= f->size || (!len && (f->min || f->type == LR_J_STR_NULL))) {
		snprintf(err, errlen, "%s: %zu characters, want %s..%zu", path, len,
			 f->min || f->type == LR_J_STR_NULL ? "1" : "0", f->size - 1);
		return -EINVAL;
	}
	memcpy(p, s, len + 1);
	return 0;
}

static int get_enum(const struct lr_jfield *f, struct json_object *v, int *p, const char *path, char *err,
		    size_t errlen)
{
	char names[256] = "";
	size_t off = 0;
	int i;

	if (!json_object_is_type(v, json_type_string))
		return type_error(path, "a string", v, err, errlen);
	for (i = 0; f->names[i]; i++) {
		if (!strcmp(json_object_get_string(v), f->names[i])) {
			*p = i;
			return 0;
		}
		if (off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "", f->names[i]);
	}
	snprintf(err, errlen, "%s: '%.64s' is not one of %s", path, json_object_get_string(v), names);
	return -EINVAL;
}

static int get_array(const struct lr_jfield *f, struct json_object *v, void *base, const char *path, char *err,
		     size_t errlen)
{
	char *p = (char *)base + f->off;
	char epath[256];
	size_t i, n;
	int ret;

	if (!json_object_is_type(v, json_type_array))
		return type_error(path, "an array", v, err, errlen);
	n = json_object_array_length(v);
	if (n > f->max) {
		snprintf(err, errlen, "%s: %zu entries, at most %llu", path, n, (unsigned long long)f->max);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (snprintf(epath, sizeof(epath), "%s[%zu]", path, i) >= (int)sizeof(epath)) {
			snprintf(err, errlen, "%.64s...: nested too deep", path);
			return -EINVAL;
		}
		ret = lr_jfield_get(json_object_array_get_idx(v, i), f->sub, p + i * f->size, epath, true, err, errlen);
		if (ret)
			return ret;
	}
	*(unsigned int *)((char *)base + f->flag) = (unsigned int)n;
	return 0;
}

int lr_jfield_get_value(const struct lr_jfield *f, struct json_object *v, void *base, const char *path, char *err,
			size_t errlen)
{
	void *p = (char *)base + f->off;
	bool *flag = (bool *)((char *)base + f->flag);
	uint64_t x;
	int ret;

	switch (f->type) {
	case LR_J_U64:
		return get_uint(v, path, f->min, f->max ? f->max : UINT64_MAX, (uint64_t *)p, err, errlen);
	case LR_J_I64:
		if (!json_object_is_type(v, json_type_int))
			return type_error(path, "an integer", v, err, errlen);
		if (json_object_get_int64(v) == INT64_MAX && json_object_get_uint64(v) > INT64_MAX) {
			snprintf(err, errlen, "%s: out of range", path);
			return -EINVAL;
		}
		*(int64_t *)p = json_object_get_int64(v);
		return 0;
	case LR_J_UINT:
		ret = get_uint(v, path, f->min, f->max ? f->max : UINT_MAX, &x, err, errlen);
		if (!ret)
			*(unsigned int *)p = (unsigned int)x;
		return ret;
	case LR_J_U16:
		ret = get_uint(v, path, f->min, f->max ? f->max : UINT16_MAX, &x, err, errlen);
		if (!ret)
			*(uint16_t *)p = (uint16_t)x;
		return ret;
	case LR_J_DOUBLE:
		return lr_jfield_number(v, path, (double *)p, err, errlen);
	case LR_J_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return type_error(path, "true or false", v, err, errlen);
		*(bool *)p = json_object_get_boolean(v);
		return 0;
	case LR_J_STR_NULL:
		if (!v) {
			*(char *)p = '\0';
			return 0;
		}
		/* fall through */
	case LR_J_STR:
		return get_str(f, v, p, path, err, errlen);
	case LR_J_ENUM:
		return get_enum(f, v, p, path, err, errlen);
	case LR_J_U64_NULL:
		*flag = v != NULL;
		return v ? get_uint(v, path, f->min, f->max ? f->max : UINT64_MAX, (uint64_t *)p, err, errlen) : 0;
	case LR_J_OBJ_NULL:
		*flag = v != NULL;
		if (!v)
			return 0;
		/* fall through */
	case LR_J_OBJ:
		return lr_jfield_get(v, f->sub, p, path, true, err, errlen);
	case LR_J_ARRAY:
		return get_array(f, v, base, path, err, errlen);
	case LR_J_CUSTOM:
		return f->get(v, base, path, err, errlen);
	}
	snprintf(err, errlen, "%s: internal: field type %d", path, f->type);
	return -EINVAL;
}

bool lr_jfield_named(const struct lr_jfield *f, const char *key)
{
	for (; f->key; f++)
		if (!strcmp(f->key, key))
			return true;
	return false;
}

int lr_jfield_get(struct json_object *obj, const struct lr_jfield *f, void *base, const char *where, bool closed,
		  char *err, size_t errlen)
{
	const struct lr_jfield *g;
	char path[256];
	int ret;

	if (!json_object_is_type(obj, json_type_object))
		return type_error(where[0] ? where : "the document", "an object", obj, err, errlen);
	for (g = f; g->key; g++) {
		struct json_object *v;

		snprintf(path, sizeof(path), "%s%s%s", where, where[0] ? "." : "", g->key);
		if (!json_object_object_get_ex(obj, g->key, &v)) {
			snprintf(err, errlen, "%s: missing", path);
			return -EINVAL;
		}
		ret = lr_jfield_get_value(g, v, base, path, err, errlen);
		if (ret)
			return ret;
	}
	if (closed) {
		json_object_object_foreach(obj, key, val)
		{
			(void)val;
			if (!lr_jfield_named(f, key)) {
				snprintf(err, errlen, "%s%s%.64s: unknown key", where, where[0] ? "." : "", key);
				return -EINVAL;
			}
		}
	}
	return 0;
}
