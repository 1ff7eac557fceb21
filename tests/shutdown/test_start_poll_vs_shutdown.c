/*
 * test_start_poll_vs_shutdown - a grace period asked for with
 * orcu_start_poll() while orcu_shutdown() stops the GP thread is not left
 * behind: its cookie completes with nobody calling anything but
 * orcu_poll_state() after the shutdown returned (the GP thread used to
 * leave on its stop flag without serving a request raised after its last
 * look, and the shutdown returned with the GP never started).  Each round:
 * a thread runs orcu_shutdown(), this one calls orcu_start_poll() at a
 * random moment inside it; in odd rounds the shutting-down thread is a
 * qsbr reader, offline (it must stay so).  A memb reader thread enters and
 * leaves sections throughout, so grace periods wait for a reader.  Then a
 * request made after the shutdown returned completes too: the library
 * restarts on use.
 */
#include <orcu.h>

#include "common_pipe.h"

#define ROUNDS 400

static void *shut(void *arg)
{
	bool qsbr = arg != NULL;

	if (qsbr) {
		CHECK_EQ(orcu_register_thread_qsbr(), 0);
		orcu_thread_offline();
	}
	CHECK_EQ(orcu_shutdown(), 0);
	if (qsbr) {
		CHECK(!orcu_thread_is_online());
		orcu_unregister_thread();
	}
	return NULL;
}

static atomic_int reader_stop;

static void *reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load(&reader_stop)) {
		orcu_read_lock();
		usleep(50);
		orcu_read_unlock();
		usleep(50);
	}
	orcu_unregister_thread();
	return NULL;
}

/* Poll only, for up to base_s (scaled) seconds. */
static bool completes_alone(unsigned long cookie, double base_s)
{
	double end = check_now_s() + check_timeout_s(base_s);

	while (!orcu_poll_state(cookie)) {
		if (check_now_s() > end)
			return false;
		usleep(200);
	}
	return true;
}

int main(void)
{
	unsigned seed = 1;
	pthread_t rd;

	test_watchdog("test_start_poll_vs_shutdown", 110);
	CHECK_EQ(pthread_create(&rd, NULL, reader, NULL), 0);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t;
		unsigned long c;

		orcu_synchronize();                 /* (re)started */
		CHECK_EQ(pthread_create(&t, NULL, shut, (r & 1) ? (void *)1 : NULL), 0);
		usleep(rand_r(&seed) % 400);
		c = orcu_start_poll();
		CHECK_EQ(pthread_join(t, NULL), 0);
		if (!completes_alone(c, 5)) {
			fprintf(stderr, "round %d: cookie %lu from orcu_start_poll() not complete "
				"%.0f s after orcu_shutdown() returned\n", r, c, check_timeout_s(5));
			return 1;
		}
	}
	atomic_store(&reader_stop, 1);
	CHECK_EQ(pthread_join(rd, NULL), 0);
	/* After a shutdown, with nothing running: the request restarts it. */
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
	CHECK(completes_alone(orcu_start_poll(), 10));
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("start_poll_vs_shutdown");
}
