/*
 * test_config_rejects_adjusted.c - no configuration value is silently
 * changed or silently accepted (DESIGN 6): every rejected value gets
 * exactly one line naming the variable, quoting its text escaped and
 * bounded, and saying why; the environment's bad values are ignored (the
 * default holds), and orcu_init() returns -EINVAL for the same values in
 * its cfg, applying nothing.  Each case is a forked child (the
 * environment is read once) with stderr captured.
 *  - ORCU_QMAX not above ORCU_QHIMARK, ORCU_QLOWMARK not below it: one
 *    line each, the default (40000 / 100) holds instead of a value made
 *    up from the other knob; control: a consistent pair is taken as is;
 *  - ORCU_NOCBS="" (which read as "none" and turned offloading off): one
 *    line, every slot stays offloaded; ORCU_STALL_MS="": one line;
 *  - booleans: ORCU_CHECK_CALLS=yes is one line (test_env_bool checks
 *    it stays one when read again); ORCU_NO_MEMBARRIER=yes is reported;
 *  - ORCU_HOUSEKEEPING naming no CPU this process may run on: one line
 *    at configuration, not one per library thread;
 *  - a value with control bytes and 600 more characters: still one line,
 *    short, escaped, and the reason survives;
 *  - orcu_init(): qlowmark >= qhimark, qmax <= qhimark, nocbs "",
 *    unusable housekeeping: -EINVAL each; then a good cfg is applied.
 * In every case the library then works (synchronize, call, barrier).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <sched.h>

#include "common_pipe.h"
#include "os.h"

/* A failed check is counted and said; main fails at the end, so one run
 * shows every case that fails. */
#define SOFT_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		failed++; \
	} } while (0)

static char unusable_cpu[16];   /* a CPU number outside our affinity */

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

struct env_case {
	const char *name;
	const char *vars[3][2];    /* name, value; NULL name ends */
	const char *must_say[3];   /* in the output, NULL ends */
	int lines;
	long qhimark, qlowmark, qmax;   /* 0: do not check */
	bool all_offloaded;
	int recheck;                /* read this boolean again after init */
};

static int env_child(void *arg)
{
	const struct env_case *c = arg;
	struct orcu_stats st;

	for (int i = 0; i < 3 && c->vars[i][0]; i++)
		setenv(c->vars[i][0], c->vars[i][1], 1);
	if (!works())
		return 10;
	if (c->qhimark && orcu__g.qhimark != c->qhimark)
		return 11;
	if (c->qlowmark && orcu__g.qlowmark != c->qlowmark)
		return 12;
	if (c->qmax && orcu__g.qmax != c->qmax)
		return 13;
	orcu_get_stats(&st);
	if (c->all_offloaded && st.slots_offloaded != st.slots_possible)
		return 14;
	return 0;
}

/* Returns false (after saying why) on a failed case: every case runs. */
static bool run_env_case(const struct env_case *c)
{
	struct child_result r;

	run_child(env_child, (void *)c, 60, &r);
	printf("%-30s -> exit %d, %d line(s)%s%s", c->name,
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines,
	       r.lines ? ": " : "\n", r.err);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
		fprintf(stderr, "%s: status %#x (exit 11-13: a mark was changed, 14: "
			"offloading was changed); stderr:\n%s\n", c->name, r.status, r.err);
		return false;
	}
	if (c->lines >= 0 && r.lines != c->lines) {
		fprintf(stderr, "%s: %d line(s), want %d\n", c->name, r.lines, c->lines);
		return false;
	}
	for (int i = 0; i < 3 && c->must_say[i]; i++) {
		if (!strstr(r.err, c->must_say[i])) {
			fprintf(stderr, "%s: the output does not say \"%s\"\n", c->name,
				c->must_say[i]);
			return false;
		}
	}
	/* One line per message, each a readable one. */
	for (const char *p = r.err; *p; p++)
		CHECK((unsigned char)*p >= 0x20 || *p == '\n');
	if (r.lines > 0)
		CHECK(strncmp(r.err, "orcu: ", 6) == 0);
	return true;
}

static int long_value_child(void *arg)
{
	char v[700];

	(void)arg;
	snprintf(v, sizeof(v), "0-1,\x01\n\x1b[31m");
	memset(v + strlen(v), 'x', 600);
	v[sizeof(v) - 1] = '\0';
	setenv("ORCU_NOCBS", v, 1);
	return works() ? 0 : 10;
}

static int housekeeping_child(void *arg)
{
	(void)arg;
	setenv("ORCU_HOUSEKEEPING", unusable_cpu, 1);
	if (!works())
		return 10;
	return orcu__g.housekeeping == NULL ? 0 : 11;
}

