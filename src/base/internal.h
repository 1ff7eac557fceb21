/*
 * internal.h - the records shared between orcu's modules: the global state,
 * slot.h's slot record, the leader record, and the internal calls each module
 * offers the others.  Modules, bottom up (each calls those below it):
 *   leaves: cpulist.c (parsers), cblist.c, mpsc.c, delay.c;
 *   os.c (messages, clock, futexes, library threads, the shared records);
 *   config.c (cfg and ORCU_* into a record, thread cap), postcheck.c
 *   (the double-post set);
 *   registry.c (readers, reader wait and wake, caller checks);
 *   gp.c (GP engine); slot.c (one slot's list operations, invocation, the
 *   wakes of leaders and followers);
 *   nocb.c (leaders and followers) <- cpu.c (slots, topology, hotplug) <-
 *   serve.c (the server rule: who serves a slot without threads; start
 *   and retry of the threads) <- entry.c (orcu_init, lazy configuration,
 *   the public calls of registry.c, gp.c and cpu.c, inline polls) <-
 *   call.c (enqueue, flood, lazy) and barrier.c <- lifecycle.c (shutdown,
 *   fork);
 *   stats.c, compat.c and urcu_flavor.c (the liburcu layers) on top.
 * One call runs upward: the GP engine's hook to the server rule
 * (orcu__gp_hook: a GP ended, or the GP thread's turn to serve slots
 * without threads or retry threads).  And os.c holds a link anchor to
 * lifecycle.c, so a static link keeps the fork handlers.
 * scripts/src-metrics.py checks the
 * graph (no import cycle).
 * Nothing here is part of the public API.
 */
#ifndef ORCU_INTERNAL_H
#define ORCU_INTERNAL_H

#define ORCU_BUILDING_LIBRARY 1
#include "orcu.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "atomics.h"
#include "cblist.h"
#include "event.h"
#include "seq.h"

#define ORCU__CACHELINE 64
#define ORCU__ALIGNED __attribute__((aligned(ORCU__CACHELINE)))
#define ORCU__HIDDEN __attribute__((visibility("hidden")))
#define orcu__likely(x) __builtin_expect(!!(x), 1)
#define orcu__unlikely(x) __builtin_expect(!!(x), 0)

/* Impossible states: file:line and what was expected, then abort. */
#define ORCU__BUG_ON(cond) do { \
	if (orcu__unlikely(cond)) \
		orcu__die("%s:%d: expected !(%s)", __FILE__, __LINE__, #cond); \
	} while (0)

#ifdef ORCU_DEBUG
#define ORCU__ASSERT_HELD(m) orcu__assert_held(m, __FILE__, __LINE__, #m)
#else
#define ORCU__ASSERT_HELD(m) ((void)0)
#endif

/* ------------------------------------------------------------------ */
/* A lock-free multi-producer, single-consumer FIFO of callbacks.
 * Producers exchange the tail and then link; the consumer (holding the
 * slot's cb_lock) takes everything at once, waiting out a producer caught
 * between its exchange and its link. */
struct orcu__mpsc {
	struct orcu_head *head;             /* first node; __atomic accesses */
	struct orcu_head **_Atomic tail;    /* producers: the next field to link */
};

void orcu__mpsc_init(struct orcu__mpsc *q);
/* Returns true if the queue was empty before this push. */
bool orcu__mpsc_push(struct orcu__mpsc *q, struct orcu_head *h);
bool orcu__mpsc_empty(struct orcu__mpsc *q);
long orcu__mpsc_after_fork(struct orcu__mpsc *q);  /* fork child: repair, count */
/* Takes everything; returns count and the chain [*first..*last]. */
long orcu__mpsc_take(struct orcu__mpsc *q, struct orcu_head **first,
		     struct orcu_head **last);

/* ------------------------------------------------------------------ */
/* A posting thread's own queue on one slot (postq.c): the producer, its
 * owner, posts with plain stores; the consumer holds the slot's cb_lock.
 * Entries live in segments; position `posted` of the queue is entry
 * posted - base of the segment that holds it. */
