/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for a test's two clocks on one time line (ctl/clock_window.c): when two ends share a
 * clock (one boot), which agent's clock is estimated, the offset and bound loaded into the receiver,
 * and the report after. The agents are stand-ins: lr_ctl_clock_estimate(), lr_ctl_host() and
 * lr_host_boot_id() are wrapped at link time (-Wl,--wrap), each agent's clock a line of known
 * offset and drift against this process's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/clock_window.h"
#include "ctl/host.h"

/* A stand-in agent: its boot, and its clock's offset from ours, which moves by @step per estimate. */
struct lr_ctl {
	struct lr_host host;
	int64_t offset_ns, step_ns;
	uint64_t bound_ns;
	int fail_at;	/* the estimate (1, 2, ...) that fails; 0: none */
	int estimates;	/* estimates taken */
};

static const char *our_boot = "0b7e0f0a-1111-4222-8333-944445555666";
static const char *other_boot = "5c1d2e3f-aaaa-4bbb-8ccc-9ddddeeeefff";
static bool boot_unknown;
static uint64_t now_ns = 1000000000ULL;

int __wrap_lr_host_boot_id(char out[LR_BOOT_ID_LEN + 1]);
const struct lr_host *__wrap_lr_ctl_host(const struct lr_ctl *c);
int __wrap_lr_ctl_clock_estimate(struct lr_ctl *c, unsigned int n, struct lr_clock_est *e, char *err, size_t errlen);

int __wrap_lr_host_boot_id(char out[LR_BOOT_ID_LEN + 1])
{
	if (boot_unknown)
		return -ENOENT;
	snprintf(out, LR_BOOT_ID_LEN + 1, "%s", our_boot);
	return 0;
}

const struct lr_host *__wrap_lr_ctl_host(const struct lr_ctl *c)
{
	return &c->host;
}

int __wrap_lr_ctl_clock_estimate(struct lr_ctl *c, unsigned int n, struct lr_clock_est *e, char *err, size_t errlen)
{
	c->estimates++;
	if (c->fail_at == c->estimates) {
		snprintf(err, errlen, "stand-in failure %d", c->estimates);
		return -ETIMEDOUT;
	}
	memset(e, 0, sizeof(*e));
	e->offset_ns = c->offset_ns + (c->estimates - 1) * c->step_ns;
	e->bound_ns = c->bound_ns;
	e->delay_ns = 2 * c->bound_ns;
	e->samples = n;
	/* a second apart: the drift is the step per second */
	now_ns += 1000000000ULL;
	e->at_ns = now_ns;
	return 0;
}

static void agent(struct lr_ctl *c, const char *boot, int64_t offset, uint64_t bound)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->host.boot_id, sizeof(c->host.boot_id), "%s", boot);
	c->offset_ns = offset;
	c->bound_ns = bound;
}

static int reset(void **state)
{
	(void)state;
	boot_unknown = false;
	return 0;
}

/* Both ends here: one clock, nothing asked of anyone. */
static void both_here(void **state)
{
	struct lr_clock_window w;
	struct lr_ctl *failed = (struct lr_ctl *)1;
	char err[128];

	(void)state;
	assert_int_equal(lr_clock_window_begin(&w, NULL, NULL, true, &failed, err, sizeof(err)), 0);
	assert_int_equal(w.state, LR_CLOCK_SAME);
	assert_null(failed);
	assert_int_equal(lr_clock_window_offset(&w), 0);
}

/*
 * An agent on this boot: one clock, no exchange; asked to estimate anyway, it is. Two agents on one
 * boot share a clock too.
 */
static void same_boot(void **state)
{
	struct lr_clock_window w;
	struct lr_ctl a, *failed;
	char err[128];

	(void)state;
	agent(&a, our_boot, 5000, 100);
	assert_int_equal(lr_clock_window_begin(&w, &a, NULL, false, &failed, err, sizeof(err)), 0);
	assert_int_equal(w.state, LR_CLOCK_SAME);
	assert_int_equal(a.estimates, 0);
	assert_int_equal(lr_clock_window_begin(&w, &a, NULL, true, &failed, err, sizeof(err)), 0);
	assert_int_equal(w.state, LR_CLOCK_ESTIMATED);
	assert_int_equal(a.estimates, 1);
	assert_int_equal(lr_clock_window_offset(&w), 5000);

	agent(&a, other_boot, 5000, 100);
	{
		struct lr_ctl b;

		agent(&b, other_boot, 7000, 100);
		assert_int_equal(lr_clock_window_begin(&w, &a, &b, false, &failed, err, sizeof(err)), 0);
		assert_int_equal(w.state, LR_CLOCK_SAME);
		assert_int_equal(a.estimates + b.estimates, 0);
	}
}

