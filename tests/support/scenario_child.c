/*
 * scenario_child.c - the deadlock-scenario helpers scenario_child.h
 * declares, compiled once into the orcu_test_support library.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "scenario_child.h"

struct counted scen_cb[SCEN_MAX_CB];
atomic_int scen_ran[SCEN_MAX_CB];
atomic_int scen_posted;

static void counted_cb(struct orcu_head *h)
{
	struct counted *c = (struct counted *)h;

	if (c->hook)
		c->hook();
	atomic_fetch_add(&scen_ran[c->idx], 1);
}

/* Post one counted callback (on the caller's current slot); returns it. */
struct counted *post_counted(void (*hook)(void))
{
	int i = atomic_fetch_add(&scen_posted, 1);
	struct counted *c;

	CHECK(i < SCEN_MAX_CB);
	c = &scen_cb[i];
	c->idx = i;
	c->hook = hook;
	orcu_call(&c->head, counted_cb);
	return c;
}

void post_counted_on(int cpu, int n)
{
	CHECK_EQ(orcu_thread_bind_cpu(cpu), 0);
	for (int i = 0; i < n; i++)
		post_counted(NULL);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
}

/* After orcu_barrier(): every callback posted so far ran exactly once. */
void check_all_ran_once(void)
{
	int n = atomic_load(&scen_posted);

	orcu_barrier();
	for (int i = 0; i < n; i++)
		if (atomic_load(&scen_ran[i]) != 1) {
			fprintf(stderr, "callback %d of %d ran %d times (want 1)\n",
				i, n, atomic_load(&scen_ran[i]));
			exit(1);
		}
}

/* Run fn in a fresh child; true if it exited 0 in time. */
bool scen_run(const char *name, int (*fn)(void), double base_s)
{
	double deadline = check_now_s() + check_timeout_s(base_s);
	const char *only = getenv("ORCU_TEST_SCENARIO");
	pid_t pid;
	int st;

	if (only && *only && strcmp(only, name) != 0)
		return true;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int rc;

		signal(SIGALRM, SIG_DFL);
		rc = fn();
		fflush(stdout);
		_exit(rc);
	}
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		CHECK(w >= 0);
		if (w == pid)
			break;
		if (check_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fprintf(stderr, "deadlock in %s (killed after %.0fs)\n",
				name, check_timeout_s(base_s));
			return false;
		}
		sleep_ms(5);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s failed: %s %d\n", name,
			WIFEXITED(st) ? "exit status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return false;
	}
	printf("ok %s\n", name);
	return true;
}
