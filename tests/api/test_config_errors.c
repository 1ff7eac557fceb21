/*
 * test_config_errors.c - configuration errors are one clear line naming
 * the variable, and never half-applied.  Each case runs in a forked child
 * (environment variables are read once, at first use) with stderr
 * captured:
 *  - bad ORCU_NOCB_STRIDE values ("abc", "0", "4x", huge): exactly one
 *    line naming ORCU_NOCB_STRIDE; ignored, so the default stride holds
 *    (9 online slots -> sqrt = 3 leaders); control: good values (2, 9)
 *    really change the leader count (5, 1), so the check can fail;
 *  - bad ORCU_CPUS ("possible=4,online=9" and garbage): one line naming
 *    ORCU_CPUS; ignored, the real topology (sysfs possible) is used;
 *    control: a good ORCU_CPUS is applied;
 *  - an ORCU_CPUS whose online= names no CPU ("online=", "online=none"):
 *    one line, ignored, as any other bad text;
 *  - bad ORCU_NOCBS and ORCU_HOUSEKEEPING, a trailing newline included (a
 *    sysfs file's ends in one; a setting's is a stray byte): one line
 *    naming the variable, ignored;
 *  - ORCU_NOCB_POLL=-1 and ORCU_STALL_MS=-1: cfg's spelling of "off" (its
 *    0 means unset); the environment's is 0, and -1 there is out of range;
 *  - orcu_init with a bad cfg (cpus="possible=4,online=9" or with no CPU
 *    online, a stride out of range, a cpulist ending in a newline) returns -EINVAL, applies nothing, and a following good
 *    orcu_init succeeds with exactly its own settings; orcu_init after
 *    that returns -EBUSY.
 * In every case the library then works (call + barrier, synchronize).
 */
#include <orcu.h>

#include "common_pipe.h"

struct env_case {
	const char *var, *value;
	const char *cpus;          /* ORCU_CPUS to set too, or NULL */
	int want_lines;            /* lines on stderr */
	long want_possible;        /* slots_possible, 0: the real one */
	long want_leaders;         /* leaders_alive, -1: do not check */
	long want_offloaded;       /* slots_offloaded, 0: do not check */
};

static long real_possible(void)
{
	char buf[256];
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	long last = -1;

	CHECK(f);
	CHECK(fgets(buf, sizeof(buf), f));
	fclose(f);
	/* "0-1" or "0,2-7": the last number + 1 */
	for (char *p = buf; *p; p++)
		if ((p == buf || p[-1] < '0' || p[-1] > '9') && *p >= '0' && *p <= '9')
			last = strtol(p, NULL, 10);
	return last + 1;
}

static void nop_cb(struct orcu_head *h)
{
	(void)h;
}

static int works(void)
{
	struct orcu_head h;

	orcu_synchronize();
	orcu_call(&h, nop_cb);
	orcu_barrier();
	return orcu_drain(5000) == 0;
}

static int env_child(void *arg)
{
	const struct env_case *c = arg;
	struct orcu_stats st;

	if (c->cpus)
		setenv("ORCU_CPUS", c->cpus, 1);
	setenv(c->var, c->value, 1);
	if (!works())
		return 10;
	orcu_get_stats(&st);
	if (c->want_possible && (long)st.slots_possible != c->want_possible) {
		fprintf(stderr, "slots_possible %lu, want %ld\n",
			(unsigned long)st.slots_possible, c->want_possible);
		return 11;
	}
	if (!c->want_possible && (long)st.slots_possible != real_possible()) {
		fprintf(stderr, "slots_possible %lu, want the real %ld\n",
			(unsigned long)st.slots_possible, real_possible());
		return 12;
	}
	if (c->want_leaders >= 0 && (long)st.leaders_alive != c->want_leaders) {
		fprintf(stderr, "leaders_alive %lu, want %ld\n",
			(unsigned long)st.leaders_alive, c->want_leaders);
		return 13;
	}
	if (c->want_offloaded && (long)st.slots_offloaded != c->want_offloaded) {
		fprintf(stderr, "slots_offloaded %lu, want %ld\n",
			(unsigned long)st.slots_offloaded, c->want_offloaded);
		return 16;
	}
	return 0;
}

static void run_env_case(const struct env_case *c)
{
	struct child_result r;

	run_child(env_child, (void *)c, 30, &r);
	printf("%s=\"%s\"%s%s -> exit %d, %d line(s): %s%s", c->var, c->value,
	       c->cpus ? " ORCU_CPUS=" : "", c->cpus ? c->cpus : "",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines, r.err,
	       r.lines ? "" : "\n");
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
		fprintf(stderr, "case %s=\"%s\" failed (status %#x):\n%s\n",
			c->var, c->value, r.status, r.err);
		exit(1);
	}
	CHECK_EQ(r.lines, c->want_lines);
	if (c->want_lines) {
		CHECK(strncmp(r.err, "orcu: ", 6) == 0);
		CHECK(strstr(r.err, c->var) != NULL);
	}
}

