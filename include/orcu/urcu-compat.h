/*
 * orcu/urcu-compat.h - liburcu's familiar API on orcu.  Opt-in: include it
 * instead of <urcu.h> (or <urcu-qsbr.h>: define ORCU_QSBR first) and link
 * -lorcu.  Each liburcu name below is a real static inline function (or,
 * for the pointer macros, a macro) defined in this file, so a debugger and
 * a reader find it here.  docs/MIGRATING.md lists every mapping, what
 * differs and what offloading replaces.
 *
 * When liburcu's headers are installed, this header also pulls in the
 * header-only utilities a liburcu program uses without naming them
 * (<urcu/compiler.h>, <urcu/arch.h>, <urcu/system.h>, <urcu/uatomic.h>,
 * <urcu/tls-compat.h>, <urcu/call-rcu.h> for struct rcu_head,
 * <urcu/flavor.h>) and makes liburcu's `rcu_flavor` name orcu's flavor, so
 * <urcu/rculfhash.h>'s cds_lfht_new() runs on orcu (link -lorcu-urcu
 * -lurcu-cds).  Without them it stands alone: struct rcu_head is defined
 * here with liburcu's layout.
 *
 * Semantics in one line each where orcu differs:
 *  - rcu_register_thread(): idempotent; orcu's registration can fail
 *    (out of memory, or the thread already registered as the other kind):
 *    liburcu's returns void, so here a failure prints one line naming the
 *    call and the error and aborts.
 *  - rcu_read_lock() on an unregistered thread registers it (memb), where
 *    liburcu would crash or misbehave.
 *  - call_rcu_data worker pools do not exist: callbacks are offloaded per
 *    CPU slot by orcu; the calls compile and are documented no-ops.
 *  - rcu_defer_register_thread() and friends are no-ops: defer_rcu() needs
 *    no per-thread queue (it posts an orcu callback).
 *  - synchronize_rcu() may be called from a call_rcu() callback, as in
 *    liburcu; orcu_synchronize() there aborts (orcu.h).
 */
#ifndef ORCU_URCU_COMPAT_H
#define ORCU_URCU_COMPAT_H

#include <orcu.h>

#include <pthread.h>
#include <stdbool.h>

/* ORCU_URCU_NO_HEADERS: stand alone even where liburcu is installed. */
#if defined(__has_include) && !defined(ORCU_URCU_NO_HEADERS)
#if __has_include(<urcu/call-rcu.h>) && __has_include(<urcu/flavor.h>)
#define ORCU_URCU_HEADERS 1
#if __has_include(<urcu/urcu-poll.h>)
/* liburcu 0.14 and later: its poll state type, and poll calls in flavors. */
#define ORCU_URCU_POLL 1
#endif
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Threads and the read side                                           */

ORCU_API void orcu__compat_register(int qsbr, const char *call);
ORCU_API void orcu__compat_defer(void (*fct)(void *p), void *p);
ORCU_API void orcu__compat_synchronize(void);

#ifdef ORCU_QSBR
#define ORCU__COMPAT_QSBR 1
#else
#define ORCU__COMPAT_QSBR 0
#endif

/* memb flavour: a memb reader; ORCU_QSBR: a qsbr reader, online. */
static inline void rcu_register_thread(void)
{
	orcu__compat_register(ORCU__COMPAT_QSBR, "rcu_register_thread");
}

static inline void rcu_unregister_thread(void) { orcu_unregister_thread(); }
static inline void rcu_init(void) {}
static inline void rcu_read_lock(void) { orcu_read_lock(); }
static inline void rcu_read_unlock(void) { orcu_read_unlock(); }

/* memb: inside a read-side section; ORCU_QSBR: online (as liburcu-qsbr). */
static inline int rcu_read_ongoing(void) { return orcu_read_ongoing(); }

static inline void rcu_quiescent_state(void) { orcu_quiescent_state(); }
static inline void rcu_thread_offline(void) { orcu_thread_offline(); }
static inline void rcu_thread_online(void) { orcu_thread_online(); }

/* ------------------------------------------------------------------ */
/* Grace periods and callbacks                                         */

/* Also from a call_rcu callback, as liburcu allows (orcu_synchronize()
 * does not: docs/MIGRATING.md). */
static inline void synchronize_rcu(void) { orcu__compat_synchronize(); }

struct rcu_head;

/* struct rcu_head has orcu_head's layout (a next pointer, then func), so
 * orcu queues it as it is and calls func with the same pointer. */
static inline void call_rcu(struct rcu_head *head,
			    void (*func)(struct rcu_head *head))
{
	orcu_call((struct orcu_head *)(void *)head,
		  (void (*)(struct orcu_head *))(void (*)(void))func);
}

static inline void rcu_barrier(void) { orcu_barrier(); }

/* Runs fct(p) after a grace period, from an orcu callback thread. */
static inline void defer_rcu(void (*fct)(void *p), void *p)
{
	orcu__compat_defer(fct, p);
}

static inline int rcu_defer_register_thread(void) { return 0; }
static inline void rcu_defer_unregister_thread(void) {}
static inline void rcu_defer_barrier(void) { orcu_barrier(); }
static inline void rcu_defer_barrier_thread(void) { orcu_barrier(); }

