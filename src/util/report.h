/* SPDX-License-Identifier: MIT */
/* Output: human-readable numbers, latency percentiles, JSON files written atomically. */
#ifndef LINERATE_REPORT_H
#define LINERATE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <json-c/json.h>

/* "1.234 M" style with 4 significant digits. */
const char *lr_fmt_si(double v, char *buf, size_t len);
/* Latency value at quantile @q (0..1) from a histogram of lr_lat_bucket() buckets, clamped to [min, max]. */
uint64_t lr_lat_quantile(const __u64 *hist, unsigned int nbuckets, uint64_t count, double q,
			 uint64_t min, uint64_t max);
/*
 * The version of the keys of every JSON document (docs/json.md): bumped whenever they change (a key
 * added, removed or renamed, a value of another type or meaning), so a reader can tell.
 */
#define LR_JSON_SCHEMA 8

/* A new JSON document: {"command": @command, "schema": LR_JSON_SCHEMA, "version": {"release", "revision"}}. */
struct json_object *lr_json_doc(const char *command);
/* "-" is stdout; a file is written to a temporary name and renamed into place. */
int lr_json_write(struct json_object *obj, const char *path, char *err, size_t errlen);
/* Checks up front that @path can be written, so a test does not run only to fail at the end. */
int lr_json_check_path(const char *path, char *err, size_t errlen);

#endif
