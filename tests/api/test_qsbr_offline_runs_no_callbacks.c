/*
 * test_qsbr_offline_runs_no_callbacks - in-place callbacks ran on a
 * qsbr thread after it went offline, where a callback's own read-side
 * section is not waited for by any GP.  Callbacks must run only in a
 * context a GP waits for.  In-place slots (ORCU_NOCBS=none); the callback
 * records any invocation on an offline qsbr thread.  Two paths:
 *  A. a qsbr thread that is offline posts while its slot has ready
 *     callbacks (orcu_call's inline poll);
 *  B. a qsbr thread calls orcu_thread_offline() while its slot has ready
 *     callbacks: they must run before it goes offline, not after.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"
#include "slot.h"

#include <pthread.h>
#include <stdatomic.h>

#include "check.h"

#define N 64

static struct orcu_head heads[3 * N];
static atomic_int invoked, unprotected, by_main;
static pthread_t main_thread;

static void cb(struct orcu_head *h)
{
	struct orcu__reader *r = &orcu__reader;

	(void)h;
	if (r->kind == ORCU__KIND_QSBR && atomic_load(&r->qs_seq) == 0)
		atomic_fetch_add(&unprotected, 1);
	if (pthread_equal(pthread_self(), main_thread))
		atomic_fetch_add(&by_main, 1);
	atomic_fetch_add(&invoked, 1);
}

struct post_arg { int first; };

/* An unregistered thread bound to slot 0 posts N callbacks there. */
static void *poster(void *p)
{
	struct post_arg *a = p;

	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	for (int i = 0; i < N; i++)
		orcu_call(&heads[a->first + i], cb);
	return NULL;
}

static void post_from_other_thread(int first)
{
	struct post_arg a = { first };
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, poster, &a), 0);
	pthread_join(t, NULL);
}

static int slot0_ready(void)
{
	return atomic_load(&orcu__slot_of(0)->inv.offered_ns) != 0;
}

int main(void)
{
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", "none", 1);
	/* Long enough that the slot's own threads are the invokers here; a
	 * barrier at the end is served by the takeover after it. */
	setenv("ORCU_INPLACE_TAKEOVER_MS", "3000", 1);
	main_thread = pthread_self();
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_register_thread_qsbr(), 0);

	/* A: offline, ready callbacks on our slot, then we post. */
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	orcu_thread_offline();
	post_from_other_thread(0);
	CHECK_WAIT_UNTIL(slot0_ready(), 20);
	orcu_call(&heads[2 * N], cb);
	CHECK_EQ(atomic_load(&unprotected), 0);
	orcu_thread_online();            /* online: now they may run here */
	CHECK(atomic_load(&by_main) > 0);

	/* B: online on slot 1 (announcing quiescent states so GPs end), the
	 * callbacks become ready on slot 0, then we go offline on slot 0. */
	CHECK_EQ(orcu_thread_bind_cpu(1), 0);
	post_from_other_thread(N);
	CHECK_WAIT_UNTIL((orcu_quiescent_state(), slot0_ready()), 20);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	atomic_store(&by_main, 0);
	orcu_thread_offline();
	CHECK_EQ(atomic_load(&unprotected), 0);
	CHECK(atomic_load(&by_main) > 0);  /* they ran, before going offline */

	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 2 * N + 1);
	CHECK_EQ(atomic_load(&unprotected), 0);
	orcu_unregister_thread();
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("qsbr_offline_runs_no_callbacks");
}
