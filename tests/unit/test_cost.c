/* SPDX-License-Identifier: MIT */
/* The cost split (sys/cost.c) on canned /proc/stat readings, thread times and bpf_stats. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "sys/cost.h"

#define MS 1000000ULL
#define TICK (10 * MS)	/* USER_HZ 100 */

/* cpuN user nice system idle iowait irq softirq steal guest guest_nice, in ticks */
static const char stat_a[] =
	"cpu  300 0 300 1400 0 0 200 0 0 0\n"
	"cpu0 100 0 200 200 0 0 200 0 0 0\n"
	"cpu1 200 0 100 1200 0 0 0 0 0 0\n"
	"intr 12345 0 0\n"
	"ctxt 999\n";
/* 2 s later: cpu0 busy all along, 100 ticks of it softirq, 10 irq; cpu1 idle 150 of 200 ticks, 5 steal */
static const char stat_b[] =
	"cpu  330 0 390 1550 0 10 300 5 0 0\n"
	"cpu0 110 0 280 200 0 10 300 0 0 0\n"
	"cpu1 220 0 110 1346 4 0 0 5 0 0\n"
	"ctxt 1999\n";

static void readings(struct lr_cpu_times *a, struct lr_cpu_times *b)
{
	lr_cpu_times_parse(stat_a, a);
	lr_cpu_times_parse(stat_b, b);
	a->at_ns = 1000 * MS;
	b->at_ns = 3000 * MS;
	a->tick_ns = b->tick_ns = TICK;
}

static void test_parse(void **state)
{
	struct lr_cpu_times t;

	(void)state;
	lr_cpu_times_parse(stat_b, &t);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.user[1], 220);
	assert_int_equal(t.sys[0], 280);
	assert_int_equal(t.irq[0], 10);
	assert_int_equal(t.softirq[0], 300);
	/* idle takes iowait in */
	assert_int_equal(t.idle[1], 1350);
	assert_int_equal(t.steal[1], 5);
	/* the "cpu" total line and other lines are not a CPU */
	lr_cpu_times_parse("cpu  1 2 3 4 5 6 7 8 9 10\nintr 5\n", &t);
	assert_int_equal(t.n, 0);
	/* a short line is skipped, not half read */
	lr_cpu_times_parse("cpu0 1 2 3\ncpu1 1 0 1 1 0 0 0 0\n", &t);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.user[0], 0);
	assert_int_equal(t.sys[1], 1);
	lr_cpu_times_parse("", &t);
	assert_int_equal(t.n, 0);
	assert_false(t.truncated);
	/* a CPU numbered past what the arrays hold is left out, and said */
	lr_cpu_times_parse("cpu0 1 0 1 1 0 0 0 0\ncpu64 1 0 1 1 0 0 0 0\n", &t);
	assert_int_equal(t.n, 1);
	assert_true(t.truncated);
}

static void test_busy(void **state)
{
	struct lr_cpu_times a, b;
	uint64_t err, busy;

	(void)state;
	readings(&a, &b);
	busy = lr_cost_busy_ns(&a, &b, &err);
	/* cpu0: 2 s, no idle; cpu1: 2 s less 150 idle ticks (146 + 4 iowait) and 5 of steal = 0.45 s */
	assert_int_equal(busy, 2000 * MS + 450 * MS);
	/* two ticks a CPU for the rounded idle and iowait, one more where steal moved (cpu1) */
	assert_int_equal(err, 5 * TICK);
	/* no time between the readings: nothing busy, never negative */
	b.at_ns = a.at_ns;
	assert_int_equal(lr_cost_busy_ns(&a, &b, &err), 0);
}

static void test_softirq(void **state)
{
	struct lr_cpu_times a, b;
	struct lr_cost_cpus c = { .n = 1, .cpu = { 0 }, .thread_ns = { 1900 * MS } };
	uint64_t err, si, want_err;

	(void)state;
	readings(&a, &b);
	/* cpu0: 100 softirq + 10 irq ticks = 1.1 s, nothing of ksoftirqd's known */
	si = lr_cost_softirq_ns(&a, &b, &c, &err);
	assert_int_equal(si, 1100 * MS);
	/* 2 sd of a binomial sample (p = 0.55 of 2 s at a 10 ms tick) plus two ticks (softirq, irq) */
	want_err = (uint64_t)(2 * sqrt((double)TICK * 1100.0 * MS * 0.45) + 2 * TICK);
	assert_int_equal(err, want_err);
	/* ksoftirqd's own 300 ms there is not the workers' */
	c.ksoftirqd_seen[0] = true;
	c.ksoftirqd_ns[0] = 300 * MS;
	assert_int_equal(lr_cost_softirq_ns(&a, &b, &c, &err), 800 * MS);
	/* a worker on a CPU the readings do not have adds nothing */
	c.cpu[0] = 7;
	assert_int_equal(lr_cost_softirq_ns(&a, &b, &c, &err), 0);
	assert_int_equal(err, 0);
}

