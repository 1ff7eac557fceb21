/*
 * test_fork_mid_callback.c - fork() while another thread is in the middle
 * of a callback loses no callback and runs none twice, in the child and
 * in the parent.
 *
 * A slow callback is invoked by an offload thread, followed in its slot by
 * a batch of quick ones.  While the slow one runs, the main thread forks;
 * a thread that learns of the fork from an atfork handler of this test
 * lets the slow callback finish a little later.  The fork must wait until
 * the invoker is between two callbacks, so the child's copy of the
 * process holds the slow callback either not started (then the child runs
 * it) or finished, never half-run and forgotten: after orcu_barrier() in
 * the child, every callback has run exactly once there.  (The bug this
 * guards: the child inherited "N allocated, N-1 freed" when a callback
 * was mid-execution at fork time.)  Repeated, so invokers park and resume
 * more than once.
 */
#include <orcu.h>

#include "common_pipe.h"

#define NQUICK 200
#define ROUNDS 3

struct counted {
	struct orcu_head head;
	int idx;
};

static struct counted slow_obj;
static struct counted quick[NQUICK];
static atomic_int slow_started, slow_release, slow_done;
static atomic_int quick_ran[NQUICK];
static atomic_int forking;

static void slow_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&slow_started, 1);
	/* Bounded: a parent that never releases us fails, not hangs. */
	CHECK_WAIT_UNTIL(atomic_load(&slow_release), 60);
	atomic_fetch_add(&slow_done, 1);
}

static void quick_cb(struct orcu_head *h)
{
	atomic_fetch_add(&quick_ran[((struct counted *)h)->idx], 1);
}

/* Runs before orcu's own prepare handler (prepare handlers run in the
 * reverse order of registration, and orcu registers in a constructor). */
static void test_prepare(void)
{
	atomic_store(&forking, 1);
}

static void *releaser(void *arg)
{
	(void)arg;
	CHECK_WAIT_UNTIL(atomic_load(&forking), 60);
	/* Let fork() get as far as it will with the callback still running:
	 * a fork that does not wait for it snapshots it half-run.  Nothing
	 * below depends on how long this is. */
	sleep_ms(50);
	atomic_store(&slow_release, 1);
	return NULL;
}

static void check_all_once(bool in_child)
{
	if (in_child) {
		CHILD_CHECK(10, atomic_load(&slow_done) == 1);
		for (int i = 0; i < NQUICK; i++)
			CHILD_CHECK(11, atomic_load(&quick_ran[i]) == 1);
		return;
	}
	CHECK_EQ(atomic_load(&slow_done), 1);
	for (int i = 0; i < NQUICK; i++)
		CHECK_EQ(atomic_load(&quick_ran[i]), 1);
}

static int child_main(void)
{
	alarm((unsigned)check_timeout_s(30));
	orcu_barrier();
	check_all_once(true);
	/* The child's library works on: one more round trip. */
	atomic_store(&quick_ran[0], 0);
	orcu_call(&quick[0].head, quick_cb);
	orcu_barrier();
	CHILD_CHECK(12, atomic_load(&quick_ran[0]) == 1);
	return 0;
}

static void one_round(int round)
{
	pthread_t rel;
	pid_t pid;
	char what[32];

	atomic_store(&slow_started, 0);
	atomic_store(&slow_release, 0);
	atomic_store(&slow_done, 0);
	atomic_store(&forking, 0);
	for (int i = 0; i < NQUICK; i++)
		atomic_store(&quick_ran[i], 0);

	orcu_call(&slow_obj.head, slow_cb);
	for (int i = 0; i < NQUICK; i++) {
		quick[i].idx = i;
		orcu_call(&quick[i].head, quick_cb);
	}
	CHECK_WAIT_UNTIL(atomic_load(&slow_started), 30);
	CHECK_EQ(pthread_create(&rel, NULL, releaser, NULL), 0);

	pid = check_fork_run(child_main);
	CHECK_EQ(pthread_join(rel, NULL), 0);
	snprintf(what, sizeof(what), "round %d", round);
	check_child_ok(pid, what, 40);
	orcu_barrier();
	check_all_once(false);
}

int main(void)
{
	test_watchdog("test_fork_mid_callback", 120);
	CHECK_EQ(pthread_atfork(test_prepare, NULL, NULL), 0);
	/* orcu_call from an unregistered main thread: the slot's offload
	 * threads invoke (the default configuration offloads every CPU). */
	for (int r = 0; r < ROUNDS; r++)
		one_round(r);
	TEST_PASS("test_fork_mid_callback");
}
