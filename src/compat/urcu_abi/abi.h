/*
 * urcu_abi/abi.h - what the flavour files of the liburcu ABI 8 shim
 * (memb.c, qsbr.c, bp.c) share with common.c.  The shim's libraries
 * (liborcu-liburcu-{memb,qsbr,bp}.so.8, which liburcu.so.8,
 * liburcu-memb.so.8, liburcu-qsbr.so.8 and liburcu-bp.so.8 name) export
 * liburcu's function names on orcu; everything declared here is hidden.
 */
#ifndef ORCU_URCU_ABI_H
#define ORCU_URCU_ABI_H

#include <orcu.h>

#include <pthread.h>

struct rcu_flavor_struct;
struct call_rcu_data;
struct urcu_atfork;

#if !__has_include(<urcu/urcu-poll.h>)
/* liburcu 0.14's poll state, for the poll calls ABI 8 gained there. */
struct urcu_gp_poll_state {
	unsigned long grace_period_id;
};
#pragma GCC visibility push(default)
struct urcu_gp_poll_state urcu_memb_start_poll_synchronize_rcu(void);
bool urcu_memb_poll_state_synchronize_rcu(struct urcu_gp_poll_state s);
struct urcu_gp_poll_state urcu_qsbr_start_poll_synchronize_rcu(void);
bool urcu_qsbr_poll_state_synchronize_rcu(struct urcu_gp_poll_state s);
struct urcu_gp_poll_state urcu_bp_start_poll_synchronize_rcu(void);
bool urcu_bp_poll_state_synchronize_rcu(struct urcu_gp_poll_state s);
#pragma GCC visibility pop
#endif

/* Exported by liburcu ABI 8 but declared in none of its headers. */
#pragma GCC visibility push(default)
void urcu_memb_defer_exit(void);
void urcu_qsbr_defer_exit(void);
void urcu_qsbr_exit(void);
void urcu_bp_defer_exit(void);
#pragma GCC visibility pop

/* liborcu-urcu's flavor: its rculfhash fork hooks and read_ongoing. */
extern const struct rcu_flavor_struct orcu_rcu_flavor;
ORCU_API void orcu__compat_register(int qsbr, const char *call);
ORCU_API void orcu__compat_defer(void (*fct)(void *p), void *p);
ORCU_API void orcu__compat_synchronize(void);
/* lifecycle.c point 7: false at exit; at an unload, true once every
 * pending callback has run and orcu's threads are gone. */
ORCU_API bool orcu__compat_unload_drain(void);

/*
 * ThreadSanitizer in the program, told what liburcu's inline read side and
 * pointer macros would show it in the program's own code: the shim is not
 * instrumented, so without this a read section's end, and the publication
 * of an object through rcu_*_sym(), are invisible to it (src/base/sanitize.h
 * does the same for liborcu).  Weak references: in a program without TSan
 * each is a load and an untaken branch.  An instrumented build (ORCU_SANITIZE)
 * sees its own orders and leaves this out.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ORCU__ABI_LIB_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(ORCU__ABI_LIB_TSAN)
static inline void orcu__abi_tsan_acquire(void *addr)
{
	(void)addr;
}
static inline void orcu__abi_tsan_release(void *addr) { (void)addr; }
#else
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));
static inline void orcu__abi_tsan_acquire(void *addr)
{
	if (__tsan_acquire && addr)
		__tsan_acquire(addr);
}
static inline void orcu__abi_tsan_release(void *addr)
{
	if (__tsan_release && addr)
		__tsan_release(addr);
}
#endif

/* A memb section ends: what it read happens before the end of a grace
 * period, which acquires the reader's ctr (registry.c san_gp_end_locked()),
 * as the release store of the inline unlock tells it in instrumented code.
 * Before the store: a GP that sees the store finds the release made. */
static inline void orcu__abi_read_unlock(void)
{
	orcu__abi_tsan_release((void *)&orcu__reader.ctr);
	orcu_read_unlock();
}

/* call_rcu_data on offloading (common.c; docs/MIGRATING.md). */
struct call_rcu_data *orcu__abi_crdp_create(int cpu_affinity);
void orcu__abi_crdp_free(struct call_rcu_data *crdp);
struct call_rcu_data *orcu__abi_crdp_default(void);
struct call_rcu_data *orcu__abi_crdp_thread(void);
void orcu__abi_crdp_set_thread(struct call_rcu_data *crdp);
int orcu__abi_crdp_set_cpu(int cpu, struct call_rcu_data *crdp);
int orcu__abi_crdp_offload_all(void);
pthread_t orcu__abi_crdp_pthread(struct call_rcu_data *crdp);
void orcu__abi_before_fork(void);

#endif
