/*
 * test_shutdown_qsbr_online.c - orcu_shutdown() called by an online qsbr
 * reader while another thread keeps grace periods coming.  The shutdown
 * joins the GP thread and the leaders, which may be finishing a GP that
 * waits for every online qsbr reader: its caller must be offline until
 * the joins are done (it was online again after its drain, and the join
 * hung: 3 to 4 rounds of 5).  Each round in a fresh child, bounded; the
 * caller is online again afterwards, and orcu works after the shutdown.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"

#define ROUNDS 5

static atomic_int stop;

static void *updater(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		orcu_synchronize();
	return NULL;
}

static int round_child(void)
{
	pthread_t t;

	CHILD_CHECK(2, orcu_register_thread_qsbr() == 0);
	CHILD_CHECK(3, pthread_create(&t, NULL, updater, NULL) == 0);
	for (int i = 0; i < 50; i++) {      /* a qsbr loop, GPs passing */
		orcu_quiescent_state();
		sleep_ms(1);
	}
	CHILD_CHECK(4, orcu_shutdown() == 0);
	CHILD_CHECK(5, orcu_thread_is_online());
	orcu_quiescent_state();             /* GPs go on after the shutdown */
	atomic_store(&stop, 1);
	orcu_thread_offline();
	CHILD_CHECK(6, pthread_join(t, NULL) == 0);
	orcu_unregister_thread();
	return 0;
}

int main(void)
{
	char what[32];

	test_watchdog("test_shutdown_qsbr_online", 240);
	for (int r = 0; r < ROUNDS; r++) {
		snprintf(what, sizeof(what), "round %d", r);
		check_child_ok(check_fork_run(round_child), what, 30);
	}
	printf("orcu_shutdown() from an online qsbr reader: %d rounds, none hung\n", ROUNDS);
	TEST_PASS("test_shutdown_qsbr_online");
}