/* This host's boot unreadable: the clocks cannot be shown to be one, so they are estimated. */
static void boot_not_known(void **state)
{
	struct lr_clock_window w;
	struct lr_ctl a, *failed;
	char err[128];

	(void)state;
	boot_unknown = true;
	agent(&a, "", 7, 1);
	assert_int_equal(lr_clock_window_begin(&w, &a, NULL, false, &failed, err, sizeof(err)), 0);
	assert_int_equal(w.state, LR_CLOCK_ESTIMATED);
}

/*
 * The receiver on one agent, the sender on another: the offset loaded is the receiver's clock minus
 * the sender's, its bound both bounds; after, the report joins both moves.
 */
static void two_agents(void **state)
{
	struct lr_clock_window w;
	struct lr_clock_report rep;
	struct lr_ctl rx, tx, *failed;
	char err[128];

	(void)state;
	agent(&rx, other_boot, 3000000, 40000);
	agent(&tx, our_boot, -1000000, 2000);
	rx.step_ns = 500;	/* the receiver's clock gains 500 ns between the estimates */
	assert_int_equal(lr_clock_window_begin(&w, &rx, &tx, false, &failed, err, sizeof(err)), 0);
	assert_int_equal(w.state, LR_CLOCK_ESTIMATED);
	assert_int_equal(lr_clock_window_offset(&w), 4000000);
	assert_int_equal(lr_clock_window_bound(&w), 42000);
	assert_int_equal(lr_clock_window_end(&w, &rep, &failed, err, sizeof(err)), 0);
	assert_int_equal(rx.estimates, 2);
	assert_int_equal(tx.estimates, 2);
	assert_int_equal(rep.offset_ns, 4000000);
	/* each end's bound is its wider estimate plus its move; the two added */
	assert_int_equal(rep.error_bound_ns, 40000 + 500 + 2000);
	assert_true(rep.drift_ppb > 0);
}

/* send --reverse: the agent sends, this process receives: the offset is the agent's negated. */
static void agent_sends(void **state)
{
	struct lr_clock_window w;
	struct lr_clock_report rep;
	struct lr_ctl tx, *failed;
	char err[128];

	(void)state;
	agent(&tx, other_boot, 250000, 900);
	assert_int_equal(lr_clock_window_begin(&w, NULL, &tx, false, &failed, err, sizeof(err)), 0);
	assert_int_equal(lr_clock_window_offset(&w), -250000);
	assert_int_equal(lr_clock_window_end(&w, &rep, &failed, err, sizeof(err)), 0);
	assert_int_equal(rep.offset_ns, -250000);
	assert_int_equal(rep.error_bound_ns, 900);
}

/* An estimate that fails names its agent; no offset is loaded and the end refuses a report. */
static void estimate_fails(void **state)
{
	struct lr_clock_window w;
	struct lr_clock_report rep;
	struct lr_ctl rx, tx, *failed;
	char err[128];

	(void)state;
	agent(&rx, other_boot, 10, 1);
	agent(&tx, our_boot, 20, 1);
	tx.fail_at = 1;
	assert_int_equal(lr_clock_window_begin(&w, &rx, &tx, false, &failed, err, sizeof(err)), -ETIMEDOUT);
	assert_int_equal(w.state, LR_CLOCK_NONE);
	assert_ptr_equal(failed, &tx);
	assert_string_equal(err, "stand-in failure 1");
	assert_int_equal(lr_clock_window_offset(&w), 0);
	assert_int_equal(lr_clock_window_end(&w, &rep, &failed, err, sizeof(err)), -ENODATA);
	assert_null(failed);

	/* the receiver's estimate after the test fails: that agent is named, the sender not asked */
	agent(&rx, other_boot, 10, 1);
	agent(&tx, our_boot, 20, 1);
	rx.fail_at = 2;
	assert_int_equal(lr_clock_window_begin(&w, &rx, &tx, false, &failed, err, sizeof(err)), 0);
	assert_int_equal(lr_clock_window_end(&w, &rep, &failed, err, sizeof(err)), -ETIMEDOUT);
	assert_ptr_equal(failed, &rx);
	assert_int_equal(tx.estimates, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(both_here, reset),
		cmocka_unit_test_setup(same_boot, reset),
		cmocka_unit_test_setup(boot_not_known, reset),
		cmocka_unit_test_setup(two_agents, reset),
		cmocka_unit_test_setup(agent_sends, reset),
		cmocka_unit_test_setup(estimate_fails, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
