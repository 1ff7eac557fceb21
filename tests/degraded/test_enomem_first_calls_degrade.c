/*
 * test_enomem_first_calls_degrade - the siblings of a lazy start short of
 * memory, for the calls that cannot return an error (DESIGN 6: "a call
 * that cannot return an error keeps working degraded and says so in one
 * line naming the call").  While every allocation of the calling thread
 * fails, the first orcu calls of a program are orcu_read_lock()/
 * orcu_read_unlock(), orcu_synchronize() and orcu_call() (NCB times):
 * none may abort.  The posts come last: a thread that waits serves what
 * was posted before (DESIGN-NOTES "Who serves what"), and would leave
 * the call below nothing to do.  Then allocation works again and the program makes one more
 * call, a different one per case, and otherwise only waits: every
 * callback must run once within 10 s (scaled), with no barrier, except in
 * the case whose one call is the barrier, which must return with all of
 * them run.
 *
 * Before the server rule: the first call aborted the process with
 * "orcu: cannot initialise (out of memory)".
 *
 * Under AddressSanitizer or ThreadSanitizer the allocator cannot be
 * interposed (their runtimes own malloc): the test says so and passes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>
#include <sys/wait.h>

#include "check.h"
#include "fail_alloc.h"

#define NCB 50

static struct orcu_head heads[NCB];
static atomic_int ran[NCB];
static atomic_int invoked;
static int then;

static void cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran[h - heads], 1);
	atomic_fetch_add(&invoked, 1);
}

enum { THEN_SYNC, THEN_POST, THEN_BARRIER, THEN_REGISTER, NR_THEN };
static const char *const then_name[] = { "orcu_synchronize", "orcu_call",
					  "orcu_barrier", "orcu_register_thread" };

static int child(void)
{
	static struct orcu_head extra;

	alarm((unsigned)check_timeout_s(60));
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	fail_alloc_arm(FAIL_FROM, 1);
	orcu_read_lock();
	orcu_read_unlock();
	orcu_synchronize();
	for (int i = 0; i < NCB; i++)
		orcu_call(&heads[i], cb);
	fail_alloc_disarm(NULL);
	CHILD_CHECK(1, atomic_load(&invoked) == 0);
	switch (then) {
	case THEN_SYNC:
		orcu_synchronize();
		break;
	case THEN_POST:
		orcu_call(&extra, cb);
		break;
	case THEN_BARRIER:
		orcu_barrier();
		CHILD_CHECK(2, atomic_load(&invoked) == NCB);
		break;
	case THEN_REGISTER:
		CHILD_CHECK(3, orcu_register_thread() == 0);
		break;
	}
	CHECK_WAIT_UNTIL(atomic_load(&invoked) >= NCB, 10);
	for (int i = 0; i < NCB; i++)
		CHILD_CHECK(4, atomic_load(&ran[i]) == 1);
	return 0;
}

int main(void)
{
	int failed = 0;

	if (!fail_alloc_supported()) {
		printf("SKIP enomem_first_calls_degrade: malloc cannot be interposed "
		       "under this sanitizer\n");
		return 0;
	}
	for (then = 0; then < NR_THEN; then++) {
		failed += !check_child_passed(check_fork_run(child), then_name[then], 60);
	}
	CHECK_EQ(failed, 0);
	TEST_PASS("enomem_first_calls_degrade");
}
