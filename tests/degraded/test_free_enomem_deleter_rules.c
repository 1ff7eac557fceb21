/*
 * test_free_enomem_deleter_rules.c - with no batch memory, orcu_retire()
 * waits for a grace period and runs the deleter on the caller's thread
 * (free.c point 4).  The deleter still runs as a callback does
 * (API.md): what a callback may not call (orcu_free, orcu_retire, the
 * calls that wait for callbacks) prints one line naming the call and
 * aborts, as it does when the deleter runs on an orcu thread, rather
 * than working here and aborting there.  Each case runs in a forked
 * child with stderr captured.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "fail_alloc.h"

#include <signal.h>

static void del_frees(void *p)
{
	free(p);
	orcu_free(malloc(16));
}

static void del_retires(void *p)
{
	free(p);
	orcu_retire(malloc(16), free);
}

static void del_barrier(void *p)
{
	free(p);
	orcu_barrier();
}

static int retire_no_memory(void *arg)
{
	void (*del)(void *) = (void (*)(void *))arg;
	void *p = malloc(32);

	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)check_timeout_s(20));
	orcu_barrier(); /* started: the library's own allocations are done */
	CHECK(p != NULL);
	fail_alloc_arm(FAIL_FROM, 1);
	orcu_retire(p, del);
	fail_alloc_disarm(NULL);
	return 0;
}

int main(void)
{
	test_watchdog("test_free_enomem_deleter_rules", 120);
	if (!fail_alloc_supported()) {
		printf("allocation failure cannot be injected in this build (sanitizer)\n");
		TEST_PASS("test_free_enomem_deleter_rules");
	}
	expect_child_abort("deleter frees", retire_no_memory, (void *)del_frees, "orcu_free");
	expect_child_abort("deleter retires", retire_no_memory, (void *)del_retires, "orcu_retire");
	expect_child_abort("deleter barrier", retire_no_memory, (void *)del_barrier, "orcu_barrier");
	TEST_PASS("test_free_enomem_deleter_rules");
}
