/*
 * test_gp_memb_targeted.c - a grace period sends its barrier only to the
 * CPUs its unparked memb readers may run on, and follows a reader that
 * moves.  Counted through the barrier hook (orcu__reader_barrier_hook:
 * the CPU of each barrier, -1 for the broadcast), not timed:
 *  1. A busy memb reader allowed only CPU a, the updater on CPU b: its
 *     grace periods send barriers to a, none to b and no broadcast.
 *     The broadcast used to reach b (a function-call IPI per GP there).
 *  2. The reader is moved to b (its affinity changed, then it is seen
 *     running there): the barriers now go to b, none to a.
 * Needs two CPUs, membarrier(PRIVATE_EXPEDITED_RSEQ) with
 * MEMBARRIER_CMD_FLAG_CPU (Linux 5.10) and an rseq area registered by
 * glibc (qemu-user registers none: there every GP broadcasts, as
 * registry.c point 6 says); skipped (77) otherwise.
 * The ordering of a reader that moves while a GP runs is checked by the
 * model (models/membar_target.pml) and by orcu-torture.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "check.h"
#include "os.h"
#include "registry.h"

#include <linux/membarrier.h>
#include <sys/rseq.h>
#include <sys/syscall.h>

#define SYNCS 100
#define MAXCPU 1024

static atomic_long sent[MAXCPU + 1]; /* [0]: broadcast, [cpu + 1]: targeted */
static atomic_int reader_cpu = -1, allowed = -1, stop;

static void count_barrier(int cpu)
{
	if (cpu < MAXCPU)
		atomic_fetch_add(&sent[cpu + 1], 1);
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
}

/* A busy memb reader: always unparked, so every GP must reach it. */
static void *reader(void *arg)
{
	(void)arg;
	pin_self(atomic_load(&allowed));
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load(&stop)) {
		orcu_read_lock();
		orcu_read_unlock();
		atomic_store(&reader_cpu, sched_getcpu());
	}
	orcu_unregister_thread();
	return NULL;
}

static void reset(void)
{
	for (int i = 0; i <= MAXCPU; i++)
		atomic_store(&sent[i], 0);
}

/* SYNCS grace periods with the reader on cpu `on` and the updater on
 * `off`: barriers go to `on` only. */
static void check_phase(int on, int off)
{
	pin_self(off);
	CHECK_WAIT_UNTIL(atomic_load(&reader_cpu) == on, 30);
	reset();
	for (int i = 0; i < SYNCS; i++)
		orcu_synchronize();
	CHECK_EQ(atomic_load(&sent[0]), 0);
	CHECK_EQ(atomic_load(&sent[off + 1]), 0);
	CHECK(atomic_load(&sent[on + 1]) >= 1);
}

int main(void)
{
	long mask = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	int a = -1, b = -1;
	cpu_set_t set;
	pthread_t t;

	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && b < 0; c++)
		if (CPU_ISSET(c, &set)) {
			if (a < 0)
				a = c;
			else
				b = c;
		}
	if (b < 0 || b >= MAXCPU || mask < 0 || !(mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) ||
	    __rseq_size == 0 || getenv("ORCU_NO_MEMBARRIER")) {
		printf("skipped: needs two CPUs, membarrier(PRIVATE_EXPEDITED_RSEQ) and rseq\n");
		return 77;
	}
	orcu__reader_barrier_hook = count_barrier;
	atomic_store(&allowed, a);
	CHECK_EQ(pthread_create(&t, NULL, reader, NULL), 0);
	check_phase(a, b);
	/* The reader moves: only b is allowed to it now. */
	CPU_ZERO(&set);
	CPU_SET(b, &set);
	CHECK_EQ(pthread_setaffinity_np(t, sizeof(set), &set), 0);
	check_phase(b, a);
	atomic_store(&stop, 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	orcu__reader_barrier_hook = NULL;
	printf("ok: barriers followed the memb reader from CPU %d to CPU %d\n", a, b);
	return 0;
}
