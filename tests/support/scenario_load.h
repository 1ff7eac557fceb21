/*
 * scenario_load.h - the shared workload of test_hotplug_load and
 * test_offload_toggle: memb and qsbr readers traverse a table of published
 * elements and check each one is not poisoned; writers bound to changing
 * slots replace elements and orcu_call() the old ones, whose callback
 * poisons them (never freeing: the pool outlives the run, so a premature
 * callback shows as poison seen by a reader rather than as a crash).  Every
 * element's callback is counted through its own flag: lost and doubled
 * invocations are both caught.  A "chaos" function supplied by the test
 * (hotplug, or (de)offloading) runs meanwhile in its own thread.
 */
#ifndef ORCU_TEST_SCENARIO_LOAD_H
#define ORCU_TEST_SCENARIO_LOAD_H

#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include "check.h"

#define LOAD_TABLE 64
#define LOAD_POOL 300000
#define LOAD_LIVE 0x11fe11feu
#define LOAD_POISON 0xdeaddeadu
#define LOAD_SLOTS 8

struct load_elem {
	struct orcu_head head;
	_Atomic unsigned magic;
	atomic_int invoked;             /* callbacks seen for this element */
	int retired;                    /* set by the writer before orcu_call */
};

static struct load_elem *load_pool;
static atomic_long load_next;           /* next pool index to hand out */
static struct load_elem *_Atomic load_table[LOAD_TABLE];
static atomic_int load_stop;
static atomic_long load_posted, load_invoked, load_doubles, load_bad_reads,
	load_reads, load_chaos_ops;

static void load_cb(struct orcu_head *h)
{
	struct load_elem *e = (struct load_elem *)h;

	if (atomic_fetch_add(&e->invoked, 1) != 0)
		atomic_fetch_add(&load_doubles, 1);
	atomic_store_explicit(&e->magic, LOAD_POISON, memory_order_relaxed);
	atomic_fetch_add(&load_invoked, 1);
}

static struct load_elem *load_alloc(void)
{
	long i = atomic_fetch_add(&load_next, 1);

	if (i >= LOAD_POOL)
		return NULL;
	atomic_store_explicit(&load_pool[i].magic, LOAD_LIVE, memory_order_relaxed);
	return &load_pool[i];
}

static void load_check(struct load_elem *e)
{
	if (e && atomic_load_explicit(&e->magic, memory_order_relaxed) != LOAD_LIVE)
		atomic_fetch_add(&load_bad_reads, 1);
}

static void *load_memb_reader(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;

	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load_explicit(&load_stop, memory_order_relaxed)) {
		orcu_read_lock();
		for (int i = 0; i < 8; i++) {
			struct load_elem *e = orcu_dereference(load_table[(k + i) % LOAD_TABLE]);

			load_check(e);
			sched_yield();             /* widen the window now and then */
			load_check(e);
		}
		orcu_read_unlock();
		k = k * 1103515245u + 12345u;
		atomic_fetch_add_explicit(&load_reads, 1, memory_order_relaxed);
	}
	orcu_unregister_thread();
	return NULL;
}

static void *load_qsbr_reader(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;

	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	while (!atomic_load_explicit(&load_stop, memory_order_relaxed)) {
		for (int i = 0; i < 16; i++) {
			struct load_elem *e = orcu_dereference(load_table[(k + i) % LOAD_TABLE]);

			load_check(e);
		}
		k = k * 1103515245u + 12345u;
		/* Announce a QS; on inline slots this also runs callbacks. */
		orcu_quiescent_state();
		atomic_fetch_add_explicit(&load_reads, 1, memory_order_relaxed);
	}
	orcu_thread_offline();
	orcu_unregister_thread();
	return NULL;
}

