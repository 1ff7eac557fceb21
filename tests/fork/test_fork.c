/*
 * test_fork.c - orcu keeps working in a forked child (DESIGN §6).
 * The parent holds back grace periods with a reader thread that sits in a
 * read-side section, posts callbacks (which therefore stay pending), and
 * forks.  The reader thread does not exist in the child, so there:
 *  - every callback inherited from the parent's pending ones runs (exactly
 *    once) after an orcu_barrier;
 *  - the child registers, synchronizes, posts its own calls, barriers,
 *    and runs a short age-oracle load;
 *  - it reports through its exit status (0 = all good, n = check n).
 * Meanwhile the parent's callbacks are still held by its reader; once the
 * reader leaves they run in the parent too.  Then several forks while
 * other threads post callbacks and run GPs: every child must still finish.
 */
#include <orcu.h>

#include "common_pipe.h"

#define NCB 500

struct counted {
	struct orcu_head head;
	int idx;
};

static struct counted objs[NCB];
static atomic_int ran[NCB];
static atomic_long child_count;

static void mark_cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran[((struct counted *)h)->idx], 1);
}

static void count_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&child_count, 1);
}

static atomic_int holder_state;

static void *holder(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&holder_state, 1);
	while (atomic_load(&holder_state) != 2)
		sleep_ms(1);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

/* In the child: a failed check exits with a distinct code. */
static int child_main(void)
{
	struct orcu_head mine[100];

	alarm((unsigned)check_timeout_s(30));  /* SIGALRM kills a hung child */
	CHILD_CHECK(10, orcu_register_thread() == 0);
	orcu_read_lock();
	orcu_read_unlock();
	orcu_synchronize();
	orcu_barrier();
	for (int i = 0; i < NCB; i++)
		CHILD_CHECK(11, atomic_load(&ran[i]) == 1);
	for (int i = 0; i < 100; i++)
		orcu_call(&mine[i], count_cb);
	orcu_barrier();
	CHILD_CHECK(12, atomic_load(&child_count) == 100);
	orcu_unregister_thread();
	CHILD_CHECK(13, orcu_debug_thread_count() > 0);
	return 0;
}

/* Several forks while other threads post and synchronize. */
static atomic_int busy_stop;

static void *busy_poster(void *arg)
{
	struct orcu_head *h = calloc(256, sizeof(*h));

	(void)arg;
	CHECK(h);
	while (!atomic_load(&busy_stop)) {
		for (int i = 0; i < 256; i++)
			orcu_call(&h[i], count_cb);
		orcu_barrier();
	}
	free(h);
	return NULL;
}

static void *busy_syncer(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load(&busy_stop)) {
		orcu_read_lock();
		orcu_read_unlock();
		orcu_synchronize();
	}
	orcu_unregister_thread();
	return NULL;
}

static int busy_child(void)
{
	struct orcu_head mine[10];
	long before;

	alarm((unsigned)check_timeout_s(30));
	orcu_synchronize();
	orcu_barrier();
	before = atomic_load(&child_count);
	for (int i = 0; i < 10; i++)
		orcu_call(&mine[i], count_cb);
	orcu_barrier();
	CHILD_CHECK(20, atomic_load(&child_count) >= before + 10);
	CHILD_CHECK(21, orcu_drain((long)(check_timeout_s(10) * 1000)) == 0);
	return 0;
}

int main(void)
{
	pthread_t h, bp, bs;
	pid_t pid;

	test_watchdog("test_fork", 90);

	CHECK_EQ(pthread_create(&h, NULL, holder, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&holder_state) == 1, 10);
	for (int i = 0; i < NCB; i++) {
		objs[i].idx = i;
		orcu_call(&objs[i].head, mark_cb);
	}
	/* Give them time to be taken into the segmented lists and to wait
	 * on the held GP: the child must cope with every stage. */
	sleep_ms(100);
	for (int i = 0; i < NCB; i++)
		CHECK_EQ(atomic_load(&ran[i]), 0);

	pid = check_fork_run(child_main);
	check_child_ok(pid, "inherited callbacks", 40);

	/* Parent: still held by its reader. */
	for (int i = 0; i < NCB; i++)
		CHECK_EQ(atomic_load(&ran[i]), 0);
	atomic_store(&holder_state, 2);
	CHECK_EQ(pthread_join(h, NULL), 0);
	orcu_barrier();
	for (int i = 0; i < NCB; i++)
		CHECK_EQ(atomic_load(&ran[i]), 1);

	/* Forks under load. */
	CHECK_EQ(pthread_create(&bp, NULL, busy_poster, NULL), 0);
	CHECK_EQ(pthread_create(&bs, NULL, busy_syncer, NULL), 0);
	for (int i = 0; i < 20; i++) {
		sleep_ms(20);
		pid = check_fork_run(busy_child);
		check_child_ok(pid, "fork under load", 40);
	}
	atomic_store(&busy_stop, 1);
	CHECK_EQ(pthread_join(bp, NULL), 0);
	CHECK_EQ(pthread_join(bs, NULL), 0);
	TEST_PASS("test_fork");
}
