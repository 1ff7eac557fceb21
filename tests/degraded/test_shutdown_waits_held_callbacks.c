/*
 * test_shutdown_waits_held_callbacks - orcu_shutdown() never returns 0
 * while callbacks are pending, also those a start short of memory left
 * on slot 0 (slot.h): it waits for them as orcu_drain(-1) does.  It used to return 0 at once, since nothing was configured yet,
 * and the held callbacks ran later.  In a child per case, the callbacks
 * are posted while every allocation of the posting thread fails, then:
 *   memory back   orcu_get_stats() counts them pending; the same thread,
 *                 allocating again, shuts down: every callback has run
 *                 when orcu_shutdown() returns 0;
 *   memory short  the posting thread shuts down still short of memory,
 *                 while another thread starts orcu: orcu_shutdown()
 *                 returns 0 only after every callback ran;
 *   never         no memory ever: orcu_barrier(), then orcu_shutdown(),
 *                 return with every callback run (the caller serves
 *                 slot 0, DESIGN-NOTES "Who serves what"), and orcu
 *                 was never configured (no slot but slot 0).
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

#define NCB 20

static struct orcu_head heads[NCB];
static atomic_int ran[NCB];
static atomic_int invoked, posted, ran_at_return = -1;

static void cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran[h - heads], 1);
	atomic_fetch_add(&invoked, 1);
}

static void post_short_of_memory(void)
{
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	fail_alloc_arm(FAIL_FROM, 1);
	for (int i = 0; i < NCB; i++)
		orcu_call(&heads[i], cb);
}

static int check_ran_once(int base)
{
	for (int i = 0; i < NCB; i++)
		CHILD_CHECK(base, atomic_load(&ran[i]) == 1);
	return 0;
}

static int memory_back(void)
{
	struct orcu_stats st;

	alarm((unsigned)check_timeout_s(60));
	post_short_of_memory();
	fail_alloc_disarm(NULL);
	CHILD_CHECK(1, atomic_load(&invoked) == 0);
	orcu_get_stats(&st);
	CHILD_CHECK(5, st.callbacks_pending == NCB);
	CHILD_CHECK(2, orcu_shutdown() == 0);
	CHILD_CHECK(3, atomic_load(&invoked) == NCB);
	return check_ran_once(4);
}

static void *short_shutdown(void *arg)
{
	(void)arg;
	post_short_of_memory();
	atomic_store(&posted, 1);
	CHILD_CHECK(11, orcu_shutdown() == 0);
	atomic_store(&ran_at_return, atomic_load(&invoked));
	fail_alloc_disarm(NULL);
	return NULL;
}

static int memory_short(void)
{
	pthread_t t;

	alarm((unsigned)check_timeout_s(60));
	CHILD_CHECK(10, pthread_create(&t, NULL, short_shutdown, NULL) == 0);
	CHECK_WAIT_UNTIL(atomic_load(&posted), 30);
	/* This thread has memory: its first call starts orcu. */
	orcu_synchronize();
	CHILD_CHECK(12, pthread_join(t, NULL) == 0);
	CHILD_CHECK(13, atomic_load(&ran_at_return) == NCB);
	return check_ran_once(14);
}

static int never(void)
{
	struct orcu_stats st;

	alarm((unsigned)check_timeout_s(60));
	post_short_of_memory();
	orcu_barrier();
	CHILD_CHECK(20, atomic_load(&invoked) == NCB);
	CHILD_CHECK(21, check_ran_once(22) == 0);
	CHILD_CHECK(23, orcu_shutdown() == 0);
	orcu_get_stats(&st);
	CHILD_CHECK(24, st.slots_possible == 1 && st.callbacks_pending == 0);
	fail_alloc_disarm(NULL);
	return 0;
}

int main(void)
{
	int failed = 0;

	if (!fail_alloc_supported()) {
		printf("SKIP shutdown_waits_held_callbacks: malloc cannot be interposed "
		       "under this sanitizer\n");
		return 0;
	}
	failed += !check_child_passed(check_fork_run(memory_back), "memory back", 60);
	failed += !check_child_passed(check_fork_run(memory_short), "memory short", 60);
	failed += !check_child_passed(check_fork_run(never), "never", 60);
	CHECK_EQ(failed, 0);
	TEST_PASS("shutdown_waits_held_callbacks");
}
