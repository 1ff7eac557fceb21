/*
 * scenario_child.h - deadlock regression scenarios, each in its own forked
 * child so that a hang fails the test instead of hanging CTest:
 *
 *  - scen_run(): fork, run one scenario in the child (which starts orcu
 *    from scratch: the parent never calls orcu), wait a bounded time;
 *    on timeout kill it and report "deadlock in <scenario>".  With
 *    ORCU_TEST_SCENARIO=<name> in the environment, only that one runs.
 *  - scen_wait_child(): the same bounded wait for a process a scenario
 *    itself forks (that process should arm alarm() too, in case its
 *    parent is the one that hangs).
 *  - counted callbacks: every head carries its own counter, so a lost or
 *    a doubled invocation are both caught; a head may run a hook first
 *    (the scenario's callback that calls back into the library).
 *
 * The including test includes <orcu.h> and common_pipe.h first.
 */
#ifndef ORCU_TEST_SCENARIO_CHILD_H
#define ORCU_TEST_SCENARIO_CHILD_H

#define SCEN_MAX_CB 4096

struct counted {
	struct orcu_head head;   /* first: the callback casts back */
	int idx;
	void (*hook)(void);      /* run before the count, or NULL */
};

static struct counted scen_cb[SCEN_MAX_CB];
static atomic_int scen_ran[SCEN_MAX_CB];
static atomic_int scen_posted;

static void counted_cb(struct orcu_head *h)
{
	struct counted *c = (struct counted *)h;

	if (c->hook)
		c->hook();
	atomic_fetch_add(&scen_ran[c->idx], 1);
}

/* Post one counted callback (on the caller's current slot); returns it. */
static struct counted *post_counted(void (*hook)(void))
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

static void post_counted_on(int cpu, int n)
{
	CHECK_EQ(orcu_thread_bind_cpu(cpu), 0);
	for (int i = 0; i < n; i++)
		post_counted(NULL);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
}

/* After orcu_barrier(): every callback posted so far ran exactly once. */
static void check_all_ran_once(void)
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

/* Wait for a child of this process, at most base_s (scaled) seconds. */
static int scen_wait_child(pid_t pid, const char *what, double base_s)
{
	double deadline = check_now_s() + check_timeout_s(base_s);
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		CHECK(w >= 0);
		if (w == pid)
			return st;
		if (check_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fprintf(stderr, "deadlock in %s: still running after %.0fs\n",
				what, check_timeout_s(base_s));
			exit(1);
		}
		sleep_ms(2);
	}
}

/* Run fn in a fresh child; true if it exited 0 in time. */
static bool scen_run(const char *name, int (*fn)(void), double base_s)
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

#endif