#define ORCU__PSEG_N 62        /* entries per segment: 512 bytes */
#define ORCU__PSEG_SPARES 8    /* drained segments kept for the producer */

struct orcu__pseg {
	/* The next segment (producer links it, release, before publishing
	 * into it); in a free list, the next free one. */
	struct orcu__pseg *_Atomic next;
	unsigned long base;                    /* position of e[0] */
	struct orcu_head *_Atomic e[ORCU__PSEG_N];
};

struct orcu__postq {
	/* --- the owner's line: written by the owning thread only --- */
	struct orcu__pseg *pseg ORCU__ALIGNED;   /* holds position posted - 1 (or posted) */
	struct orcu__pseg *pfree;                /* spare segments taken from `spare` */
	struct orcu_head *newest;                /* the last head posted (double posts) */
	_Atomic unsigned long posted;            /* heads published (release store) */
	/* --- the consumer's line: under the slot's cb_lock --- */
	struct orcu__pseg *cseg ORCU__ALIGNED;   /* holds position taken (or taken - 1) */
	_Atomic unsigned long taken;             /* heads taken into the slot's list (release) */
	unsigned long snap;                      /* posted, read at the start of a splice */
	int nspare;                              /* about how many are in `spare` */
	/* --- written rarely: ownership, the free segments --- */
	struct orcu__pseg *_Atomic spare ORCU__ALIGNED; /* consumer pushes, producer takes all */
	struct orcu__postq *next;                /* the slot's list: set before the push, fixed */
	struct orcu__slot *slot;                 /* fixed */
	_Atomic int owned;                       /* 1 while a thread posts to it (point 4) */
};

struct orcu__postq *orcu__postq_new(struct orcu__slot *s);
/* The owner's next segment, once pseg is full; NULL when memory is short. */
struct orcu__pseg *orcu__postq_next_seg(struct orcu__postq *q);
long orcu__postq_take(struct orcu__postq *q, unsigned long upto,
		      struct orcu_head **first, struct orcu_head **last);
/* Ownership (postq.c points 4 to 7). */
struct orcu__postq *orcu__postq_switch(struct orcu__slot *s, bool *claimed);
bool orcu__postq_drained(struct orcu__postq *q);
void orcu__postq_after_fork(struct orcu__slot *s);

/* Owner only: publish h (its func set by the caller).  Returns the new
 * count of heads posted, or 0, having written nothing, when its segment is
 * full (the caller gets the next one with orcu__postq_next_seg() and
 * tries again).  Plain stores and one release store (postq.c point 1). */
static inline unsigned long orcu__postq_push(struct orcu__postq *q, struct orcu_head *h)
{
	unsigned long p = orcu__load_relaxed(&q->posted);
	struct orcu__pseg *seg = q->pseg;

	if (orcu__unlikely(p - seg->base == ORCU__PSEG_N))
		return 0;
	orcu__link_store_relaxed(&h->next, NULL);
	orcu__store_relaxed(&seg->e[p - seg->base], h);
	q->newest = h;
	/* Release: h and its entry are written before a consumer that reads
	 * the count takes them.  Pairs with the acquire in
	 * orcu__postq_published(). */
	orcu__store_release(&q->posted, p + 1);
	return p + 1;
}

/* Heads published so far.  Pairs with the release in orcu__postq_push(). */
static inline unsigned long orcu__postq_published(struct orcu__postq *q)
{
	return orcu__load_acquire(&q->posted);
}

/* ------------------------------------------------------------------ */
/* The CPU slot (struct orcu__slot) is in slot.h, included at the end. */

/* A follower's sleep state (follower_sleep), under its slot's cb_lock. */
enum orcu__follower_state {
	ORCU__FOLLOWER_AWAKE = 0,     /* running, or about to re-check its work */
	ORCU__FOLLOWER_SLEEPING,      /* found no work; a waker must notify it */
};

/* A leader's sleep state.  Zero is AWAKE: a leader that never slept
 * (including one just spawned) scans before waiting.  Kernel commit 11ed7f934cb8's lesson. */
