/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for a session between the controller's connection and an endpoint served in a
 * thread over a socketpair (no root, no network): auth both ways (the right token, another token,
 * none where one is wanted, a forged proof, requests before auth), the dead-man timer and an
 * endpoint gone, the keepalive that keeps the timer quiet, clock exchanges against one clock, and
 * a reflector's prepare refused by the endpoint (policy, no such interface) without ending the session.
 */
#define _GNU_SOURCE	/* pipe2() */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "cmd/cmd.h"
#include <cmocka.h>

#include "ctl/auth.h"
#include "ctl/ctl.h"
#include "ctl/msg.h"
#include "ctl/request.h"
#include "util/clock.h"

static char err[512];
static struct lr_auth_key token, other;

struct served {
	struct lr_ctl_serve_opts so;
	int fd;
	int code;
	int64_t end_ms;
};

static void *serve(void *arg)
{
	struct served *s = arg;

	s->code = lr_ctl_serve(s->fd, &s->so);
	s->end_ms = lr_now_ms();
	return NULL;
}

/* An endpoint as @so says in a thread; the controller's end of the stream in *fd. */
static void start(struct served *s, const struct lr_ctl_serve_opts *so, int *fd, pthread_t *t)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	s->so = *so;
	s->so.status_fd = -1;
	s->fd = sv[1];
	*fd = sv[0];
	assert_int_equal(pthread_create(t, NULL, serve, s), 0);
}

/* A connection to the endpoint of @so, hello said with @key: its exit code in *ret. */
static struct lr_ctl *session(struct served *s, const struct lr_ctl_serve_opts *so, const struct lr_auth_key *key,
			      pthread_t *t, int *ret)
{
	struct lr_ctl *c;
	int fd;

	start(s, so, &fd, t);
	assert_int_equal(lr_ctl_attach(fd, "the endpoint", &c), 0);
	err[0] = '\0';
	*ret = lr_ctl_hello(c, key, err, sizeof(err));
	return c;
}

/* The same, hello expected to succeed. */
static struct lr_ctl *session_ok(struct served *s, const struct lr_ctl_serve_opts *so, const struct lr_auth_key *key,
				 pthread_t *t)
{
	struct lr_ctl *c;
	int ret;

	c = session(s, so, key, t, &ret);
	if (ret)
		fail_msg("hello: %d: %s", ret, err);
	return c;
}

static void finish(struct served *s, struct lr_ctl *c, pthread_t t)
{
	lr_ctl_close(c);
	pthread_join(t, NULL);
	close(s->fd);
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(lr_auth_init(), 0);
	assert_int_equal(lr_auth_key("the right token", 15, &token), 0);
	assert_int_equal(lr_auth_key("another token", 13, &other), 0);
	return 0;
}

static void test_auth_ok(void **state)
{
	const struct lr_ctl_serve_opts so = { .key = &token };
	struct served s;
	struct lr_ctl *c;
	pthread_t t;

	(void)state;
	c = session_ok(&s, &so, &token, &t);
	/* the endpoint's facts came with its hello */
	assert_true(lr_ctl_host(c)->cpus >= 1);
	assert_int_equal(strlen(lr_ctl_host(c)->boot_id), LR_BOOT_ID_LEN);
	assert_non_null(lr_ctl_host_json(c));
	assert_int_equal(lr_ctl_ping(c, err, sizeof(err)), 0);
	assert_int_equal(lr_ctl_quit(c, err, sizeof(err)), 0);
	finish(&s, c, t);
	assert_int_equal(s.code, 0);
}

static void test_auth_refused(void **state)
{
	const struct lr_ctl_serve_opts with_token = { .key = &token }, without = { 0 };
	struct served s;
	struct lr_ctl *c;
	pthread_t t;
	int ret;

	(void)state;
	/* another token: the endpoint's proof fails here, so nothing of ours is ever sent */
	c = session(&s, &with_token, &other, &t, &ret);
	assert_int_equal(ret, 2);
	assert_non_null(strstr(err, "authentication failed: the endpoint does not hold this token"));
	finish(&s, c, t);
	/* no token where one is wanted */
	c = session(&s, &with_token, NULL, &t, &ret);
	assert_int_equal(ret, 2);
	assert_non_null(strstr(err, "asks for a token: give --token-file"));
	finish(&s, c, t);
	/* a token where the endpoint wants none: it could be anyone */
	c = session(&s, &without, &token, &t, &ret);
	assert_int_equal(ret, 2);
	assert_non_null(strstr(err, "asks for no token"));
	finish(&s, c, t);
}

