/*
 * test_urcu_sync_in_callback.c - a call_rcu() callback that calls
 * synchronize_rcu(), legal on liburcu (its worker is a registered thread
 * outside any section), runs through <orcu/urcu-compat.h>: each such
 * synchronize returns after a full grace period (its poll cookie is done,
 * and it waits for a reader that holds the grace period), on offloaded
 * slots and on inline ones (where, built with ORCU_QSBR, the callback runs
 * on the online qsbr main thread inside its rcu_quiescent_state()).
 * orcu_synchronize() itself still aborts there (tests/api/test_misuse.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu/urcu-compat.h>

#include <sys/sysinfo.h>

#include "check.h"

#define NR_CBS 50

struct job {
	struct rcu_head rcu;
	int gp_seen;	/* 1: the GP after synchronize_rcu() was complete */
};

static struct job jobs[NR_CBS];
static int done;
static int blocker_started, reader_in, blocker_done;

static void sync_cb(struct rcu_head *h)
{
	struct job *j = caa_container_of(h, struct job, rcu);
	struct urcu_gp_poll_state s = get_state_synchronize_rcu();

	synchronize_rcu();
	j->gp_seen = poll_state_synchronize_rcu(s);
	__atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
}

/* Its synchronize, started once the main thread holds the grace period,
 * must wait for it. */
static void blocked_cb(struct rcu_head *h)
{
	(void)h;
	__atomic_store_n(&blocker_started, 1, __ATOMIC_RELEASE);
	CHECK_WAIT_UNTIL(__atomic_load_n(&reader_in, __ATOMIC_ACQUIRE), 60);
	synchronize_rcu();
	__atomic_store_n(&blocker_done, 1, __ATOMIC_RELEASE);
}

/* Post NR_CBS, then pass quiescent states (an inline slot's callbacks run
 * there) until all ran. */
static void round_of(const char *what)
{
	__atomic_store_n(&done, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < NR_CBS; i++) {
		jobs[i].gp_seen = 0;
		call_rcu(&jobs[i].rcu, sync_cb);
	}
	CHECK_WAIT_UNTIL((rcu_quiescent_state(), __atomic_load_n(&done, __ATOMIC_ACQUIRE) == NR_CBS), 60);
	for (int i = 0; i < NR_CBS; i++)
		CHECK(jobs[i].gp_seen);
	printf("%s: %d callbacks each ran synchronize_rcu()\n", what, NR_CBS);
}

int main(void)
{
	static struct rcu_head blocker;
	int cpus = get_nprocs_conf();

	rcu_register_thread();
	round_of("offloaded");

	/* The callback's synchronize waits while this thread holds the GP:
	 * inside a section (memb) or online without a quiescent state (qsbr). */
	call_rcu(&blocker, blocked_cb);
	CHECK_WAIT_UNTIL((rcu_quiescent_state(),
			  __atomic_load_n(&blocker_started, __ATOMIC_ACQUIRE)), 60);
	rcu_read_lock();
	__atomic_store_n(&reader_in, 1, __ATOMIC_RELEASE);
	/* The window in which a synchronize that did not wait would finish. */
	for (int i = 0; i < 50; i++) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
		CHECK(!__atomic_load_n(&blocker_done, __ATOMIC_ACQUIRE));
	}
	rcu_read_unlock();
	CHECK_WAIT_UNTIL((rcu_quiescent_state(), __atomic_load_n(&blocker_done, __ATOMIC_ACQUIRE)), 60);
	printf("blocked: the callback's synchronize_rcu() waited for the reader\n");

	for (int cpu = 0; cpu < cpus; cpu++)
		(void)orcu_cpu_deoffload(cpu);
	round_of("inline");
	for (int cpu = 0; cpu < cpus; cpu++)
		(void)orcu_cpu_offload(cpu);

	rcu_barrier();
	rcu_unregister_thread();
	CHECK_EQ(orcu_shutdown(), 0);
	printf("test_urcu_sync_in_callback: OK\n");
	return 0;
}