static void test_softirq_apart(void **state)
{
	struct lr_cpu_times a, b;
	/* cpu0 busy 2 s, 1.1 s of it interrupt work; the threads ran 0.85 s: the kernel kept it apart */
	struct lr_cost_cpus c = { .n = 1, .cpu = { 0 }, .thread_ns = { 850 * MS }, .irqtime = -1 };
	uint64_t err;

	(void)state;
	readings(&a, &b);
	assert_int_equal(lr_cost_softirq_ns(&a, &b, &c, &err), 0);
	assert_int_equal(err, 0);
	assert_true(c.by_data[0]);
	assert_false(c.inside[0]);
	assert_int_equal(lr_cost_irqtime(&c, -1), 1);
	/* whatever the config claims: the data decide */
	c.irqtime = 0;
	assert_int_equal(lr_cost_softirq_ns(&a, &b, &c, &err), 0);
	assert_int_equal(lr_cost_irqtime(&c, 0), 1);
	/* the threads fill the CPU: inside, whatever the config claims */
	c.thread_ns[0] = 1950 * MS;
	c.irqtime = 1;
	assert_int_equal(lr_cost_softirq_ns(&a, &b, &c, &err), 1100 * MS);
	assert_int_equal(lr_cost_irqtime(&c, 1), 0);
	/* ksoftirqd's time counts with the threads' toward the busy time */
	c.thread_ns[0] = 850 * MS;
	c.ksoftirqd_seen[0] = true;
	c.ksoftirqd_ns[0] = 800 * MS;
	assert_int_equal(lr_cost_softirq_ns(&a, &b, &c, &err), 300 * MS);
	assert_true(c.inside[0]);
}

static void test_softirq_undecided(void **state)
{
	struct lr_cpu_times a, b;
	struct lr_cost_cpus c = { .n = 1, .cpu = { 1 }, .thread_ns = { 400 * MS }, .irqtime = 1 };
	uint64_t err;

	(void)state;
	readings(&a, &b);
	/* cpu1 had no interrupt time: nothing for the data to decide; the config says apart */
	assert_int_equal(lr_cost_softirq_ns(&a, &b, &c, &err), 0);
	assert_false(c.by_data[0]);
	assert_false(c.inside[0]);
	assert_int_equal(lr_cost_irqtime(&c, 1), 1);
	assert_int_equal(lr_cost_irqtime(&c, -1), 2);
	c.irqtime = -1;
	lr_cost_softirq_ns(&a, &b, &c, &err);
	assert_true(c.inside[0]);
}

static void test_cpus_add(void **state)
{
	struct lr_cost_cpus c = { 0 };
	uint64_t ns0[LR_MAX_CPUS] = { 0 }, ns1[LR_MAX_CPUS] = { 0 };

	(void)state;
	lr_cost_cpus_add(&c, 3, 100);
	lr_cost_cpus_add(&c, 0, 50);
	lr_cost_cpus_add(&c, 3, 25);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.cpu[0], 3);
	assert_int_equal(c.thread_ns[0], 125);
	assert_int_equal(c.thread_ns[1], 50);
	/* read at both ends and not gone back: seen */
	ns0[3] = 1000;
	ns1[3] = 1500;
	ns0[0] = 0;
	ns1[0] = 700;
	lr_cost_cpus_ksoftirqd(&c, ns0, ns1);
	assert_true(c.ksoftirqd_seen[0]);
	assert_int_equal(c.ksoftirqd_ns[0], 500);
	assert_false(c.ksoftirqd_seen[1]);
	assert_int_equal(c.ksoftirqd_ns[1], 0);
	ns1[3] = 900;
	lr_cost_cpus_ksoftirqd(&c, ns0, ns1);
	assert_false(c.ksoftirqd_seen[0]);
}

static void test_split(void **state)
{
	struct lr_cost_in in = {
		.packets = 1000000,
		.busy_ns = 2450 * MS, .busy_err_ns = 30 * MS,
		.have_sender = true, .sender_thread_ns = 1900 * MS,
		.sender_softirq_ns = 1100 * MS, .sender_softirq_err_ns = 80 * MS,
		.have_receiver = true, .recv_run_ns = 3000000, .recv_stat_runs = 40000, .recv_runs = 1000020,
		.cal = { .valid = true, .reported_ns = 45, .added_ns = 60, .added_known = true, .err_ns = 2 },
	};
	struct lr_cost c;

	(void)state;
	lr_cost_compute(&in, &c);
	assert_true(c.valid);
	/* total: 2.45 s less 60 ns for each of the 40000 runs stats counted, over 1e6 packets */
	assert_float_equal(c.total, (2450e6 - 60.0 * 40000) / 1e6, 1e-9);
	assert_float_equal(c.err_total, (30e6 + 2.0 * 40000) / 1e6, 1e-9);
	/* sender: thread time less the interrupt work inside it */
	assert_float_equal(c.sender, 800.0, 1e-9);
	assert_float_equal(c.err_sender, 80.0, 1e-9);
	/* receiver: 75 ns a counted run, less the 45 stats put in each, for every frame it saw */
	assert_float_equal(c.recv_ns_per_run, 30.0, 1e-9);
	assert_float_equal(c.receiver, 30.0 * 1000020 / 1e6, 1e-9);
	assert_float_equal(c.err_receiver, 2.0 * 1000020 / 1e6, 1e-9);
	/* the parts add up to the total exactly; the path's error is the others' summed */
	assert_float_equal(c.sender + c.path + c.receiver, c.total, 1e-9);
	assert_float_equal(c.err_path, c.err_total + c.err_sender + c.err_receiver, 1e-9);
}