/* Raw messages to an endpoint that wants @token: its hello reply, then @req; the error it answers. */
static void refused_before_auth(struct json_object *req, const char *says)
{
	const struct lr_ctl_serve_opts so = { .key = &token };
	struct json_object *m;
	struct served s;
	pthread_t t;
	int fd;

	start(&s, &so, &fd, &t);
	m = lr_ctl_hello_msg("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	assert_int_equal(lr_msg_send(fd, m, 1000, err, sizeof(err)), 0);
	json_object_put(m);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 2000, &m, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(m), "hello");
	assert_non_null(strstr(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN), "\"auth\":\"hmac-sha512-256\""));
	json_object_put(m);
	assert_int_equal(lr_msg_send(fd, req, 1000, err, sizeof(err)), 0);
	json_object_put(req);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 2000, &m, err, sizeof(err)), 0);
	assert_string_equal(lr_msg_type(m), "error");
	if (!strstr(json_object_to_json_string(m), says))
		fail_msg("%s does not say \"%s\"", json_object_to_json_string(m), says);
	json_object_put(m);
	/* nothing else is done: the stream is closed */
	pthread_join(t, NULL);
	close(s.fd);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 1000, &m, err, sizeof(err)), -ECONNRESET);
	close(fd);
}

/* A forged proof, or any request but auth before it: one error, and the stream is closed. */
static void test_auth_forged(void **state)
{
	struct json_object *m = lr_msg_new("auth");

	(void)state;
	json_object_object_add(m, "proof",
			       json_object_new_string("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"));
	refused_before_auth(m, "authentication failed");
	refused_before_auth(lr_msg_new("prepare_rx"), "'prepare_rx' before auth");
	refused_before_auth(lr_msg_new("ping"), "'ping' before auth");
}

/*
 * A controller that goes silent: the endpoint ends the session after its dead-man time and says
 * why. The endpoint gone: the keepalive notices within LR_CTL_PING_MS + LR_CTL_REPLY_MS, with the
 * endpoint's last word, and every call fails from then on.
 */
static void test_deadman(void **state)
{
	const struct lr_ctl_serve_opts so = { .deadman_ms = 300 };
	struct served s;
	struct lr_ctl *c;
	pthread_t t;
	int64_t t0;

	(void)state;
	c = session_ok(&s, &so, NULL, &t);
	t0 = lr_now_ms();
	pthread_join(t, NULL);
	if (s.end_ms - t0 < 250 || s.end_ms - t0 > 1000)
		fail_msg("the dead-man timer fired after %lld ms, not about 300", (long long)(s.end_ms - t0));
	close(s.fd);
	t0 = lr_now_ms();
	assert_int_equal(lr_ctl_keepalive(c), 0);
	while (!lr_ctl_dead(c, err, sizeof(err)) && lr_now_ms() - t0 < 3000)
		usleep(10000);
	if (lr_now_ms() - t0 > LR_CTL_PING_MS + LR_CTL_REPLY_MS)
		fail_msg("noticed after %lld ms", (long long)(lr_now_ms() - t0));
	assert_string_equal(err, "the agent ended the test: nothing from this side for 300 ms");
	assert_true(lr_ctl_ping(c, err, sizeof(err)) < 0);
	lr_ctl_close(c);
}

/*
 * A signal ends the session, and its last word says whose: the agent stopping (SIGTERM sent to
 * it), or its main process gone (the same SIGTERM, asked of the kernel, after another death). The
 * controller's next call fails with it, and so does every call after.
 */
static void stopped_by(pid_t parent, const char *says)
{
	const struct lr_ctl_serve_opts so = { .parent = parent };
	struct served s;
	struct lr_ctl *c;
	pthread_t t;

	c = session_ok(&s, &so, NULL, &t);
	lr_stop = SIGTERM;
	pthread_join(t, NULL);
	lr_stop = 0;
	assert_int_equal(lr_ctl_ping(c, err, sizeof(err)), 1);
	assert_string_equal(err, says);
	assert_true(lr_ctl_dead(c, err, sizeof(err)));
	assert_string_equal(err, says);
	assert_true(lr_ctl_ping(c, err, sizeof(err)) != 0);
	lr_ctl_close(c);
	close(s.fd);
}

static void test_signal_ends(void **state)
{
	(void)state;
	stopped_by(getppid(), "the agent ended the test: the agent is stopping (SIGTERM)");
	/* this process is not its own parent: as after the agent's main process died */
	stopped_by(getpid(), "the agent ended the test: the agent's main process died");
}

