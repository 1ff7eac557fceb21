/*
 * test_call_never_blocks_on_callbacks - issue: flood control blocked a
 * poster until its slot drained, so the common pattern "unlink under the
 * table lock, orcu_call(free_entry) with free_entry taking that lock"
 * deadlocked once the slot passed ORCU_QMAX.  orcu_call() never waits for
 * callbacks to make progress: posting 10 x QMAX callbacks while holding
 * the lock they all take completes (each post past QMAX is only slowed).
 * orcu_wait_backlog() is the explicit, waiting backpressure: with the lock
 * still held it times out (-ETIMEDOUT), and once the lock is released it
 * returns 0 with the slot under ORCU_QHIMARK.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

#define QHIMARK 50
#define QMAX 100
#define N (10 * QMAX)

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct orcu_head heads[N];
static atomic_int freed;

static void free_entry(struct orcu_head *h)
{
	(void)h;
	pthread_mutex_lock(&table_lock);
	atomic_fetch_add(&freed, 1);
	pthread_mutex_unlock(&table_lock);
}

int main(void)
{
	struct orcu_stats st;

	test_watchdog("test_call_never_blocks_on_callbacks (orcu_call blocked on its own callbacks?)", 60);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_QHIMARK", "50", 1);
	setenv("ORCU_QMAX", "100", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);

	pthread_mutex_lock(&table_lock);
	for (int i = 0; i < N; i++)
		orcu_call(&heads[i], free_entry);
	orcu_get_stats(&st);
	CHECK(st.poster_waits > 0);           /* it was slowed... */
	CHECK(orcu_slot_pending(0) > QMAX);    /* ...not blocked until drained */
	CHECK_EQ(orcu_wait_backlog(50), -ETIMEDOUT);
	pthread_mutex_unlock(&table_lock);

	CHECK_EQ(orcu_wait_backlog(-1), 0);
	CHECK(orcu_slot_pending(0) < QHIMARK);
	orcu_barrier();
	CHECK_EQ(atomic_load(&freed), N);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("call_never_blocks_on_callbacks");
}