static int init_child(void *arg)
{
	const struct orcu_config bad[] = {
		{ .qhimark = 1000, .qlowmark = 5000 },
		{ .qhimark = 1000, .qlowmark = 1000 },
		{ .qhimark = 1000, .qmax = 1000 },
		{ .nocbs = "" },
		{ .housekeeping = unusable_cpu },
	};
	struct orcu_config good = { .qhimark = 1000, .qlowmark = 10, .qmax = 3000 };

	(void)arg;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = orcu_init(&bad[i]);

		if (ret != -EINVAL) {
			fprintf(stderr, "bad cfg %zu: orcu_init returned %d\n", i, ret);
			return 2;
		}
	}
	if (orcu_init(&good) != 0)
		return 3;
	if (orcu__g.qhimark != 1000 || orcu__g.qlowmark != 10 || orcu__g.qmax != 3000)
		return 4;
	return works() ? 0 : 5;
}

static bool find_unusable_cpu(void)
{
	cpu_set_t aff;

	CHECK_EQ(sched_getaffinity(0, sizeof(aff), &aff), 0);
	for (int c = CPU_SETSIZE - 1; c >= 0; c--) {
		if (!CPU_ISSET(c, &aff)) {
			snprintf(unusable_cpu, sizeof(unusable_cpu), "%d", c);
			return true;
		}
	}
	return false;
}

int main(void)
{
	const struct env_case cases[] = {
		{ "control: consistent marks",
		  { { "ORCU_QHIMARK", "1000" }, { "ORCU_QLOWMARK", "10" }, { "ORCU_QMAX", "5000" } },
		  { NULL }, 0, 1000, 10, 5000, false, 0 },
		{ "QMAX below QHIMARK",
		  { { "ORCU_QHIMARK", "1000" }, { "ORCU_QMAX", "500" } },
		  { "ORCU_QMAX=\"500\"", "ORCU_QHIMARK" }, 1, 1000, 100, 40000, false, 0 },
		{ "QMAX equal to QHIMARK",
		  { { "ORCU_QMAX", "10000" } },
		  { "ORCU_QMAX=\"10000\"" }, 1, 10000, 100, 40000, false, 0 },
		{ "QLOWMARK above QHIMARK",
		  { { "ORCU_QHIMARK", "1000" }, { "ORCU_QLOWMARK", "5000" } },
		  { "ORCU_QLOWMARK=\"5000\"", "ORCU_QHIMARK" }, 1, 1000, 100, 40000, false, 0 },
		{ "NOCBS empty",
		  { { "ORCU_NOCBS", "" } },
		  { "ORCU_NOCBS=\"\"" }, 1, 0, 0, 0, true, 0 },
		{ "STALL_MS empty",
		  { { "ORCU_STALL_MS", "" } },
		  { "ORCU_STALL_MS=\"\"" }, 1, 0, 0, 0, false, 0 },
		{ "CHECK_CALLS=yes",
		  { { "ORCU_CHECK_CALLS", "yes" } },
		  { "ORCU_CHECK_CALLS=\"yes\"", "0 or 1" }, 1, 0, 0, 0, false, 0 },
		/* registry.c still prints its own line when membarrier is off. */
		{ "NO_MEMBARRIER=yes",
		  { { "ORCU_NO_MEMBARRIER", "yes" } },
		  { "ORCU_NO_MEMBARRIER=\"yes\"", "0 or 1" }, -1, 0, 0, 0, false, 0 },
	};
	struct child_result r;
	int failed = 0;

	test_watchdog("test_config_rejects_adjusted", 240);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		failed += !run_env_case(&cases[i]);

	run_child(long_value_child, NULL, 60, &r);
	printf("%-30s -> exit %d, %d line(s): %s", "NOCBS long, control bytes",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines, r.err);
	SOFT_CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	SOFT_CHECK(r.lines == 1);
	SOFT_CHECK(strlen(r.err) <= 400);
	SOFT_CHECK(strstr(r.err, "ORCU_NOCBS=\"0-1,\\x01\\n\\x1b[31mxxx") != NULL);
	SOFT_CHECK(strstr(r.err, "bad CPU number at") != NULL);   /* the reason survived */
	SOFT_CHECK(strchr(r.err, '\x1b') == NULL && strchr(r.err, '\x01') == NULL);

	if (find_unusable_cpu()) {
		run_child(housekeeping_child, NULL, 60, &r);
		printf("%-30s -> exit %d, %d line(s): %s", "HOUSEKEEPING unusable",
		       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines, r.err);
		SOFT_CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
		SOFT_CHECK(r.lines == 1);
		SOFT_CHECK(strstr(r.err, "ORCU_HOUSEKEEPING") != NULL);
		SOFT_CHECK(strstr(r.err, unusable_cpu) != NULL);
	} else {
		printf("every CPU is usable here: no unusable housekeeping case\n");
		snprintf(unusable_cpu, sizeof(unusable_cpu), "0-3,x");  /* still bad */
	}

	run_child(init_child, NULL, 60, &r);
	printf("%-30s -> exit %d, %d line(s):\n%s", "orcu_init bad cfgs",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines, r.err);
	SOFT_CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	SOFT_CHECK(r.lines == 5);   /* one per rejected call */
	CHECK_EQ(failed, 0);
	TEST_PASS("test_config_rejects_adjusted");
}
