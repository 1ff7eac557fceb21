/*
 * test_flood_in_reader - flood control must not deadlock: a poster inside
 * a read-side critical section (or inside a callback) holds the very grace
 * period that would drain its slot, so past ORCU_QMAX it must not wait; it
 * overruns and is counted.  While another thread floods the same slot, a
 * memb reader posts 3 * QMAX callbacks inside one critical section and a
 * callback posts QMAX more from inside the callback; both finish (bounded),
 * every callback runs once, stats.poster_overruns > 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>

#include "check.h"

#define QHIMARK 100
#define QMAX 500
#define SLOT 0

struct obj {
	struct orcu_head head;
	atomic_int state;
};

static atomic_long posted, invoked, doubles;
static atomic_int stop, reader_done, cb_posted_done;

static void cb(struct orcu_head *h)
{
	struct obj *o = (struct obj *)h;

	if (atomic_exchange(&o->state, 2) != 1)
		atomic_fetch_add(&doubles, 1);
	atomic_fetch_add(&invoked, 1);
	free(o);
}

static void post_one(void)
{
	struct obj *o = malloc(sizeof(*o));

	CHECK(o != NULL);
	atomic_init(&o->state, 1);
	atomic_fetch_add(&posted, 1);
	orcu_call(&o->head, cb);
}

/* A callback that floods from inside callback context. */
static struct orcu_head spawner_head;
static void spawner_cb(struct orcu_head *h)
{
	(void)h;
	for (int i = 0; i < 2 * QMAX; i++)
		post_one();
	atomic_store(&cb_posted_done, 1);
}

static void *flooder(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_thread_bind_cpu(SLOT), 0);
	while (!atomic_load(&stop))
		post_one();
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(SLOT), 0);
	orcu_read_lock();
	for (int i = 0; i < 3 * QMAX; i++)
		post_one();
	orcu_read_unlock();
	atomic_store(&reader_done, 1);
	orcu_unregister_thread();
	return NULL;
}

int main(void)
{
	pthread_t ft, rt;
	struct orcu_stats st;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_QHIMARK", "100", 1);
	setenv("ORCU_QMAX", "500", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);

	CHECK_EQ(pthread_create(&ft, NULL, flooder, NULL), 0);
	/* The flood is on: the slot is past its high mark. */
	CHECK_WAIT_UNTIL(orcu_slot_pending(SLOT) > QHIMARK, 20);
	CHECK_EQ(pthread_create(&rt, NULL, reader, NULL), 0);
	/* Bounded: a poster waiting inside its read section never returns. */
	CHECK_WAIT_UNTIL(atomic_load(&reader_done), 30);
	pthread_join(rt, NULL);

	orcu_thread_bind_cpu(SLOT);
	orcu_call(&spawner_head, spawner_cb);
	orcu_thread_bind_cpu(-1);
	CHECK_WAIT_UNTIL(atomic_load(&cb_posted_done), 30);

	atomic_store(&stop, 1);
	pthread_join(ft, NULL);
	orcu_barrier();
	orcu_get_stats(&st);
	printf("posted %ld, overruns %llu, waits %llu, peak %llu\n",
	       atomic_load(&posted), (unsigned long long)st.poster_overruns,
	       (unsigned long long)st.poster_waits,
	       (unsigned long long)st.peak_pending);
	CHECK_EQ(atomic_load(&doubles), 0);
	CHECK_EQ(atomic_load(&invoked), atomic_load(&posted));
	CHECK(st.poster_overruns > 0);
	CHECK(st.peak_pending > QMAX);   /* the overrun really went past QMAX */
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("flood_in_reader");
}
