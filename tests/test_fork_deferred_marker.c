/*
 * test_fork_deferred_marker.c - fork() while a claimer is about to run the
 * barrier marker that was left to it (slot.c point 6): the child's
 * barriers must still complete.
 *
 * Set up as test_barrier_claimed_chain's hotplug round: a callback on the
 * inline CPU 1, run by that slot's follower (takeover), blocks on a mutex
 * the test holds; a barrier's marker goes behind a quick callback there;
 * CPU 1 goes offline, which moves both to CPU 0, whose invoker runs the
 * quick callback and leaves CPU 1's marker to CPU 1's claimer
 * (marker_deferred).  The blocked callback is released: its claimer ends
 * the chain and stops at the delay point just before it runs the marker
 * (a test hook holds it there), and the main thread forks.  In the child,
 * where that claimer does not exist, the marker must be found again: the
 * barrier in progress counts it.  The bug this guards: the claimer had
 * cleared marker_deferred and left its chain before it ran the marker, so
 * the child had the marker in no list and counted, and every orcu_barrier(),
 * orcu_drain() and orcu_shutdown() there waited for ever.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "internal.h"

#define INLINE_CPU 1

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static struct orcu_head blocked_head, quick_head, child_head;
static atomic_int blocked_started, blocked_done, quick_ran, child_ran;
static atomic_int barrier_returned, done_at_return = -1;
static atomic_int hook_armed, claimer_held, forked;

static void blocked_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&blocked_started, 1);
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	atomic_store(&blocked_done, 1);
}

static void quick_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&quick_ran, 1);
}

static void child_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&child_ran, 1);
}

/* The claimer stops before the deferred marker until the fork is done
 * (bounded: the main thread's checks report a fork that never came). */
static void hold_claimer(enum orcu__delay_point p)
{
	double until;

	if (p != ORCU__DELAY_MARKER_DEFERRED || !atomic_exchange(&hook_armed, 0))
		return;
	atomic_store(&claimer_held, 1);
	until = check_now_s() + check_timeout_s(60);
	while (!atomic_load(&forked) && check_now_s() < until)
		sleep_ms(1);
}

static void *barrier_main(void *arg)
{
	(void)arg;
	orcu_barrier();
	atomic_store(&done_at_return, atomic_load(&blocked_done));
	atomic_store(&barrier_returned, 1);
	return NULL;
}

static uint64_t barriers_run(void)
{
	struct orcu_stats st;

	orcu_get_stats(&st);
	return st.barriers_run;
}

static bool marker_left_to_claimer(int cpu)
{
	struct orcu__slot *s = &orcu__g.slots[cpu];
	bool deferred;

	orcu__slot_lock(s);
	deferred = s->marker_deferred && s->invoking;
	orcu__slot_unlock(s);
	return deferred;
}

static int child(void)
{
	int ret;

	orcu__delay_set_hook(NULL);
	orcu_call(&child_head, child_cb);
	ret = orcu_drain((long)(check_timeout_s(10) * 1000));
	if (ret)
		fprintf(stderr, "child: orcu_drain() = %d: the barrier in progress at the "
			"fork never ends (its marker was lost)\n", ret);
	CHILD_CHECK(2, ret == 0);
	CHILD_CHECK(3, atomic_load(&child_ran) == 1);
	CHILD_CHECK(4, orcu_slot_pending(0) == 0 && orcu_slot_pending(INLINE_CPU) == 0);
	/* No orcu_shutdown() here: its joins would meet the ids of the
	 * parent's threads, which ThreadSanitizer still counts as running
	 * (the child's threads got their stacks). */
	printf("child: the marker the claimer was about to run was kept, drain returned\n");
	fflush(stdout);
	return 0;
}

int main(void)
{
	pthread_t bt;
	uint64_t before;

	test_watchdog("test_fork_deferred_marker", 120);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", "0", 1);
	setenv("ORCU_INLINE_TAKEOVER_MS", "5", 1);
	CHECK_EQ(pthread_mutex_lock(&held), 0);
	CHECK_EQ(orcu_thread_bind_cpu(INLINE_CPU), 0);
	/* Inside a section: the callback cannot become ready (and run inline
	 * on this thread, which holds `held`) before orcu_call() returns. */
	orcu_read_lock();
	orcu_call(&blocked_head, blocked_cb);
	orcu_read_unlock();
	CHECK_WAIT_UNTIL(atomic_load(&blocked_started), 30);
	orcu_call(&quick_head, quick_cb);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);

	before = barriers_run();
	CHECK_EQ(pthread_create(&bt, NULL, barrier_main, NULL), 0);
	CHECK_WAIT_UNTIL(barriers_run() > before, 30);
	CHECK_EQ(orcu_cpu_offline(INLINE_CPU), 0);
	CHECK_WAIT_UNTIL(atomic_load(&quick_ran) == 1, 30);
	CHECK_WAIT_UNTIL(marker_left_to_claimer(INLINE_CPU), 30);

	atomic_store(&hook_armed, 1);
	orcu__delay_set_hook(hold_claimer);
	CHECK_EQ(pthread_mutex_unlock(&held), 0);
	CHECK_WAIT_UNTIL(atomic_load(&claimer_held), 30);
	check_child_ok(check_fork_run(child), "fork child", 60);
	atomic_store(&forked, 1);
	orcu__delay_set_hook(NULL);

	CHECK_EQ(pthread_join(bt, NULL), 0);
	CHECK_EQ(atomic_load(&done_at_return), 1);
	orcu_barrier();
	CHECK_EQ(atomic_load(&quick_ran), 1);
	CHECK_EQ(orcu_cpu_online(INLINE_CPU), 0);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_fork_deferred_marker");
}
