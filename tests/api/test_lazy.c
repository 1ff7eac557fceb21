/*
 * test_lazy - lazy callbacks (DESIGN 6): orcu_call_lazy() holds a callback
 * up to ORCU_LAZY_MS to save wake-ups, and anything that needs it flushes
 * it at once.  Each part runs in a child process with its own setting:
 *  timer:    LAZY_MS=1000: still held after a full GP; invoked eventually
 *            (bounded), and never before LAZY_MS after it was posted;
 *  flushes:  LAZY_MS=600000 (ten minutes, so only a flush can run them):
 *            orcu_barrier() returns with it invoked; orcu_reclaim_lazy()
 *            gets it invoked within seconds; orcu_shutdown() invokes it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static atomic_int invoked;
static _Atomic double invoked_at;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&invoked_at, check_now_s());
	atomic_fetch_add(&invoked, 1);
}

static void part_timer(void)
{
	static struct orcu_head h;
	double t0, after_gp;
	int seen;

	setenv("ORCU_LAZY_MS", "1000", 1);
	CHECK_EQ(orcu_init(NULL), 0);
	t0 = check_now_s();
	orcu_call_lazy(&h, cb);
	orcu_synchronize();
	orcu_synchronize();
	/* Two GPs have passed; a non-lazy callback would be ready by now.
	 * Held unless this machine took the whole lazy period to get here
	 * (read before the clock: a preemption in between only skips the
	 * check). */
	seen = atomic_load(&invoked);
	after_gp = check_now_s();
	if (after_gp - t0 < 0.9)
		CHECK_EQ(seen, 0);
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == 1, 20);
	/* The timer really held it: never before LAZY_MS after posting. */
	CHECK(atomic_load(&invoked_at) - t0 >= 1.0 - 0.002);
	CHECK_EQ(orcu_shutdown(), 0);
}

static void part_flushes(void)
{
	static struct orcu_head h[3], many[50];
	struct orcu_stats st;

	setenv("ORCU_LAZY_MS", "600000", 1);
	CHECK_EQ(orcu_init(NULL), 0);

	/* A barrier must wait for lazy callbacks too. */
	orcu_call_lazy(&h[0], cb);
	for (int i = 0; i < 50; i++)
		orcu_call_lazy(&many[i], cb);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 51);

	/* Memory pressure: orcu_reclaim_lazy() sends them on their way. */
	orcu_call_lazy(&h[1], cb);
	orcu_synchronize();
	CHECK_EQ(atomic_load(&invoked), 51);      /* held: ten-minute timer */
	orcu_reclaim_lazy();
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == 52, 20);
	orcu_get_stats(&st);
	CHECK(st.lazy_flushes > 0);
	CHECK(st.callbacks_lazy >= 52);

	/* Shutdown drains them. */
	orcu_call_lazy(&h[2], cb);
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(atomic_load(&invoked), 53);
}

static void run_child(void (*fn)(void), const char *what)
{
	double deadline;
	int status = 0;
	pid_t pid = fork(), w;

	CHECK(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	deadline = check_now_s() + check_timeout_s(60);
	while ((w = waitpid(pid, &status, WNOHANG)) == 0) {
		struct timespec ts = { 0, 5000000 };

		if (check_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "part %s hung\n", what);
			exit(1);
		}
		nanosleep(&ts, NULL);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "part %s failed (status 0x%x)\n", what, status);
		exit(1);
	}
}

int main(void)
{
	unsetenv("ORCU_CPUS");
	unsetenv("ORCU_LAZY_MAX");
	run_child(part_timer, "timer");
	run_child(part_flushes, "flushes");
	TEST_PASS("lazy");
}
