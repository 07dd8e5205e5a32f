/* SPDX-License-Identifier: MIT */
/* Unit tests for container:NAME[:IFNAME] specs, the inspect answer, CLI lookup and `linerate veth` options. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/cmd.h"
#include "opt/opts.h"
#include "sys/container.h"

static void spec_ok(const char *s, bool allow_if, const char *name, const char *ifname)
{
	struct lr_container_spec spec;
	char err[256] = "";
	int ret = lr_container_spec_parse(s, allow_if, &spec, err, sizeof(err));

	if (ret || strcmp(spec.name, name) || strcmp(spec.ifname, ifname))
		fail_msg("\"%s\": %d '%s' '%s' (%s); want 0 '%s' '%s'", s, ret, spec.name, spec.ifname, err, name,
			 ifname);
}

/* Fails with -EINVAL and a message containing @want. */
static void spec_bad(const char *s, bool allow_if, const char *want)
{
	struct lr_container_spec spec;
	char err[256] = "";
	int ret = lr_container_spec_parse(s, allow_if, &spec, err, sizeof(err));

	if (ret != -EINVAL || !strstr(err, want))
		fail_msg("\"%s\": %d '%s'; want -EINVAL and a message with '%s'", s, ret, err, want);
}

static void test_spec_ok(void **state)
{
	char name[LR_CONTAINER_NAME_MAX];

	(void)state;
	spec_ok("container:web", false, "web", "");
	spec_ok("container:web", true, "web", "");
	spec_ok("container:web:eth0", true, "web", "eth0");
	spec_ok("container:my_app-1.2", true, "my_app-1.2", "");
	spec_ok("container:0123abcdef:eth1", true, "0123abcdef", "eth1");
	spec_ok("container:W:veth-x.1", true, "W", "veth-x.1");
	spec_ok("container:web:abcdefghijklmno", true, "web", "abcdefghijklmno");	/* 15, IFNAMSIZ - 1 */
	/* the longest name */
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	{
		char s[sizeof(LR_CONTAINER_PREFIX) + sizeof(name)];

		snprintf(s, sizeof(s), LR_CONTAINER_PREFIX "%s", name);
		spec_ok(s, false, name, "");
	}
	assert_true(lr_container_is_spec("container:x"));
	assert_true(lr_container_is_spec("container:"));
	assert_false(lr_container_is_spec("containe"));
	assert_false(lr_container_is_spec("pid:1"));
	assert_false(lr_container_is_spec("web"));
	assert_false(lr_container_is_spec(NULL));
}

static void test_spec_bad(void **state)
{
	char s[sizeof(LR_CONTAINER_PREFIX) + LR_CONTAINER_NAME_MAX + 1];

	(void)state;
	spec_bad("container:", false, "names no container");
	spec_bad("container:", true, "container:NAME[:IFNAME]");
	spec_bad("container::eth0", true, "names no container");
	spec_bad("web", true, "is not container:NAME");
	spec_bad("", false, "is not container:NAME");
	spec_bad("Container:web", false, "is not container:NAME");
	/* names: Docker's rule; a leading '-' would be an option to the CLI */
	spec_bad("container:-web", false, "not a container name or ID");
	spec_bad("container:_web", false, "not a container name or ID");
	spec_bad("container:.web", false, "not a container name or ID");
	spec_bad("container:we b", false, "not a container name or ID");
	spec_bad("container:web/x", false, "not a container name or ID");
	spec_bad("container:web;rm", false, "not a container name or ID");
	spec_bad("container:wéb", false, "not a container name or ID");
	spec_bad("container:$(id)", false, "not a container name or ID");
	/* too long: LR_CONTAINER_NAME_MAX characters */
	memset(s, 'a', sizeof(s));
	memcpy(s, LR_CONTAINER_PREFIX, strlen(LR_CONTAINER_PREFIX));
	s[strlen(LR_CONTAINER_PREFIX) + LR_CONTAINER_NAME_MAX] = '\0';
	spec_bad(s, false, "is too long");
	/* interfaces */
	spec_bad("container:web:eth0", false, "without an interface");
	spec_bad("container:web:", true, "is not an interface name");
	spec_bad("container:web:abcdefghijklmnop", true, "is not an interface name");	/* 16 */
	spec_bad("container:web:eth0:1", true, "is not an interface name");
	spec_bad("container:web:a/b", true, "is not an interface name");
	spec_bad("container:web:a b", true, "is not an interface name");
	spec_bad("container:web:..", true, "is not an interface name");
}

