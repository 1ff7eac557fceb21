/*
 * test_qsbr_call_announces_no_qs - issue: orcu_call() past ORCU_QMAX took
 * an online qsbr poster offline while it waited, an implicit quiescent
 * state: a GP could end while the poster still held references taken
 * since its last orcu_quiescent_state().  A call never announces a
 * quiescent state the caller did not ask for.  Oracle: the polled cookie
 * taken right after our "read" must not complete before we announce one.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>

#include "check.h"

#define QHIMARK 100
#define QMAX 200
#define NPOST (3 * QMAX)

static struct orcu_head heads[NPOST];
static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

int main(void)
{
	struct orcu_stats st;
	unsigned long cookie;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_QHIMARK", "100", 1);
	setenv("ORCU_QMAX", "200", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);

	/* "Read" a shared object; a GP that starts now must wait for our next
	 * quiescent state before it may end. */
	cookie = orcu_start_poll();
	for (int i = 0; i < NPOST; i++)
		orcu_call(&heads[i], cb);
	orcu_get_stats(&st);
	CHECK(st.poster_waits > 0);          /* the flood path really ran */
	CHECK(!orcu_poll_state(cookie));      /* ...without ending our GP */
	CHECK_EQ(atomic_load(&invoked), 0);   /* nor any GP our posts need */

	orcu_quiescent_state();
	orcu_barrier();
	CHECK(orcu_poll_state(cookie));
	CHECK_EQ(atomic_load(&invoked), NPOST);
	orcu_unregister_thread();
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("qsbr_call_announces_no_qs");
}
