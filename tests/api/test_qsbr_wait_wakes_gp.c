/*
 * test_qsbr_wait_wakes_gp.c - an online qsbr thread that calls a waiting
 * call (orcu_synchronize, orcu_barrier) goes offline for the wait, and a
 * grace period that already sleeps on it is woken then, as
 * orcu_thread_offline() wakes it.  The waiting call used to store its
 * offline state without the fence and the check of the GP's wake flag:
 * the GP slept out its 100 ms time slice instead (every round took ~80
 * ms).  Counted, not timed: the reader wait's slices that run out with
 * no reader holding after (orcu__cnt.gp_wait_missed, lost wake-ups) stay
 * unchanged from the moment the thread goes offline to the end of the GP
 * that slept on it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"

#define ROUNDS 5

static void *other_sync(void *arg)
{
	(void)arg;
	orcu_synchronize();
	return NULL;
}

static uint64_t slices(void)
{
	return orcu__load_relaxed(&orcu__cnt.gp_wait_missed);
}

int main(void)
{
	long expired = 0;

	test_watchdog("test_qsbr_wait_wakes_gp", 120);
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	for (int r = 0; r < 2 * ROUNDS; r++) {
		pthread_t t;
		uint64_t before;

		orcu_quiescent_state();
		CHECK_EQ(pthread_create(&t, NULL, other_sync, NULL), 0);
		/* Its GP waits for us, armed, asleep. */
		CHECK_WAIT_UNTIL(orcu__load_relaxed(&orcu__gp_wait) == 1, 30);
		before = slices();
		if (r % 2)
			orcu_barrier();
		else
			orcu_synchronize();
		CHECK_EQ(pthread_join(t, NULL), 0);
		expired += (long)(slices() - before);
	}
	printf("%d waits from an online qsbr thread: %ld sleeping GP(s) left to time out\n",
	       2 * ROUNDS, expired);
	CHECK_EQ(expired, 0);
	orcu_unregister_thread();
	TEST_PASS("test_qsbr_wait_wakes_gp");
}
