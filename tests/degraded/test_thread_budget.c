/*
 * test_thread_budget.c - ORCU_MAX_THREADS, the cap on library threads
 * (DESIGN 6, "bounded threads from configuration"), and the helper the
 * thread spawners ask, orcu__thread_budget_ok().  In forked children:
 *  - unset: the default, at least 1024 and 4 * CPUs + 64;
 *  - "64" and "3" (the least that runs a GP thread, a leader and a
 *    follower): taken; "0", "1", "2" (below it), "abc", "": one line
 *    each naming ORCU_MAX_THREADS and the text, and the default holds;
 *  - the helper: with ORCU_MAX_THREADS=5 and a topology that keeps one GP
 *    thread, one leader and two followers (4 threads) it allows one more;
 *    once the counted threads reach the cap it refuses, saying so in
 *    exactly one line however often it is asked.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"
#include "config.h"

static long default_cap(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	return 4 * n + 64 > 1024 ? 4 * n + 64 : 1024;
}

struct cap_case {
	const char *value;   /* NULL: unset */
	long want;
	int want_lines;
};

static int cap_child(void *arg)
{
	const struct cap_case *c = arg;

	if (c->value)
		setenv("ORCU_MAX_THREADS", c->value, 1);
	else
		unsetenv("ORCU_MAX_THREADS");
	(void)orcu_current_cpu();
	return orcu__g.max_threads == c->want ? 0 : 2;
}

static int budget_child(void *arg)
{
	(void)arg;
	setenv("ORCU_MAX_THREADS", "5", 1);
	setenv("ORCU_CPUS", "possible=4,online=0-1", 1);
	setenv("ORCU_NOCB_STRIDE", "2", 1);
	orcu_barrier();                  /* starts the library's threads */
	/* Bounded: the spawner counts its threads as it creates them. */
	CHECK_WAIT_UNTIL(orcu_debug_thread_count() == 4, 20);
	pthread_mutex_lock(&orcu__g.lock);
	if (orcu__g.leaders_alive + orcu__g.followers_alive + 1 != 4) {
		pthread_mutex_unlock(&orcu__g.lock);
		return 2;
	}
	if (!orcu__thread_budget_ok()) {
		pthread_mutex_unlock(&orcu__g.lock);
		return 3;
	}
	/* As if a fifth thread had been created. */
	orcu__fetch_add_relaxed(&orcu__g.followers_alive, 1);
	for (int i = 0; i < 3; i++) {
		if (orcu__thread_budget_ok()) {
			pthread_mutex_unlock(&orcu__g.lock);
			return 4;
		}
	}
	orcu__fetch_sub_relaxed(&orcu__g.followers_alive, 1);
	pthread_mutex_unlock(&orcu__g.lock);
	return orcu_shutdown() == 0 ? 0 : 5;
}

int main(void)
{
	long def = default_cap();
	const struct cap_case cases[] = {
		{ NULL, def, 0 },
		{ "64", 64, 0 },
		{ "3", 3, 0 },
		{ "0", def, 1 },
		{ "1", def, 1 },
		{ "2", def, 1 },
		{ "abc", def, 1 },
		{ "", def, 1 },
	};
	struct child_result r;

	test_watchdog("test_thread_budget", 120);
	CHECK(def >= 1024);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cap_case *c = &cases[i];

		run_child(cap_child, (void *)c, 30, &r);
		printf("ORCU_MAX_THREADS=%s%s%s -> exit %d, %d line(s)%s%s",
		       c->value ? "\"" : "(unset)", c->value ? c->value : "",
		       c->value ? "\"" : "", WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1,
		       r.lines, r.lines ? ": " : "\n", r.err);
		CHECK(WIFEXITED(r.status));
		CHECK_EQ(WEXITSTATUS(r.status), 0);
		CHECK_EQ(r.lines, c->want_lines);
		if (c->want_lines) {
			char quoted[64];

			snprintf(quoted, sizeof(quoted), "\"%s\"", c->value);
			CHECK(strstr(r.err, "ORCU_MAX_THREADS") != NULL);
			CHECK(strstr(r.err, quoted) != NULL);
		}
	}
	run_child(budget_child, NULL, 60, &r);
	printf("budget at the cap -> exit %d, %d line(s): %s",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines, r.err);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 0);
	CHECK_EQ(r.lines, 1);
	CHECK(strstr(r.err, "ORCU_MAX_THREADS=5") != NULL);
	TEST_PASS("test_thread_budget");
}
