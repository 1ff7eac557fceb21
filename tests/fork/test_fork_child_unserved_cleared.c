/*
 * test_fork_child_unserved_cleared - a fork child that inherits callbacks
 * raises `unserved` for its first waiter or safe point; when its GP thread
 * comes up only after its leaders (the first creation of orcu-gp fails,
 * as it does under a pids limit, or as when the GP thread loses the race
 * with the first leader), the flag must still be taken and cleared.  Left
 * raised, every orcu_quiescent_state(), orcu_thread_online/offline() and
 * orcu_synchronize() of the process takes the safe point's slow path with
 * a clock read for ever (orcu__serve_wanted() true).
 *
 * The parent holds a lazy callback (ORCU_LAZY_MS of an hour) and forks.
 * The child makes the first creation of orcu-gp fail, synchronizes until
 * the retried GP thread runs, then checks, with a bounded wait, that
 * `unserved` and `degraded` fall to 0 (orcu__serve_wanted() false) and
 * that the inherited callback and a new one run exactly once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"
#include "serve.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static atomic_int fail_gp;      /* creations of orcu-gp still to refuse */
static atomic_int refused;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	const char *name = check_library_thread(fn, arg);

	if (name && strcmp(name, "orcu-gp") == 0 && atomic_load(&fail_gp) > 0) {
		atomic_fetch_sub(&fail_gp, 1);
		atomic_fetch_add(&refused, 1);
		return EAGAIN;
	}
	return check_real_pthread_create(t, attr, fn, arg);
}

static struct orcu_head inherited, fresh;
static atomic_int ran_inherited, ran_fresh;

static void cb_inherited(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran_inherited, 1);
}

static void cb_fresh(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran_fresh, 1);
}

static int child(void)
{
	atomic_store(&fail_gp, 1);
	/* The first GP end starts the threads: orcu-gp fails, the leaders
	 * run; `unserved` was raised at the fork. */
	orcu_synchronize();
	CHILD_CHECK(2, atomic_load(&refused) == 1);
	CHILD_CHECK(3, orcu__load_relaxed(&orcu__g.leaders_alive) > 0);
	/* The retry (backoff 1 ms) brings the GP thread up. */
	for (double end = check_now_s() + check_timeout_s(30);
	     orcu__load_relaxed(&orcu__g.degraded); ) {
		struct timespec ts = { 0, 2 * 1000000 };

		CHILD_CHECK(4, check_now_s() < end);
		nanosleep(&ts, NULL);
		orcu_synchronize();
	}
	/* Nothing more to serve: the flag is taken, the fast path is back. */
	for (double end = check_now_s() + check_timeout_s(30); orcu__serve_wanted(); ) {
		struct timespec ts = { 0, 1000000 };

		if (check_now_s() >= end) {
			fprintf(stderr, "child: unserved %d degraded %d after %.0f s: "
				"every safe point stays on its slow path\n",
				orcu__load_relaxed(&orcu__g.unserved),
				orcu__load_relaxed(&orcu__g.degraded), check_timeout_s(30));
			_exit(5);
		}
		nanosleep(&ts, NULL);
	}
	orcu_call(&fresh, cb_fresh);
	orcu_barrier();
	CHILD_CHECK(6, atomic_load(&ran_inherited) == 1);
	CHILD_CHECK(7, atomic_load(&ran_fresh) == 1);
	CHILD_CHECK(8, !orcu__serve_wanted());
#ifndef __SANITIZE_THREAD__
	/* (ThreadSanitizer: the child's threads reuse the ids of the
	 * parent's, which it still counts, and joining them reports "dup
	 * thread", as in test_fork_from_offload_thread.) */
	CHILD_CHECK(9, orcu_shutdown() == 0);
#endif
	return 0;
}

int main(void)
{
	test_watchdog("test_fork_child_unserved_cleared", 120);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_LAZY_MS", "3600000", 1);
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK(orcu__load_relaxed(&orcu__g.leaders_alive) > 0);
	/* Pending at the fork, and for the hour to come. */
	orcu_call_lazy(&inherited, cb_inherited);
	check_child_ok(check_fork_run(child), "child", 60);
	orcu_barrier();
	CHECK_EQ(atomic_load(&ran_inherited), 1);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_fork_child_unserved_cleared");
}
