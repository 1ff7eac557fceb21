/*
 * test_call_inplace_runs_nothing.c - orcu_call() on an in-place slot runs
 * no callback on its caller.  The pattern it protects: unlink under the
 * table lock, orcu_call(free_entry) where free_entry takes that lock.  A
 * callback of the slot is ready (its grace period ended, the GP thread
 * offered it to the slot's own threads, and will not take it over for a
 * minute); the thread posts another while holding the lock the
 * ready one takes.  orcu_call() used to run ready inline callbacks on its
 * caller, which here deadlocks (an error-checking mutex says EDEADLK).
 * The ready callback runs at the thread's next quiescent state instead,
 * on that thread, and the new one at a later one.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"
#include "slot.h"

static pthread_mutex_t table_lock;
static atomic_int ran, ran_first, deadlocks, ran_elsewhere;
static pthread_t main_thread;
static struct orcu_head first, second;

static void free_entry(struct orcu_head *h)
{
	if (pthread_mutex_lock(&table_lock) == EDEADLK) {
		atomic_fetch_add(&deadlocks, 1);
		return;
	}
	if (!pthread_equal(pthread_self(), main_thread))
		atomic_fetch_add(&ran_elsewhere, 1);
	if (h == &first)
		atomic_store(&ran_first, 1);
	atomic_fetch_add(&ran, 1);
	pthread_mutex_unlock(&table_lock);
}

int main(void)
{
	pthread_mutexattr_t a;
	struct orcu__slot *s;

	test_watchdog("test_call_inplace_runs_nothing", 120);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", "none", 1);
	setenv("ORCU_INPLACE_TAKEOVER_MS", "60000", 1);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&table_lock, &a);
	main_thread = pthread_self();
	/* memb: a grace period needs nothing from this thread outside its
	 * sections, and orcu_quiescent_state() is still its in-place point. */
	CHECK_EQ(orcu_register_thread(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	s = orcu__slot_of(0);

	orcu_call(&first, free_entry);
	orcu_synchronize();
	/* The GP thread offers the ready callback to the slot's threads. */
	CHECK_WAIT_UNTIL(orcu__load_relaxed(&s->inv.offered_ns), 30);
	CHECK_EQ(pthread_mutex_lock(&table_lock), 0);
	orcu_call(&second, free_entry);
	CHECK_EQ(pthread_mutex_unlock(&table_lock), 0);
	CHECK_EQ(atomic_load(&deadlocks), 0);
	CHECK_EQ(atomic_load(&ran), 0);

	/* A quiescent point runs the ready one here.  The second may be
	 * ready by now too (its grace period needs nothing from us), and
	 * then runs with it. */
	orcu_quiescent_state();
	CHECK_EQ(atomic_load(&ran_first), 1);
	for (double end = check_now_s() + check_timeout_s(30); atomic_load(&ran) < 2;) {
		CHECK(check_now_s() < end);
		orcu_synchronize();
		orcu_quiescent_state();
	}
	CHECK_EQ(atomic_load(&deadlocks), 0);
	CHECK_EQ(atomic_load(&ran_elsewhere), 0);
	printf("a ready in-place callback ran at the next quiescent state, not inside orcu_call()\n");
	orcu_unregister_thread();
	TEST_PASS("test_call_inplace_runs_nothing");
}