static void test_split_edges(void **state)
{
	struct lr_cost_in in = { .packets = 1000, .busy_ns = 100000, .have_sender = true, .sender_thread_ns = 150000 };
	struct lr_cost c;

	(void)state;
	/* a sender that comes out above the total leaves a negative path: reported, not clamped */
	lr_cost_compute(&in, &c);
	assert_float_equal(c.sender, 150.0, 1e-9);
	assert_true(isnan(c.receiver));
	assert_true(isnan(c.path));
	in.have_receiver = true;
	in.recv_runs = 1000;
	in.recv_stat_runs = 100;
	in.recv_run_ns = 5000;
	/* stats that were on already: an "added" figure, but not known to be ours to take off */
	in.cal = (struct lr_stats_cal){ .valid = true, .reported_ns = 40, .added_ns = 60, .err_ns = 1 };
	lr_cost_compute(&in, &c);
	assert_float_equal(c.receiver, 10.0, 1e-9);
	assert_float_equal(c.path, 100.0 - 150.0 - 10.0, 1e-9);
	assert_float_equal(c.total, 100.0, 1e-9);
	/* fewer runs counted than LR_PROG_MIN_RUNS: not timed */
	in.recv_stat_runs = LR_PROG_MIN_RUNS - 1;
	lr_cost_compute(&in, &c);
	assert_true(isnan(c.receiver));
	in.recv_stat_runs = 100;
	/* no counted run: the receiver is not timed, whatever the calibration */
	in.recv_stat_runs = 0;
	lr_cost_compute(&in, &c);
	assert_true(isnan(c.receiver));
	/* no packet: nothing to divide by */
	in.packets = 0;
	lr_cost_compute(&in, &c);
	assert_false(c.valid);
	assert_true(isnan(c.total));
}

static void test_schedstat(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(lr_schedstat_parse("226270 80370 1\n", &v), 0);
	assert_int_equal(v, 226270);
	assert_int_equal(lr_schedstat_parse("18446744073709551615 0 0", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(lr_schedstat_parse("", &v), -EINVAL);
	assert_int_equal(lr_schedstat_parse("x 1 2", &v), -EINVAL);
	assert_int_equal(lr_schedstat_parse("12x 1", &v), -EINVAL);
	assert_int_equal(lr_schedstat_parse(NULL, &v), -EINVAL);
}

static void test_kconfig(void **state)
{
	struct lr_kconfig k;

	(void)state;
	lr_kconfig_from(NULL, "", &k);
	assert_int_equal(k.irqtime, -1);
	assert_int_equal(k.hz, 0);
	lr_kconfig_from("CONFIG_HZ_250=y\nCONFIG_HZ=250\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\n", "", &k);
	assert_int_equal(k.irqtime, 0);
	assert_int_equal(k.hz, 250);
	lr_kconfig_from("CONFIG_HZ=1000\nCONFIG_IRQ_TIME_ACCOUNTING=y\nCONFIG_X=y\n", "quiet", &k);
	assert_int_equal(k.irqtime, 1);
	assert_int_equal(k.hz, 1000);
	lr_kconfig_from("CONFIG_IRQ_TIME_ACCOUNTING=y\n", "ro tsc=noirqtime quiet", &k);
	assert_int_equal(k.irqtime, 0);
	assert_int_equal(k.hz, 0);
	/* only a line of its own counts, and only the exact name */
	lr_kconfig_from("# XCONFIG_IRQ_TIME_ACCOUNTING=y\nCONFIG_HZ_PERIODIC=y\nCONFIG_HZ=abc\n", "", &k);
	assert_int_equal(k.irqtime, 0);
	assert_int_equal(k.hz, 0);
}

static void test_softirq_kernel_tick(void **state)
{
	struct lr_cpu_times a, b;
	struct lr_cost_cpus c = { .n = 1, .cpu = { 0 }, .thread_ns = { 1900 * MS }, .sample_tick_ns = 4 * MS };
	uint64_t err;

	(void)state;
	readings(&a, &b);
	/* sampled at 250 Hz, rounded to /proc/stat's 10 ms */
	lr_cost_softirq_ns(&a, &b, &c, &err);
	assert_int_equal(err, (uint64_t)(2 * sqrt(4.0 * MS * 1100.0 * MS * 0.45) + 2 * TICK));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_softirq),
		cmocka_unit_test(test_softirq_apart),
		cmocka_unit_test(test_softirq_undecided),
		cmocka_unit_test(test_cpus_add),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_edges),
		cmocka_unit_test(test_schedstat),
		cmocka_unit_test(test_kconfig),
		cmocka_unit_test(test_softirq_kernel_tick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
