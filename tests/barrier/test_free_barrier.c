/*
 * test_free_barrier.c - every object handed to orcu_free(), orcu_retire()
 * or orcu_free_rcu() before orcu_barrier() is freed when it returns,
 * wherever it waits: in a full batch already posted, in the partial batch
 * of a thread that is still alive and idle, of a thread that exited, or
 * of the caller.  Then orcu_drain() with deleters that retire more
 * (orcu__retire_nb(), the non-blocking retire a deleter may call) returns
 * only when the chain is done.  Then the tick: a thread that retires a
 * few objects and stops posting has them deleted, with nobody calling a
 * barrier, within ORCU_LAZY_MS and a grace period.  Frees are counted by
 * an interposed free() (compiled out under sanitizers, whose runtimes own
 * free); deletes by the deleters.
 */
#include <orcu.h>

#include "check.h"

#include <stdatomic.h>
#include <stdint.h>

#define TAG 0x74616767656430ull   /* first word of the objects we count */

static atomic_long freed, deleted;

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
extern void __libc_free(void *p);
#define COUNT_FREES 1

void free(void *p)
{
	if (p && *(uint64_t *)p == TAG) {
		*(uint64_t *)p = 0;
		atomic_fetch_add_explicit(&freed, 1, memory_order_relaxed);
	}
	__libc_free(p);
}
#endif

struct obj {
	uint64_t tag;
	struct orcu_head head;
	long pad[4];
};

static struct obj *obj_new(void)
{
	struct obj *o = malloc(sizeof(*o));

	CHECK(o != NULL);
	o->tag = TAG;
	return o;
}

static void del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
}

/* Each poster hands over n objects of each kind, then either exits or
 * waits (alive, idle, its batches partial) until released. */
struct poster {
	pthread_t t;
	int n;
	bool stay;
	atomic_int posted, release;
};

static void *poster_main(void *a)
{
	struct poster *p = a;

	for (int i = 0; i < p->n; i++) {
		orcu_free(obj_new());
		orcu_retire(obj_new(), del);
		orcu_free_rcu(obj_new(), head);
	}
	atomic_store(&p->posted, 1);
	while (p->stay && !atomic_load(&p->release))
		sched_yield();
	return NULL;
}

/* Deleters that retire the next link, without blocking (a deleter runs
 * as a callback). */
static atomic_int chain_left;

static void chain_del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
	if (atomic_fetch_sub(&chain_left, 1) > 1)
		CHECK(orcu__retire_nb(obj_new(), chain_del) == 0);
}

static void barrier_case(void)
{
	/* Partial batches (7, 300), one full and a partial one (1500), on
	 * threads that stay and threads that exit. */
	struct poster ps[4] = {
		{ .n = 7, .stay = true }, { .n = 300, .stay = true },
		{ .n = 1500, .stay = false }, { .n = 7, .stay = false },
	};
	long total = 0, before_f, before_d;

	orcu_barrier();
	before_f = atomic_load(&freed);
	before_d = atomic_load(&deleted);
	(void)before_f;   /* without COUNT_FREES */
	for (int i = 0; i < 4; i++) {
		pthread_create(&ps[i].t, NULL, poster_main, &ps[i]);
		total += ps[i].n;
	}
	for (int i = 0; i < 4; i++)
		CHECK_WAIT_UNTIL(atomic_load(&ps[i].posted), 60);
	for (int i = 0; i < 4; i++)
		if (!ps[i].stay)
			pthread_join(ps[i].t, NULL);
	/* The caller's own partial batch too. */
	orcu_retire(obj_new(), del);
	orcu_free(obj_new());
	total += 1;
	orcu_barrier();
	printf("barrier: %ld retired, %ld deleted", total, atomic_load(&deleted) - before_d);
	CHECK_EQ(atomic_load(&deleted) - before_d, total);
#ifdef COUNT_FREES
	/* Three per poster round (orcu_free, orcu_free_rcu, the deleter of
	 * orcu_retire), two for the caller. */
	printf(", %ld freed of %ld", atomic_load(&freed) - before_f, 3 * (total - 1) + 2);
	CHECK_EQ(atomic_load(&freed) - before_f, 3 * (total - 1) + 2);
#endif
	printf("\n");
	for (int i = 0; i < 4; i++)
		if (ps[i].stay) {
			atomic_store(&ps[i].release, 1);
			pthread_join(ps[i].t, NULL);
		}
}

static void drain_case(void)
{
	long before = atomic_load(&deleted);

	atomic_store(&chain_left, 50);
	orcu_retire(obj_new(), chain_del);
	CHECK_EQ(orcu_drain((long)(check_timeout_s(60) * 1000)), 0);
	printf("drain: chain of %ld deleted\n", atomic_load(&deleted) - before);
	CHECK_EQ(atomic_load(&deleted) - before, 50);
}

static void *idle_poster(void *a)
{
	atomic_int *go = a;

	orcu_retire(obj_new(), del);
	orcu_retire(obj_new(), del);
	orcu_retire(obj_new(), del);
	atomic_store(&go[0], 1);
	while (!atomic_load(&go[1]))
		sched_yield();
	return NULL;
}

static void tick_case(void)
{
	long before = atomic_load(&deleted);
	atomic_int go[2] = { 0, 0 };
	pthread_t t;

	pthread_create(&t, NULL, idle_poster, go);
	CHECK_WAIT_UNTIL(atomic_load(&go[0]), 60);
	/* Nobody calls a barrier: the tick (ORCU_LAZY_MS=100) posts them. */
	CHECK_WAIT_UNTIL(atomic_load(&deleted) - before == 3, 30);
	printf("tick: 3 deleted with the poster idle\n");
	atomic_store(&go[1], 1);
	pthread_join(t, NULL);
}

int main(void)
{
	test_watchdog("test_free_barrier", 120);
	setenv("ORCU_LAZY_MS", "100", 1);
	CHECK(orcu_register_thread() == 0);
	barrier_case();
	drain_case();
	tick_case();
	TEST_PASS("test_free_barrier");
}
