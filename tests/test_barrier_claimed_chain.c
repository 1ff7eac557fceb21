/*
 * test_barrier_claimed_chain.c - orcu_barrier() waits for a callback that
 * is running when the rest of its slot's callbacks are moved away.
 *
 * A callback invoked on an inline slot (here by the slot's follower,
 * which took it over) blocks on a mutex the test holds.  A barrier starts:
 * its marker goes on that slot, behind a quick callback posted there.
 * The slot then goes offline, which moves the quick callback and the
 * marker to another slot, whose threads run both at once.  The barrier
 * must still wait for the blocked callback: it was posted before the
 * barrier and has not finished.  (The bug this guards: the moved marker
 * ended the barrier with the callback still running; orcu-torture's fork
 * configuration, where callbacks block for a second on the pool lock
 * during a fork, then re-posted heads still queued and counted callbacks
 * run twice.)
 *
 * The same wait where the barrier itself moves a slot's callbacks: a CPU
 * that never came online has no threads, and a thread waiting in
 * orcu_wait_backlog() serves it, blocked in one of its callbacks.  The
 * barrier adopts what that slot still lists (onto the online CPU, whose
 * leader is itself held in a callback, so it cannot adopt first) and then
 * need not mark the slot's lists, but must still wait for the callback
 * running there.  This round runs in a child: it needs its own topology.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define INLINE_CPU 1

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static struct orcu_head blocked_head, quick_head;
static atomic_int blocked_started, blocked_done, quick_ran;
static atomic_int barrier_returned, done_at_return;

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

static void reset(void)
{
	atomic_store(&blocked_started, 0);
	atomic_store(&blocked_done, 0);
	atomic_store(&quick_ran, 0);
	atomic_store(&barrier_returned, 0);
	atomic_store(&done_at_return, -1);
}

/* The barrier runs in its own thread; once its markers are placed, move()
 * moves the slot's callbacks.  A barrier that ends early does so at once:
 * the test gives it two seconds to, then lets the callback finish.  (A
 * machine too slow to show the bug in that time passes; none fails.) */
static void barrier_across(void (*move)(void), const char *what)
{
	pthread_t bt;
	uint64_t before = barriers_run();
	double until;

	CHECK_EQ(pthread_create(&bt, NULL, barrier_main, NULL), 0);
	CHECK_WAIT_UNTIL(barriers_run() > before, 30);
	move();
	until = check_now_s() + 2.0;
	while (!atomic_load(&barrier_returned) && check_now_s() < until) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	CHECK_EQ(pthread_mutex_unlock(&held), 0);
	CHECK_EQ(pthread_join(bt, NULL), 0);
	if (atomic_load(&done_at_return) != 1) {
		fprintf(stderr, "%s: orcu_barrier returned while a callback posted before it was still running\n",
			what);
		exit(1);
	}
	orcu_barrier();
	CHECK_EQ(atomic_load(&quick_ran), 1);
	printf("%s: the barrier waited for the running callback\n", what);
}

static void offline_inline(void)
{
	CHECK_EQ(orcu_cpu_offline(INLINE_CPU), 0);
}

static void hotplug_scenario(void)
{
	reset();
	CHECK_EQ(pthread_mutex_lock(&held), 0);
	CHECK_EQ(orcu_thread_bind_cpu(INLINE_CPU), 0);
	/* Posted inside a read-side section: with no reader anywhere else a
	 * grace period takes microseconds, and an awake leader could make the
	 * callback ready before this orcu_call() returns, whose inline poll
	 * would then run it here, on the thread that holds `held`. */
	orcu_read_lock();
	orcu_call(&blocked_head, blocked_cb);
	orcu_read_unlock();
	/* No application thread comes by the inline slot: its follower
	 * takes over after ORCU_INLINE_TAKEOVER_MS and blocks in the callback. */
	CHECK_WAIT_UNTIL(atomic_load(&blocked_started), 30);
	orcu_call(&quick_head, quick_cb);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	barrier_across(offline_inline, "offline of an inline slot");
	CHECK_EQ(orcu_cpu_online(INLINE_CPU), 0);
}

/* --- a slot without threads, served by a waiter, then adopted --- */

#define NEVER_CPU 1

static pthread_mutex_t leader_held = PTHREAD_MUTEX_INITIALIZER;
static struct orcu_head leader_head;
static atomic_int leader_started;

static void leader_block_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&leader_started, 1);
	pthread_mutex_lock(&leader_held);
	pthread_mutex_unlock(&leader_held);
}

static void *server_main(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_thread_bind_cpu(NEVER_CPU), 0);
	orcu_call(&blocked_head, blocked_cb);
	orcu_call(&quick_head, quick_cb);
	/* ORCU_QHIMARK=2: two pending callbacks are a backlog, and the
	 * waiter serves a slot without threads itself. */
	CHECK_EQ(orcu_wait_backlog(-1), 0);
	return NULL;
}

static void release_leader(void)
{
	CHECK_EQ(pthread_mutex_unlock(&leader_held), 0);
}

static int adoption_scenario(void)
{
	pthread_t srv;

	setenv("ORCU_CPUS", "possible=2,online=0", 1);
	setenv("ORCU_NOCBS", "0-1", 1);
	setenv("ORCU_NOCB_STRIDE", "1", 1);    /* the leader invokes */
	setenv("ORCU_QHIMARK", "2", 1);
	reset();
	CHECK_EQ(pthread_mutex_lock(&leader_held), 0);
	CHECK_EQ(pthread_mutex_lock(&held), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	orcu_call(&leader_head, leader_block_cb);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	CHECK_WAIT_UNTIL(atomic_load(&leader_started), 30);
	CHECK_EQ(pthread_create(&srv, NULL, server_main, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&blocked_started), 30);
	/* Once the barrier has adopted and marked, the online CPU's leader
	 * may go on: it runs its marker at once. */
	barrier_across(release_leader, "slot without threads, adopted by the barrier");
	CHECK_EQ(pthread_join(srv, NULL), 0);
	fflush(stdout);          /* the child leaves with _exit() */
	return 0;
}

int main(void)
{
	test_watchdog("test_barrier_claimed_chain", 120);
	/* Before this process configures orcu: the child configures its own. */
	check_child_ok(check_fork_run(adoption_scenario), "adoption scenario", 60);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", "0", 1);
	setenv("ORCU_INLINE_TAKEOVER_MS", "5", 1);
	for (int round = 0; round < 3; round++)
		hotplug_scenario();
	TEST_PASS("test_barrier_claimed_chain");
}