/* Polled grace periods, with liburcu 0.14's types. */
#ifdef ORCU_URCU_POLL
#ifdef __cplusplus
}
#endif
#include <urcu/urcu-poll.h>
#ifdef __cplusplus
extern "C" {
#endif
#else
struct urcu_gp_poll_state {
	unsigned long grace_period_id;
};
#endif

static inline struct urcu_gp_poll_state get_state_synchronize_rcu(void)
{
	struct urcu_gp_poll_state s = { orcu_get_state() };

	return s;
}

static inline struct urcu_gp_poll_state start_poll_synchronize_rcu(void)
{
	struct urcu_gp_poll_state s = { orcu_start_poll() };

	return s;
}

static inline bool poll_state_synchronize_rcu(struct urcu_gp_poll_state s)
{
	return orcu_poll_state(s.grace_period_id);
}

static inline void cond_synchronize_rcu(struct urcu_gp_poll_state s)
{
	orcu_cond_synchronize(s.grace_period_id);
}

/* ------------------------------------------------------------------ */
/* call_rcu_data: liburcu's callback worker pools.  orcu offloads every
 * CPU slot's callbacks to its own threads, so there is nothing to create,
 * choose or free: each call below is a no-op that reports success, and
 * every handle is the same placeholder (never NULL, never dereferenced).
 * call_rcu() keeps working whatever handle a thread "uses". */

struct call_rcu_data;

static inline struct call_rcu_data *orcu__compat_crdp(void)
{
	static char placeholder;

	return (struct call_rcu_data *)(void *)&placeholder;
}

static inline struct call_rcu_data *create_call_rcu_data(unsigned long flags,
							 int cpu_affinity)
{
	(void)flags;
	(void)cpu_affinity;
	return orcu__compat_crdp();
}

static inline void call_rcu_data_free(struct call_rcu_data *crdp) { (void)crdp; }
static inline struct call_rcu_data *get_default_call_rcu_data(void) { return orcu__compat_crdp(); }
static inline struct call_rcu_data *get_cpu_call_rcu_data(int cpu)
{
	(void)cpu;
	return orcu__compat_crdp();
}
static inline struct call_rcu_data *get_thread_call_rcu_data(void) { return orcu__compat_crdp(); }
static inline struct call_rcu_data *get_call_rcu_data(void) { return orcu__compat_crdp(); }

/* There is no single worker thread: the calling thread's id stands in. */
static inline pthread_t get_call_rcu_thread(struct call_rcu_data *crdp)
{
	(void)crdp;
	return pthread_self();
}

static inline void set_thread_call_rcu_data(struct call_rcu_data *crdp) { (void)crdp; }
static inline int set_cpu_call_rcu_data(int cpu, struct call_rcu_data *crdp)
{
	(void)cpu;
	(void)crdp;
	return 0;
}
static inline int create_all_cpu_call_rcu_data(unsigned long flags)
{
	(void)flags;
	return 0;
}
static inline void free_all_cpu_call_rcu_data(void) {}

/* orcu's own fork handlers do what liburcu's calls do: they park its
 * callback invokers between two callbacks, and no orcu thread allocates
 * outside a lock they take (docs/MIGRATING.md, "fork"). */
static inline void call_rcu_before_fork(void) {}
static inline void call_rcu_after_fork_parent(void) {}
static inline void call_rcu_after_fork_child(void) {}

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------ */
/* liburcu's headers, after the definitions above: their declarations of
 * the same names are compatible redeclarations of these functions. */

#ifdef ORCU_URCU_HEADERS
/* liburcu's rcu_flavor (what cds_lfht_new() passes) is orcu's flavor,
 * defined in liborcu-urcu (see orcu/urcu-flavor.h). */
struct rcu_flavor_struct;
#ifdef __cplusplus
extern "C" {
#endif
ORCU_API extern const struct rcu_flavor_struct orcu_rcu_flavor;
#ifdef __cplusplus
}
#endif
#define rcu_flavor orcu_rcu_flavor
/* As liburcu's <urcu.h> says: the unprefixed API is mapped (this enables
 * rculfhash.h's cds_lfht_new()). */
#ifndef URCU_API_MAP
#define URCU_API_MAP
#endif
#include <urcu/compiler.h>
#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>
#include <urcu/tls-compat.h>
#include <urcu/call-rcu.h>
#include <urcu/flavor.h>
#else
struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};
#endif

/* ------------------------------------------------------------------ */
/* Pointer publication: orcu's orders (seen by ThreadSanitizer).  These
 * replace <urcu/pointer.h>, which is marked included so a later
 * <urcu/rculist.h> does not redefine them. */

#undef rcu_dereference
#undef rcu_assign_pointer
#undef rcu_set_pointer
#undef rcu_xchg_pointer
#undef rcu_cmpxchg_pointer
#ifndef _URCU_POINTER_H
#define _URCU_POINTER_H
#endif

#define rcu_dereference(p) orcu_dereference(p)
#define rcu_assign_pointer(p, v) orcu_assign_pointer(p, v)
#define rcu_set_pointer(pp, v) ((void)__atomic_store_n((pp), (v), __ATOMIC_RELEASE))
#define rcu_xchg_pointer(pp, v) orcu_xchg_pointer(pp, v)
#define rcu_cmpxchg_pointer(pp, old, _new) __extension__({ \
	__typeof__(*(pp)) orcu__expect = (old); \
	(void)__atomic_compare_exchange_n((pp), &orcu__expect, (_new), 0, \
					  __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	orcu__expect; })

#endif /* ORCU_URCU_COMPAT_H */
