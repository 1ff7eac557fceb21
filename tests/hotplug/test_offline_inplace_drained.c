/*
 * test_offline_inplace_drained - an in-place slot that goes offline keeps
 * its callbacks and the GP thread drains them at once, with no offer to
 * application threads (none comes by an offline slot; DESIGN 4: "no list
 * ever moves between slots").  Every slot is in place and the takeover
 * bound is a minute, so only the offline slot's own server may run them
 * in time: 200 callbacks posted on slot 2, which then goes offline, must
 * all run within 10 s (scaled) with no barrier and no quiescent state on
 * any slot, each on orcu-gp, in posting order.
 *
 * Before (9552413) they moved to another inline slot, where nothing ran
 * them before that slot's takeover, a minute later.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define N 200

static struct orcu_head heads[N];
static atomic_int invoked, out_of_order, elsewhere;

static void cb(struct orcu_head *h)
{
	char name[16] = "";

	pthread_getname_np(pthread_self(), name, sizeof(name));
	if (strcmp(name, "orcu-gp") != 0)
		atomic_fetch_add(&elsewhere, 1);
	if (h - heads != atomic_load(&invoked))
		atomic_fetch_add(&out_of_order, 1);
	atomic_fetch_add(&invoked, 1);
}

int main(void)
{
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_NOCBS", "none", 1);
	setenv("ORCU_INPLACE_TAKEOVER_MS", "60000", 1);
	CHECK_EQ(orcu_thread_bind_cpu(2), 0);
	for (int i = 0; i < N; i++)
		orcu_call(&heads[i], cb);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	CHECK_EQ(orcu_cpu_offline(2), 0);
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == N, 10);
	CHECK_EQ(atomic_load(&elsewhere), 0);
	CHECK_EQ(atomic_load(&out_of_order), 0);
	/* An invoker counts a chain once its last callback returned: the
	 * count reaches 0 just after the callbacks ran. */
	CHECK_WAIT_UNTIL(orcu_slot_pending(2) == 0, 20);
	TEST_PASS("offline_inplace_drained");
}
