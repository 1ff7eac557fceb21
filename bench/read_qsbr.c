/*
 * read_qsbr.c - orcu's qsbr read side.  This translation unit defines
 * ORCU_QSBR (from bench/CMakeLists.txt), promising that its read-side
 * sections run only on qsbr threads, so orcu_read_lock/unlock compile to
 * nothing; the loop announces a quiescent state every BENCH_QS_EVERY reads
 * exactly like the liburcu qsbr loop in peer_urcu_qsbr.c.
 */
#ifndef ORCU_QSBR
#error "read_qsbr.c must be compiled with -DORCU_QSBR"
#endif
#include <orcu.h>

#include "bench.h"

#include <stdlib.h>

uint64_t read_orcu_qsbr(const _Atomic int *stop, long *sink)
{
	uint64_t n = 0;
	long sum = 0;

	if (orcu_register_thread_qsbr() < 0)
		abort();
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_QS_EVERY; i++) {
			struct bobj *p;

			orcu_read_lock();
			p = orcu_dereference(bench_gp);
			sum += p->val;
			orcu_read_unlock();
		}
		orcu_quiescent_state();
		n += BENCH_QS_EVERY;
	}
	orcu_unregister_thread();
	*sink = sum;
	return n;
}

/* One read-side section (isolation.c's isolated reader). */
long orcu_q_read1(void)
{
	long v;

	orcu_read_lock();
	v = orcu_dereference(bench_gp)->val;
	orcu_read_unlock();
	return v;
}
