/*
 * test_expedited.c - orcu_synchronize_expedited():
 *  - it waits for a memb reader that was inside its section when it was
 *    called (a thread blocked in it has not returned while the reader
 *    holds; it returns once the reader leaves), and likewise for an online
 *    qsbr reader that announces nothing;
 *  - it counts as a hurried GP (orcu_stats.gp_expedited grows);
 *  - under load, expedited writers in the age oracle (common_pipe.h) never
 *    free what a reader holds.
 */
#include <orcu.h>

#include "common_pipe.h"

static atomic_int reader_state;   /* 1 inside, 2 told to leave, 3 left */
static atomic_int reader_kind;
static atomic_int sync_done;

static void *holder(void *arg)
{
	(void)arg;
	if (atomic_load(&reader_kind) == 0) {
		CHECK_EQ(orcu_register_thread(), 0);
		orcu_read_lock();
	} else {
		CHECK_EQ(orcu_register_thread_qsbr(), 0);
		orcu_quiescent_state();
	}
	atomic_store(&reader_state, 1);
	while (atomic_load(&reader_state) != 2)
		sleep_ms(1);
	/* The expedited GP may not have ended while we were inside. */
	CHECK_EQ(atomic_load(&sync_done), 0);
	if (atomic_load(&reader_kind) == 0)
		orcu_read_unlock();
	else
		orcu_quiescent_state();
	atomic_store(&reader_state, 3);
	orcu_unregister_thread();
	return NULL;
}

static void *exp_syncer(void *arg)
{
	(void)arg;
	orcu_synchronize_expedited();
	atomic_store(&sync_done, 1);
	return NULL;
}

static void expedited_waits_for(int kind)
{
	pthread_t r, s;

	atomic_store(&reader_kind, kind);
	atomic_store(&reader_state, 0);
	atomic_store(&sync_done, 0);
	CHECK_EQ(pthread_create(&r, NULL, holder, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_state) == 1, 10);
	CHECK_EQ(pthread_create(&s, NULL, exp_syncer, NULL), 0);
	sleep_ms(300);   /* time for a broken engine to return early */
	CHECK_EQ(atomic_load(&sync_done), 0);
	atomic_store(&reader_state, 2);
	CHECK_WAIT_UNTIL(atomic_load(&sync_done) == 1, 10);
	CHECK_EQ(pthread_join(s, NULL), 0);
	CHECK_EQ(pthread_join(r, NULL), 0);
}

int main(void)
{
	struct orcu_stats a, b;

	test_watchdog("test_expedited", 60);

	orcu_get_stats(&a);
	for (int i = 0; i < 20; i++)
		orcu_synchronize_expedited();
	orcu_get_stats(&b);
	CHECK(b.gp_completed >= a.gp_completed + 20);
	CHECK(b.gp_expedited > a.gp_expedited);

	expedited_waits_for(0);
	expedited_waits_for(1);

	struct pipe_cfg cfg = {
		.memb_readers = 2,
		.qsbr_readers = 1,
		.exp_writers = 2,
		.call_writers = 1,
	};
	pipe_run_checked("expedited", &cfg, 2.0);
	TEST_PASS("test_expedited");
}
