/*
 * test_wait_backlog_bound - orcu_wait_backlog(), the explicit hard
 * backpressure: posters that call it before each post keep their slot
 * under ORCU_QHIMARK plus one callback per poster (sampled continuously),
 * every callback runs once, and a qsbr caller is offline while it waits
 * (a qsbr poster never announces quiescent states itself here).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>

#include "check.h"

#define QHIMARK 200
#define NPOSTERS 2
#define PER_POSTER 20000

static struct orcu_head heads[NPOSTERS][PER_POSTER];
static atomic_long invoked, max_seen;
static atomic_int stop;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

static void *poster(void *arg)
{
	struct orcu_head *mine = arg;

	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	for (int i = 0; i < PER_POSTER; i++) {
		CHECK_EQ(orcu_wait_backlog(-1), 0);
		orcu_call(&mine[i], cb);
	}
	orcu_unregister_thread();
	return NULL;
}

static void *monitor(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		long p = orcu_slot_pending(0);

		if (p > atomic_load(&max_seen))
			atomic_store(&max_seen, p);
	}
	return NULL;
}

int main(void)
{
	pthread_t pt[NPOSTERS], mt;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_QHIMARK", "200", 1);
	setenv("ORCU_QMAX", "100000", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(pthread_create(&mt, NULL, monitor, NULL), 0);
	for (int i = 0; i < NPOSTERS; i++)
		CHECK_EQ(pthread_create(&pt[i], NULL, poster, heads[i]), 0);
	for (int i = 0; i < NPOSTERS; i++)
		pthread_join(pt[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(mt, NULL);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), (long)NPOSTERS * PER_POSTER);
	CHECK_LE(atomic_load(&max_seen), QHIMARK + NPOSTERS);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("wait_backlog_bound");
}
