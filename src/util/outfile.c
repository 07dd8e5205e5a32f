/* SPDX-License-Identifier: MIT */
/* Output files created safely: checked up front, a unique temporary name beside the target, rename. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "util/log.h"
#include "util/outfile.h"

mode_t lr_umask(void)
{
	char line[128];
	unsigned int m;
	mode_t old;
	FILE *f;

	/* "Umask:" in /proc/self/status (Linux 4.7+) reads it without the race of umask() */
	f = fopen("/proc/self/status", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &m) == 1) {
				fclose(f);
				return (mode_t)(m & 0777);
			}
		fclose(f);
	}
	old = umask(022);
	umask(old);
	return old;
}

int lr_out_check(const char *opt, const char *path, bool dash_ok, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	const char *dir;
	struct stat st;
	int ret;

	if (!strcmp(path, "-")) {
		if (dash_ok)
			return 0;
		lr_msg(err, errlen, "%s: '-' (standard output) is not possible here; give a file name", opt);
		return -EINVAL;
	}
	if (!*path || strlen(path) + 8 >= sizeof(buf)) {
		lr_msg(err, errlen, "%s: '%s' is empty or too long", opt, path);
		return -ENAMETOOLONG;
	}
	if (!lstat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			lr_msg(err, errlen, "%s: '%s' is a directory; give a file name", opt, path);
			return -EISDIR;
		}
		/*
		 * The file is replaced by a rename, never opened: a device, FIFO
		 * or socket there (or a symlink to one, such as /dev/stdout)
		 * would be replaced by a regular file, so it is refused.
		 */
		if (S_ISLNK(st.st_mode) && !stat(path, &st) && !S_ISREG(st.st_mode)) {
			lr_msg(err, errlen, "%s: '%s' leads to something that is not a regular file%s", opt, path,
			       dash_ok ? " (give - for standard output)" : "");
			return -EINVAL;
		}
		if (!S_ISLNK(st.st_mode) && !S_ISREG(st.st_mode)) {
			lr_msg(err, errlen, "%s: '%s' is not a regular file (a device, FIFO or socket)%s", opt, path,
			       dash_ok ? "; give a file name, or - for standard output" : "; give a file name");
			return -EINVAL;
		}
	} else if (errno != ENOENT) {
		ret = -errno;
		lr_msg(err, errlen, "%s: cannot write '%s': %s", opt, path, strerror(-ret));
		return ret;
	}
	snprintf(buf, sizeof(buf), "%s", path);
	/* dirname() may return a static "." instead of cutting buf short */
	dir = dirname(buf);
	if (stat(dir, &st)) {
		ret = -errno;
		lr_msg(err, errlen, "%s: cannot write '%s': directory '%s': %s", opt, path, dir, strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		lr_msg(err, errlen, "%s: cannot write '%s': '%s' is not a directory", opt, path, dir);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK)) {
		ret = -errno;
		lr_msg(err, errlen, "%s: cannot write '%s': directory '%s': %s", opt, path, dir, strerror(-ret));
		return ret;
	}
	return 0;
}

int lr_out_open(const char *path, mode_t mode, struct lr_out *o, char *err, size_t errlen)
{
	int ret;

	o->fd = -1;
	o->dirfd = -1;
	o->tmp[0] = '\0';
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path) ||
	    snprintf(o->tmp, sizeof(o->tmp), "%s.XXXXXX", path) >= (int)sizeof(o->tmp)) {
		lr_msg(err, errlen, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	/*
	 * mkostemp creates with O_CREAT | O_EXCL, which fails on anything
	 * already there, a planted symlink included, and picks a name nobody
	 * can predict; in the target's directory, so the rename stays on one
	 * file system.
	 */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		ret = -errno;
		lr_msg(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		return ret;
	}
	if (fchmod(o->fd, mode & ~lr_umask() & 0777)) {
		ret = -errno;
		lr_msg(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		lr_out_abort(o);
		return ret;
	}
	return 0;
}

int lr_out_dir_open(const char *opt, const char *path, int *fd, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	*fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0) {
		struct stat lst;

		ret = -errno;
		/* O_DIRECTORY | O_NOFOLLOW on a symlink fails ENOTDIR on some kernels, ELOOP on others */
		if (ret == -ELOOP || (ret == -ENOTDIR && !lstat(path, &lst) && S_ISLNK(lst.st_mode)))
			lr_msg(err, errlen, "%s: '%s' is a symlink: give the directory itself", opt, path);
		else if (ret == -ENOTDIR)
			lr_msg(err, errlen, "%s: '%s' is not a directory", opt, path);
		else
			lr_msg(err, errlen, "%s: cannot open '%s': %s", opt, path, strerror(-ret));
		return ret;
	}
	/* what was opened is what is checked: the handle, not the path again */
	if (fstat(*fd, &st)) {
		ret = -errno;
		lr_msg(err, errlen, "%s: cannot open '%s': %s", opt, path, strerror(-ret));
	} else if (st.st_uid != geteuid()) {
		ret = -EPERM;
		lr_msg(err, errlen, "%s: '%s' is owned by uid %u, not by this agent's user (uid %u): give a directory "
		       "of its own", opt, path, (unsigned int)st.st_uid, (unsigned int)geteuid());
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ret = -EPERM;
		lr_msg(err, errlen, "%s: '%s' has mode %04o: others can write it (chmod go-w), and could plant or "
		       "swap what the agent writes there", opt, path, (unsigned int)(st.st_mode & 07777));
	} else if ((st.st_mode & (S_IWUSR | S_IXUSR)) != (S_IWUSR | S_IXUSR)) {
		ret = -EACCES;
		lr_msg(err, errlen, "%s: '%s' has mode %04o: its owner cannot write it", opt, path,
		       (unsigned int)(st.st_mode & 07777));
	} else {
		return 0;
	}
	close(*fd);
	*fd = -1;
	return ret;
}

bool lr_out_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > LR_OUT_NAME_MAX || name[0] == '.')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+") == n;
}

