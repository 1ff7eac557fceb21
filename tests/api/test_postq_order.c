/*
 * test_postq_order.c - callbacks posted through threads' own queues
 * (slot.c point 7) run once each, and the callbacks one thread posts on
 * one slot run in the order it posted them, whichever way each went:
 *  - 4 threads move over 6 slots, more than the 4 queues a thread owns,
 *    posting bursts on each: a thread finds its queue again when it comes
 *    back, posts to the shared queue where it owns none, and claims a new
 *    queue once one of its own has been taken in full;
 *  - some bursts are posted inside a read-side section, so their
 *    callbacks are still pending when the thread moves on;
 *  - a thread exits with callbacks still pending in its queues: they run,
 *    and a new thread on the same slots claims the queues it left (they
 *    are not made again) and its callbacks follow in order;
 *  - at the end one barrier covers everything, nothing is pending, and
 *    orcu_drain() finds nothing left.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"
#include "postq.h"
#include "slot.h"

#define NSLOTS 6
#define NTHREADS 4
#define ROUNDS 40
#define BURST 97

struct cb {
	struct orcu_head h;
	int owner, slot;        /* owner: poster index (NTHREADS + k for late ones) */
	long seq;
};

#define NOWNERS (NTHREADS + 2)
static atomic_long last_seq[NOWNERS][NSLOTS];
static atomic_long invoked, posted, out_of_order;

static void cb_fn(struct orcu_head *h)
{
	struct cb *c = (struct cb *)h;
	long prev = atomic_exchange(&last_seq[c->owner][c->slot], c->seq);

	if (prev >= c->seq)
		atomic_fetch_add(&out_of_order, 1);
	atomic_fetch_add(&invoked, 1);
	free(c);
}

static void post_burst(int owner, int slot, long *seq, int n)
{
	for (int i = 0; i < n; i++) {
		struct cb *c = malloc(sizeof(*c));

		CHECK(c != NULL);
		c->owner = owner;
		c->slot = slot;
		c->seq = ++seq[slot];
		atomic_fetch_add(&posted, 1);
		orcu_call(&c->h, cb_fn);
	}
}

struct poster_arg {
	int owner;
	int rounds;
	bool exit_pending;     /* leave with callbacks pending */
};

static void *poster(void *p)
{
	struct poster_arg *a = p;
	long seq[NSLOTS] = { 0 };
	unsigned r = (unsigned)a->owner * 7919u + 1;

	for (int round = 0; round < a->rounds; round++) {
		int slot = (a->owner + round) % NSLOTS;
		bool in_section = (rand_r(&r) % 3) == 0;

		CHECK_EQ(orcu_thread_bind_cpu(slot), 0);
		if (in_section)
			orcu_read_lock();
		post_burst(a->owner, slot, seq, 1 + (int)(rand_r(&r) % BURST));
		/* Sometimes come back to the slot before last at once. */
		if (rand_r(&r) % 4 == 0) {
			int back = (slot + NSLOTS - 1) % NSLOTS;

			CHECK_EQ(orcu_thread_bind_cpu(back), 0);
			post_burst(a->owner, back, seq, 1 + (int)(rand_r(&r) % 8));
		}
		if (in_section)
			orcu_read_unlock();
	}
	if (a->exit_pending) {
		/* Inside a section, the callbacks cannot run before we exit. */
		orcu_read_lock();
		CHECK_EQ(orcu_thread_bind_cpu(0), 0);
		post_burst(a->owner, 0, seq, BURST);
		orcu_read_unlock();
	}
	orcu_unregister_thread();
	return NULL;
}

static long queues_on(int slot)
{
	long n = 0;

	for (struct orcu__postq *q = orcu__load_acquire(&orcu__slot_of(slot)->st.postqs); q; q = q->next)
		n++;
	return n;
}

int main(void)
{
	struct poster_arg args[NOWNERS];
	pthread_t t[NOWNERS];
	struct orcu_stats st;
	long before;

	test_watchdog("test_postq_order", 120);
	setenv("ORCU_CPUS", "possible=8,online=0-7", 1);
	setenv("ORCU_NOCBS", "all", 1);
	CHECK_EQ(orcu_init(NULL), 0);
	for (int i = 0; i < NTHREADS; i++) {
		args[i] = (struct poster_arg){ i, ROUNDS, i == 0 };
		CHECK_EQ(pthread_create(&t[i], NULL, poster, &args[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	/* Thread 0 left pending callbacks on slot 0; new threads take the
	 * queues left behind instead of making more. */
	before = queues_on(0);
	for (int i = NTHREADS; i < NOWNERS; i++) {
		args[i] = (struct poster_arg){ i, 1, false };
		CHECK_EQ(pthread_create(&t[i], NULL, poster, &args[i]), 0);
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	}
	CHECK_EQ(queues_on(0), before);
	orcu_barrier();
	orcu_get_stats(&st);
	printf("posted %ld, invoked %ld, out of order %ld, pending %llu, queues on slot 0: %ld\n",
	       atomic_load(&posted), atomic_load(&invoked), atomic_load(&out_of_order),
	       (unsigned long long)st.callbacks_pending, queues_on(0));
	CHECK_EQ(atomic_load(&out_of_order), 0);
	CHECK_EQ(atomic_load(&invoked), atomic_load(&posted));
	CHECK_EQ(st.callbacks_pending, 0);
	CHECK_EQ(orcu_drain(10000), 0);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_postq_order");
}
