/* SPDX-License-Identifier: MIT */
/* Unit tests for output files: up-front checks, modes under the umask, symlinks never followed. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "util/outfile.h"

static char dir[64];
static char err[512];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lr-outfile-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void assert_file(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

/* One line, naming the option and the path, and -errno. */
static void check_refused(const char *path, bool dash_ok, const char *want)
{
	int ret;

	memset(err, 0, sizeof(err));
	ret = lr_out_check("--json", path, dash_ok, err, sizeof(err));
	if (ret >= 0)
		fail_msg("lr_out_check(%s) = %d, want -errno", path, ret);
	if (strncmp(err, "--json: ", 8) || strchr(err, '\n') || !strstr(err, want))
		fail_msg("lr_out_check(%s): message \"%s\" (want one line with '%s')", path, err, want);
}

static void test_check(void **state)
{
	char p[256], q[256];

	(void)state;
	in_dir(p, sizeof(p), "new.json");
	assert_int_equal(lr_out_check("--json", p, true, err, sizeof(err)), 0);
	assert_int_equal(lr_out_check("--json", "-", true, err, sizeof(err)), 0);
	check_refused("-", false, "standard output");
	check_refused(dir, true, "is a directory");
	in_dir(p, sizeof(p), "sub/");
	assert_int_equal(mkdir(p, 0700), 0);
	check_refused(p, true, "is a directory");
	in_dir(p, sizeof(p), "nodir/x.json");
	check_refused(p, true, "No such file or directory");
	/* a directory component that is a file */
	in_dir(q, sizeof(q), "plain");
	write_file(q, "x");
	in_dir(p, sizeof(p), "plain/x.json");
	check_refused(p, true, "Not a directory");
	/* devices and FIFOs would be replaced by the rename: refused, as are symlinks to them */
	check_refused("/dev/null", true, "not a regular file");
	in_dir(p, sizeof(p), "to-null");
	assert_int_equal(symlink("/dev/null", p), 0);
	check_refused(p, true, "give - for standard output");
	in_dir(p, sizeof(p), "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	check_refused(p, true, "FIFO");
	/* an existing regular file, and a symlink to one, may be replaced */
	in_dir(p, sizeof(p), "old.json");
	write_file(p, "old");
	assert_int_equal(lr_out_check("--json", p, true, err, sizeof(err)), 0);
}

static void test_write_and_modes(void **state)
{
	static const mode_t masks[] = { 022, 077, 0, 027 };
	char p[256];

	(void)state;
	in_dir(p, sizeof(p), "out.json");
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		mode_t old = umask(masks[i]);
		struct lr_out o;
		struct stat st;

		assert_int_equal(lr_umask(), masks[i]);
		assert_int_equal(lr_out_open(p, LR_OUT_MODE, &o, err, sizeof(err)), 0);
		assert_int_equal(lr_out_write(&o, "{}\n", 3), 0);
		/* nothing under the final name until the commit */
		assert_int_equal(lr_out_commit(&o, err, sizeof(err)), 0);
		assert_file(p, "{}\n");
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0666 & ~masks[i]);
		assert_int_equal(lr_out_open(p, LR_OUT_MODE_PCAP, &o, err, sizeof(err)), 0);
		assert_int_equal(lr_out_commit(&o, err, sizeof(err)), 0);
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600 & ~masks[i]);
		umask(old);
	}
}

/* A symlink planted at the target is replaced; the file it points to is left byte-identical. */
static void test_symlink_not_followed(void **state)
{
	char p[256], victim[256];
	struct lr_out o;
	struct stat st;

	(void)state;
	in_dir(victim, sizeof(victim), "victim");
	write_file(victim, "precious\n");
	in_dir(p, sizeof(p), "out.csv");
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(lr_out_check("--csv", p, true, err, sizeof(err)), 0);
	assert_int_equal(lr_out_open(p, LR_OUT_MODE, &o, err, sizeof(err)), 0);
	assert_int_equal(lr_out_write(&o, "a,b\n", 4), 0);
	assert_int_equal(lr_out_commit(&o, err, sizeof(err)), 0);
	assert_file(victim, "precious\n");
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_file(p, "a,b\n");
}

/* A bare file name is in the working directory ("." for dirname), and is checked and written there. */
static void test_bare_name(void **state)
{
	char cwd[4096];
	struct lr_out o;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(lr_out_check("--json", "bare.json", true, err, sizeof(err)), 0);
	assert_int_equal(lr_out_open("bare.json", LR_OUT_MODE, &o, err, sizeof(err)), 0);
	assert_int_equal(lr_out_write(&o, "{}\n", 3), 0);
	assert_int_equal(lr_out_commit(&o, err, sizeof(err)), 0);
	assert_file("bare.json", "{}\n");
	check_refused("nodir/bare.json", true, "No such file or directory");
	assert_int_equal(chdir(cwd), 0);
}

