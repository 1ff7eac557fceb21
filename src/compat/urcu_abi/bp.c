/*
 * urcu_abi/bp.c - liburcu ABI 8's bulletproof flavour (urcu_bp_*, exported
 * by the shim's liborcu-liburcu-bp.so.8, which liburcu-bp.so.8 names) on
 * orcu's memb readers.  bp's promise is orcu's: a thread reads without
 * registering (orcu_read_lock() registers it on first use) and is
 * unregistered at its exit.  liburcu's own <urcu/urcu-bp.h> declares every
 * function defined here.  Its data (urcu_bp_reader, urcu_bp_gp,
 * urcu_bp_has_sys_membarrier) is not defined: a binary built with
 * liburcu-bp's inline read side fails to load, naming the symbol.  Calls
 * orcu's public API (entry.c, registry.c, gp.c, call.c, barrier.c), compat.c's
 * helpers and common.c.
 */
#include "abi.h"

#pragma GCC visibility push(default)
#include <urcu/urcu-bp.h>
/* What liburcu-bp's inline read side calls on a thread's first section. */
void urcu_bp_register(void);
#pragma GCC visibility pop

void urcu_bp_read_lock(void)
{
	orcu_read_lock();
}
void urcu_bp_read_unlock(void) { orcu__abi_read_unlock(); }
int urcu_bp_read_ongoing(void) { return orcu_read_ongoing(); }
void urcu_bp_synchronize_rcu(void) { orcu__compat_synchronize(); }
void urcu_bp_register(void) { orcu__compat_register(0, "urcu_bp_register"); }
void urcu_bp_register_thread(void) { orcu__compat_register(0, "urcu_bp_register_thread"); }

/* liburcu-bp's own fork calls; orcu's handlers do their work. */
void urcu_bp_before_fork(void) { orcu__abi_before_fork(); }
void urcu_bp_after_fork_parent(void) {}
void urcu_bp_after_fork_child(void) {}

void *urcu_bp_dereference_sym(void *p) { return rcu_dereference_sym(p); }
void *urcu_bp_set_pointer_sym(void **p, void *v) { return rcu_set_pointer_sym(p, v); }
void *urcu_bp_xchg_pointer_sym(void **p, void *v) { return rcu_xchg_pointer_sym(p, v); }

void *urcu_bp_cmpxchg_pointer_sym(void **p, void *old, void *_new)
{
	return rcu_cmpxchg_pointer_sym(p, old, _new);
}

void urcu_bp_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	/* struct rcu_head is { next, func }: orcu_head's layout. */
	orcu_call((struct orcu_head *)(void *)head,
		  (void (*)(struct orcu_head *))(void (*)(void))func);
}

void urcu_bp_barrier(void) { orcu_barrier(); }

struct urcu_gp_poll_state urcu_bp_start_poll_synchronize_rcu(void)
{
	return (struct urcu_gp_poll_state){ orcu_start_poll() };
}

bool urcu_bp_poll_state_synchronize_rcu(struct urcu_gp_poll_state s)
{
	return orcu_poll_state(s.grace_period_id);
}

void urcu_bp_defer_rcu(void (*fct)(void *p), void *p) { orcu__compat_defer(fct, p); }
int urcu_bp_defer_register_thread(void) { return 0; }
void urcu_bp_defer_unregister_thread(void) {}
void urcu_bp_defer_barrier(void) { orcu_barrier(); }
void urcu_bp_defer_barrier_thread(void) { orcu_barrier(); }
void urcu_bp_defer_exit(void) {}

struct call_rcu_data *urcu_bp_create_call_rcu_data(unsigned long flags, int cpu_affinity)
{
	(void)flags;
	return orcu__abi_crdp_create(cpu_affinity);
}

void urcu_bp_call_rcu_data_free(struct call_rcu_data *crdp) { orcu__abi_crdp_free(crdp); }
struct call_rcu_data *urcu_bp_get_default_call_rcu_data(void) { return orcu__abi_crdp_default(); }
struct call_rcu_data *urcu_bp_get_cpu_call_rcu_data(int cpu)
{
	(void)cpu;
	return NULL;
}
struct call_rcu_data *urcu_bp_get_thread_call_rcu_data(void) { return orcu__abi_crdp_thread(); }

struct call_rcu_data *urcu_bp_get_call_rcu_data(void)
{
	struct call_rcu_data *crdp = orcu__abi_crdp_thread();

	return crdp ? crdp : orcu__abi_crdp_default();
}

pthread_t urcu_bp_get_call_rcu_thread(struct call_rcu_data *crdp) { return orcu__abi_crdp_pthread(crdp); }
void urcu_bp_set_thread_call_rcu_data(struct call_rcu_data *crdp) { orcu__abi_crdp_set_thread(crdp); }
int urcu_bp_set_cpu_call_rcu_data(int cpu, struct call_rcu_data *crdp) { return orcu__abi_crdp_set_cpu(cpu, crdp); }
int urcu_bp_create_all_cpu_call_rcu_data(unsigned long flags)
{
	(void)flags;
	return orcu__abi_crdp_offload_all();
}
void urcu_bp_free_all_cpu_call_rcu_data(void) {}
void urcu_bp_call_rcu_before_fork(void) { orcu__abi_before_fork(); }
void urcu_bp_call_rcu_after_fork_parent(void) {}
void urcu_bp_call_rcu_after_fork_child(void) {}

void urcu_bp_register_rculfhash_atfork(struct urcu_atfork *atfork)
{
	orcu_rcu_flavor.register_rculfhash_atfork(atfork);
}

void urcu_bp_unregister_rculfhash_atfork(struct urcu_atfork *atfork)
{
	orcu_rcu_flavor.unregister_rculfhash_atfork(atfork);
}

static void bp_nothing(void) {}

const struct rcu_flavor_struct urcu_bp_flavor = {
	.read_lock = urcu_bp_read_lock,
	.read_unlock = urcu_bp_read_unlock,
	.read_ongoing = urcu_bp_read_ongoing,
	.read_quiescent_state = bp_nothing,
	.update_call_rcu = urcu_bp_call_rcu,
	.update_synchronize_rcu = urcu_bp_synchronize_rcu,
	.update_defer_rcu = urcu_bp_defer_rcu,
	.thread_offline = bp_nothing,
	.thread_online = bp_nothing,
	.register_thread = urcu_bp_register_thread,
	.unregister_thread = bp_nothing,
	.barrier = urcu_bp_barrier,
	.register_rculfhash_atfork = urcu_bp_register_rculfhash_atfork,
	.unregister_rculfhash_atfork = urcu_bp_unregister_rculfhash_atfork,
#if __has_include(<urcu/urcu-poll.h>)
	.update_start_poll_synchronize_rcu = urcu_bp_start_poll_synchronize_rcu,
	.update_poll_state_synchronize_rcu = urcu_bp_poll_state_synchronize_rcu,
#endif
};
