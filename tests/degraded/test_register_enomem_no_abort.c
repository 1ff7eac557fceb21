/*
 * test_register_enomem_no_abort - an allocation that fails during the lazy
 * start from orcu_register_thread() makes it return 0 or -ENOMEM, never
 * abort; once allocation works again orcu works fully (DESIGN 6: "an
 * allocation that fails during a start (lazy or orcu_init) makes that
 * start fail with -ENOMEM and be retried, never an abort").
 *
 * The allocator is interposed (tests/support/fail_alloc.c): only the
 * registering thread's allocations during the call are counted and may
 * fail.  A first child counts them (T) on a start that works.  Then, each
 * in a child, for n in 1..T: the nth allocation fails, or the nth and
 * every later one.  orcu_register_thread() must return 0 or -ENOMEM
 * (then a second call, with allocation working, returns 0); the thread
 * then posts NCB callbacks and only waits: every one must run, once,
 * within 10 s (scaled), with no barrier.
 *
 * On 9552413 the first few allocations (the configuration and the slots)
 * abort the process with "orcu: cannot initialise (out of memory)", a
 * line that names no call; the cases where a thread's start argument
 * fails leave the callbacks pending with no library thread (the rate
 * limited retry never comes: nothing posts or waits after the first
 * second).
 *
 * Under AddressSanitizer or ThreadSanitizer the allocator cannot be
 * interposed (their runtimes own malloc): the test says so and passes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include "orcu/debug.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "fail_alloc.h"

#define NCB 100

static struct orcu_head heads[NCB];
static atomic_int ran[NCB];
static atomic_int invoked;
static enum fail_alloc_mode mode;
static int nth;

static void cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran[h - heads], 1);
	atomic_fetch_add(&invoked, 1);
}

static void report(void)
{
	if (atomic_load(&invoked) != NCB)
		fprintf(stderr, "child: %d of %d callbacks invoked, %d library threads\n",
			atomic_load(&invoked), NCB, orcu_debug_thread_count());
}

static int child(void)
{
	int ret, count;

	alarm((unsigned)check_timeout_s(60));
	atexit(report);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	unsetenv("ORCU_NOCBS");
	fail_alloc_arm(mode, nth);
	ret = orcu_register_thread();
	count = fail_alloc_disarm(NULL);
	if (mode == FAIL_NONE)
		return count < 250 ? count : 250;   /* the exit status says T */
	if (ret != 0 && ret != -ENOMEM)
		fprintf(stderr, "child: orcu_register_thread() returned %d\n", ret);
	CHILD_CHECK(1, ret == 0 || ret == -ENOMEM);
	if (ret == -ENOMEM)
		CHILD_CHECK(2, orcu_register_thread() == 0);
	for (int i = 0; i < NCB; i++)
		orcu_call(&heads[i], cb);
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == NCB, 10);
	for (int i = 0; i < NCB; i++)
		CHILD_CHECK(3, atomic_load(&ran[i]) == 1);
	orcu_unregister_thread();
	return 0;
}

int main(void)
{
	if (!fail_alloc_supported()) {
		printf("SKIP register_enomem_no_abort: malloc cannot be interposed "
		       "under this sanitizer\n");
		return 0;
	}
	fail_alloc_sweep(child, &mode, &nth, "orcu_register_thread() at the lazy start", 1, 90);
	TEST_PASS("register_enomem_no_abort");
}
