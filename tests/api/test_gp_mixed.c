/*
 * test_gp_mixed.c - the grace-period guarantee with memb and qsbr readers
 * in one engine at once, plus readers that keep unregistering and
 * re-registering as the other kind while GPs run (and qsbr threads that
 * call orcu_read_lock from shared code).  Writers retire through
 * orcu_call, orcu_synchronize (also from a memb reader, which reads right
 * after each wait), orcu_synchronize_expedited and the polled API; the
 * age oracle (common_pipe.h) must see no GP end inside a section
 * and no callback may be lost.
 */
#include <orcu.h>

#include "common_pipe.h"

int main(void)
{
	struct pipe_cfg cfg = {
		.memb_readers = 2,
		.qsbr_readers = 2,
		.switch_readers = 2,
		.call_writers = 2,
		.sync_writers = 1,
		.exp_writers = 1,
		.memb_sync_writers = 1,
		.poll_writers = 1,
	};

	test_watchdog("test_gp_mixed", 60);
	pipe_run_checked("gp_mixed", &cfg, 3.0);
	TEST_PASS("test_gp_mixed");
}