static void inspect_ok(const char *answer, int want)
{
	char err[256] = "";
	int pid = -1, ret = lr_container_parse_inspect("web", answer, &pid, err, sizeof(err));

	if (ret || pid != want)
		fail_msg("\"%s\": %d, pid %d (%s); want 0, %d", answer, ret, pid, err, want);
}

static void inspect_bad(const char *answer, int want_ret, const char *want_msg)
{
	char err[256] = "";
	int pid = -1, ret = lr_container_parse_inspect("web", answer, &pid, err, sizeof(err));

	if (ret != want_ret || pid != 0 || !strstr(err, want_msg) || strncmp(err, "container:web", 13))
		fail_msg("\"%s\": %d, pid %d, '%s'; want %d, pid 0, 'container:web...%s...'", answer, ret, pid, err,
			 want_ret, want_msg);
}

static void test_inspect_ok(void **state)
{
	(void)state;
	inspect_ok("1234 true\n", 1234);
	inspect_ok("1234 true", 1234);
	inspect_ok("1 true\r\n", 1);
	inspect_ok("2147483647 true\n", 2147483647);
	inspect_ok("77  true\n\n", 77);
}

static void test_inspect_bad(void **state)
{
	(void)state;
	/* stopped */
	inspect_bad("0 false\n", -ESRCH, "is not running");
	inspect_bad("1234 false\n", -ESRCH, "is not running");
	inspect_bad("0 true\n", -ESRCH, "is not running");
	/* garbage */
	inspect_bad("", -EINVAL, "answered nothing");
	inspect_bad("\n", -EINVAL, "answered nothing");
	inspect_bad("false", -EINVAL, "cannot read a PID");
	inspect_bad("true", -EINVAL, "cannot read a PID");
	inspect_bad("1234", -EINVAL, "cannot read a PID");
	inspect_bad("1234 \n", -EINVAL, "cannot read a PID");
	inspect_bad("1234 yes\n", -EINVAL, "cannot read a PID");
	inspect_bad("1234 True\n", -EINVAL, "cannot read a PID");
	inspect_bad("1234 true false\n", -EINVAL, "cannot read a PID");
	inspect_bad("1234 true\n5678 true\n", -EINVAL, "cannot read a PID");
	inspect_bad("-1 true\n", -EINVAL, "cannot read a PID");
	inspect_bad("+5 true\n", -EINVAL, "cannot read a PID");
	inspect_bad(" 5 true\n", -EINVAL, "cannot read a PID");
	inspect_bad("12x4 true\n", -EINVAL, "cannot read a PID");
	inspect_bad("2147483648 true\n", -EINVAL, "cannot read a PID");
	inspect_bad("99999999999 true\n", -EINVAL, "cannot read a PID");
	inspect_bad("<no value> <no value>\n", -EINVAL, "'<no value> <no value>'");
	inspect_bad("[]\n", -EINVAL, "'[]'");
	inspect_bad("1234\ttrue\n", -EINVAL, "cannot read a PID");
}

