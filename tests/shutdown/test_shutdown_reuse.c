/*
 * test_shutdown_reuse.c - orcu_shutdown() then reuse, three times over:
 *  - with callbacks pending (plain, lazy held for 60 s, and callbacks that
 *    post further callbacks), orcu_shutdown() returns 0 having run every
 *    one of them, and leaves no orcu-* thread (orcu_debug_thread_count()
 *    == 0, orcu_stats.threads_alive == 0);
 *  - registered threads (memb and qsbr, outside any section) may exist
 *    across the shutdown;
 *  - afterwards the library works again: synchronize, call + barrier, and
 *    a short age-oracle load (common_pipe.h), which restarts the threads.
 */
#include <orcu.h>

#include "common_pipe.h"

#define N 2000

static struct orcu_head heads[N];
static struct orcu_head chained[N];
static atomic_long ran;

static void plain_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran, 1);
}

static void chain_cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran, 1);
	/* Posted from a callback, while the shutdown drains. */
	orcu_call(&chained[h - heads], plain_cb);
}

static atomic_int reg_state;   /* 1 registered, 2 told to go */

static void *registered(void *arg)
{
	int qsbr = (int)(uintptr_t)arg;

	CHECK_EQ(qsbr ? orcu_register_thread_qsbr() : orcu_register_thread(), 0);
	if (qsbr)
		orcu_thread_offline();
	atomic_fetch_add(&reg_state, 1);
	while (atomic_load(&reg_state) < 10)
		sleep_ms(1);
	if (qsbr)
		orcu_thread_online();
	orcu_read_lock();
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

int main(void)
{
	struct orcu_config cfg = { .lazy_ms = 60000, .lazy_max = 1000000 };
	pthread_t r[2];

	test_watchdog("test_shutdown_reuse", 90);
	CHECK_EQ(orcu_init(&cfg), 0);
	CHECK_EQ(pthread_create(&r[0], NULL, registered, (void *)0), 0);
	CHECK_EQ(pthread_create(&r[1], NULL, registered, (void *)1), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reg_state) == 2, 10);

	for (int round = 0; round < 3; round++) {
		struct orcu_stats st;

		atomic_store(&ran, 0);
		for (int i = 0; i < N; i++) {
			if (i % 3 == 0)
				orcu_call(&heads[i], plain_cb);
			else if (i % 3 == 1)
				orcu_call_lazy(&heads[i], plain_cb);
			else
				orcu_call(&heads[i], chain_cb);
		}
		CHECK(orcu_debug_thread_count() > 0);
		CHECK_EQ(orcu_shutdown(), 0);
		/* Every callback ran, the chained ones too. */
		CHECK_EQ(atomic_load(&ran), N + N / 3);
		CHECK_EQ(orcu_debug_thread_count(), 0);
		orcu_get_stats(&st);
		CHECK_EQ(st.threads_alive, 0);
		CHECK_EQ(st.leaders_alive, 0);
		CHECK_EQ(st.followers_alive, 0);
		CHECK_EQ(st.callbacks_pending, 0);
		/* Nothing runs by itself afterwards. */
		sleep_ms(50);
		CHECK_EQ(atomic_load(&ran), N + N / 3);
		CHECK_EQ(orcu_debug_thread_count(), 0);

		/* Works again. */
		orcu_synchronize();
		/* A synchronize runs its GP on the caller: no thread needed. */
		CHECK_EQ(orcu_debug_thread_count(), 0);
		atomic_store(&ran, 0);
		orcu_call(&heads[0], plain_cb);
		/* Threads name themselves as they start: wait for the names. */
		CHECK_WAIT_UNTIL(orcu_debug_thread_count() > 0, 10);
		orcu_barrier();
		CHECK_EQ(atomic_load(&ran), 1);

		struct pipe_cfg pc = {
			.memb_readers = 1, .qsbr_readers = 1,
			.call_writers = 1, .sync_writers = 1,
		};
		pipe_run_checked("after shutdown", &pc, 0.7);
	}
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
	CHECK_EQ(orcu_shutdown(), 0);   /* idempotent */

	atomic_store(&reg_state, 10);
	CHECK_EQ(pthread_join(r[0], NULL), 0);
	CHECK_EQ(pthread_join(r[1], NULL), 0);
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
	TEST_PASS("test_shutdown_reuse");
}