enum orcu__leader_state {
	ORCU__LEADER_AWAKE = 0,       /* scanning or waiting for a GP */
	ORCU__LEADER_SLEEPING,        /* idle; the first enqueuer to claim it wakes it */
};

/* One leader per group of ORCU_NOCB_STRIDE slots. */
struct orcu__leader {
	_Atomic int sleep ORCU__ALIGNED;    /* orcu__leader_state: leader sets; enqueuers claim */
	struct orcu__event wake;            /* the leader sleeps on it: enqueuers, force, GP ends */
	_Atomic unsigned long gp_wait_seq;  /* leader writes, GP thread reads */
	_Atomic int exists;                 /* thread running */
	_Atomic int stop;
	_Atomic int force;                  /* barrier/online: rescan even if nothing new */
	/* Threads owning a posting queue on one of the group's slots; with
	 * none, the leader sleeps without membarrier() (postq.c point 5). */
	_Atomic int postq_owners;
	/* Callbacks wait on slots nobody scans: posters raise it, the
	 * adopter exchanges it to 0 and serves them in place (serve.c). */
	_Atomic int orphans;
	int first, nslots;                  /* the group: [first, first + nslots) */
	pthread_t tid;
};

/* ------------------------------------------------------------------ */
/* Global state. */

struct orcu__global {
	pthread_mutex_t lock;          /* topology, thread spawning, lifetime */
	_Atomic int initialized;       /* slots allocated */
	_Atomic int started;           /* GP thread running */

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
	long max_threads;              /* ORCU_MAX_THREADS: cap on library threads */
	int futex_hash;                /* ORCU_FUTEX_HASH: size the futex hash (os.c) */
	uint64_t *housekeeping;        /* bitmap over real CPUs or NULL */

	struct orcu__slot *slots;      /* [nr_possible] */
	struct orcu__leader *leaders;  /* [nr_groups] */
	/* Bit g of word g / 64: leader g waits for a GP (nocb.c point 3).
	 * Leaders set and clear their bit; a GP end reads the words and
	 * clears the bits of the leaders it wakes.  One cache line for 512
	 * groups, so a GP end does not touch every leader's record. */
	_Atomic uint64_t *leader_gp_wait;   /* [(nr_groups + 63) / 64] */

	_Atomic int nr_inline;         /* slots not offloaded: 0 skips inline polls */
	_Atomic int stopping;          /* orcu_shutdown is joining threads: spawn nothing */
	/* The server rule's state (serve.c, its only writer but for os.c
	 * raising degraded when a creation fails). */
	_Atomic int degraded;          /* a library thread is missing: retry */
	_Atomic uint64_t retry_after_ns; /* next spawn retry (degraded) */
	/* No leader serves some work (callbacks on slots without threads, a
	 * GP asked for): a requester raises it, the GP thread, a waiter or a
	 * safe point takes it. */
	_Atomic int unserved;
	struct orcu__leader *_Atomic adopter; /* a running leader that serves orphans */
	_Atomic int threads_alive;
	_Atomic int leaders_alive;
	_Atomic int followers_alive;
};

ORCU__HIDDEN extern struct orcu__global orcu__g;

/* Per-thread state beyond the public reader record. */
#define ORCU__POSTQS_PER_THREAD 4
struct orcu__tls {
	int bound_cpu;        /* -1: follow the real CPU */
	int library_thread;   /* 1 in orcu-* threads */
	/* A fork child's copy of the library thread that forked (from a
	 * callback or a stall handler): it finishes what it runs, then ends,
	 * detached; the child starts threads of its own (lifecycle.c). */
	int retired;
	int library_slot;     /* the slot a follower/leader posts to */
	struct orcu__slot *invoking_slot;  /* the slot whose chain this thread invokes */
	/* Callbacks of that chain this thread started and has not counted in
	 * n_done yet (slot.c invoke_chain()); a fork from inside one leaves
	 * the child this count (slot.c point 5). */
	long chain_unnoted;
	/* Posting queues this thread owns (call.c), one per slot, and the
	 * one it posted to last. */
	struct orcu__postq *postq;
	struct orcu__postq *postqs[ORCU__POSTQS_PER_THREAD];
	int npostqs;
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
		enqueue_wakeups, adopted, qhimark_crossings, hurried_gps,
		poster_waits, poster_overruns, lazy_flushes, stalls_reported,
		gp_thread_cpu_ns, takeovers,
		gp_wait_slices,   /* a GP's sleep on readers that ran out (registry.c) */
		gp_wait_arms,     /* the reader wait armed its wake (and fenced) */
		gp_membarriers;   /* membarrier() paid by a GP's reader wait (registry.c) */
};
ORCU__HIDDEN extern struct orcu__counters orcu__cnt;
#define orcu__count(field, n) orcu__fetch_add_relaxed(&orcu__cnt.field, (n))

