/*
 * test_thread_cap_slots_served - past ORCU_MAX_THREADS a slot goes without
 * a follower and a group without a leader (DESIGN 6, "bounded threads");
 * their callbacks are still served, in place, with no barrier (DESIGN 5.8:
 * the GP thread serves them).  16 online slots in groups of 4 and
 * a cap of 4 library threads: the GP thread, one leader and two
 * followers.  20 callbacks posted on every slot must all run once within
 * 10 s (scaled), each slot's in posting order, and the thread count stays
 * within the cap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include <orcu/debug.h>

#include <stdatomic.h>

#include "check.h"

#define SLOTS 16
#define PER 20

static struct orcu_head heads[SLOTS][PER];
static atomic_int ran[SLOTS], invoked, out_of_order;

static void cb(struct orcu_head *h)
{
	int slot = (int)((h - &heads[0][0]) / PER), i = (int)((h - &heads[0][0]) % PER);

	if (atomic_fetch_add(&ran[slot], 1) != i)
		atomic_fetch_add(&out_of_order, 1);
	atomic_fetch_add(&invoked, 1);
}

int main(void)
{
	setenv("ORCU_CPUS", "possible=16,online=0-15", 1);
	setenv("ORCU_NOCB_STRIDE", "4", 1);
	setenv("ORCU_MAX_THREADS", "4", 1);
	for (int s = 0; s < SLOTS; s++) {
		CHECK_EQ(orcu_thread_bind_cpu(s), 0);
		for (int i = 0; i < PER; i++)
			orcu_call(&heads[s][i], cb);
	}
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == SLOTS * PER, 10);
	CHECK_EQ(atomic_load(&out_of_order), 0);
	CHECK_LE(orcu_debug_thread_count(), 4);
	TEST_PASS("thread_cap_slots_served");
}