/* The keepalive keeps a 1 s dead-man timer quiet for as long as the controller lives. */
static void test_keepalive(void **state)
{
	const struct lr_ctl_serve_opts so = { .deadman_ms = 1000 };
	struct served s;
	struct lr_ctl *c;
	pthread_t t;

	(void)state;
	c = session_ok(&s, &so, NULL, &t);
	assert_int_equal(lr_ctl_keepalive(c), 0);
	usleep(2500000);
	assert_false(lr_ctl_dead(c, err, sizeof(err)));
	assert_int_equal(lr_ctl_ping(c, err, sizeof(err)), 0);
	/* the controller gone: the endpoint ends at once */
	finish(&s, c, t);
	assert_int_equal(s.code, 0);
}

/* Exchanges against one clock: the estimate holds the truth, 0, within its bound. */
static void test_clock(void **state)
{
	const struct lr_ctl_serve_opts so = { 0 };
	struct lr_clock_est e;
	struct served s;
	struct lr_ctl *c;
	pthread_t t;

	(void)state;
	c = session_ok(&s, &so, NULL, &t);
	assert_int_equal(lr_ctl_clock_estimate(c, 16, &e, err, sizeof(err)), 0);
	assert_int_equal(e.samples, 16);
	assert_int_equal(e.refused, 0);
	if ((uint64_t)(e.offset_ns < 0 ? -e.offset_ns : e.offset_ns) > e.bound_ns)
		fail_msg("offset %lld ns outside its bound %llu ns", (long long)e.offset_ns, (unsigned long long)e.bound_ns);
	finish(&s, c, t);
}

/*
 * prepare_reflect, as an agent and as run's child serve it: "reflect" among the roles; an interface
 * outside --allow and one that does not exist refused (code 2, named), the session going on; the
 * calls a reflector takes refused before one is prepared.
 */
static void test_reflect_refused(void **state)
{
	static const char allow[][LR_GLOB_MAX] = { "ul*" };
	const struct lr_ctl_serve_opts agent = { .tx = true, .policy = true, .allow = allow, .nallow = 1 },
				       child = { 0 };
	struct lr_reflect_opts *fo = calloc(1, sizeof(*fo));
	struct json_object *m;
	struct lr_ctl_ready rd;
	struct lr_ctl_reflect r;
	struct lr_ctl *c;
	struct served s;
	pthread_t t;
	bool complete;
	int fd;

	(void)state;
	/* the roles, from a raw hello */
	start(&s, &child, &fd, &t);
	m = lr_ctl_hello_msg("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	assert_int_equal(lr_msg_send(fd, m, 1000, err, sizeof(err)), 0);
	json_object_put(m);
	assert_int_equal(lr_msg_recv(fd, LR_MSG_MAX, 2000, &m, err, sizeof(err)), 0);
	assert_non_null(strstr(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN),
			       "\"roles\":[\"rx\",\"reflect\"]"));
	json_object_put(m);
	close(fd);
	pthread_join(t, NULL);
	close(s.fd);

	lr_reflect_opts_default(fo);
	/* the agent's policy: lo matches none of its --allow patterns */
	c = session_ok(&s, &agent, NULL, &t);
	snprintf(fo->fx.ifname, sizeof(fo->fx.ifname), "lo");
	assert_int_equal(lr_ctl_prepare_reflect(c, fo, "", &rd, err, sizeof(err)), 2);
	assert_string_equal(err,
			    "interface lo is not served here: it matches none of the agent's --allow patterns (ul*)");
	/* nothing prepared: a wait is refused, and the session goes on */
	assert_int_equal(lr_ctl_wait_reflect(c, 0, &complete, &r, NULL, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "nothing prepared"));
	assert_int_equal(lr_ctl_ping(c, err, sizeof(err)), 0);
	assert_int_equal(lr_ctl_quit(c, err, sizeof(err)), 0);
	finish(&s, c, t);
	assert_int_equal(s.code, 2);

	/* run's child has no policy: the reflector's own check of the interface speaks */
	c = session_ok(&s, &child, NULL, &t);
	snprintf(fo->fx.ifname, sizeof(fo->fx.ifname), "lrnosuch0");
	assert_int_equal(lr_ctl_prepare_reflect(c, fo, "", &rd, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "lrnosuch0"));
	assert_int_equal(lr_ctl_start(c, 0, NULL, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "prepare_reflect"));
	assert_int_equal(lr_ctl_quit(c, err, sizeof(err)), 0);
	finish(&s, c, t);
	free(fo);
}

/*
 * What an agent refuses before it touches anything (docs/protocol.md, "What a controller may ask
 * for"): a capture without --capture-dir, a path or a hidden name with one, a namespace without
 * --allow-netns or outside it, a '..' path; each one line, code 2, the session going on.
 */
