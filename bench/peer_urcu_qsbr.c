/*
 * peer_urcu_qsbr.c - liburcu's qsbr flavor, inline (_LGPL_SOURCE): an empty
 * read side plus urcu_qsbr_quiescent_state() every BENCH_QS_EVERY reads,
 * the way liburcu qsbr users write their loops; call_rcu and barrier for
 * the update scenario.
 */
#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-qsbr.h>

#include "bench.h"

#include <stddef.h>

uint64_t read_urcu_qsbr(const _Atomic int *stop, long *sink)
{
	uint64_t n = 0;
	long sum = 0;

	urcu_qsbr_register_thread();
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_QS_EVERY; i++) {
			struct bobj *p;

			urcu_qsbr_read_lock();
			p = rcu_dereference(bench_gp);
			sum += p->val;
			urcu_qsbr_read_unlock();
		}
		urcu_qsbr_quiescent_state();
		n += BENCH_QS_EVERY;
	}
	urcu_qsbr_unregister_thread();
	*sink = sum;
	return n;
}

void urcu_q_register(void) { urcu_qsbr_register_thread(); }
void urcu_q_unregister(void) { urcu_qsbr_unregister_thread(); }
void urcu_q_synchronize(void) { urcu_qsbr_synchronize_rcu(); }
void urcu_q_quiescent(void) { urcu_qsbr_quiescent_state(); }
void urcu_q_barrier(void) { urcu_qsbr_barrier(); }

/* As urcu_m_call(): the head at offset 0 of mem, fn kept behind it. */
struct qcb {
	struct rcu_head head;
	void (*fn)(void *mem);
};

static void qcb_invoke(struct rcu_head *h)
{
	struct qcb *c = (struct qcb *)h;

	c->fn(c);
}

void urcu_q_call(void *mem, void (*fn)(void *mem))
{
	struct qcb *c = mem;

	c->fn = fn;
	urcu_qsbr_call_rcu(&c->head, qcb_invoke);
}

/* One read-side section (isolation.c's isolated reader). */
long urcu_q_read1(void)
{
	long v;

	urcu_qsbr_read_lock();
	v = rcu_dereference(bench_gp)->val;
	urcu_qsbr_read_unlock();
	return v;
}
