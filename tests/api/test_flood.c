/*
 * test_flood - flood control (DESIGN 6): two threads flood orcu_call() on
 * one slot with ORCU_QHIMARK=1000 / ORCU_QMAX=5000.  Past QMAX each post
 * is slowed by a sleep of 20 us to 1 ms that grows with the overrun (it
 * never waits for the slot to drain), so the pending count stays near
 * QMAX: to pass 4 * QMAX the two posters would have to post 15000 more
 * callbacks at about 0.5 ms each, over 3 s with no callback invoked.  Grace
 * periods keep completing; every callback runs exactly once; the engine
 * reports slowed posts and hurried GPs.  The hard bound is
 * orcu_wait_backlog()'s (test_wait_backlog_bound).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define QHIMARK 1000
#define QMAX 5000
#define NPOSTERS 2
#define FLOOD_SLOT 0

struct obj {
	struct orcu_head head;
	atomic_int state;           /* 1 posted, 2 invoked */
};

static atomic_long posted, invoked, doubles;
static atomic_int stop;
static atomic_long max_seen;

static void cb(struct orcu_head *h)
{
	struct obj *o = (struct obj *)h;

	if (atomic_exchange(&o->state, 2) != 1)
		atomic_fetch_add(&doubles, 1);
	atomic_fetch_add_explicit(&invoked, 1, memory_order_relaxed);
	free(o);
}

static void *poster(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_thread_bind_cpu(FLOOD_SLOT), 0);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct obj *o = malloc(sizeof(*o));

		CHECK(o != NULL);
		atomic_init(&o->state, 1);
		atomic_fetch_add_explicit(&posted, 1, memory_order_relaxed);
		orcu_call(&o->head, cb);
	}
	return NULL;
}

static void *monitor(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		long p = orcu_slot_pending(FLOOD_SLOT);

		if (p > atomic_load(&max_seen))
			atomic_store(&max_seen, p);
	}
	return NULL;
}

int main(void)
{
	pthread_t pt[NPOSTERS], mt;
	struct orcu_stats a, b;
	double end;
	uint64_t gp_mid;

	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_QHIMARK", "1000", 1);
	setenv("ORCU_QMAX", "5000", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);
	orcu_get_stats(&a);

	CHECK_EQ(pthread_create(&mt, NULL, monitor, NULL), 0);
	for (int i = 0; i < NPOSTERS; i++)
		CHECK_EQ(pthread_create(&pt[i], NULL, poster, NULL), 0);
	end = check_now_s() + 3.0;
	/* Grace periods keep completing during the flood. */
	CHECK_WAIT_UNTIL(check_now_s() > end - 1.5, 10);
	orcu_get_stats(&b);
	gp_mid = b.gp_completed;
	CHECK_WAIT_UNTIL(check_now_s() > end, 10);
	orcu_get_stats(&b);
	CHECK(b.gp_completed > gp_mid);
	atomic_store(&stop, 1);
	for (int i = 0; i < NPOSTERS; i++)
		pthread_join(pt[i], NULL);
	pthread_join(mt, NULL);

	orcu_barrier();
	orcu_get_stats(&b);
	printf("posted %ld, max pending seen %ld, peak %llu, waits %llu, "
	       "hurried %llu, GPs %llu\n", atomic_load(&posted),
	       atomic_load(&max_seen), (unsigned long long)b.peak_pending,
	       (unsigned long long)b.poster_waits,
	       (unsigned long long)b.hurried_gps,
	       (unsigned long long)(b.gp_completed - a.gp_completed));
	CHECK_EQ(atomic_load(&doubles), 0);
	CHECK_EQ(atomic_load(&invoked), atomic_load(&posted));
	CHECK(atomic_load(&posted) > 2 * QMAX);      /* it was a flood */
	CHECK_LE(atomic_load(&max_seen), 4 * QMAX);
	CHECK_LE(b.peak_pending, 4 * QMAX);
	CHECK(b.peak_pending > QHIMARK);
	CHECK(b.poster_waits > 0);
	CHECK(b.qhimark_crossings > 0);
	CHECK_EQ(b.poster_overruns, 0);
	CHECK_EQ(b.callbacks_pending, 0);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("flood");
}
