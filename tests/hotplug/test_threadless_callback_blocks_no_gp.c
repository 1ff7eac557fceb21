/*
 * test_threadless_callback_blocks_no_gp - a slot without threads is
 * served in place by the GP thread (DESIGN-NOTES "Who serves what"), so
 * the GP thread may be inside a user callback for as long as that
 * callback runs.  Grace periods for the other slots must not wait for it.
 * A callback posted on never-onlined slot 5 blocks until a second
 * callback, posted on online slot 2 after the first one started, has run
 * and a cookie of orcu_start_poll() taken after it has completed;
 * the program, a registered reader outside its sections, then only
 * waits (no orcu_synchronize(), barrier or safe point, which would drive
 * GPs themselves).  The second callback must run
 * while the first still blocks, and the cookie complete; the first gives
 * up after 60 s (scaled) so a failure ends.
 *
 * Before the fix: the leader of slot 2 asked the GP thread for its grace
 * period and waited, and the GP thread was the one blocked in the first
 * callback: the second callback ran only after the first gave up.  With
 * that fixed, orcu_start_poll() still left its GP to the busy GP thread
 * (orcu__gp_request() asked `running` alone): the cookie completed only
 * after the first callback gave up.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>
#include <time.h>

#include "check.h"

static struct orcu_head blocker, second;
static atomic_int blocker_started, second_ran, release, gave_up;

static void second_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&second_ran, 1);
}

static void blocker_cb(struct orcu_head *h)
{
	struct timespec ts = { 0, 1000000 };
	long limit_ms = (long)check_timeout_s(60) * 1000;

	(void)h;
	atomic_store(&blocker_started, 1);
	for (long ms = 0; !atomic_load(&release); ms++) {
		if (ms >= limit_ms) {
			atomic_store(&gave_up, 1);
			return;
		}
		nanosleep(&ts, NULL);
	}
}

int main(void)
{
	unsigned long cookie;

	test_watchdog("test_threadless_callback_blocks_no_gp", 180);
	setenv("ORCU_CPUS", "possible=6,online=0-3", 1);
	setenv("ORCU_NOCB_STRIDE", "2", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);
	/* A registered reader (outside any section): a GP is a real one,
	 * not the swap a requester makes when nobody reads. */
	CHECK_EQ(orcu_register_thread(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(5), 0);
	orcu_call(&blocker, blocker_cb);
	CHECK_WAIT_UNTIL(atomic_load(&blocker_started), 30);
	CHECK_EQ(orcu_thread_bind_cpu(2), 0);
	orcu_call(&second, second_cb);
	CHECK_WAIT_UNTIL(atomic_load(&second_ran) || atomic_load(&gave_up), 120);
	CHECK_EQ(atomic_load(&gave_up), 0);
	/* The same for a GP asked for without waiting: its cookie
	 * completes while the GP thread is still in the first callback. */
	cookie = orcu_start_poll();
	CHECK_WAIT_UNTIL(orcu_poll_state(cookie) || atomic_load(&gave_up), 120);
	CHECK_EQ(atomic_load(&gave_up), 0);
	atomic_store(&release, 1);
	orcu_unregister_thread();
	orcu_barrier();
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("threadless_callback_blocks_no_gp");
}
