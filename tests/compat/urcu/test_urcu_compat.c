/*
 * test_urcu_compat.c - a program written against liburcu, in the style of
 * liburcu's own benchmark tests: reader threads dereference a shared
 * pointer, writer threads replace it and reclaim the old value with
 * synchronize_rcu(), call_rcu() or defer_rcu().  Built three ways from this
 * one source, changing only the include line:
 *   ORCU_COMPAT          <orcu/urcu-compat.h>   (the test; memb)
 *   ORCU_COMPAT+ORCU_QSBR <orcu/urcu-compat.h>  (the test; qsbr semantics)
 *   neither              <urcu.h> / <urcu-qsbr.h> (liburcu itself: built,
 *                        proving the source really is a liburcu program)
 * A reader that ever sees a reclaimed value (poisoned to 0 before free, so
 * it shows even without AddressSanitizer) fails the run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(ORCU_COMPAT)
#include <orcu/urcu-compat.h>
#elif defined(TEST_QSBR)
#include <urcu-qsbr.h>
#else
#include <urcu.h>
#endif
#include <urcu/tls-compat.h>

#if defined(ORCU_QSBR) || defined(TEST_QSBR)
#define QSBR 1
#else
#define QSBR 0
#endif

#define FAIL(...) do { \
	fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	exit(1); \
} while (0)
#define CHECK(c) do { if (!(c)) FAIL("CHECK failed: %s", #c); } while (0)

#define NR_READERS 3
#define NR_WRITERS 2
#define SYNC_UPDATES 300      /* per writer, each with synchronize_rcu() */
#define CB_UPDATES 20000      /* per writer, each with call_rcu() */
#define DEFER_UPDATES 2000    /* per writer, each with defer_rcu() */
#define MAGIC 8

struct item {
	int value;                /* MAGIC while published, 0 once reclaimed */
	struct rcu_head rcu;
};

static struct item *test_rcu_pointer;
static int stop_readers;
static unsigned long nr_callbacks, nr_deferred;
static DEFINE_URCU_TLS(unsigned long long, nr_reads);
static unsigned long long total_reads;

static struct item *new_item(void)
{
	struct item *it = malloc(sizeof(*it));

	CHECK(it != NULL);
	it->value = MAGIC;
	return it;
}

static void poison_free(struct item *it)
{
	if (!it)
		return;
	CHECK(it->value == MAGIC);   /* reclaimed once only */
	it->value = 0;
	free(it);
}

static void free_item_cb(struct rcu_head *head)
{
	poison_free(caa_container_of(head, struct item, rcu));
	uatomic_inc(&nr_callbacks);
}

static void free_item_deferred(void *p)
{
	poison_free(p);
	uatomic_inc(&nr_deferred);
}

static void *thr_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
#if QSBR
	CHECK(rcu_read_ongoing());       /* qsbr: online once registered */
#else
	CHECK(!rcu_read_ongoing());
#endif
	while (!CMM_LOAD_SHARED(stop_readers)) {
		struct item *local;

		rcu_read_lock();
		CHECK(rcu_read_ongoing());
		local = rcu_dereference(test_rcu_pointer);
		if (local && local->value != MAGIC)
			FAIL("reader saw a reclaimed item (value %d)", local->value);
		rcu_read_unlock();
		URCU_TLS(nr_reads)++;
#if QSBR
		if ((URCU_TLS(nr_reads) & 1023) == 0)
			rcu_quiescent_state();
		if ((URCU_TLS(nr_reads) & 65535) == 0) {
			rcu_thread_offline();
			CHECK(!rcu_read_ongoing());
			sched_yield();
			rcu_thread_online();
			CHECK(rcu_read_ongoing());
		}
#endif
	}
	uatomic_add(&total_reads, URCU_TLS(nr_reads));
	rcu_unregister_thread();
	return NULL;
}

static void *thr_writer(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_defer_register_thread();
	for (int i = 0; i < SYNC_UPDATES; i++) {
		struct item *old = rcu_xchg_pointer(&test_rcu_pointer, new_item());

		synchronize_rcu();
		poison_free(old);
	}
	for (int i = 0; i < CB_UPDATES; i++) {
		struct item *old = rcu_xchg_pointer(&test_rcu_pointer, new_item());

		if (old)
			call_rcu(&old->rcu, free_item_cb);
#if QSBR
		if ((i & 255) == 0)
			rcu_quiescent_state();
#endif
	}
#if QSBR
	rcu_thread_offline();   /* defer_rcu may wait for a grace period */
#endif
	for (int i = 0; i < DEFER_UPDATES; i++) {
		struct item *old = rcu_xchg_pointer(&test_rcu_pointer, new_item());

		if (old)
			defer_rcu(free_item_deferred, old);
	}
#if QSBR
	rcu_thread_online();
#endif
	rcu_defer_unregister_thread();
	rcu_unregister_thread();
	return NULL;
}

