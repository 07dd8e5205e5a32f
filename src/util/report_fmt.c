/* SPDX-License-Identifier: MIT */
/* Number formatting, latency quantiles and atomic JSON output. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "linerate/flow.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/version.h"

const char *lr_fmt_si(double v, char *buf, size_t len)
{
	static const char *sfx[] = { "", " k", " M", " G", " T" };
	unsigned int i = 0;

	while (v >= 1000.0 && i < 4) {
		v /= 1000.0;
		i++;
	}
	snprintf(buf, len, i ? "%.3f%s" : "%.0f%s", v, sfx[i]);
	return buf;
}

uint64_t lr_lat_quantile(const __u64 *hist, unsigned int nbuckets, uint64_t count, double q,
			 uint64_t min, uint64_t max)
{
	uint64_t rank, seen = 0, v;
	unsigned int b;

	if (!count)
		return 0;
	rank = (uint64_t)(q * (double)count);
	if (rank >= count)
		rank = count - 1;
	for (b = 0; b < nbuckets; b++) {
		seen += hist[b];
		if (seen > rank)
			break;
	}
	if (b >= nbuckets)
		return max;
	/* the middle of the bucket: error at most half its width */
	v = b + 1 < nbuckets ? (lr_lat_bucket_low(b) + lr_lat_bucket_low(b + 1) - 1) / 2 : lr_lat_bucket_low(b);
	if (v < min)
		v = min;
	if (v > max)
		v = max;
	return v;
}

int lr_json_check_path(const char *path, char *err, size_t errlen)
{
	return lr_out_check("--json", path, true, err, errlen);
}

int lr_json_write(struct json_object *obj, const char *path, char *err, size_t errlen)
{
	const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	struct lr_out out;
	char why[512];
	int ret;

	if (!strcmp(path, "-")) {
		printf("%s\n", text);
		fflush(stdout);
		return 0;
	}
	ret = lr_out_open(path, LR_OUT_MODE, &out, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "--json: %s", why);
		return ret;
	}
	ret = lr_out_write(&out, text, strlen(text));
	if (!ret)
		ret = lr_out_write(&out, "\n", 1);
	if (ret) {
		snprintf(err, errlen, "--json: cannot write '%s': %s", path, strerror(-ret));
		lr_out_abort(&out);
		return ret;
	}
	ret = lr_out_commit(&out, why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "--json: %s", why);
	return ret;
}

struct json_object *lr_json_doc(const char *command)
{
	struct json_object *root = json_object_new_object(), *v = json_object_new_object();

	json_object_object_add(root, "command", json_object_new_string(command));
	json_object_object_add(root, "schema", json_object_new_int(LR_JSON_SCHEMA));
	json_object_object_add(v, "release", json_object_new_string(lr_release()));
	json_object_object_add(v, "revision", json_object_new_string(lr_revision()));
	json_object_object_add(root, "version", v);
	return root;
}
