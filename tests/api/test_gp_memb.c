/*
 * test_gp_memb.c - the grace-period guarantee for memb readers: readers
 * (some nesting) hold the published element across their critical
 * sections while writers replace it at full speed and retire the old one
 * through orcu_call (re-posting for a pipeline of GPs) and through
 * orcu_synchronize.  The age oracle (common_pipe.h) fails if any reader
 * ever sees an element that a grace period has passed over, recycled or
 * poisoned, and pipe_stop_run() fails if any retired element never came
 * back (a lost callback).
 */
#include <orcu.h>

#include "common_pipe.h"

int main(void)
{
	struct pipe_cfg cfg = {
		.memb_readers = 3,
		.call_writers = 2,
		.sync_writers = 1,
	};

	test_watchdog("test_gp_memb", 60);
	pipe_run_checked("gp_memb", &cfg, 3.0);
	TEST_PASS("test_gp_memb");
}
