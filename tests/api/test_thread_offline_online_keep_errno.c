/*
 * test_thread_offline_online_keep_errno - orcu_thread_offline() and
 * orcu_thread_online() leave errno as they found it, so they can bracket
 * a blocking call whose errno is read after them:
 *
 *	orcu_thread_offline();
 *	n = epoll_wait(ep, ev, 16, -1);
 *	orcu_thread_online();
 *	if (n < 0 && errno == EINTR) ...
 *
 * Both are quiescent points, where an application thread may run ready
 * callbacks of its inline slot, and a callback may set errno.  A qsbr
 * thread on an inline slot (ORCU_NOCBS=none) posts callbacks that set
 * errno to ENOENT, then goes offline and online with errno set to EINTR
 * before each call until every callback has run, on its own quiescent
 * points (at least one); errno must still be EINTR after every call.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"

#define N 64

static struct orcu_head heads[N];
static atomic_int ran, ran_here;
static pthread_t app;

static void sets_errno(struct orcu_head *h)
{
	(void)h;
	if (pthread_equal(pthread_self(), app))
		atomic_fetch_add(&ran_here, 1);
	atomic_fetch_add(&ran, 1);
	errno = ENOENT;
}

/* One offline/online pair, errno set to EINTR before each call and
 * checked after it; true once every callback has run. */
static bool pair_keeps_errno(void)
{
	errno = EINTR;
	orcu_thread_offline();
	CHECK_EQ(errno, EINTR);
	errno = EINTR;
	orcu_thread_online();
	CHECK_EQ(errno, EINTR);
	return atomic_load(&ran) == N;
}

static void *qsbr_app(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	for (int i = 0; i < N; i++)
		orcu_call(&heads[i], sets_errno);
	/* Bounded: every pass is a quiescent point of this thread. */
	CHECK_WAIT_UNTIL(pair_keeps_errno(), 30);
	CHECK(atomic_load(&ran_here) > 0);
	printf("%d of %d callbacks ran on this thread's quiescent points, errno kept\n",
	       atomic_load(&ran_here), N);
	orcu_thread_offline();
	orcu_unregister_thread();
	return NULL;
}

int main(void)
{
	setenv("ORCU_CPUS", "possible=1,online=0", 1);
	setenv("ORCU_NOCBS", "none", 1);
	/* The follower would run them elsewhere after this long. */
	setenv("ORCU_INLINE_TAKEOVER_MS", "60000", 1);
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(pthread_create(&app, NULL, qsbr_app, NULL), 0);
	CHECK_EQ(pthread_join(app, NULL), 0);
	orcu_barrier();
	CHECK_EQ(atomic_load(&ran), N);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_thread_offline_online_keep_errno");
}
