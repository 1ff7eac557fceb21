/*
 * test_postq_wake.c - a post to a thread's own queue wakes a leader that
 * sleeps, with no fence on the post path (slot.c point 7,
 * models/postq_wake.pml): one callback at a time, each waited for (10 s
 * bound), so the leader goes to sleep between two posts and every post
 * must wake it.  The poster moves over 6 slots of 3 groups, more than
 * the 4 queues a thread owns, so first posts after a claim (which fence)
 * and posts to queues it owns already (which do not) both meet sleeping
 * leaders.  In forked children: with membarrier() (the leader's barrier
 * stands in for the posters' fence) and with ORCU_NO_MEMBARRIER=1 (the
 * posters fence).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"

#define ROUNDS 3000
#define NSLOTS 6

static atomic_long invoked;
static struct orcu_head heads[ROUNDS];

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

static int wake_child(void *arg)
{
	struct orcu_stats st;

	if (arg)
		setenv("ORCU_NO_MEMBARRIER", "1", 1);
	setenv("ORCU_CPUS", "possible=6,online=0-5", 1);
	setenv("ORCU_NOCBS", "all", 1);
	setenv("ORCU_NOCB_STRIDE", "2", 1);
	for (long i = 0; i < ROUNDS; i++) {
		CHECK_EQ(orcu_thread_bind_cpu((int)((i / 3) % NSLOTS)), 0);
		orcu_call(&heads[i], cb);
		CHECK_WAIT_UNTIL(atomic_load(&invoked) == i + 1, 10);
	}
	orcu_get_stats(&st);
	printf("%s: %d posts, each invoked; %llu leader wake-ups by posters\n",
	       arg ? "ORCU_NO_MEMBARRIER=1" : "membarrier", ROUNDS,
	       (unsigned long long)st.enqueue_wakeups);
	fflush(stdout);
	return st.enqueue_wakeups > 0 ? 0 : 2;
}

int main(void)
{
	struct child_result r;

	test_watchdog("test_postq_wake", 240);
	for (int nomb = 0; nomb < 2; nomb++) {
		run_child(wake_child, nomb ? (void *)1 : NULL, 100, &r);
		if (r.lines)
			printf("%s", r.err);
		CHECK(WIFEXITED(r.status));
		CHECK_EQ(WEXITSTATUS(r.status), 0);
	}
	TEST_PASS("test_postq_wake");
}
