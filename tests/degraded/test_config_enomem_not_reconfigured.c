/*
 * test_config_enomem_not_reconfigured - a failed allocation while a valid
 * ORCU_CPUS is parsed and applied never leaves the library running on
 * another topology (DESIGN 6: "never a run with a different topology than
 * the one configured"; "a valid configuration is never replaced by
 * another one").
 *
 * ORCU_CPUS="possible=7,online=0-6" is valid (7 slots, all online; the
 * machine may have 2).  The allocator is interposed
 * (tests/support/fail_alloc.c): only the calling thread's allocations
 * during orcu_init(NULL) are counted and may fail.  A first child counts
 * them (T).  Then, each in a child, for n in 1..T: the nth allocation
 * fails, or the nth and every later one.  orcu_init() must return 0 or
 * -EAGAIN with the configured topology (orcu_get_stats(): 7 slots
 * possible, 7 online), or -ENOMEM, and then a second orcu_init(), with
 * allocation working, must return 0 and apply the configuration.
 *
 * On 9552413 the case where the parser's bitmap fails prints "ORCU_CPUS
 * ... ignored: out of memory", orcu_init() returns 0 and the process
 * runs on the machine's topology (slots_possible 2 on a 2-CPU machine,
 * not 7).
 *
 * Under AddressSanitizer or ThreadSanitizer the allocator cannot be
 * interposed (their runtimes own malloc): the test says so and passes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "fail_alloc.h"

#define CPUS "possible=7,online=0-6"
#define NR 7

static enum fail_alloc_mode mode;
static int nth;

/* 0 if the library runs on the configured topology; else says what. */
static int topology_ok(const char *when)
{
	struct orcu_stats st;

	orcu_get_stats(&st);
	if (st.slots_possible == NR && st.slots_online == NR)
		return 0;
	fprintf(stderr, "child: %s: %llu slots possible, %llu online; ORCU_CPUS=\"%s\" "
		"says %d and %d\n", when, (unsigned long long)st.slots_possible,
		(unsigned long long)st.slots_online, CPUS, NR, NR);
	return 1;
}

static int child(void)
{
	int ret, count;

	alarm((unsigned)check_timeout_s(60));
	setenv("ORCU_CPUS", CPUS, 1);
	unsetenv("ORCU_NOCBS");
	fail_alloc_arm(mode, nth);
	ret = orcu_init(NULL);
	count = fail_alloc_disarm(NULL);
	if (mode == FAIL_NONE) {
		CHILD_CHECK(1, ret == 0 && topology_ok("no failure") == 0);
		return count < 250 ? count : 250;   /* the exit status says T */
	}
	if (ret != 0 && ret != -EAGAIN && ret != -ENOMEM)
		fprintf(stderr, "child: orcu_init() returned %d\n", ret);
	CHILD_CHECK(2, ret == 0 || ret == -EAGAIN || ret == -ENOMEM);
	if (ret != -ENOMEM) {
		CHILD_CHECK(3, topology_ok("orcu_init() returned 0 or -EAGAIN") == 0);
		return 0;
	}
	ret = orcu_init(NULL);
	if (ret != 0)
		fprintf(stderr, "child: orcu_init() after -ENOMEM returned %d\n", ret);
	CHILD_CHECK(4, ret == 0);
	CHILD_CHECK(5, topology_ok("orcu_init() after -ENOMEM") == 0);
	return 0;
}

int main(void)
{
	if (!fail_alloc_supported()) {
		printf("SKIP config_enomem_not_reconfigured: malloc cannot be interposed "
		       "under this sanitizer\n");
		return 0;
	}
	fail_alloc_sweep(child, &mode, &nth, "orcu_init()", 2, 60);
	TEST_PASS("config_enomem_not_reconfigured");
}
