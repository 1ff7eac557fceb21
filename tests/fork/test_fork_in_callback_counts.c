/*
 * test_fork_in_callback_counts.c - fork() from inside a callback while
 * another thread is between counting a post to the same slot and
 * publishing it: the child must still drain (slot.c point 5).
 *
 * The forking thread's own slot goes on invoking its chain in the child,
 * so its pending count cannot simply be recomputed from the lists as the
 * other slots' are: the chain's rest (inv.rest), the running callback and
 * the ones the invoker ran but has not counted in n_done yet are pending
 * too.  It used to keep the parent's counts instead, and those hold any
 * post to the shared queue that was counted in n_posted but not pushed
 * (here a lazy one, held at that point by a test hook): the child had a
 * count with no callback, and orcu_drain() and orcu_shutdown() never
 * returned there.
 *
 * The chain: A[0..NA), then F, which forks, then B[0..NB), all posted to
 * slot 0 in one read-side section; F posts C[0..NC) before it forks.  The
 * child must run every B and C once, and end with nothing pending.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "delay.h"

#define NA 10
#define NB 10
#define NC 5

static struct orcu_head a_heads[NA], b_heads[NB], c_heads[NC], f_head, lazy_head;
static atomic_int ran_a, ran_b, ran_c, ran_f, ran_lazy;
static atomic_int poster_go, hook_armed, poster_held, forked, round_done, child_status;
static pthread_t poster_tid;

static void a_cb(struct orcu_head *h) { (void)h; atomic_fetch_add(&ran_a, 1); }
static void b_cb(struct orcu_head *h) { (void)h; atomic_fetch_add(&ran_b, 1); }
static void c_cb(struct orcu_head *h) { (void)h; atomic_fetch_add(&ran_c, 1); }
static void lazy_cb(struct orcu_head *h) { (void)h; atomic_fetch_add(&ran_lazy, 1); }

/* The poster stops between counting its post and pushing it, until the
 * fork is done (bounded: the main thread's checks report the rest). */
static void hold_poster(enum orcu__delay_point p)
{
	double until;

	if (p != ORCU__DELAY_SHARED_POST || !pthread_equal(pthread_self(), poster_tid) ||
	    !atomic_exchange(&hook_armed, 0))
		return;
	atomic_store(&poster_held, 1);
	until = check_now_s() + check_timeout_s(60);
	while (!atomic_load(&forked) && check_now_s() < until)
		sleep_ms(1);
}

static void *poster_main(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	CHECK_WAIT_UNTIL(atomic_load(&poster_go), 30);
	/* Lazy: the shared queue, counted in n_posted before the push. */
	orcu_call_lazy(&lazy_head, lazy_cb);
	return NULL;
}

static void *child_checker(void *arg)
{
	int ret;

	(void)arg;
	ret = orcu_drain((long)(check_timeout_s(10) * 1000));
	if (ret)
		fprintf(stderr, "child: orcu_drain() = %d, slot 0 pending %ld: a count "
			"with no callback\n", ret, orcu_slot_pending(0));
	CHILD_CHECK(2, ret == 0);
	CHILD_CHECK(3, atomic_load(&ran_f) == 1);
	CHILD_CHECK(4, atomic_load(&ran_b) == NB);
	CHILD_CHECK(5, atomic_load(&ran_c) == NC);
	CHILD_CHECK(6, atomic_load(&ran_a) == NA);
	CHILD_CHECK(7, atomic_load(&ran_lazy) == 0);
	CHILD_CHECK(8, orcu_slot_pending(0) == 0 && orcu_slot_pending(1) == 0);
	printf("child: drained: the rest of the forking callback's chain ran, the "
	       "post counted but never pushed is not pending\n");
	fflush(stdout);
	_exit(0);
}

static void f_cb(struct orcu_head *h)
{
	pid_t pid;

	(void)h;
	atomic_fetch_add(&ran_f, 1);
	CHECK(atomic_load(&poster_held));
	/* Pending in this slot's lists or queues when we fork. */
	for (int i = 0; i < NC; i++)
		orcu_call(&c_heads[i], c_cb);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		pthread_attr_t attr;
		pthread_t t;

		orcu__delay_set_hook(NULL);
		/* orcu_drain() is not allowed in a callback: a thread of its
		 * own, with a stack size of its own (glibc would give it the
		 * stack, and the id, of a parent thread, which
		 * ThreadSanitizer still counts as running). */
		CHILD_CHECK(9, pthread_attr_init(&attr) == 0 &&
			       pthread_attr_setstacksize(&attr, (1 << 20) + (128 << 10)) == 0 &&
			       pthread_create(&t, &attr, child_checker, NULL) == 0);
		return;   /* this thread goes on with B in the child */
	}
	atomic_store(&child_status, check_wait_child(pid, "fork child", 60));
	atomic_store(&forked, 1);
	atomic_store(&round_done, 1);
}

int main(void)
{
	int st;

	test_watchdog("test_fork_in_callback_counts", 120);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", "all", 1);
	setenv("ORCU_NOCB_STRIDE", "2", 1);
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_register_thread(), 0);
	CHECK_EQ(pthread_create(&poster_tid, NULL, poster_main, NULL), 0);

	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	/* One batch: none can run before the section ends. */
	orcu_read_lock();
	for (int i = 0; i < NA; i++)
		orcu_call(&a_heads[i], a_cb);
	orcu_call(&f_head, f_cb);
	for (int i = 0; i < NB; i++)
		orcu_call(&b_heads[i], b_cb);
	atomic_store(&hook_armed, 1);
	orcu__delay_set_hook(hold_poster);
	atomic_store(&poster_go, 1);
	CHECK_WAIT_UNTIL(atomic_load(&poster_held), 30);
	orcu_read_unlock();
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);

	CHECK_WAIT_UNTIL(atomic_load(&round_done), 90);
	st = atomic_load(&child_status);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "fork child: child failed: %s %d\n",
			WIFEXITED(st) ? "exit status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		exit(1);
	}
	CHECK_EQ(pthread_join(poster_tid, NULL), 0);
	orcu__delay_set_hook(NULL);
	CHECK_EQ(orcu_drain(-1), 0);
	CHECK_EQ(atomic_load(&ran_a), NA);
	CHECK_EQ(atomic_load(&ran_b), NB);
	CHECK_EQ(atomic_load(&ran_c), NC);
	CHECK_EQ(atomic_load(&ran_f), 1);
	CHECK_EQ(atomic_load(&ran_lazy), 1);
	orcu_unregister_thread();
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_fork_in_callback_counts");
}
