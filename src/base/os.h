/*
 * os.h - the interface of os.c, the bottom of the library: the records
 * every module shares (the global state orcu__g, the per-thread record
 * orcu__tls, the counters), the macros every module uses, messages, the
 * clock, futexes and library threads.  Every module's header includes
 * it but atomics.h, seq.h, event.h, trace.h, cpulist.h, cblist.h and
 * urcu_abi/abi.h.
 *
 * The modules, bottom up: each calls only those before it, but for the
 * one upward call named below.  Each offers the others a header of its
 * own (gp.c: gp.h) in its layer's folder (src/base, src/readers,
 * src/callbacks, src/top), but for call.c, stats.c, compat.c and
 * urcu_flavor.c, which offer none; lifecycle.h is only its link anchor,
 * and the files of src/compat/urcu_abi share abi.h.
 *   src/base: cpulist.c (parsers; libc only); os.c (messages, clock,
 *   futexes, library threads, the shared records); mpsc.c (the shared
 *   queues), delay.c (debug hooks); cblist.c (the segmented list);
 *   config.c (cfg and ORCU_* into a record, thread cap); postcheck.c
 *   (the double-post set); and the headers alone: atomics.h, seq.h,
 *   event.h, trace.h, sanitize.h;
 *   src/readers: registry.c (readers, reader wait and wake, caller
 *   checks); gp.c (GP engine);
 *   src/callbacks: postq.c (a posting thread's own queues and who owns
 *   them); slot.c (one slot's list operations, invocation); nocb.c
 *   (leaders and followers, both halves of their sleep); cpu.c
 *   (slots, topology, hotplug); serve.c (the server rule: who serves a
 *   slot without threads; start and retry of the threads);
 *   src/top: entry.c (orcu_init, lazy configuration, the public calls of
 *   registry.c, gp.c and cpu.c, inline polls); call.c (enqueue, flood,
 *   lazy) and barrier.c; free.c (orcu_free, orcu_retire: per-thread
 *   batches posted with orcu_call); lifecycle.c (shutdown, fork); stats.c;
 *   src/compat: compat.c, urcu_flavor.c, then urcu_abi/ (the liburcu
 *   layers).
 * Three calls run upward, through hooks: a GP ended
 * (orcu__gp_end_hook, to nocb.c's leaders), the server rule's turn
 * to serve slots without threads or retry threads (orcu__gp_serve_hook,
 * to serve.c), and a thread's exit (orcu__thread_exit_hook, os.c's key,
 * to lifecycle.c's table of exit steps).  Objects are referred to upward
 * twice: registry.c reads gp.c's gp_seq (stall reports), and
 * entry.c and stats.c hold a link anchor to lifecycle.c, so a static
 * link keeps the fork handlers (lifecycle.h).
 * scripts/src-metrics.py checks the layers and the graph (no import
 * cycle).
 * Nothing here is part of the public API.
 */
#ifndef ORCU_OS_H
#define ORCU_OS_H

#define ORCU_BUILDING_LIBRARY 1
#include "orcu.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "atomics.h"

/* Records the shared ones point to, each defined in its module's header
 * (slot.h, nocb.h, postq.h). */
struct orcu__slot;
struct orcu__leader;
struct orcu__postq;

#define ORCU__CACHELINE 64
#define ORCU__ALIGNED __attribute__((aligned(ORCU__CACHELINE)))

/* orcu_free_rcu()'s head (free.c) carries, as its function, its offset in
 * the object plus one: no function lives in the first page, so the
 * invoker (slot.c invoke_chain()) frees the object instead of calling. */
#define ORCU__FREE_AT(offset) ((void (*)(struct orcu_head *))(uintptr_t)((offset) + 1))
#define ORCU__IS_FREE_AT(f) ((uintptr_t)(f) <= ORCU_FREE_RCU_MAX_OFFSET)
#define ORCU__HIDDEN __attribute__((visibility("hidden")))
#define orcu__likely(x) __builtin_expect(!!(x), 1)
#define orcu__unlikely(x) __builtin_expect(!!(x), 0)