static void test_paths_refused(void **state)
{
	static const char allow[][LR_NETNS_GLOB_MAX] = { "lab-*", "/run/netns/*" };
	const struct lr_ctl_serve_opts nodir = { .tx = true, .policy = true, .capture_fd = -1 };
	struct lr_ctl_serve_opts withdir = nodir;
	const struct {
		const struct lr_ctl_serve_opts *so;
		const char *pcap, *netns, *says;
	} cases[] = {
		{ &nodir, "/etc/passwd", "", "prepare_rx.pcap: this agent writes no captures: start it with --capture-dir DIR" },
		{ &nodir, "x.pcap", "", "start it with --capture-dir DIR" },
		{ NULL, "/etc/passwd", "", "prepare_rx.pcap: '/etc/passwd' is not a bare file name" },
		{ NULL, "../x.pcap", "", "is not a bare file name" },
		{ NULL, ".x.pcap", "", "is not a bare file name" },
		{ NULL, "existing", "", "exists already in the agent's --capture-dir" },
		{ &nodir, "", "pid:1", "network namespace 'pid:1' is not served here: this agent tests only in its own" },
		{ NULL, "", "pid:1", "matches none of the agent's --allow-netns patterns (lab-*, /run/netns/*)" },
		{ NULL, "", "/proc/1/ns/net", "matches none of the agent's --allow-netns patterns" },
		{ NULL, "", "/run/netns/a/b", "matches none of the agent's --allow-netns patterns" },
		{ NULL, "", "/run/netns/../../proc/1/ns/net", "not a plain absolute path" },
		{ NULL, "", "/run/netns//lab-1", "not a plain absolute path" },
	};
	struct lr_recv_opts *ro = calloc(1, sizeof(*ro));
	char dir[] = "/tmp/lr-session-XXXXXX", path[64];
	struct lr_ctl_ready rd;
	struct lr_ctl *c;
	struct served s;
	unsigned int i;
	pthread_t t;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/existing", dir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	withdir.capture_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(withdir.capture_fd >= 0);
	withdir.allow_netns = allow;
	withdir.nallow_netns = 2;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = session_ok(&s, cases[i].so ? cases[i].so : &withdir, NULL, &t);
		lr_recv_opts_default(ro);
		snprintf(ro->rx.ifname, sizeof(ro->rx.ifname), "lo");
		snprintf(ro->rx.pcap, sizeof(ro->rx.pcap), "%s", cases[i].pcap);
		snprintf(ro->netns, sizeof(ro->netns), "%s", cases[i].netns);
		err[0] = '\0';
		if (lr_ctl_prepare_rx(c, ro, "", &rd, err, sizeof(err)) != 2 || !strstr(err, cases[i].says) ||
		    strchr(err, '\n'))
			fail_msg("pcap '%s' netns '%s': '%s' (want '%s')", cases[i].pcap, cases[i].netns, err,
				 cases[i].says);
		assert_int_equal(lr_ctl_ping(c, err, sizeof(err)), 0);
		assert_int_equal(lr_ctl_quit(c, err, sizeof(err)), 0);
		finish(&s, c, t);
	}
	close(withdir.capture_fd);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);	/* nothing else was created there */
	free(ro);
}

/*
 * The agent answers "busy" until its session says it is ending: that must be said before bye
 * leaves, or a controller that connects again at once (the matrix's next cell) is refused.
 */
static void test_ending_before_bye(void **state)
{
	const struct lr_ctl_serve_opts so = { .key = &token };
	char buf[64] = "";
	struct served s;
	struct lr_ctl *c;
	pthread_t t;
	int sv[2], st[2];
	ssize_t n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(st, O_CLOEXEC | O_NONBLOCK), 0);
	s.so = so;
	s.so.status_fd = st[1];
	s.fd = sv[1];
	assert_int_equal(pthread_create(&t, NULL, serve, &s), 0);
	assert_int_equal(lr_ctl_attach(sv[0], "the endpoint", &c), 0);
	assert_int_equal(lr_ctl_hello(c, &token, err, sizeof(err)), 0);
	assert_int_equal(lr_ctl_quit(c, err, sizeof(err)), 0);
	/* bye is in: the status pipe says "ending" already, with the session's thread not yet joined */
	n = read(st[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, LR_CTL_STATUS_ENDING "\n"));
	finish(&s, c, t);
	close(st[0]);
	close(st[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_ok),	    cmocka_unit_test(test_auth_refused),
		cmocka_unit_test(test_auth_forged),
		cmocka_unit_test(test_deadman),	    cmocka_unit_test(test_keepalive),
		cmocka_unit_test(test_clock),	    cmocka_unit_test(test_reflect_refused),
		cmocka_unit_test(test_paths_refused),
		cmocka_unit_test(test_ending_before_bye), cmocka_unit_test(test_signal_ends),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
