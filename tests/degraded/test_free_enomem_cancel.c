/*
 * test_free_enomem_cancel.c - with no batch memory, orcu_retire() waits
 * for a grace period and runs the deleter itself, on the caller's thread.
 * A pthread_cancel() never takes effect inside an orcu call (API.md,
 * "Cancellation"), so a thread with a cancel pending whose deleter
 * reaches a cancellation point (a log line would) is cancelled after
 * orcu_retire() returns, not inside it.
 */
#include <orcu.h>

#include "check.h"
#include "fail_alloc.h"

#include <stdatomic.h>

static atomic_int ready, cancel_sent, deleted, returned;

static void del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
	pthread_testcancel(); /* as write() or nanosleep() would */
}

static void *poster(void *a)
{
	void *p = malloc(32);

	(void)a;
	CHECK(p != NULL);
	atomic_store(&ready, 1);
	while (!atomic_load(&cancel_sent))
		; /* no cancellation point here */
	fail_alloc_arm(FAIL_FROM, 1);
	orcu_retire(p, del);
	fail_alloc_disarm(NULL);
	atomic_store(&returned, 1);
	/* The cancel takes effect here.  Not in pause(): ThreadSanitizer
	 * misses the locks of thread-exit destructors run from inside a
	 * blocking interceptor (google/sanitizers#646). */
	for (;;)
		pthread_testcancel();
	return NULL;
}

int main(void)
{
	pthread_t t;
	void *res;

	test_watchdog("test_free_enomem_cancel", 60);
	if (!fail_alloc_supported()) {
		printf("allocation failure cannot be injected in this build (sanitizer)\n");
		TEST_PASS("test_free_enomem_cancel");
	}
	orcu_barrier(); /* started: the library's own allocations are done */
	CHECK(pthread_create(&t, NULL, poster, NULL) == 0);
	CHECK_WAIT_UNTIL(atomic_load(&ready), 60);
	CHECK(pthread_cancel(t) == 0);
	atomic_store(&cancel_sent, 1);
	CHECK(pthread_join(t, &res) == 0);
	CHECK(res == PTHREAD_CANCELED);
	CHECK_EQ(atomic_load(&deleted), 1);
	/* Cancelled after orcu_retire() returned, not inside it. */
	CHECK_EQ(atomic_load(&returned), 1);
	TEST_PASS("test_free_enomem_cancel");
}