/* Impossible states: file:line and what was expected, then abort. */
#define ORCU__BUG_ON(cond) \
	do { \
		if (orcu__unlikely(cond)) \
			orcu__die("%s:%d: expected !(%s)", __FILE__, __LINE__, #cond); \
	} while (0)

#ifdef ORCU_DEBUG
#define ORCU__ASSERT_HELD(m) orcu__assert_held(m, __FILE__, __LINE__, #m)
#else
#define ORCU__ASSERT_HELD(m) ((void)0)
#endif

/* ------------------------------------------------------------------ */
/* Global state. */

struct orcu__global {
	pthread_mutex_t lock;    /* topology, thread spawning, lifetime */
	_Atomic int initialized; /* slots allocated */
	_Atomic int started;     /* GP thread running */

	/* configuration (fixed at init) */
	int nr_possible;
	int stride;
	int nr_groups;
	int nocb_poll;
	long qhimark, qlowmark, qmax;
	long lazy_ms, lazy_max;
	long stall_ms;
	long inline_takeover_ms;
	long gp_batch_us;
	int inline_batch;
	long max_threads;       /* ORCU_MAX_THREADS: cap on library threads */
	int futex_hash;         /* ORCU_FUTEX_HASH: size the futex hash (os.c) */
	uint64_t *housekeeping; /* bitmap over real CPUs or NULL */

	/* [nr_possible] and [nr_groups], element 0 unused: slot 0 and
	 * leader 0 are static (slot.h), and the only ones before a
	 * configuration. */
	struct orcu__slot *slots;
	/* The slots' geometry, for a report that names a slot (mpsc.c):
	 * sizeof (struct orcu__slot), where its lazy queue is, slot 0. */
	size_t slot_bytes, slot_lazyq_at;
	const void *slot0;
	struct orcu__leader *leaders;
	/* Bit g of word g / 64: leader g waits for a GP (nocb.c point 3).
	 * Leaders set and clear their bit; a GP end reads the words and
	 * clears the bits of the leaders it wakes.  One cache line for 512
	 * groups, so a GP end does not touch every leader's record. */
	_Atomic uint64_t *leader_gp_wait; /* [(nr_groups + 63) / 64] */

	_Atomic int nr_inplace;          /* slots not attached: 0 skips in-place polls */
	_Atomic uint64_t *inplace_work;  /* bit per in-place slot with work (serve.c) */
	_Atomic uint64_t inplace_due_ns; /* the next offer ends (serve.c); 0: none */
	_Atomic int stopping;            /* orcu_shutdown is joining threads: spawn nothing */
	/* The server rule's state (serve.c, its only writer but for os.c
	 * raising degraded when a creation fails). */
	_Atomic int degraded;            /* a library thread is missing: retry */
	_Atomic uint64_t retry_after_ns; /* next spawn retry (degraded) */
	/* No library thread serves some work (callbacks on slots without
	 * threads, a GP asked for): a requester raises it, the GP thread, a
	 * waiter or a safe point takes it. */
	_Atomic int unserved;
	_Atomic int threads_alive;
	_Atomic int leaders_alive;
	_Atomic int followers_alive;
};

ORCU__HIDDEN extern struct orcu__global orcu__g;

/* Per-thread state beyond the public reader record. */
#define ORCU__POSTQS_PER_THREAD 4
struct orcu__tls {
	int bound_cpu;      /* -1: follow the real CPU */
	int library_thread; /* 1 in orcu-* threads */
	/* A fork child's copy of the library thread that forked (from a
	 * callback or a stall handler): it finishes what it runs, then ends,
	 * detached; the child starts threads of its own (lifecycle.c). */
	int retired;
	int library_slot;                 /* the slot a follower/leader posts to */
	struct orcu__slot *invoking_slot; /* the slot whose chain this thread invokes */
	/* The place in that slot's list up to which this thread counted
	 * what it started in n_done (slot.c invoke_chain()); a fork from a
	 * callback leaves the child the places after it (slot.c point 5). */
	unsigned long chain_noted;
	/* Posting queues this thread owns (call.c), one per slot, and the
	 * one it posted to last. */
	struct orcu__postq *postq;
	struct orcu__postq *postqs[ORCU__POSTQS_PER_THREAD];
	int npostqs;
	/* The slot this thread's lazy callbacks may still be held on: its
	 * next ordinary post there flushes them first (call.c). */
	struct orcu__slot *lazy_slot;
	/* This thread runs GPs right now (a stall handler it calls must not
	 * wait for a GP: that one would be its own).  Set by gp.c, read by
	 * orcu__gp_check_caller(). */
	int gp_owning;
};
extern __thread struct orcu__tls orcu__tls __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------------ */
/* Statistics (stats.c): relaxed counters. */

struct orcu__counters {
	_Atomic uint64_t gp_expedited, callbacks_lazy, barriers,
		barriers_run, gp_wakeups, gp_leader_wakeups, leader_wakeups,
		enqueue_wakeups, adopted, qhimark_crossings, poster_waits,
		poster_overruns, lazy_flushes, stalls_reported, takeovers,
		gp_wait_slices, /* a GP's sleep on readers that ran out (registry.c) */
		gp_wait_missed, /* ... and then no reader held: a lost wake-up */
		gp_wait_arms,   /* the reader wait armed its wake (and fenced) */
		gp_membarriers; /* membarrier() paid by a GP's reader wait (registry.c) */
};
ORCU__HIDDEN extern struct orcu__counters orcu__cnt;
#define orcu__count(field, n) orcu__fetch_add_relaxed(&orcu__cnt.field, (n))

/* ------------------------------------------------------------------ */
/* os.c: the bottom layer, calls no other module. */
/* The argument of every library thread's start routine; name first, so a
 * fault-injection test can tell which thread is being created. */
struct orcu__spawn_arg {
	char name[16];
	void *(*fn)(void *);
	void *arg;
	_Atomic uint32_t running; /* the thread set itself up (os.c) */
};
void *orcu__spawn_trampoline(void *p);
/* Cancellation disabled, then the caller's state back (os.c
 * "Cancellation"); the library's sleep and join, which never act on a
 * pending cancel. */
int orcu__nocancel_begin(void);
void orcu__nocancel_end(int old);
void orcu__sleep_ns(long ns);
void orcu__join(pthread_t thread);
void orcu__die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void orcu__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A caller's misuse: "orcu: call: what", then abort. */
static inline __attribute__((noreturn)) void orcu__misuse(const char *call, const char *what) { orcu__die("%s: %s", call, what); }
uint64_t orcu__clock_ns(clockid_t id);
static inline uint64_t orcu__now_ns(void) { return orcu__clock_ns(CLOCK_MONOTONIC); }
int orcu__spawn(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg);
void orcu__assert_held(pthread_mutex_t *m, const char *file, int line, const char *what);
int orcu__futex_wait(_Atomic uint32_t *addr, uint32_t val, int64_t timeout_ns);
void orcu__futex_wake(void *addr, int n);
void orcu__stall_handler_set(orcu_stall_handler_t handler, void *arg);
orcu_stall_handler_t orcu__stall_handler_get(void **arg);
void orcu__stall_hook_fork_lock(bool lock); /* fork: take / release */

/* Thread exit: one key for every module's per-thread state (os.c).
 * orcu__thread_exit_arm(): this thread's end runs orcu__thread_exit_hook,
 * lifecycle.c's table of exit steps; 0, or -EAGAIN when no key can be
 * had (the caller then keeps no per-thread state).  The hook is set by
 * lifecycle.c's constructor. */
ORCU__HIDDEN extern void (*_Atomic orcu__thread_exit_hook)(void);
int orcu__thread_exit_arm(void);
void orcu__thread_exit_unload(void); /* lifecycle.c: the image goes */

#endif
