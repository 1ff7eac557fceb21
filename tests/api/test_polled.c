/*
 * test_polled.c - the polled grace-period API: orcu_get_state,
 * orcu_start_poll, orcu_poll_state, orcu_cond_synchronize.
 *  - a fresh cookie is not done; orcu_synchronize completes it;
 *  - orcu_get_state alone starts no GP (nobody asked: it stays not done),
 *    orcu_start_poll does (the cookie completes with nobody synchronizing);
 *  - cond_synchronize on a done cookie returns without running a GP, on a
 *    pending one it waits until the cookie is done;
 *  - a cookie cannot complete while a memb reader (or an online qsbr reader
 *    that announces nothing) that was inside its section when the cookie
 *    was taken still holds it; it completes once the reader leaves;
 *  - under load, a polled writer in the age oracle (common_pipe.h) never
 *    frees an element a reader still holds.
 */
#include <orcu.h>

#include "common_pipe.h"

static atomic_int reader_state;    /* 1 inside, 2 told to leave, 3 left */
static atomic_int reader_kind;     /* 0 memb, 1 qsbr */

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
	if (atomic_load(&reader_kind) == 0)
		orcu_read_unlock();
	else
		orcu_quiescent_state();
	atomic_store(&reader_state, 3);
	orcu_unregister_thread();
	return NULL;
}

static void held_cookie_waits(int kind)
{
	pthread_t t;
	unsigned long c1, c2;

	atomic_store(&reader_kind, kind);
	atomic_store(&reader_state, 0);
	CHECK_EQ(pthread_create(&t, NULL, holder, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_state) == 1, 10);
	c1 = orcu_start_poll();
	c2 = orcu_get_state();
	/* Give a broken engine ample time to end the GP anyway. */
	sleep_ms(300);
	CHECK(!orcu_poll_state(c1));
	CHECK(!orcu_poll_state(c2));
	atomic_store(&reader_state, 2);
	CHECK_WAIT_UNTIL(atomic_load(&reader_state) == 3, 10);
	CHECK_WAIT_UNTIL(orcu_poll_state(c1), 10);
	orcu_cond_synchronize(c2);
	CHECK(orcu_poll_state(c2));
	CHECK_EQ(pthread_join(t, NULL), 0);
}

int main(void)
{
	unsigned long c, c2;
	uint64_t gps;

	test_watchdog("test_polled", 60);

	/* Before anything else: a cookie from an idle engine. */
	c = orcu_get_state();
	CHECK(!orcu_poll_state(c));
	orcu_synchronize();
	CHECK(orcu_poll_state(c));

	/* get_state alone requests nothing: nobody else runs GPs here. */
	c = orcu_get_state();
	gps = pipe_gps_now();
	sleep_ms(200);
	CHECK(!orcu_poll_state(c));
	CHECK_EQ(pipe_gps_now(), gps);

	/* start_poll requests the GP: it completes with nobody waiting. */
	c2 = orcu_start_poll();
	CHECK_WAIT_UNTIL(orcu_poll_state(c2), 10);
	CHECK(orcu_poll_state(c));   /* the same or an earlier GP end */

	/* cond_synchronize on a done cookie: no GP, returns at once. */
	gps = pipe_gps_now();
	orcu_cond_synchronize(c2);
	CHECK_EQ(pipe_gps_now(), gps);

	/* ... on a pending one: waits for it. */
	c = orcu_get_state();
	CHECK(!orcu_poll_state(c));
	orcu_cond_synchronize(c);
	CHECK(orcu_poll_state(c));

	/* Cookies are monotonic: a later one is never done before an earlier. */
	c = orcu_get_state();
	c2 = orcu_get_state();
	orcu_cond_synchronize(c2);
	CHECK(orcu_poll_state(c));

	held_cookie_waits(0);
	held_cookie_waits(1);

	/* Under load: polled retirement inside the age oracle. */
	struct pipe_cfg cfg = {
		.memb_readers = 2,
		.qsbr_readers = 1,
		.poll_writers = 2,
		.call_writers = 1,
	};
	pipe_run_checked("polled", &cfg, 2.0);
	TEST_PASS("test_polled");
}
