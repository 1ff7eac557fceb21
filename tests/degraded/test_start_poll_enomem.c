/*
 * test_start_poll_enomem - orcu_start_poll() as the first call that needs
 * a grace period, while the start fails for want of memory.  A thread
 * that read (so a reader is registered and the GP is not skipped) asks
 * for a GP with orcu_start_poll(); no GP thread exists, so the request is
 * handed to another server (serve.c orcu__serve_gp_asked()).  Each
 * allocation of the calling thread in turn fails (fail_alloc_sweep()):
 * the call must not crash, and once memory is back an orcu_synchronize()
 * must complete the cookie.  Bound to CPU 1 of 4 possible, so the slot
 * it runs on is not slot 0.
 *
 * Before the fix: the hand-off looked up the caller's slot in a library
 * that was not configured: SIGFPE (no slot to divide by) when the
 * configuration could not be built, SIGSEGV when its slots could not be
 * allocated.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <sched.h>

#include "check.h"
#include "fail_alloc.h"

static enum fail_alloc_mode mode;
static int nth;

static int child(void)
{
	cpu_set_t set;
	unsigned long cookie;
	int count;

	alarm((unsigned)check_timeout_s(60));
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	/* A machine with one CPU keeps the thread where it is: still a
	 * case, on another slot. */
	(void)sched_setaffinity(0, sizeof(set), &set);
	fail_alloc_arm(mode, nth);
	orcu_read_lock();
	orcu_read_unlock();
	cookie = orcu_start_poll();
	count = fail_alloc_disarm(NULL);
	if (mode == FAIL_NONE)
		return count < 250 ? count : 250;   /* the exit status says T */
	orcu_synchronize();
	CHILD_CHECK(1, orcu_poll_state(cookie));
	return 0;
}

int main(void)
{
	if (!fail_alloc_supported()) {
		printf("SKIP start_poll_enomem: malloc cannot be interposed "
		       "under this sanitizer\n");
		return 0;
	}
	fail_alloc_sweep(child, &mode, &nth, "orcu_start_poll() at the lazy start", 1, 60);
	TEST_PASS("start_poll_enomem");
}
