/* SPDX-License-Identifier: MIT */
/*
 * Output files (JSON, CSV, pcap, the ready file): checked before a test touches anything, written
 * to a unique temporary name beside the target and renamed into place, never through a symlink.
 */
#ifndef LINERATE_OUTFILE_H
#define LINERATE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

/* Modes before the umask: captures may hold other people's traffic (--pcap-foreign). */
#define LR_OUT_MODE	0666
#define LR_OUT_MODE_PCAP 0600

/*
 * Can @path be written, as far as can be told without creating anything? Its directory must
 * exist and be writable, and the path must not name a directory or anything but a regular file
 * (a symlink to a device such as /dev/stdout would otherwise be replaced by the rename); "-"
 * (stdout) passes when @dash_ok. 0, or -errno with one line in @err naming @opt and @path.
 */
int lr_out_check(const char *opt, const char *path, bool dash_ok, char *err, size_t errlen);

struct lr_out {
	int fd;	/* -1 when closed */
	char path[4096];
	char tmp[4096 + 8];
};

/*
 * Creates a new file with a unique name beside @path (O_EXCL: it never opens what someone
 * else planted there), mode @mode & ~umask. 0 or -errno with one line in @err.
 */
int lr_out_open(const char *path, mode_t mode, struct lr_out *o, char *err, size_t errlen);
/* Writes all of @buf; -errno. */
int lr_out_write(struct lr_out *o, const void *buf, size_t len);
/*
 * fsync, close and rename over @path (which replaces a symlink there, never its target).
 * The temporary file is removed on failure. 0 or -errno with one line in @err.
 */
int lr_out_commit(struct lr_out *o, char *err, size_t errlen);
/* Closes and removes the temporary file (error paths). */
void lr_out_abort(struct lr_out *o);
/*
 * @path ("-": stdout) as @fill writes it through a stdio stream: a file appears whole under its
 * name (lr_out_open, lr_out_commit) or not at all. 0 or -errno with one line in @err.
 */
int lr_out_stream(const char *path, void (*fill)(FILE *f, const void *arg), const void *arg, char *err,
		  size_t errlen);
/* A ready file: @path appears whole, under its name, holding this process's PID. 0 or -errno with @err. */
int lr_out_pidfile(const char *path, char *err, size_t errlen);

/* The process's umask, read without changing it (thread-safe). */
mode_t lr_umask(void);

#endif
