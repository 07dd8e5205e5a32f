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

/* The longest path an option takes (PATH_MAX, without pulling in limits.h everywhere). */
#define LR_PATH_MAX 4096

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
	/*
	 * -1: path is a path, and commit renames over it. Else a directory's handle (lr_out_openat):
	 * path and tmp are names in it, and commit never replaces a file that is there.
	 */
	int dirfd;
	char path[4096];
	char tmp[4096 + 8];
};

/* A capture directory's name: at most this many bytes (the temporary name adds a dot and 7). */
#define LR_OUT_NAME_MAX	128

/*
 * Creates a new file with a unique name beside @path (O_EXCL: it never opens what someone
 * else planted there), mode @mode & ~umask. 0 or -errno with one line in @err.
 */
int lr_out_open(const char *path, mode_t mode, struct lr_out *o, char *err, size_t errlen);
/*
 * Opens the directory @path once, for lr_out_openat(): O_DIRECTORY | O_NOFOLLOW, and it must be
 * owned by this process's user and writable by no one else (group and others). 0 with the
 * handle in @fd (close-on-exec), or -errno with one line in @err naming @opt and @path.
 */
int lr_out_dir_open(const char *opt, const char *path, int *fd, char *err, size_t errlen);
/*
 * Is @name a bare file name lr_out_openat() takes: 1..LR_OUT_NAME_MAX bytes of letters, digits,
 * '.', '_', '-' and '+', not starting with '.' (no path, no hidden or temporary name)?
 */
bool lr_out_name_ok(const char *name);
/*
 * Like lr_out_open() but for the name @name in the directory @dirfd: refused when @name is not a
 * bare name or something is there already; the temporary file is created O_EXCL | O_NOFOLLOW in
 * the directory, and lr_out_commit() publishes it with renameat2(RENAME_NOREPLACE), so an existing
 * file (or a symlink) planted meanwhile is never replaced nor followed.
 */
int lr_out_openat(int dirfd, const char *name, mode_t mode, struct lr_out *o, char *err, size_t errlen);
/* Writes all of @buf; -errno. */
int lr_out_write(struct lr_out *o, const void *buf, size_t len);
/*
 * fsync, close and rename over @path (which replaces a symlink there, never its target); after
 * lr_out_openat(), into its name only if nothing is there (-EEXIST otherwise).
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