/* Without LINERATE_DOCKER and with a PATH that has neither CLI, the message says what to do. */
static void test_no_cli(void **state)
{
	char dir[] = "/tmp/lr-unit-container.XXXXXX", err[512] = "";
	char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	char *old_env = getenv("LINERATE_DOCKER") ? strdup(getenv("LINERATE_DOCKER")) : NULL;
	struct lr_container ctr;
	int ret;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("PATH", dir, 1);
	unsetenv("LINERATE_DOCKER");
	ret = lr_container_resolve("web", &ctr, err, sizeof(err));
	assert_int_equal(ret, -ENOENT);
	assert_string_equal(err, "container:web: no docker or podman on PATH (set LINERATE_DOCKER to a "
				 "docker-compatible CLI)");

	/* an empty LINERATE_DOCKER is unset */
	setenv("LINERATE_DOCKER", "", 1);
	assert_int_equal(lr_container_resolve("web", &ctr, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no docker or podman on PATH"));

	setenv("LINERATE_DOCKER", "/nonexistent/docker", 1);
	assert_int_equal(lr_container_resolve("web", &ctr, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "container:web: LINERATE_DOCKER='/nonexistent/docker' is not an executable file");

	/* a directory is not a CLI */
	setenv("LINERATE_DOCKER", dir, 1);
	assert_int_equal(lr_container_resolve("web", &ctr, err, sizeof(err)), -ENOENT);

	setenv("LINERATE_DOCKER", "nerdctl-not-here", 1);
	assert_int_equal(lr_container_resolve("web", &ctr, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "'nerdctl-not-here' is not an executable file on PATH"));

	rmdir(dir);
	if (old_path)
		setenv("PATH", old_path, 1);
	if (old_env)
		setenv("LINERATE_DOCKER", old_env, 1);
	else
		unsetenv("LINERATE_DOCKER");
	free(old_path);
	free(old_env);
}

static int veth_parse(struct lr_veth_opts *o, char *err, size_t errlen, FILE *help, ...)
{
	char *argv[16];
	va_list ap;
	int argc = 0;

	argv[argc++] = "veth";
	va_start(ap, help);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return lr_cli_parse_veth(argc, argv, o, help, err, errlen);
}

static void test_veth_cli(void **state)
{
	struct lr_veth_opts o;
	char err[512] = "", *help = NULL;
	size_t help_len = 0;
	FILE *out;

	(void)state;
	assert_int_equal(veth_parse(&o, err, sizeof(err), NULL, "container:web", NULL), 0);
	assert_string_equal(o.target, "container:web");
	assert_string_equal(o.netns, "");
	assert_string_equal(o.json, "");
	assert_int_equal(veth_parse(&o, err, sizeof(err), NULL, "--json", "-", "-n", "host", "container:web:eth1",
				    "-v", NULL), 0);
	assert_string_equal(o.target, "container:web:eth1");
	assert_string_equal(o.netns, "host");
	assert_string_equal(o.json, "-");
	assert_int_equal(o.verbose, 1);

	assert_int_equal(veth_parse(&o, err, sizeof(err), NULL, NULL), -EINVAL);
	assert_non_null(strstr(err, "missing container:NAME"));
	assert_int_equal(veth_parse(&o, err, sizeof(err), NULL, "web", NULL), -EINVAL);
	assert_non_null(strstr(err, "is not container:NAME"));
	assert_int_equal(veth_parse(&o, err, sizeof(err), NULL, "container:", NULL), -EINVAL);
	assert_int_equal(veth_parse(&o, err, sizeof(err), NULL, "container:a", "container:b", NULL), -EINVAL);
	assert_non_null(strstr(err, "unexpected argument"));
	assert_int_equal(veth_parse(&o, err, sizeof(err), NULL, "--bogus", "container:a", NULL), -EINVAL);

	out = open_memstream(&help, &help_len);
	assert_non_null(out);
	assert_int_equal(veth_parse(&o, err, sizeof(err), out, "--help", NULL), 1);
	fclose(out);
	assert_non_null(strstr(help, "Usage: linerate veth container:NAME[:IFNAME]"));
	assert_non_null(strstr(help, "--netns"));
	assert_non_null(strstr(help, "LINERATE_DOCKER"));
	free(help);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_ok),
		cmocka_unit_test(test_spec_bad),
		cmocka_unit_test(test_inspect_ok),
		cmocka_unit_test(test_inspect_bad),
		cmocka_unit_test(test_no_cli),
		cmocka_unit_test(test_veth_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
