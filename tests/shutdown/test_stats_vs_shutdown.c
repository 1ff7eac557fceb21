/*
 * test_stats_vs_shutdown.c - orcu_get_stats() while orcu_shutdown() stops
 * and joins the GP thread, over and over.  The GP thread's CPU time is
 * read from its clock while it runs; the stats used to read it of a
 * thread already joined (shutdown joined it without the lock the stats
 * took; undefined behaviour).  Each reading is of a thread that is still
 * there or of the total the gone ones left, never counted twice: the GP
 * thread's CPU time seen by one thread never goes back.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"

#define ROUNDS 200

static atomic_int stop;
static atomic_long readings, backwards;

static void *reader(void *arg)
{
	uint64_t last = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		struct orcu_stats st;

		orcu_get_stats(&st);
		if (st.gp_thread_cpu_ns < last)
			atomic_fetch_add(&backwards, 1);
		last = st.gp_thread_cpu_ns;
		atomic_fetch_add(&readings, 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	test_watchdog("test_stats_vs_shutdown", 120);
	orcu_synchronize();
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, reader, NULL), 0);
	for (int r = 0; r < ROUNDS; r++) {
		orcu_synchronize();           /* starts the library again */
		CHECK_EQ(orcu_shutdown(), 0);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	printf("%d shutdowns, %ld stats readings, %ld that went back\n", ROUNDS,
	       atomic_load(&readings), atomic_load(&backwards));
	CHECK(atomic_load(&readings) > 0);
	CHECK_EQ(atomic_load(&backwards), 0);
	TEST_PASS("test_stats_vs_shutdown");
}