static void *load_writer(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg * 7919u + 1;

	while (!atomic_load_explicit(&load_stop, memory_order_relaxed)) {
		struct load_elem *e = load_alloc(), *old;

		if (!e)
			break;
		r = r * 1103515245u + 12345u;
		/* Post from a slot that may be offline/inline right now. */
		CHECK_EQ(orcu_thread_bind_cpu((int)((r >> 16) % LOAD_SLOTS)), 0);
		old = orcu_xchg_pointer(&load_table[(r >> 8) % LOAD_TABLE], e);
		if (old) {
			old->retired = 1;
			atomic_fetch_add(&load_posted, 1);
			orcu_call(&old->head, load_cb);
		}
		if ((r & 0x700) == 0) {
			/* Pace: the pool lasts the run, GPs and chaos interleave. */
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	}
	orcu_thread_bind_cpu(-1);
	return NULL;
}

struct load_chaos_arg {
	void (*step)(unsigned rnd);
};

static void *load_chaos(void *arg)
{
	struct load_chaos_arg *ca = arg;
	unsigned r = 12345;

	while (!atomic_load_explicit(&load_stop, memory_order_relaxed)) {
		struct timespec ts = { 0, 300000 };

		r = r * 1103515245u + 12345u;
		ca->step(r >> 8);
		atomic_fetch_add(&load_chaos_ops, 1);
		if ((r & 0x3f00) == 0)
			orcu_barrier();            /* barriers interleave with chaos */
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Run the workload for `seconds` with the chaos step; check everything. */
static void load_run(double seconds, void (*step)(unsigned))
{
	enum { NMEMB = 2, NQSBR = 1, NWRITERS = 2 };
	pthread_t memb[NMEMB], qsbr[NQSBR], wr[NWRITERS], chaos;
	struct load_chaos_arg ca = { step };
	struct orcu_stats st;
	double end;
	long used;

	load_pool = calloc(LOAD_POOL, sizeof(*load_pool));
	CHECK(load_pool != NULL);
	for (int i = 0; i < LOAD_TABLE; i++)
		atomic_store(&load_table[i], load_alloc());
	for (int i = 0; i < NMEMB; i++)
		CHECK_EQ(pthread_create(&memb[i], NULL, load_memb_reader, (void *)(uintptr_t)(i + 1)), 0);
	for (int i = 0; i < NQSBR; i++)
		CHECK_EQ(pthread_create(&qsbr[i], NULL, load_qsbr_reader, (void *)(uintptr_t)(i + 7)), 0);
	for (int i = 0; i < NWRITERS; i++)
		CHECK_EQ(pthread_create(&wr[i], NULL, load_writer, (void *)(uintptr_t)(i + 3)), 0);
	CHECK_EQ(pthread_create(&chaos, NULL, load_chaos, &ca), 0);

	end = check_now_s() + seconds;
	while (check_now_s() < end && atomic_load(&load_next) < LOAD_POOL) {
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
	atomic_store(&load_stop, 1);
	for (int i = 0; i < NWRITERS; i++)
		pthread_join(wr[i], NULL);
	pthread_join(chaos, NULL);
	for (int i = 0; i < NMEMB; i++)
		pthread_join(memb[i], NULL);
	for (int i = 0; i < NQSBR; i++)
		pthread_join(qsbr[i], NULL);

	/* Everything posted before the barrier has been invoked after it. */
	orcu_barrier();
	used = atomic_load(&load_next) < LOAD_POOL ? atomic_load(&load_next) : LOAD_POOL;
	printf("posted %ld invoked %ld reads %ld chaos ops %ld\n",
	       atomic_load(&load_posted), atomic_load(&load_invoked),
	       atomic_load(&load_reads), atomic_load(&load_chaos_ops));
	CHECK_EQ(atomic_load(&load_bad_reads), 0);   /* no use after "free" */
	CHECK_EQ(atomic_load(&load_doubles), 0);     /* nothing ran twice */
	CHECK_EQ(atomic_load(&load_invoked), atomic_load(&load_posted));
	for (long i = 0; i < used; i++) {
		struct load_elem *e = &load_pool[i];

		/* Each retired element exactly once; published ones never. */
		CHECK_EQ(atomic_load(&e->invoked), e->retired ? 1 : 0);
	}
	CHECK(atomic_load(&load_posted) > 1000);
	CHECK(atomic_load(&load_chaos_ops) > 10);
	orcu_get_stats(&st);
	CHECK_EQ(st.callbacks_pending, 0);
	CHECK_EQ(orcu_shutdown(), 0);
	free(load_pool);
}

#endif
