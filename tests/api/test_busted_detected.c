/*
 * test_busted_detected.c - proves the age oracle of the GP tests can fail.
 * First a short correct run must see no error (the oracle is not trigger-
 * happy); then orcu_test_gp_busted() returning 1 makes grace periods end without
 * waiting for readers, and the same readers and writers must catch it -
 * a reader sees an element whose age is >= 2, recycled or poisoned -
 * within a bounded time.  If they never do, this test fails: the oracle
 * that the GP tests rely on would be blind.  Afterwards the engine is
 * made correct again and every retired element must still come back.
 */
#include <orcu.h>

#include "common_pipe.h"

/* The test-only hook the library looks for (src/readers/gp.h). */
static atomic_int busted;

int orcu_test_gp_busted(void);
int orcu_test_gp_busted(void)
{
	return atomic_load_explicit(&busted, memory_order_relaxed);
}

int main(void)
{
	struct pipe_cfg cfg = {
		.memb_readers = 2,
		.qsbr_readers = 1,
		.call_writers = 1,
		.sync_writers = 1,
		.long_hold_us = 500,
		.long_every = 16,
	};
	struct pipe_result r;

	test_watchdog("test_busted_detected", 60);

	/* Control: the engine is correct, the oracle must stay quiet. */
	pipe_run_checked("correct", &cfg, 1.0);

	pipe_start(&cfg);
	atomic_store(&busted, 1);
	CHECK_WAIT_UNTIL(atomic_load(&pipe_errors) > 0, 10);
	atomic_store(&busted, 0);
	pipe_stop_run(&r);
	pipe_print("busted", &r);
	CHECK(r.errors > 0);

	/* Correct again: no new errors. */
	pipe_run_checked("repaired", &cfg, 1.0);
	TEST_PASS("test_busted_detected");
}