int lr_out_openat(int dirfd, const char *name, mode_t mode, struct lr_out *o, char *err, size_t errlen)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct stat st;
	unsigned char rnd[7];
	int i, ret;

	o->fd = -1;
	o->dirfd = -1;
	o->tmp[0] = '\0';
	if (!lr_out_name_ok(name)) {
		lr_msg(err, errlen, "'%.*s' is not a bare file name (1..%d letters, digits, '.', '_', '-' or '+', "
		       "not starting with '.')", LR_OUT_NAME_MAX + 1, name, LR_OUT_NAME_MAX);
		return -EINVAL;
	}
	/* said before a test starts; the rename below is what makes it a rule */
	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		lr_msg(err, errlen, "'%s' exists already: a capture never replaces a file; choose another name", name);
		return -EEXIST;
	}
	snprintf(o->path, sizeof(o->path), "%s", name);
	/* a leading dot: no bare name a request may give is ever a temporary file's */
	for (i = 0; i < 100; i++) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			ret = -EAGAIN;
			goto fail;
		}
		snprintf(o->tmp, sizeof(o->tmp), ".%s.%c%c%c%c%c%c%c", name, digits[rnd[0] % 36], digits[rnd[1] % 36],
			 digits[rnd[2] % 36], digits[rnd[3] % 36], digits[rnd[4] % 36], digits[rnd[5] % 36],
			 digits[rnd[6] % 36]);
		o->fd = openat(dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       mode & ~lr_umask() & 0777);
		if (o->fd >= 0)
			break;
		if (errno != EEXIST) {
			ret = -errno;
			goto fail;
		}
	}
	if (o->fd < 0) {
		ret = -EEXIST;
		goto fail;
	}
	o->dirfd = dirfd;
	return 0;
fail:
	o->tmp[0] = '\0';
	lr_msg(err, errlen, "cannot write '%s': %s", name, strerror(-ret));
	return ret;
}

int lr_out_write(struct lr_out *o, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(o->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int lr_out_stream(const char *path, void (*fill)(FILE *f, const void *arg), const void *arg, char *err,
		  size_t errlen)
{
	struct lr_out out = { .fd = -1 };
	FILE *f;
	int ret;

	if (!strcmp(path, "-")) {
		fill(stdout, arg);
		errno = 0;
		if (fflush(stdout) || ferror(stdout)) {
			ret = errno ? -errno : -EIO;
			lr_msg(err, errlen, "cannot write to standard output: %s", strerror(-ret));
			return ret;
		}
		return 0;
	}
	ret = lr_out_open(path, LR_OUT_MODE, &out, err, errlen);
	if (ret)
		return ret;
	f = fdopen(out.fd, "w");
	if (!f) {
		ret = -errno;
		goto fail;
	}
	out.fd = -1;	/* the FILE owns it now */
	fill(f, arg);
	errno = 0;
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		ret = errno ? -errno : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret)
		return lr_out_commit(&out, err, errlen);
fail:
	lr_msg(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
	lr_out_abort(&out);
	return ret;
}

int lr_out_commit(struct lr_out *o, char *err, size_t errlen)
{
	const char *what = "cannot write";
	int ret = 0;

	if (o->fd >= 0) {
		if (fsync(o->fd)) {
			what = "cannot sync";
			ret = -errno;
		}
		if (close(o->fd) && !ret)
			ret = -errno;
		o->fd = -1;
	}
	if (!ret && o->dirfd >= 0) {
		/* never over what is there: a file made meanwhile, or a symlink planted to be followed */
		if (renameat2(o->dirfd, o->tmp, o->dirfd, o->path, RENAME_NOREPLACE)) {
			ret = -errno;
			what = ret == -EEXIST ? "appeared meanwhile, and a capture never replaces a file" :
						"cannot rename the temporary file into place";
		}
	} else if (!ret && rename(o->tmp, o->path)) {
		/* rename replaces a symlink at @path itself, never the file it points to */
		what = "cannot rename the temporary file into place";
		ret = -errno;
	}
	if (ret) {
		lr_msg(err, errlen, "%s: %s: %s", o->path, what, strerror(-ret));
		if (o->dirfd >= 0)
			unlinkat(o->dirfd, o->tmp, 0);
		else
			unlink(o->tmp);
	}
	o->tmp[0] = '\0';
	return ret;
}

void lr_out_abort(struct lr_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp[0] && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	else if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = '\0';
}

int lr_out_pidfile(const char *path, char *err, size_t errlen)
{
	struct lr_out out;
	char pid[32];
	int ret;

	ret = lr_out_open(path, LR_OUT_MODE, &out, err, errlen);
	if (ret)
		return ret;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	ret = lr_out_write(&out, pid, strlen(pid));
	if (ret) {
		lr_msg(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
		lr_out_abort(&out);
		return ret;
	}
	return lr_out_commit(&out, err, errlen);
}
