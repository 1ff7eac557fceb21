/*
 * test_nocb_poll - ORCU_NOCB_POLL=1: leaders poll instead of sleeping, so
 * posters never wake them (stats.enqueue_wakeups stays 0), yet callbacks
 * from every slot still run without any barrier, and orcu_barrier() works.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>

#include "check.h"

#define NSLOTS 16
#define PER 100

static struct orcu_head heads[2][NSLOTS][PER];
static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

static void post_all(int round)
{
	for (int c = 0; c < NSLOTS; c++) {
		CHECK_EQ(orcu_thread_bind_cpu(c), 0);
		for (int i = 0; i < PER; i++)
			orcu_call(&heads[round][c][i], cb);
	}
	orcu_thread_bind_cpu(-1);
}

int main(void)
{
	struct orcu_stats st;

	setenv("ORCU_CPUS", "possible=16,online=0-15", 1);
	setenv("ORCU_NOCB_POLL", "1", 1);
	unsetenv("ORCU_NOCBS");
	CHECK_EQ(orcu_init(NULL), 0);

	/* No barrier, no synchronize: the polling leaders find them. */
	post_all(0);
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == NSLOTS * PER, 20);

	post_all(1);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 2 * NSLOTS * PER);

	orcu_get_stats(&st);
	CHECK_EQ(st.enqueue_wakeups, 0);
	CHECK_EQ(st.callbacks_pending, 0);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("nocb_poll");
}
