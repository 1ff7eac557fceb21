/*
 * urcu_abi/memb.c - liburcu ABI 8's memb flavour (urcu_memb_*, exported by
 * the shim's liborcu-liburcu-memb.so.8, which liburcu.so.8 and
 * liburcu-memb.so.8 name) on orcu's memb readers.  liburcu's own
 * <urcu/urcu-memb.h> declares every function defined here, so the compiler
 * checks each against liburcu's prototype.  Its data (urcu_memb_reader,
 * urcu_memb_gp, urcu_memb_has_sys_membarrier) is not defined: a binary
 * built with liburcu's inline read side fails to load, naming the symbol,
 * instead of running with a read side orcu cannot see.  urcu_memb_flavor
 * is, for rculfhash.  Calls orcu's public API (entry.c, registry.c, gp.c,
 * call.c, barrier.c), compat.c's helpers and common.c.
 */
#include "abi.h"

#pragma GCC visibility push(default)
#include <urcu/urcu-memb.h>
#pragma GCC visibility pop

void urcu_memb_read_lock(void) { orcu_read_lock(); }
void urcu_memb_read_unlock(void) { orcu__abi_read_unlock(); }
int urcu_memb_read_ongoing(void) { return orcu_read_ongoing(); }
void urcu_memb_synchronize_rcu(void) { orcu__compat_synchronize(); }
void urcu_memb_register_thread(void) { orcu__compat_register(0, "urcu_memb_register_thread"); }
void urcu_memb_unregister_thread(void) { orcu_unregister_thread(); }
void urcu_memb_init(void) {}

void urcu_memb_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	/* struct rcu_head is { next, func }: orcu_head's layout. */
	orcu_call((struct orcu_head *)(void *)head,
		  (void (*)(struct orcu_head *))(void (*)(void))func);
}

void urcu_memb_barrier(void) { orcu_barrier(); }

struct urcu_gp_poll_state urcu_memb_start_poll_synchronize_rcu(void)
{
	return (struct urcu_gp_poll_state){ orcu_start_poll() };
}

bool urcu_memb_poll_state_synchronize_rcu(struct urcu_gp_poll_state s)
{
	return orcu_poll_state(s.grace_period_id);
}

void urcu_memb_defer_rcu(void (*fct)(void *p), void *p) { orcu__compat_defer(fct, p); }
int urcu_memb_defer_register_thread(void) { return 0; }
void urcu_memb_defer_unregister_thread(void) {}
void urcu_memb_defer_barrier(void) { orcu_barrier(); }
void urcu_memb_defer_barrier_thread(void) { orcu_barrier(); }
void urcu_memb_defer_exit(void) {}

struct call_rcu_data *urcu_memb_create_call_rcu_data(unsigned long flags, int cpu_affinity)
{
	(void)flags;
	return orcu__abi_crdp_create(cpu_affinity);
}

void urcu_memb_call_rcu_data_free(struct call_rcu_data *crdp) { orcu__abi_crdp_free(crdp); }
struct call_rcu_data *urcu_memb_get_default_call_rcu_data(void) { return orcu__abi_crdp_default(); }
struct call_rcu_data *urcu_memb_get_cpu_call_rcu_data(int cpu)
{
	(void)cpu;
	return NULL;
}
struct call_rcu_data *urcu_memb_get_thread_call_rcu_data(void) { return orcu__abi_crdp_thread(); }

struct call_rcu_data *urcu_memb_get_call_rcu_data(void)
{
	struct call_rcu_data *crdp = orcu__abi_crdp_thread();

	return crdp ? crdp : orcu__abi_crdp_default();
}

pthread_t urcu_memb_get_call_rcu_thread(struct call_rcu_data *crdp) { return orcu__abi_crdp_pthread(crdp); }
void urcu_memb_set_thread_call_rcu_data(struct call_rcu_data *crdp) { orcu__abi_crdp_set_thread(crdp); }
int urcu_memb_set_cpu_call_rcu_data(int cpu, struct call_rcu_data *crdp) { return orcu__abi_crdp_set_cpu(cpu, crdp); }
int urcu_memb_create_all_cpu_call_rcu_data(unsigned long flags)
{
	(void)flags;
	return orcu__abi_crdp_offload_all();
}
void urcu_memb_free_all_cpu_call_rcu_data(void) {}
void urcu_memb_call_rcu_before_fork(void) { orcu__abi_before_fork(); }
void urcu_memb_call_rcu_after_fork_parent(void) {}
void urcu_memb_call_rcu_after_fork_child(void) {}

void urcu_memb_register_rculfhash_atfork(struct urcu_atfork *atfork)
{
	orcu_rcu_flavor.register_rculfhash_atfork(atfork);
}

void urcu_memb_unregister_rculfhash_atfork(struct urcu_atfork *atfork)
{
	orcu_rcu_flavor.unregister_rculfhash_atfork(atfork);
}

static void memb_quiescent_state(void) {}

const struct rcu_flavor_struct urcu_memb_flavor = {
	.read_lock = urcu_memb_read_lock,
	.read_unlock = urcu_memb_read_unlock,
	.read_ongoing = urcu_memb_read_ongoing,
	.read_quiescent_state = memb_quiescent_state,
	.update_call_rcu = urcu_memb_call_rcu,
	.update_synchronize_rcu = urcu_memb_synchronize_rcu,
	.update_defer_rcu = urcu_memb_defer_rcu,
	.thread_offline = memb_quiescent_state,
	.thread_online = memb_quiescent_state,
	.register_thread = urcu_memb_register_thread,
	.unregister_thread = urcu_memb_unregister_thread,
	.barrier = urcu_memb_barrier,
	.register_rculfhash_atfork = urcu_memb_register_rculfhash_atfork,
	.unregister_rculfhash_atfork = urcu_memb_unregister_rculfhash_atfork,
#if __has_include(<urcu/urcu-poll.h>)
	.update_start_poll_synchronize_rcu = urcu_memb_start_poll_synchronize_rcu,
	.update_poll_state_synchronize_rcu = urcu_memb_poll_state_synchronize_rcu,
#endif
};
