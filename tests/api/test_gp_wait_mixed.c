/*
 * test_gp_wait_mixed.c - the reader wait with memb and qsbr readers
 * together pays each barrier only where a reader needs it, and never
 * leaves a grace period to sleep out a wait slice.  Counted, not timed
 * (orcu__cnt.gp_membarriers, gp_wait_missed, gp_completed):
 *  1. A memb reader that registers during a qsbr-only GP and holds it
 *     (its section entered under the phase before the GP's flip, its
 *     store seen late: the test writes that ctr) makes the waiter arm its
 *     wake with membarrier(), not with the fence that covers qsbr readers
 *     only; its unlock then wakes the GP.  The wait used to choose the
 *     barrier from the memb readers registered when the GP began: none,
 *     so a fence, and an unlock that missed the flag left the GP to its
 *     100 ms slice.
 *  2. A memb-registered thread that synchronizes, with busy qsbr readers
 *     and no other memb reader, costs its GPs no membarrier() at all (it
 *     is parked while it waits): it used to cost two per GP.
 *  3. One more memb reader, idle elsewhere, costs at most one per GP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"

#define SYNCS 200

static atomic_int q_reg, q_go, q_done, m_go, m_held, stop;

static uint64_t cnt_mb(void) { return orcu__load_relaxed(&orcu__cnt.gp_membarriers); }
/* Slices that ran out with nobody holding after: a lost wake-up.  (A
 * slice that runs out on a reader still holding, one preempted on a
 * loaded machine, is not one.) */
static uint64_t cnt_slices(void) { return orcu__load_relaxed(&orcu__cnt.gp_wait_missed); }

static uint64_t gps(void)
{
	struct orcu_stats s;

	orcu_get_stats(&s);
	return s.gp_completed;
}

/* A qsbr reader that holds the GP until told to announce. */
static void *q_holder(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	atomic_store(&q_reg, 1);
	CHECK_WAIT_UNTIL(atomic_load(&q_go), 60);
	orcu_quiescent_state();
	atomic_store(&q_done, 1);
	CHECK_WAIT_UNTIL(atomic_load(&stop), 60);
	orcu_unregister_thread();
	return NULL;
}

