/*
 * peer_urcu_memb.c - liburcu's memb flavor (Debian liburcu-dev), with
 * _LGPL_SOURCE so its read side is inline as its users compile it.  The
 * symbols are prefixed urcu_memb_*, so this flavor links beside qsbr.
 */
#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>

#include "bench.h"

#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>

uint64_t read_urcu_memb(const _Atomic int *stop, long *sink)
{
	uint64_t n = 0;
	long sum = 0;

	urcu_memb_register_thread();
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_INNER; i++) {
			struct bobj *p;

			urcu_memb_read_lock();
			p = rcu_dereference(bench_gp);
			sum += p->val;
			urcu_memb_read_unlock();
		}
		n += BENCH_INNER;
	}
	urcu_memb_unregister_thread();
	*sink = sum;
	return n;
}

void urcu_m_register(void) { urcu_memb_register_thread(); }
void urcu_m_unregister(void) { urcu_memb_unregister_thread(); }
void urcu_m_synchronize(void) { urcu_memb_synchronize_rcu(); }
void urcu_m_barrier(void) { urcu_memb_barrier(); }

/* The head sits at offset 0 of mem; the function pointer to call after
 * the grace period is kept right behind it. */
struct ucb {
	struct rcu_head head;
	void (*fn)(void *mem);
};

static void ucb_invoke(struct rcu_head *h)
{
	struct ucb *c = (struct ucb *)h;

	c->fn(c);
}

void urcu_m_call(void *mem, void (*fn)(void *mem))
{
	struct ucb *c = mem;

	c->fn = fn;
	urcu_memb_call_rcu(&c->head, ucb_invoke);
}

size_t urcu_head_size(void)
{
	return sizeof(struct ucb);
}

int urcu_m_create_all_cpu(void)
{
	return urcu_memb_create_all_cpu_call_rcu_data(0);
}

/* call_rcu(free) as a liburcu user writes it: the head at offset 0 of a
 * malloc'd object, a callback that frees it. */
static void ucb_free(struct rcu_head *h)
{
	free(h);
}

void urcu_m_call_free(void *mem)
{
	urcu_memb_call_rcu((struct rcu_head *)mem, ucb_free);
}

/* One read-side section (isolation.c's isolated reader). */
long urcu_m_read1(void)
{
	long v;

	urcu_memb_read_lock();
	v = rcu_dereference(bench_gp)->val;
	urcu_memb_read_unlock();
	return v;
}