/* ------------------------------------------------------------------ */
/* Cross-module calls. */

/* os.c: the bottom layer, calls no other module. */
/* The argument of every library thread's start routine; name first, so a
 * fault-injection test can tell which thread is being created. */
struct orcu__spawn_arg {
	char name[16];
	void *(*fn)(void *);
	void *arg;
	_Atomic uint32_t running;   /* the thread set itself up (os.c) */
};
void *orcu__spawn_trampoline(void *p);
void orcu__die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void orcu__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void orcu__misuse(const char *call, const char *what) __attribute__((noreturn));
uint64_t orcu__now_ns(void);
int orcu__spawn(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg);
void orcu__set_housekeeping_affinity(void);
void orcu__assert_held(pthread_mutex_t *m, const char *file, int line, const char *what);
int orcu__futex_wait(_Atomic uint32_t *addr, uint32_t val, int64_t timeout_ns);
void orcu__futex_wake(void *addr, int n);
void orcu__stall_handler_set(orcu_stall_handler_t handler, void *arg);
orcu_stall_handler_t orcu__stall_handler_get(void **arg);
void orcu__stall_hook_fork_lock(bool lock);   /* fork: take / release */

/* config.c: calls os.c and cpulist.c. */
/* The numeric knobs, in the order config.c reads them. */
enum orcu__knob {
	ORCU__KNOB_STRIDE, ORCU__KNOB_POLL, ORCU__KNOB_QHIMARK, ORCU__KNOB_QLOWMARK,
	ORCU__KNOB_QMAX, ORCU__KNOB_LAZY_MS, ORCU__KNOB_LAZY_MAX, ORCU__KNOB_STALL_MS,
	ORCU__KNOB_TAKEOVER_MS, ORCU__KNOB_BATCH, ORCU__KNOB_GP_BATCH_US,
	ORCU__KNOB_MAX_THREADS, ORCU__NR_KNOBS
};
/* One configuration, read but not yet applied. */
struct orcu__conf {
	int nr_possible;
	uint64_t *online;       /* [nr_possible] */
	uint64_t *nocbs;        /* [nr_possible] */
	uint64_t *housekeeping; /* [CPU_SETSIZE] real CPUs, or NULL */
	long knob[ORCU__NR_KNOBS];
	int futex_hash;         /* ORCU_FUTEX_HASH */
};
/* cfg (NULL: none) and the environment into *c; 0, or -EINVAL (a bad cfg
 * value, one line said) or -ENOMEM, and then *c holds nothing. */
int orcu__conf_build(const struct orcu_config *cfg, struct orcu__conf *c);
/* Under orcu__g.lock: the knobs and housekeeping set into orcu__g. */
void orcu__conf_apply(struct orcu__conf *c);
void orcu__conf_free(struct orcu__conf *c);
/* Before creating a leader or follower (under orcu__g.lock): true if one
 * more library thread stays within ORCU_MAX_THREADS, counting the GP
 * thread, leaders_alive + followers_alive (or threads_alive if larger).
 * False prints one line, once per process; the caller then leaves the slot
 * to existing threads.  The GP thread itself is never refused. */