/* Registers mid-GP, inside a section the GP must wait for. */
static void *m_late(void *arg)
{
	struct orcu__reader *r = &orcu__reader;

	(void)arg;
	CHECK_WAIT_UNTIL(atomic_load(&m_go), 60);
	CHECK_EQ(orcu_register_thread(), 0);
	/* What orcu_read_lock() stores after loading the phase before the
	 * GP's last flip, seen by the GP's scans only now. */
	orcu__store_release(&r->ctr, orcu__load_relaxed(&orcu__gp_ctr) ^ ORCU__PHASE);
	CHECK(orcu_read_ongoing());
	atomic_store(&m_held, 1);
	CHECK_WAIT_UNTIL(atomic_load(&stop), 60);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static void *syncer(void *arg)
{
	(void)arg;
	orcu_synchronize();
	return NULL;
}

static void register_mid_gp(void)
{
	pthread_t q, m, u;
	uint64_t mb0, sl0;

	CHECK_EQ(pthread_create(&q, NULL, q_holder, NULL), 0);
	CHECK_EQ(pthread_create(&m, NULL, m_late, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&q_reg), 30);
	/* A qsbr-only GP asleep on q (no memb reader yet: no membarrier). */
	mb0 = cnt_mb();
	sl0 = cnt_slices();
	CHECK_EQ(pthread_create(&u, NULL, syncer, NULL), 0);
	CHECK_WAIT_UNTIL(orcu__load_relaxed(&orcu__gp_wait) == 1, 30);
	CHECK_EQ(cnt_mb() - mb0, 0);
	atomic_store(&m_go, 1);
	CHECK_WAIT_UNTIL(atomic_load(&m_held), 30);
	/* q leaves; the GP wakes and finds the memb reader holding. */
	atomic_store(&q_go, 1);
	CHECK_WAIT_UNTIL(atomic_load(&q_done), 30);
	/* It arms again, now with membarrier(), and sleeps on the memb reader. */
	CHECK_WAIT_UNTIL(cnt_mb() - mb0 >= 1 && orcu__load_relaxed(&orcu__gp_wait) == 1, 30);
	atomic_store(&stop, 1);                 /* the memb reader's unlock wakes it */
	CHECK_EQ(pthread_join(u, NULL), 0);
	CHECK_EQ(pthread_join(m, NULL), 0);
	CHECK_EQ(pthread_join(q, NULL), 0);
	printf("memb reader registered mid-GP: %llu membarrier(s), %llu lost wake-up(s)\n",
	       (unsigned long long)(cnt_mb() - mb0), (unsigned long long)(cnt_slices() - sl0));
	CHECK_EQ(cnt_slices() - sl0, 0);
}

static atomic_int busy_stop;

static void *busy_qsbr(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	while (!atomic_load_explicit(&busy_stop, memory_order_relaxed)) {
		for (int i = 0; i < 1024; i++)
			orcu__cpu_relax();
		orcu_quiescent_state();
	}
	orcu_unregister_thread();
	return NULL;
}

static atomic_int idle_stop, idle_ready;

static void *idle_memb(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	orcu_read_unlock();
	atomic_store(&idle_ready, 1);
	CHECK_WAIT_UNTIL(atomic_load(&idle_stop), 60);
	orcu_unregister_thread();
	return NULL;
}

/* SYNCS synchronizes from a memb-registered thread: membarriers per GP. */
static void memb_updater(bool with_idle, uint64_t *mb, uint64_t *nr_gps, uint64_t *sl)
{
	pthread_t b[2], idle;
	uint64_t mb0, g0, sl0;

	atomic_store(&busy_stop, 0);
	atomic_store(&idle_stop, 0);
	atomic_store(&idle_ready, 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&b[i], NULL, busy_qsbr, NULL), 0);
	if (with_idle) {
		CHECK_EQ(pthread_create(&idle, NULL, idle_memb, NULL), 0);
		CHECK_WAIT_UNTIL(atomic_load(&idle_ready), 30);
	}
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	orcu_read_unlock();
	mb0 = cnt_mb();
	g0 = gps();
	sl0 = cnt_slices();
	for (int i = 0; i < SYNCS; i++)
		orcu_synchronize();
	*mb = cnt_mb() - mb0;
	*nr_gps = gps() - g0;
	*sl = cnt_slices() - sl0;
	CHECK(!orcu_read_ongoing());
	/* Unparked: a section works as before. */
	orcu_read_lock();
	CHECK(orcu_read_ongoing());
	orcu_read_unlock();
	orcu_unregister_thread();
	atomic_store(&busy_stop, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(b[i], NULL), 0);
	if (with_idle) {
		atomic_store(&idle_stop, 1);
		CHECK_EQ(pthread_join(idle, NULL), 0);
	}
}

int main(void)
{
	uint64_t mb, n, sl;

	test_watchdog("test_gp_wait_mixed", 120);
	register_mid_gp();

	memb_updater(false, &mb, &n, &sl);
	printf("memb updater, 2 busy qsbr readers: %d synchronizes, %llu GPs, "
	       "%llu membarrier(s), %llu lost wake-up(s)\n", SYNCS, (unsigned long long)n,
	       (unsigned long long)mb, (unsigned long long)sl);
	CHECK(n >= SYNCS);
	CHECK_EQ(mb, 0);
	CHECK_EQ(sl, 0);

	memb_updater(true, &mb, &n, &sl);
	printf("... and 1 idle memb reader: %llu GPs, %llu membarrier(s), "
	       "%llu lost wake-up(s)\n", (unsigned long long)n, (unsigned long long)mb,
	       (unsigned long long)sl);
	CHECK(n >= SYNCS);
	CHECK_LE(mb, n);
	CHECK_EQ(sl, 0);
	TEST_PASS("test_gp_wait_mixed");
}