/* Abort leaves nothing: not the temporary file, not the target. */
static void test_abort(void **state)
{
	char p[256], cmd[512];
	struct lr_out o;

	(void)state;
	in_dir(p, sizeof(p), "gone.json");
	assert_int_equal(lr_out_open(p, LR_OUT_MODE, &o, err, sizeof(err)), 0);
	assert_int_equal(access(o.tmp, F_OK), 0);
	lr_out_abort(&o);
	assert_int_not_equal(access(o.tmp, F_OK), 0);
	assert_int_not_equal(access(p, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s' | grep gone)\"", dir);
	assert_int_equal(system(cmd), 0);
}

/* Nothing of @dir's but @want (space-separated, sorted), no temporary file left. */
static void assert_dir(const char *want)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "test \"$(ls -A '%s' | sort | tr '\\n' ' ')\" = '%s'", dir, want);
	if (system(cmd))
		fail_msg("%s holds other than '%s'", dir, want);
}

/*
 * A capture directory's name: only bare names, never over a file, not even one made (or a symlink
 * planted) between the open and the commit.
 */
static void test_openat(void **state)
{
	static const char *const bad[] = { "", "/etc/passwd", "../x", "a/b", ".", "..", ".hidden", "a b", "x\n" };
	char p[256], victim[256], longname[LR_OUT_NAME_MAX + 2];
	struct lr_out o;
	struct stat st;
	unsigned int i;
	int dfd;

	(void)state;
	assert_int_equal(lr_out_dir_open("--capture-dir", dir, &dfd, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(lr_out_name_ok(bad[i]));
		assert_int_equal(lr_out_openat(dfd, bad[i], LR_OUT_MODE_PCAP, &o, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "is not a bare file name"));
	}
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(lr_out_openat(dfd, longname, LR_OUT_MODE_PCAP, &o, err, sizeof(err)), -EINVAL);
	longname[LR_OUT_NAME_MAX] = '\0';
	assert_true(lr_out_name_ok(longname));
	assert_true(lr_out_name_ok("run-1_a+b.pcap"));
	assert_dir("");

	/* a plain write: the name, its mode, no temporary file */
	assert_int_equal(lr_out_openat(dfd, "a.pcap", LR_OUT_MODE_PCAP, &o, err, sizeof(err)), 0);
	assert_int_equal(lr_out_write(&o, "one\n", 4), 0);
	assert_int_equal(lr_out_commit(&o, err, sizeof(err)), 0);
	in_dir(p, sizeof(p), "a.pcap");
	assert_file(p, "one\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* there now: refused at open */
	assert_int_equal(lr_out_openat(dfd, "a.pcap", LR_OUT_MODE_PCAP, &o, err, sizeof(err)), -EEXIST);
	assert_file(p, "one\n");

	/* made meanwhile: the commit refuses, the file is untouched, the temporary file gone */
	assert_int_equal(lr_out_openat(dfd, "b.pcap", LR_OUT_MODE_PCAP, &o, err, sizeof(err)), 0);
	assert_int_equal(lr_out_write(&o, "two\n", 4), 0);
	in_dir(p, sizeof(p), "b.pcap");
	write_file(p, "planted\n");
	assert_int_equal(lr_out_commit(&o, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "never replaces a file"));
	assert_file(p, "planted\n");

	/* a symlink planted meanwhile: neither replaced nor followed */
	in_dir(victim, sizeof(victim), "victim");
	write_file(victim, "precious\n");
	assert_int_equal(lr_out_openat(dfd, "c.pcap", LR_OUT_MODE_PCAP, &o, err, sizeof(err)), 0);
	in_dir(p, sizeof(p), "c.pcap");
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(lr_out_write(&o, "three\n", 6), 0);
	assert_int_equal(lr_out_commit(&o, err, sizeof(err)), -EEXIST);
	assert_file(victim, "precious\n");
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));

	/* aborted: nothing left */
	assert_int_equal(lr_out_openat(dfd, "d.pcap", LR_OUT_MODE_PCAP, &o, err, sizeof(err)), 0);
	lr_out_abort(&o);
	assert_dir("a.pcap b.pcap c.pcap victim ");
	close(dfd);
}

/* A capture directory must be ours and writable by no one else, and no symlink to one. */
static void test_dir_open(void **state)
{
	char p[256];
	int dfd;

	(void)state;
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(lr_out_dir_open("--capture-dir", dir, &dfd, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "has mode 0770: others can write it"));
	assert_int_equal(dfd, -1);
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(lr_out_dir_open("--capture-dir", dir, &dfd, err, sizeof(err)), -EPERM);
	assert_int_equal(chmod(dir, 0700), 0);
	in_dir(p, sizeof(p), "link");
	assert_int_equal(symlink(dir, p), 0);
	assert_int_not_equal(lr_out_dir_open("--capture-dir", p, &dfd, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "is a symlink"));
	assert_null(strchr(err, '\n'));
	in_dir(p, sizeof(p), "file");
	write_file(p, "x");
	assert_int_equal(lr_out_dir_open("--capture-dir", p, &dfd, err, sizeof(err)), -ENOTDIR);
	assert_int_equal(lr_out_dir_open("--capture-dir", dir, &dfd, err, sizeof(err)), 0);
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_and_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bare_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_openat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_open, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