bool orcu__thread_budget_ok(void);
/* A boolean ORCU_* variable: "0" or "1"; unset gives def; any other text
 * gives def and one line naming the variable and the text (once per
 * variable for ORCU_NO_MEMBARRIER and ORCU_CHECK_CALLS). */
int orcu__env_bool(const char *name, int def);

/* postcheck.c: the double-post set; calls os.c and config.c. */
/* -1 not yet decided, 0 off, 1 on: the double-post set is kept (decided
 * once, at the first post, by orcu__double_call_enabled(); read by every
 * invoker before it calls the forget). */
ORCU__HIDDEN extern _Atomic int orcu__check_calls;
bool orcu__double_call_enabled(void);
/* Aborts, naming call, if h is already in the set; else adds it. */
void orcu__double_call_check(struct orcu_head *h, const char *call);
void orcu__double_call_forget(struct orcu_head *h);
void orcu__double_call_fork_prepare(void);
void orcu__double_call_fork_parent(void);
void orcu__double_call_fork_child(void);

/* registry.c */
void orcu__registry_lock(void);
void orcu__registry_unlock(void);
/* Wait until no reader holds the GP that gp.c is running (called by gp.c). */
void orcu__registry_wait_readers(bool expedited, uint64_t gp_start_ns);
void orcu__registry_after_fork_child(void);
bool orcu__registry_has_readers(void);
bool orcu__qsbr_enter_for_callbacks(void);
/* Misuse checks of a caller about to wait for a GP or for callbacks. */
void orcu__gp_check_caller(const char *call);
bool orcu__qsbr_offline_for_wait(void);
/* A memb thread that waits for a GP (orcu__gp_drive()) is in no section:
 * parked, it costs a GP no membarrier() and no wait.  park returns true
 * if it parked the caller; unpark undoes it (also safe if not parked). */
bool orcu__memb_park(void);
void orcu__memb_unpark(void);
void orcu__qsbr_leave_for_callbacks(bool entered);
void orcu__membarrier_init(void);
/* The halves of the public calls that entry.c completes. */
int orcu__register(int kind, const char *call);
void orcu__registry_read_lock_slow(void);
void orcu__qsbr_quiescent_state(void);
void orcu__qsbr_offline(void);
void orcu__qsbr_online(void);
void orcu__membarrier_master(void);

/* gp.c */
extern _Atomic unsigned long orcu__gp_seq;
/* The only call from gp.c up to the callback layer, set by entry.c
 * to orcu__serve_gp_event(): ENDED with gp_seq at the end of every GP, on
 * the thread that ended it; SERVE on the GP thread, when callbacks wait
 * on slots without threads and no leader runs, or a retry is due. */
enum orcu__gp_event { ORCU__GP_ENDED, ORCU__GP_SERVE };
ORCU__HIDDEN extern void (*_Atomic orcu__gp_hook)(enum orcu__gp_event ev, unsigned long seq);
/* Defined only by validation programs (orcu-torture, tests): nonzero makes
 * grace periods end without waiting for readers, the "busted" flavor the
 * torture oracle must catch.  Not defined by, nor exported from, the
 * library. */
int orcu_test_gp_busted(void) __attribute__((weak));
/* How soon a requested GP must start: BATCH lets callback-only demand
 * wait up to ORCU_GP_BATCH_US after the previous GP so one GP serves more
 * callbacks; NOW is for waiters; HURRY also expedites the reader wait. */
enum orcu__gp_how { ORCU__GP_BATCH, ORCU__GP_NOW, ORCU__GP_HURRY };
/* False if no GP thread runs to serve it (gp.c point 6). */
bool orcu__gp_request(unsigned long target, enum orcu__gp_how how);
/* Drive GPs up to every target asked for, on this thread (gp.c point 6);
 * true if there was one.  The caller may block. */
bool orcu__gp_run_requested(void);
/* Run GPs on the calling thread (or wait for the thread running one)
 * until gp_seq reaches target.  The caller may block. */
