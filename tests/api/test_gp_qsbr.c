/*
 * test_gp_qsbr.c - the grace-period guarantee for qsbr readers, with the
 * zero-cost read side (ORCU_QSBR: orcu_read_lock compiles to nothing): a
 * reader's "section" runs from one orcu_quiescent_state() to the next, and
 * readers also go offline and online.  Writers retire through orcu_call,
 * orcu_synchronize and the polled API; the age oracle (common_pipe.h) must
 * see no element that a GP passed over, and no callback may be lost.
 */
#define ORCU_QSBR
#include <orcu.h>

#include "common_pipe.h"

int main(void)
{
	struct pipe_cfg cfg = {
		.qsbr_readers = 3,
		.call_writers = 2,
		.sync_writers = 1,
		.poll_writers = 1,
	};

	test_watchdog("test_gp_qsbr", 60);
	pipe_run_checked("gp_qsbr", &cfg, 3.0);
	TEST_PASS("test_gp_qsbr");
}
