/*
 * test_drain_chain - orcu_drain() waits for chained callbacks too: each
 * callback of a chain posts the next, so one barrier is not enough.
 *  - a 10-deep chain: orcu_drain(10000) == 0 and all 10 ran, in order;
 *  - a 20000-deep chain with a 1 ms budget: -ETIMEDOUT, and the state
 *    stays consistent: the chain keeps running, and a later
 *    orcu_drain() with room completes it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <errno.h>
#include <stdatomic.h>

#include "check.h"

struct chain {
	struct orcu_head head;
	long depth, target;
	atomic_long ran;
	atomic_int out_of_order;
};

static void link_cb(struct orcu_head *h)
{
	struct chain *c = (struct chain *)h;
	long ran = atomic_fetch_add(&c->ran, 1) + 1;

	if (ran != c->depth + 1)
		atomic_store(&c->out_of_order, 1);
	c->depth++;
	if (c->depth < c->target)
		orcu_call(&c->head, link_cb);   /* the same head, re-posted once run */
}

int main(void)
{
	static struct chain shortc = { .target = 10 }, longc = { .target = 20000 };
	struct orcu_stats st;
	int ret;

	CHECK_EQ(orcu_init(NULL), 0);

	orcu_call(&shortc.head, link_cb);
	CHECK_EQ(orcu_drain(10000), 0);
	CHECK_EQ(atomic_load(&shortc.ran), 10);
	CHECK_EQ(atomic_load(&shortc.out_of_order), 0);

	orcu_call(&longc.head, link_cb);
	ret = orcu_drain(1);
	CHECK_EQ(ret, -ETIMEDOUT);
	CHECK(atomic_load(&longc.ran) < longc.target);
	/* Still consistent: a barrier works and the chain keeps going. */
	orcu_barrier();
	CHECK_EQ(orcu_drain(-1), 0);
	CHECK_EQ(atomic_load(&longc.ran), longc.target);
	CHECK_EQ(atomic_load(&longc.out_of_order), 0);
	orcu_get_stats(&st);
	CHECK_EQ(st.callbacks_pending, 0);
	CHECK_EQ(st.callbacks_invoked, 10 + longc.target);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("drain_chain");
}