void orcu__gp_drive(unsigned long target, bool hurry);
bool orcu__gp_thread_running(void);
void orcu__gp_kick(void);          /* wake the GP thread (serve.c has work) */
void orcu__gp_set_unbatched(bool on);  /* a barrier waits: no batch window */
unsigned long orcu__gp_snap(void);     /* fence, then the end of the next GP */
uint64_t orcu__gp_thread_cpu_ns(void);
int orcu__gp_start_thread(void);
void orcu__gp_stop_thread(void);
void orcu__gp_after_fork_child(void);

/* slot.c: see slot.h */

/* cpu.c */
int orcu__cpu_setup(int nr_possible, const uint64_t *online, const uint64_t *nocbs);
void orcu__mark_seen(struct orcu__slot *s);
int orcu__getcpu_slow(void);
int orcu__cpu_start_slots(void);
/* The halves of the public CPU calls that entry.c completes. */
int orcu__cpu_check(const char *call, int cpu);
int orcu__cpu_online(int cpu);
int orcu__cpu_offline(int cpu);
void orcu__cpu_set_offload(int cpu, bool on);

/* lifecycle.c: shutdown and fork, the top; os.c keeps it linked. */
ORCU__HIDDEN extern const int orcu__lifecycle_linked;

/* serve.c: the server rule (who serves a slot without threads), the
 * start and retry of the threads; above cpu.c and nocb.c. */
int orcu__serve_start_locked(void); /* under orcu__g.lock: 0 or -EAGAIN */
void orcu__retry(bool wait);       /* stopped: start; degraded: retry if due */
bool orcu__serve_posted(void);   /* false: no leader runs */
void orcu__serve_kick(struct orcu__slot *s);    /* s has work for its server */
void orcu__serve_waited(void);     /* after an application thread's GP wait */
void orcu__serve_gp_asked(void);   /* orcu_start_poll() and no GP thread */
void orcu__serve_after_stop(void); /* orcu_shutdown(), threads joined */
void orcu__serve_mark_pending(void);  /* fork child, late configuration */
void orcu__serve_gp_event(enum orcu__gp_event ev, unsigned long seq); /* orcu__gp_hook */
void orcu__safe_point_slow(void);

/* entry.c: first use (configure) and the quiescent-point inline polls. */
int orcu__ensure_init(void);       /* slots exist (no threads): 0 or -ENOMEM */
int orcu__ensure_started_slow(void);
void orcu__inline_poll_slow(void);

/* The GP thread and the slots' threads exist (or were tried): 0, or
 * -EAGAIN.  Pairs with the release store of `started` in start_locked(). */
static inline int orcu__ensure_started(void)
{
	if (orcu__likely(orcu__load_acquire(&orcu__g.started)))
		return 0;
	return orcu__ensure_started_slow();
}

/* Work no library thread serves (serve.c rule d), published by the
 * caller and followed by a fence: leave it to a waiter or safe point.
 * Relaxed: the caller's fence and the waiter's, after its exchange, pair. */
static inline void orcu__unserved_raise(void)
{
	if (!orcu__load_relaxed(&orcu__g.unserved))
		orcu__store_relaxed(&orcu__g.unserved, 1);
}

/* Threads are missing, or work waits for a waiter (serve.c): two relaxed
 * loads of words nobody writes while the threads run. */
static inline bool orcu__serve_wanted(void)
{
	return orcu__unlikely(orcu__load_relaxed(&orcu__g.unserved) |
			      orcu__load_relaxed(&orcu__g.degraded));
}

/* An application thread's safe point (orcu_quiescent_state(),
 * orcu_thread_online/offline()): when no library thread could serve
 * them, it serves slots without threads and the GPs asked for, and
 * retries missing threads (serve.c rule d). */
static inline void orcu__safe_point(void)
{
	if (orcu__serve_wanted())
		orcu__safe_point_slow();
}
/* An application thread at a quiescent point runs its inline slot's ready
 * callbacks (a batch).  Nothing to do while every slot is offloaded. */
static inline void orcu__inline_poll(void)
{
	if (orcu__unlikely(orcu__load_relaxed(&orcu__g.nr_inline)))
		orcu__inline_poll_slow();
}

