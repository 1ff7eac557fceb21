/*
 * test_drain_chain - orcu_drain() waits for chained callbacks too: each
 * callback of a chain posts the next, so one barrier is not enough.
 *  - a 10-deep chain: orcu_drain(10000) == 0 and all 10 ran, in order;
 *  - a chain that runs until told to stop, its links hopping between the
 *    two slots (a thread serving them inline rebinds itself before each
 *    post): every orcu_drain(1) meanwhile returns -ETIMEDOUT, never 0 (a
 *    drain that read the slots' counts one slot after the other could
 *    miss the link in flight between them); once stopped, a barrier
 *    works and orcu_drain(-1) ends it, every link run once, in order.
 * The chain cannot end within a budget however fast grace periods are,
 * or however long this thread is preempted.
 */
#include <orcu.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"

#define DRAINS 1000

struct chain {
	struct orcu_head head;
	long depth, target; /* target 0: until `stop` */
	atomic_long ran;
	atomic_int out_of_order;
};

static atomic_int stop, serving = 1;
static atomic_long hops;

static void link_cb(struct orcu_head *h)
{
	struct chain *c = (struct chain *)h;
	long ran = atomic_fetch_add(&c->ran, 1) + 1;

	if (ran != c->depth + 1)
		atomic_store(&c->out_of_order, 1);
	c->depth++;
	if (c->target ? c->depth == c->target : atomic_load(&stop))
		return;
	if (!c->target) {
		int here = orcu_current_cpu();

		/* Inline on the server thread, this moves the next link to the
		 * other slot; on a library thread it changes nothing. */
		CHECK_EQ(orcu_thread_bind_cpu(1 - here), 0);
		atomic_fetch_add(&hops, orcu_current_cpu() != here);
	}
	orcu_call(&c->head, link_cb); /* the same head, re-posted once run */
}

/* Runs the inline slots' callbacks at its quiescent points. */
static void *server(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	while (atomic_load(&serving))
		orcu_quiescent_state();
	orcu_unregister_thread();
	return NULL;
}

int main(void)
{
	static struct chain shortc = { .target = 10 }, longc;
	/* Inline slots, served by the server thread: no takeover meanwhile. */
	struct orcu_config cfg = { .cpus = "possible=2,online=0-1", .nocbs = "none",
				   .inline_takeover_ms = 60000 };
	struct orcu_stats st;
	pthread_t t;

	CHECK_EQ(orcu_init(&cfg), 0);
	CHECK_EQ(pthread_create(&t, NULL, server, NULL), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0); /* posts where the server serves */
	orcu_call(&shortc.head, link_cb);
	CHECK_EQ(orcu_drain(10000), 0);
	CHECK_EQ(atomic_load(&shortc.ran), 10);
	CHECK_EQ(atomic_load(&shortc.out_of_order), 0);

	orcu_call(&longc.head, link_cb);
	CHECK_WAIT_UNTIL(atomic_load(&hops) >= 2, 60); /* it does hop */
	for (int i = 0; i < DRAINS; i++)
		CHECK_EQ(orcu_drain(1), -ETIMEDOUT);
	atomic_store(&stop, 1);
	orcu_barrier();
	CHECK_EQ(orcu_drain(-1), 0);
	atomic_store(&serving, 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(atomic_load(&longc.ran), longc.depth);
	CHECK_EQ(atomic_load(&longc.out_of_order), 0);
	orcu_get_stats(&st);
	CHECK_EQ(st.callbacks_pending, 0);
	CHECK_EQ(st.callbacks_invoked, 10 + longc.depth);
	printf("%ld links, %ld posted to the other slot\n", longc.depth, atomic_load(&hops));
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("drain_chain");
}
