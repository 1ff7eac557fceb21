/*
 * test_shutdown_races_synchronize.c - orcu_shutdown() may run while other
 * threads synchronize and post: a synchronize runs its grace period on the
 * calling thread when nobody else is running one, so it never waits for a
 * GP thread that a shutdown has just stopped.  For about 2 s an updater
 * loops orcu_synchronize(), orcu_call() and orcu_synchronize_expedited()
 * (a memb reader keeps the GPs honest) while the main thread and a second
 * thread each call orcu_shutdown() (0, or -EBUSY while the other one is
 * stopping the threads) and then wait for the updater to get through two
 * more rounds.  Nothing else restarts the library's threads meanwhile, so
 * an updater whose synchronize depended on the GP thread a shutdown
 * stopped makes no progress: reported as a deadlock.  Then everything
 * joins, and after orcu_barrier() every posted callback ran exactly once.
 * The scenario runs in a child, reported as "deadlock in <name>" if it
 * hangs.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "scenario_child.h"

#define RUN_S 2.0

static atomic_int stop, updater_exited;
static atomic_long updater_loops, shutdowns_ok, shutdowns_busy, posted, ran;

static void free_cb(struct orcu_head *h)
{
	free(h);
	atomic_fetch_add(&ran, 1);
}

static void *reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load(&stop)) {
		orcu_read_lock();
		sched_yield();
		orcu_read_unlock();
	}
	orcu_unregister_thread();
	return NULL;
}

static void *updater(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct orcu_head *h = malloc(sizeof(*h));

		CHECK(h);
		orcu_synchronize();
		atomic_fetch_add(&posted, 1);
		orcu_call(h, free_cb);
		orcu_synchronize_expedited();
		atomic_fetch_add(&updater_loops, 1);
	}
	atomic_store(&updater_exited, 1);
	return NULL;
}

/* One shutdown, then two more rounds of the updater, which must not
 * need anyone to restart the threads that shutdown stopped. */
static void shutdown_once(void)
{
	int ret = orcu_shutdown();
	long base = atomic_load(&updater_loops);
	double deadline = check_now_s() + check_timeout_s(20);

	if (ret == 0)
		atomic_fetch_add(&shutdowns_ok, 1);
	else if (ret == -EBUSY)
		atomic_fetch_add(&shutdowns_busy, 1);
	else {
		fprintf(stderr, "orcu_shutdown returned %d\n", ret);
		exit(1);
	}
	while (atomic_load(&updater_loops) < base + 2 &&
	       !atomic_load(&updater_exited)) {
		if (check_now_s() > deadline) {
			fprintf(stderr, "deadlock in shutdown_vs_synchronize: the updater "
				"made no progress for %.0fs after orcu_shutdown()\n",
				check_timeout_s(20));
			exit(1);
		}
		sleep_ms(1);
	}
}

static void *shutter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		shutdown_once();
	return NULL;
}

static int shutdown_vs_synchronize(void)
{
	pthread_t r, u, s;
	double end;

	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	CHECK_EQ(pthread_create(&r, NULL, reader, NULL), 0);
	CHECK_EQ(pthread_create(&u, NULL, updater, NULL), 0);
	CHECK_EQ(pthread_create(&s, NULL, shutter, NULL), 0);
	end = check_now_s() + RUN_S;
	while (check_now_s() < end)
		shutdown_once();
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(u, NULL), 0);
	CHECK_EQ(pthread_join(s, NULL), 0);
	CHECK_EQ(pthread_join(r, NULL), 0);
	printf("updater loops %ld, shutdowns %ld (+%ld -EBUSY)\n",
	       atomic_load(&updater_loops), atomic_load(&shutdowns_ok),
	       atomic_load(&shutdowns_busy));
	CHECK(atomic_load(&updater_loops) > 0);
	CHECK(atomic_load(&shutdowns_ok) > 0);
	orcu_barrier();
	CHECK_EQ(atomic_load(&ran), atomic_load(&posted));
	/* And a last shutdown leaves nothing behind. */
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
	return 0;
}

int main(void)
{
	test_watchdog("test_shutdown_races_synchronize", 115);
	CHECK(scen_run("shutdown_vs_synchronize", shutdown_vs_synchronize, 60));
	TEST_PASS("test_shutdown_races_synchronize");
}
