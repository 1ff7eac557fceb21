/*
 * test_offload_toggle - run-time (de)offloading under load: slots flip
 * between offloaded (follower invokes) and inline (application threads
 * invoke, follower takes over) at random while readers and writers run.
 * Nothing lost, nothing run twice, nothing poisoned under a reader.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "scenario_load.h"

static void toggle_step(unsigned r)
{
	int cpu = (int)(r % LOAD_SLOTS);
	int ret = (r >> 4) & 1 ? orcu_cpu_offload(cpu) : orcu_cpu_deoffload(cpu);

	CHECK_EQ(ret, 0);
}

int main(void)
{
	setenv("ORCU_CPUS", "possible=8,online=0-7", 1);
	setenv("ORCU_NOCBS", "0-3", 1);
	setenv("ORCU_INPLACE_TAKEOVER_MS", "5", 1);
	load_run(4.0, toggle_step);
	TEST_PASS("offload_toggle");
}
