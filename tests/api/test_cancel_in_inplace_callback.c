/*
 * test_cancel_in_inplace_callback.c - an application thread cancelled
 * (pthread_cancel, deferred) while a callback it runs at its quiescent
 * point sits at a cancellation point.  It used to unwind out of the
 * invocation with the slot's claim still held: no thread invoked that
 * slot again, orcu_drain() timed out, and every fork waited its full
 * second.  The claim is held with cancellation disabled: the cancel takes
 * effect at the thread's next cancellation point after the callback, the
 * slot's later callbacks run, orcu_drain() finds nothing left, and a fork
 * goes through.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"

static struct orcu_head slow, later;
static atomic_int slow_in, slow_done, later_ran;

static void slow_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&slow_in, 1);
	sleep_ms(200);          /* nanosleep: a cancellation point */
	atomic_store(&slow_done, 1);
}

static void later_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&later_ran, 1);
}

static void *app(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(1), 0);
	orcu_call(&slow, slow_cb);
	for (;;) {               /* its quiescent points run slot 1's callbacks */
		orcu_quiescent_state();
		/* The cancel acts here, not in nanosleep(), where ThreadSanitizer
		 * misses what the exiting thread does (google/sanitizers#646). */
		pthread_testcancel();
		sleep_ms(1);
	}
	return NULL;
}

static int fork_child(void)
{
	return 0;
}

int main(void)
{
	pthread_t t;
	double t0;

	test_watchdog("test_cancel_in_inplace_callback", 120);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", "0", 1);            /* slot 1 in place */
	setenv("ORCU_INPLACE_TAKEOVER_MS", "1000", 1);   /* the app thread runs slow_cb */
	CHECK_EQ(pthread_create(&t, NULL, app, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&slow_in), 30);
	CHECK_EQ(pthread_cancel(t), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(atomic_load(&slow_done), 1);    /* the callback finished */
	CHECK_EQ(orcu_thread_bind_cpu(1), 0);
	orcu_call(&later, later_cb);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	CHECK_EQ(orcu_drain(20000), 0);
	CHECK_EQ(atomic_load(&later_ran), 1);
	t0 = check_now_s();
	check_child_ok(check_fork_run(fork_child), "fork child", 30);
	printf("cancelled inside an in-place callback: the callback finished, the slot ran "
	       "its next callback, a fork took %.3f s\n", check_now_s() - t0);
	TEST_PASS("test_cancel_in_inplace_callback");
}