static int init_child(void *arg)
{
	struct orcu_config bad1 = { .cpus = "possible=4,online=9" };
	struct orcu_config bad2 = { .cpus = "possible=8,online=0-3", .nocb_stride = 9 };
	struct orcu_config bad3 = { .cpus = "possible=8,online=0-3", .nocbs = "0-99" };
	struct orcu_config bad4 = { .cpus = "possible=4,online=" };
	struct orcu_config bad5 = { .cpus = "possible=8,online=0-3", .nocbs = "0-3\n" };
	struct orcu_config good = { .cpus = "possible=8,online=0-3", .nocb_stride = 2 };
	struct orcu_stats st;

	(void)arg;
	if (orcu_init(&bad1) != -EINVAL)
		return 2;
	if (orcu_init(&bad2) != -EINVAL)
		return 3;
	if (orcu_init(&bad3) != -EINVAL)
		return 4;
	if (orcu_init(&bad4) != -EINVAL)
		return 14;
	if (orcu_init(&bad5) != -EINVAL)
		return 15;
	/* Nothing of the bad ones was applied: init is still possible. */
	if (orcu_init(&good) != 0)
		return 5;
	orcu_get_stats(&st);
	if (st.slots_possible != 8 || st.slots_online != 4)
		return 6;
	if (st.leaders_alive != 2)   /* online 0-3, stride 2 */
		return 7;
	if (orcu_init(&good) != -EBUSY)
		return 8;
	if (!works())
		return 9;
	return 0;
}

int main(void)
{
	const char *cpus9 = "possible=9,online=0-8";
	long rp = real_possible();
	const struct env_case cases[] = {
		/* controls: the knobs work, so "ignored" is observable */
		{ "ORCU_NOCB_STRIDE", "2", cpus9, 0, 9, 5, 0 },
		{ "ORCU_NOCB_STRIDE", "9", cpus9, 0, 9, 1, 0 },
		{ "ORCU_CPUS", "possible=6,online=0-2", NULL, 0, 6, -1, 0 },
		{ "ORCU_NOCBS", "0-3", cpus9, 0, 9, -1, 4 },
		/* errors: one line, ignored (default stride sqrt(9) = 3) */
		{ "ORCU_NOCB_STRIDE", "abc", cpus9, 1, 9, 3, 0 },
		{ "ORCU_NOCB_STRIDE", "0", cpus9, 1, 9, 3, 0 },
		{ "ORCU_NOCB_STRIDE", "4x", cpus9, 1, 9, 3, 0 },
		{ "ORCU_NOCB_STRIDE", "99999999999999999999", cpus9, 1, 9, 3, 0 },
		{ "ORCU_NOCB_STRIDE", "10", cpus9, 1, 9, 3, 0 },
		{ "ORCU_CPUS", "possible=4,online=9", NULL, 1, 0, -1, 0 },
		{ "ORCU_CPUS", "possible=banana", NULL, 1, 0, -1, 0 },
		{ "ORCU_CPUS", "online=0-1,possible=2,bogus=3", NULL, 1, 0, -1, 0 },
		{ "ORCU_NOCBS", "0-3,x", cpus9, 1, 9, 3, 0 },
		/* no CPU online is no topology: ignored, the real one used */
		{ "ORCU_CPUS", "possible=4,online=", NULL, 1, 0, -1, 0 },
		{ "ORCU_CPUS", "possible=4,online=none", NULL, 1, 0, -1, 0 },
		/* a stray newline is bad text, not the end of a sysfs file */
		{ "ORCU_NOCBS", "0-3\n", cpus9, 1, 9, 3, 9 },
		{ "ORCU_HOUSEKEEPING", "0\n", cpus9, 1, 9, 3, 0 },
		/* -1 is cfg's "off"; the environment says 0, which is accepted */
		{ "ORCU_NOCB_POLL", "0", cpus9, 0, 9, 3, 0 },
		{ "ORCU_NOCB_POLL", "-1", cpus9, 1, 9, 3, 0 },
		{ "ORCU_STALL_MS", "0", cpus9, 0, 9, 3, 0 },
		{ "ORCU_STALL_MS", "-1", cpus9, 1, 9, 3, 0 },
	};

	test_watchdog("test_config_errors", 120);
	printf("real possible CPUs: %ld\n", rp);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_env_case(&cases[i]);

	struct child_result r;
	run_child(init_child, NULL, 30, &r);
	printf("orcu_init with bad cfgs -> exit %d, %d line(s):\n%s",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines, r.err);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 0);
	/* one line per rejected call, each naming what was wrong */
	CHECK_EQ(r.lines, 6);
	CHECK(strstr(r.err, "cpus") != NULL);
	CHECK(strstr(r.err, "possible=4,online=9") != NULL);
	CHECK(strstr(r.err, "\"possible=4,online=\"") != NULL);
	CHECK(strstr(r.err, "\"0-3\\n\"") != NULL);
	CHECK(strstr(r.err, "NOCB_STRIDE") != NULL);
	CHECK(strstr(r.err, "NOCBS") != NULL);
	TEST_PASS("test_config_errors");
}