/* What an application thread does for orcu at each of its quiescent
 * points (orcu_quiescent_state(), orcu_thread_online/offline()): inline
 * callbacks, then the safe point's work. */
static inline void orcu__quiescent_point(void)
{
	orcu__inline_poll();
	orcu__safe_point();
}

/* call.c */
void orcu__flush_lazy_all(void);

/* nocb.c */
int orcu__nocb_spawn_slot(struct orcu__slot *s);      /* under orcu__g.lock */
void orcu__nocb_request_stop(void);                   /* under orcu__g.lock */
void orcu__nocb_join_all(void);                       /* without it */
void orcu__nocb_forget_all(void);                     /* under it, or a fork child */
void orcu__nocb_gp_done(unsigned long seq);           /* wake leaders waiting for it */

/* barrier.c */
void orcu__barrier_cb(struct orcu_head *h);
int orcu__barrier_timed(int64_t deadline_ns);
void orcu__barrier_fork_prepare(void);
void orcu__barrier_fork_parent(void);
void orcu__barrier_fork_child(void);

/* debug delay hooks (delay.c): widen race windows under torture */
enum orcu__delay_point {
	ORCU__DELAY_GP_START, ORCU__DELAY_GP_END, ORCU__DELAY_LEADER_SLEEP,
	ORCU__DELAY_BARRIER, ORCU__DELAY_ENQUEUE,
	ORCU__DELAY_SHARED_POST,     /* counted in n_posted, not yet pushed (call.c) */
	ORCU__DELAY_NPOINTS
};
extern _Atomic int orcu__delay_enabled;
void orcu__delay_slow(enum orcu__delay_point p);
/* Tests: call hook at every delay point instead of the random delays, to
 * hold one thread at one point (NULL: back to orcu_debug_set_delays()). */
void orcu__delay_set_hook(void (*hook)(enum orcu__delay_point p));
/* This process's threads still running (delay.c) whose name starts with
 * one of prefixes (NULL-terminated); the first max names go to names.
 * -1 without /proc.  orcu_debug_thread_count() and the tests use it. */
int orcu__thread_names(const char *const *prefixes, char names[][32], int max);
static inline void orcu__delay(enum orcu__delay_point p)
{
	if (orcu__unlikely(orcu__load_relaxed(&orcu__delay_enabled)))
		orcu__delay_slow(p);
}

#include "slot.h"

/* ------------------------------------------------------------------ */
/* The slot the calling thread posts to (cpu.c): its library slot, the
 * slot it bound itself to, or the CPU it runs on, read from the rseq area
 * the C library registered (one load), else asked of sched_getcpu().  A
 * CPU seen for the first time comes online. */
#ifdef ORCU_HAVE_RSEQ_OFFSET
#include <sys/rseq.h>
#endif

static inline int orcu__getcpu(void)
{
#ifdef ORCU_HAVE_RSEQ_OFFSET
	if (orcu__likely(__rseq_size != 0)) {
		const struct rseq *rs = (const struct rseq *)
			((const char *)__builtin_thread_pointer() + __rseq_offset);
		/* The kernel writes it on this thread's behalf. */
		int cpu = (int)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);

		if (orcu__likely(cpu >= 0))
			return cpu;
	}
#endif
	return orcu__getcpu_slow();
}

static inline struct orcu__slot *orcu__current_slot(void)
{
	struct orcu__slot *s;
	int cpu;

	if (orcu__tls.library_slot >= 0)
		return &orcu__g.slots[orcu__tls.library_slot];
	if (orcu__tls.bound_cpu >= 0)
		return &orcu__g.slots[orcu__tls.bound_cpu];
	cpu = orcu__getcpu();
	/* A division only when the topology has fewer slots than CPUs. */
	if (orcu__unlikely(cpu >= orcu__g.nr_possible))
		cpu %= orcu__g.nr_possible;
	s = &orcu__g.slots[cpu];
	if (orcu__unlikely(!orcu__slot_ever_online(s)))
		orcu__mark_seen(s);
	return s;
}

#endif