/* The pointer calls and the liburcu names a program meets around them. */
static void check_pointer_api(void)
{
	struct item *a = new_item(), *b = new_item(), *slot = NULL, *old;

	rcu_set_pointer(&slot, a);
	CHECK(slot == a);
	old = rcu_cmpxchg_pointer(&slot, b, b);   /* expects b: fails */
	CHECK(old == a && slot == a);
	old = rcu_cmpxchg_pointer(&slot, a, b);   /* expects a: succeeds */
	CHECK(old == a && slot == b);
	rcu_assign_pointer(slot, a);
	CHECK(rcu_dereference(slot) == a);
	CHECK(rcu_xchg_pointer(&slot, NULL) == a);
	synchronize_rcu();
	poison_free(a);
	poison_free(b);
	cmm_smp_mb();
}

#ifdef ORCU_COMPAT
/* call_rcu_data pools are documented no-ops; polled grace periods. */
static void check_orcu_extras(void)
{
	struct call_rcu_data *crdp = create_call_rcu_data(0, -1);
	struct item *it = new_item();
	struct urcu_gp_poll_state s;
	time_t deadline = time(NULL) + 120;

	CHECK(crdp != NULL);
	CHECK(get_default_call_rcu_data() != NULL);
	CHECK(create_all_cpu_call_rcu_data(0) == 0);
	set_thread_call_rcu_data(crdp);
	call_rcu(&it->rcu, free_item_cb);
	set_thread_call_rcu_data(NULL);
	call_rcu_data_free(crdp);
	free_all_cpu_call_rcu_data();
	rcu_barrier();
	CHECK(uatomic_read(&nr_callbacks) == 1);

	s = start_poll_synchronize_rcu();
#if QSBR
	rcu_thread_offline();
#endif
	while (!poll_state_synchronize_rcu(s)) {
		struct timespec ts = { 0, 1000000 };

		CHECK(time(NULL) < deadline);
		nanosleep(&ts, NULL);
	}
#if QSBR
	rcu_thread_online();
#endif
	s = get_state_synchronize_rcu();
	synchronize_rcu();
	CHECK(poll_state_synchronize_rcu(s));
	uatomic_set(&nr_callbacks, 0);
}
#endif

int main(void)
{
	pthread_t r[NR_READERS], w[NR_WRITERS];

	rcu_register_thread();
#if QSBR
	CHECK(rcu_read_ongoing());
	rcu_thread_offline();
	CHECK(!rcu_read_ongoing());
	rcu_thread_online();
#endif
	check_pointer_api();
#ifdef ORCU_COMPAT
	check_orcu_extras();
#endif
#if QSBR
	rcu_thread_offline();   /* main only waits from here on */
#endif
	for (int i = 0; i < NR_READERS; i++)
		CHECK(pthread_create(&r[i], NULL, thr_reader, NULL) == 0);
	for (int i = 0; i < NR_WRITERS; i++)
		CHECK(pthread_create(&w[i], NULL, thr_writer, NULL) == 0);
	for (int i = 0; i < NR_WRITERS; i++)
		CHECK(pthread_join(w[i], NULL) == 0);
	CMM_STORE_SHARED(stop_readers, 1);
	for (int i = 0; i < NR_READERS; i++)
		CHECK(pthread_join(r[i], NULL) == 0);
	poison_free(rcu_xchg_pointer(&test_rcu_pointer, NULL));
	rcu_barrier();
	rcu_defer_barrier();
#if QSBR
	rcu_thread_online();
#endif
	/* Every old item went through exactly one reclaim path. */
	CHECK(uatomic_read(&nr_callbacks) == (unsigned long)NR_WRITERS * CB_UPDATES);
	CHECK(uatomic_read(&nr_deferred) == (unsigned long)NR_WRITERS * DEFER_UPDATES);
	CHECK(total_reads > 0);
#if QSBR
	rcu_unregister_thread();
	CHECK(!rcu_read_ongoing());
#else
	rcu_unregister_thread();
#endif
	printf("PASS urcu-style program (%s): %llu reads, %d updates\n",
	       QSBR ? "qsbr" : "memb", total_reads,
	       NR_WRITERS * (SYNC_UPDATES + CB_UPDATES + DEFER_UPDATES));
	return 0;
}
