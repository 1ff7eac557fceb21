/*
 * test_no_reader_gp_no_handoff - gp.c point 5: with no reader registered a
 * GP is one swap of gp_seq, made by whoever needs it.  A leader that needs
 * one for its callbacks makes it itself: it does not wake the GP thread,
 * which would make the same swap and wake the leader back.
 *
 * 2000 callbacks, each posted once the one before it ran, so each needs a
 * GP of its own.  Measured: the GP thread's CPU time over them
 * (orcu_stats.gp_thread_cpu_ns): under 1 ms, where a hand-off per GP costs
 * that thread a few microseconds each (about 10 ms for 2000 on the 2-core
 * development machine).  Control: with this thread registered as a memb
 * reader the GPs wait for readers, on the GP thread, and its CPU time grows.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>

#include "check.h"

#define NCB 2000

static struct orcu_head head;
static atomic_int ran;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add_explicit(&ran, 1, memory_order_release);
}

/* n callbacks one after another; the GP thread's CPU time they cost. */
static uint64_t gp_thread_ns_over(int n)
{
	struct orcu_stats s0, s1;

	orcu_get_stats(&s0);
	for (int i = 0; i < n; i++) {
		int want = atomic_load(&ran) + 1;

		orcu_call(&head, cb);
		CHECK_WAIT_UNTIL(atomic_load_explicit(&ran, memory_order_acquire) == want, 60);
	}
	orcu_get_stats(&s1);
	CHECK(s1.gp_completed - s0.gp_completed >= (uint64_t)n);
	return s1.gp_thread_cpu_ns - s0.gp_thread_cpu_ns;
}

int main(void)
{
	uint64_t idle_ns, reader_ns;

	test_watchdog("test_no_reader_gp_no_handoff", 300);
	CHECK_EQ(orcu_init(NULL), 0);
	orcu_barrier();         /* threads started, first use behind us */
	idle_ns = gp_thread_ns_over(NCB);
	printf("no reader: GP thread %.3f ms over %d callback GPs\n", idle_ns / 1e6, NCB);
	CHECK(idle_ns < 1000000);

	CHECK_EQ(orcu_register_thread(), 0);
	reader_ns = gp_thread_ns_over(NCB / 10);
	printf("memb reader registered: GP thread %.3f ms over %d callback GPs\n",
	       reader_ns / 1e6, NCB / 10);
	CHECK(reader_ns > 0);
	orcu_unregister_thread();
	TEST_PASS("test_no_reader_gp_no_handoff");
}
