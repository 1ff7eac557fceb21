/*
 * test_fork_blocked_callback.c - fork() from a thread that holds a lock a
 * running callback waits for returns, and both processes go on.
 *
 * A callback invoked by an offload thread blocks on a mutex the main
 * thread holds; behind it in its slot wait quick callbacks.  The main
 * thread forks while still holding the mutex (as a program whose own
 * atfork handler takes a lock its callbacks use does).  orcu's fork
 * handler waits for invokers to reach a point between two callbacks, but
 * this one cannot get there before the fork is over: the wait is bounded
 * and the fork goes on.  The child then runs every quick callback once
 * and not the blocked one (it is half-run in the child's copy), and its
 * library works on; the parent, once it lets the mutex go, runs them all
 * once.  The same again with an inline CPU, where the callback blocks in
 * an application thread's orcu_quiescent_state().  (The bug this guards: fork() hung for ever, and the torture's
 * fork configuration stalled GPs behind inline callbacks blocked on the
 * torture's pool lock.)
 */
#include <orcu.h>

#include "common_pipe.h"

#define NQUICK 64
#define ROUNDS 2

struct counted {
	struct orcu_head head;
	int idx;
};

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static struct counted blocked_obj;
static struct counted quick[NQUICK];
static atomic_int blocked_started, blocked_done;
static atomic_int quick_ran[NQUICK];

static void blocked_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&blocked_started, 1);
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	atomic_fetch_add(&blocked_done, 1);
}

static void quick_cb(struct orcu_head *h)
{
	atomic_fetch_add(&quick_ran[((struct counted *)h)->idx], 1);
}

static int child_main(void)
{
	alarm((unsigned)check_timeout_s(30));
	orcu_barrier();
	/* Its invoker does not exist here: the child resumed after it. */
	CHILD_CHECK(10, atomic_load(&blocked_done) == 0);
	for (int i = 0; i < NQUICK; i++)
		CHILD_CHECK(11, atomic_load(&quick_ran[i]) == 1);
	atomic_store(&quick_ran[0], 0);
	orcu_call(&quick[0].head, quick_cb);
	orcu_barrier();
	CHILD_CHECK(12, atomic_load(&quick_ran[0]) == 1);
	orcu_synchronize();
	return 0;
}

static void post_all(void)
{
	orcu_call(&blocked_obj.head, blocked_cb);
	for (int i = 0; i < NQUICK; i++) {
		quick[i].idx = i;
		orcu_call(&quick[i].head, quick_cb);
	}
}

static bool all_ran(void)
{
	for (int i = 0; i < NQUICK; i++)
		if (!atomic_load(&quick_ran[i]))
			return false;
	return atomic_load(&blocked_done) == 1;
}

/* The inline rounds' application thread: posts to inline CPU 0 and runs
 * its callbacks at its quiescent states until all of them ran. */
static void *inline_main(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	post_all();
	CHECK_WAIT_UNTIL((orcu_quiescent_state(), all_ran()), 60);
	orcu_unregister_thread();
	return NULL;
}

static void one_round(int round, bool is_inline)
{
	pthread_t inl;
	pid_t pid;
	char what[32];

	atomic_store(&blocked_started, 0);
	atomic_store(&blocked_done, 0);
	for (int i = 0; i < NQUICK; i++)
		atomic_store(&quick_ran[i], 0);

	CHECK_EQ(pthread_mutex_lock(&held), 0);
	if (is_inline)
		CHECK_EQ(pthread_create(&inl, NULL, inline_main, NULL), 0);
	else
		post_all();
	CHECK_WAIT_UNTIL(atomic_load(&blocked_started), 30);

	/* The watchdog fails the test if this never returns. */
	pid = check_fork_run(child_main);
	CHECK_EQ(pthread_mutex_unlock(&held), 0);
	snprintf(what, sizeof(what), "round %d", round);
	check_child_ok(pid, what, 40);
	if (is_inline)
		CHECK_EQ(pthread_join(inl, NULL), 0);
	orcu_barrier();
	CHECK_EQ(atomic_load(&blocked_done), 1);
	for (int i = 0; i < NQUICK; i++)
		CHECK_EQ(atomic_load(&quick_ran[i]), 1);
	printf("round %d (%s): fork returned with the callback blocked; child and parent ran each callback as expected\n",
	       round, is_inline ? "inline" : "offloaded");
}

int main(void)
{
	test_watchdog("test_fork_blocked_callback", 120);
	/* orcu_call from an unregistered main thread: the slot's offload
	 * threads invoke (the default configuration offloads every CPU). */
	for (int r = 0; r < ROUNDS; r++)
		one_round(r, false);
	CHECK_EQ(orcu_cpu_deoffload(0), 0);
	for (int r = ROUNDS; r < 2 * ROUNDS; r++)
		one_round(r, true);
	TEST_PASS("test_fork_blocked_callback");
}
