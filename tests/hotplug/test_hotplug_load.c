/*
 * test_hotplug_load - callbacks survive CPU hotplug under load.  A
 * possible=8 virtual topology with mixed offloading (slots 0-3,6
 * offloaded, 4,5,7 inline); slots 1..7 go offline and online at random
 * while readers (memb and qsbr) read and writers bound to changing slots
 * replace elements and orcu_call() the old ones.  Nothing lost, nothing
 * run twice, nothing poisoned while a reader could see it (scenario_load.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "scenario_load.h"

static void hotplug_step(unsigned r)
{
	int cpu = 1 + (int)(r % 7);
	int ret = (r >> 4) & 1 ? orcu_cpu_online(cpu) : orcu_cpu_offline(cpu);

	CHECK(ret == 0 || ret == -EBUSY);
}

int main(void)
{
	setenv("ORCU_CPUS", "possible=8,online=0-3", 1);
	setenv("ORCU_NOCBS", "0-3,6", 1);
	setenv("ORCU_INPLACE_TAKEOVER_MS", "5", 1);
	load_run(4.0, hotplug_step);
	TEST_PASS("hotplug_load");
}
