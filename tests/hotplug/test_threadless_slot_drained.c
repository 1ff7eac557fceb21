/*
 * test_threadless_slot_drained - issue: a slot with no threads was drained
 * only by orcu_barrier(): callbacks posted by a thread bound to a
 * never-onlined slot waited forever, and a poster past ORCU_QMAX there
 * blocked forever.  Every posted callback is invoked within a bounded time
 * without anyone calling orcu_barrier(), the poster is never blocked, no
 * thread is created for the slot, and the slot is reported once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include <orcu/debug.h>

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

#define N 3000
#define SLOT 6

static struct orcu_head heads[N];
static atomic_int invoked, twice;
static unsigned char seen[N];

static void cb(struct orcu_head *h)
{
	if (seen[h - heads]++)
		atomic_fetch_add(&twice, 1);
	atomic_fetch_add(&invoked, 1);
}

int main(void)
{
	char names[8][32];
	struct orcu_stats st;

	test_watchdog("test_threadless_slot_drained (poster blocked or callbacks stranded?)", 60);
	setenv("ORCU_CPUS", "possible=8,online=0-1", 1);
	setenv("ORCU_QHIMARK", "100", 1);
	setenv("ORCU_QMAX", "400", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_thread_bind_cpu(SLOT), 0);
	for (int i = 0; i < N; i++)
		orcu_call(&heads[i], cb);          /* past QMAX: slowed, never stuck */
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == N, 30);
	CHECK_EQ(atomic_load(&twice), 0);
	/* An invoker counts a chain once its last callback returned: the
	 * count reaches 0 just after the callbacks ran. */
	CHECK_WAIT_UNTIL(orcu_slot_pending(SLOT) == 0, 20);
	CHECK_EQ(check_thread_names("orcu-oc/6", names, 8), 0);
	orcu_get_stats(&st);
	CHECK_EQ(st.slots_online, 2);
	CHECK_EQ(st.adopted_callbacks, N);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("threadless_slot_drained");
}
