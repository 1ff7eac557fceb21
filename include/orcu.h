/*
 * orcu.h - the one public header of orcu, a userspace RCU with callback
 * offloading.  Everything a program needs: reader registration, the inline
 * read side, grace periods, callbacks, barriers, the CPU/offload model and
 * statistics.  Names prefixed orcu__ are internal and may change; they are
 * visible here only because the read side is inline.
 *
 * Conventions: fallible calls return 0 or a negative errno and never set
 * errno.  Misuse that would deadlock or corrupt (synchronize inside a
 * read-side critical section, unbalanced unlock, ...) prints one line naming
 * the call and aborts.
 */
#ifndef ORCU_H
#define ORCU_H

#ifndef __cplusplus
#include <stdatomic.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ORCU_BUILDING_LIBRARY) || !defined(ORCU_STATIC)
#define ORCU_API __attribute__((visibility("default")))
#else
#define ORCU_API
#endif

#define ORCU_VERSION_MAJOR 0
#define ORCU_VERSION_MINOR 1

/* ------------------------------------------------------------------ */
/* Callback heads                                                      */

/* Embed in the object to be reclaimed; layout-compatible with liburcu. */
struct orcu_head {
	struct orcu_head *next;
	void (*func)(struct orcu_head *head);
};

/* ------------------------------------------------------------------ */
/* Configuration: every field zero means "default, or the environment".  */

struct orcu_config {
	const char *cpus;         /* like ORCU_CPUS: "possible=N,online=<cpulist>" */
	const char *nocbs;        /* like ORCU_NOCBS: "all", "none" or a cpulist */
	const char *housekeeping; /* like ORCU_HOUSEKEEPING: cpulist for library threads */
	int nocb_stride;          /* like ORCU_NOCB_STRIDE: slots per leader group */
	int nocb_poll;            /* like ORCU_NOCB_POLL: 1 = leaders poll, -1 = force off */
	long qhimark;             /* like ORCU_QHIMARK: pending per slot that hurries GPs */
	long qlowmark;            /* like ORCU_QLOWMARK: pending under which hurry stops */
	long qmax;                /* like ORCU_QMAX: pending per slot that makes posters wait */
	long lazy_ms;             /* like ORCU_LAZY_MS: longest a lazy callback is held */
	long lazy_max;            /* like ORCU_LAZY_MAX: lazy callbacks a slot holds at most */
	long stall_ms;            /* like ORCU_STALL_MS: stall warning after; -1 disables */
	long inline_takeover_ms;  /* like ORCU_INLINE_TAKEOVER_MS: inline slot takeover bound */
	int inline_batch;         /* like ORCU_INLINE_BATCH: callbacks per inline invocation */
	int reserved[8];
};

/* ------------------------------------------------------------------ */
/* Statistics (orcu_get_stats): a snapshot, counters since process start. */

struct orcu_stats {
	uint64_t gp_completed;        /* grace periods ended */
	uint64_t gp_expedited;        /* of which hurried (expedited or flood) */
	uint64_t callbacks_queued;    /* orcu_call + orcu_call_lazy */
	uint64_t callbacks_lazy;      /* of which lazy */
	uint64_t callbacks_invoked;   /* user callbacks invoked */
	uint64_t callbacks_pending;   /* queued - invoked, right now */
	uint64_t callbacks_inline;    /* invoked by application threads (inline slots) */
	uint64_t barriers;            /* orcu_barrier calls */
	uint64_t barriers_run;        /* barriers that really posted markers (others piggybacked or were idle) */
	uint64_t gp_wakeups;          /* wake-ups issued by the GP thread (leaders, waiters) */
	uint64_t gp_leader_wakeups;   /* of which to leaders */
	uint64_t leader_wakeups;      /* follower wake-ups issued by leaders */
	uint64_t enqueue_wakeups;     /* leader wake-ups issued by orcu_call */
	uint64_t takeovers;           /* inline slots whose follower took over */
	uint64_t threads_alive;       /* library threads running now */
	uint64_t leaders_alive;
	uint64_t followers_alive;
	uint64_t slots_possible;
	uint64_t slots_online;
	uint64_t slots_offloaded;
	uint64_t adopted_callbacks;   /* moved off never-onlined or offline inline slots */
	uint64_t qhimark_crossings;   /* flood control */
	uint64_t hurried_gps;
	uint64_t poster_waits;
	uint64_t poster_overruns;     /* over ORCU_QMAX where waiting was not allowed */
	uint64_t peak_pending;        /* highest pending of any one slot */
	uint64_t lazy_flushes;
	uint64_t stalls_reported;
	uint64_t gp_thread_cpu_ns;    /* CPU time consumed by the GP thread */
	uint64_t reserved[15];
};

/* A stall report, handed to the handler set with orcu_set_stall_handler(). */
struct orcu_stall_reader {
	int tid;
	char name[16];
	const char *flavor;           /* "memb" or "qsbr" */
	unsigned long nesting;        /* memb nesting depth; 0 for qsbr */
};

struct orcu_stall_info {
	unsigned long gp_seq;         /* the GP that is stalled */
	long waited_ms;               /* how long it has waited so far */
	int nr_readers;               /* readers holding it (first ORCU_STALL_MAX_READERS listed) */
	struct orcu_stall_reader readers[16];
};
#define ORCU_STALL_MAX_READERS 16

typedef void (*orcu_stall_handler_t)(const struct orcu_stall_info *info, void *arg);

/* ------------------------------------------------------------------ */
/* Threads and readers                                                 */

ORCU_API int orcu_register_thread(void);      /* memb reader; idempotent */
ORCU_API int orcu_register_thread_qsbr(void); /* qsbr reader; idempotent */
ORCU_API void orcu_unregister_thread(void);   /* also automatic at thread exit */
ORCU_API void orcu_quiescent_state(void);
ORCU_API void orcu_thread_offline(void);
ORCU_API void orcu_thread_online(void);
ORCU_API bool orcu_thread_is_online(void);

/* Updaters */
ORCU_API void orcu_synchronize(void);
ORCU_API void orcu_synchronize_expedited(void);
ORCU_API void orcu_call(struct orcu_head *head, void (*func)(struct orcu_head *));
ORCU_API void orcu_call_lazy(struct orcu_head *head, void (*func)(struct orcu_head *));
ORCU_API void orcu_barrier(void);
ORCU_API int orcu_drain(long timeout_ms);
ORCU_API void orcu_reclaim_lazy(void);
ORCU_API unsigned long orcu_get_state(void);
ORCU_API unsigned long orcu_start_poll(void);
ORCU_API bool orcu_poll_state(unsigned long cookie);
ORCU_API void orcu_cond_synchronize(unsigned long cookie);

/* Configuration, CPUs, offloading */
ORCU_API int orcu_init(const struct orcu_config *cfg);
ORCU_API int orcu_cpu_online(int cpu);
ORCU_API int orcu_cpu_offline(int cpu);
ORCU_API int orcu_cpu_offload(int cpu);
ORCU_API int orcu_cpu_deoffload(int cpu);
ORCU_API int orcu_thread_bind_cpu(int cpu);
ORCU_API int orcu_current_cpu(void);          /* the slot orcu_call() would use now */

/* Observability and lifetime */
ORCU_API void orcu_get_stats(struct orcu_stats *out);
ORCU_API long orcu_slot_pending(int cpu);     /* pending callbacks of one slot, or -EINVAL */
ORCU_API void orcu_set_stall_handler(orcu_stall_handler_t handler, void *arg);
ORCU_API int orcu_shutdown(void);

/* ------------------------------------------------------------------ */
/* Pointer publication                                                 */

/*
 * orcu_dereference: a single load whose address dependency orders the
 * reads through the pointer on every architecture Linux runs on except
 * Alpha (as in the kernel's READ_ONCE-based rcu_dereference).  C11's
 * consume is compiled as acquire, which also forbids the compiler from
 * overlapping a reader's loop iterations; so it is used only where the
 * hardware or ThreadSanitizer (which tracks only explicit orders) needs it.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ORCU__TSAN 1
#endif
#endif
#if defined(__alpha__) || defined(__SANITIZE_THREAD__) || defined(ORCU__TSAN)
#define orcu_dereference(p) __atomic_load_n(&(p), __ATOMIC_CONSUME)
#else
#define orcu_dereference(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#endif
#define orcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define orcu_xchg_pointer(pp, v) __atomic_exchange_n((pp), (v), __ATOMIC_SEQ_CST)

/* ------------------------------------------------------------------ */
/* Inline read side (internal names)                                   */

#define ORCU__KIND_NONE 0
#define ORCU__KIND_MEMB 1
#define ORCU__KIND_QSBR 2

/* Low half of a memb reader's ctr counts nesting; the bit above it is the
 * GP phase it entered under.  Half the width of unsigned long, so the same
 * layout is right on ILP32 (16 nesting bits) and LP64 (32). */
#define ORCU__NEST_BITS (sizeof(unsigned long) * 4)
#define ORCU__NEST_MASK ((1UL << ORCU__NEST_BITS) - 1)
#define ORCU__PHASE (1UL << ORCU__NEST_BITS)

/* The inline read side in C11 atomics; in C++ (which has no _Atomic before
 * C++23) the same fields as plain objects accessed with the compiler's
 * __atomic builtins, which have the same size, alignment and orders. */
#ifdef __cplusplus
#define ORCU__ATOMIC(T) T
#define ORCU__LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define ORCU__STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ORCU__STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ORCU__SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define ORCU__THREAD_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#else
#define ORCU__ATOMIC(T) _Atomic T
#define ORCU__LOAD_RELAXED(p) atomic_load_explicit((p), memory_order_relaxed)
#define ORCU__STORE_RELAXED(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define ORCU__STORE_RELEASE(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define ORCU__SIGNAL_FENCE() atomic_signal_fence(memory_order_seq_cst)
#define ORCU__THREAD_FENCE() atomic_thread_fence(memory_order_seq_cst)
#endif

struct orcu__reader {
	ORCU__ATOMIC(unsigned long) ctr;     /* owner writes; GP thread reads: phase | nesting */
	ORCU__ATOMIC(unsigned long) qs_seq;  /* qsbr: owner writes, GP thread reads; 0 = offline */
	int kind;                      /* owner writes and reads */
	int in_callback;               /* owner: > 0 while invoking a callback */
	void *rec;                     /* owner: the registry record */
};

ORCU_API extern __thread struct orcu__reader orcu__reader
	__attribute__((tls_model("initial-exec")));
ORCU_API extern ORCU__ATOMIC(unsigned long) orcu__gp_ctr;     /* phase | 1 */
ORCU_API extern ORCU__ATOMIC(int) orcu__has_membarrier;       /* 0: full-fence readers */
ORCU_API void orcu__read_lock_slow(void);
ORCU_API void orcu__read_unlock_slow(void);
ORCU_API void orcu__qsbr_check_lock(void);

static inline void orcu__mb_slave(void)
{
	/* Pairs with the membarrier() or full fence in the GP engine. */
	if (__builtin_expect(ORCU__LOAD_RELAXED(&orcu__has_membarrier), 1))
		ORCU__SIGNAL_FENCE();
	else
		ORCU__THREAD_FENCE();
}

#if defined(ORCU_QSBR)

/* A qsbr thread is inside a read-side section whenever it is online: as
 * liburcu-qsbr answers, false once it is offline or unregistered. */
static inline bool orcu_read_ongoing(void)
{
	return ORCU__LOAD_RELAXED(&orcu__reader.qs_seq) != 0;
}

#if !defined(ORCU_DEBUG)
static inline void orcu_read_lock(void) {}
static inline void orcu_read_unlock(void) {}
#else
static inline void orcu_read_lock(void) { orcu__qsbr_check_lock(); }
static inline void orcu_read_unlock(void) {}
#endif

#else

static inline void orcu_read_lock(void)
{
	struct orcu__reader *r = &orcu__reader;
	unsigned long c = ORCU__LOAD_RELAXED(&r->ctr);

	if (__builtin_expect((c & ORCU__NEST_MASK) == 0, 1)) {
		if (__builtin_expect(r->kind != ORCU__KIND_MEMB, 0)) {
			orcu__read_lock_slow();
			return;
		}
		ORCU__STORE_RELAXED(&r->ctr, ORCU__LOAD_RELAXED(&orcu__gp_ctr));
		orcu__mb_slave();
	} else {
		ORCU__STORE_RELAXED(&r->ctr, c + 1);
	}
}

static inline void orcu_read_unlock(void)
{
	struct orcu__reader *r = &orcu__reader;
	unsigned long c = ORCU__LOAD_RELAXED(&r->ctr);

	if (__builtin_expect((c & ORCU__NEST_MASK) == 1 &&
			     r->kind == ORCU__KIND_MEMB, 1)) {
		orcu__mb_slave();
		/* Release costs nothing on x86 and lets ThreadSanitizer see the
		 * order membarrier() gives: pairs with the acquire scan. */
		ORCU__STORE_RELEASE(&r->ctr, 0UL);
	} else if (__builtin_expect((c & ORCU__NEST_MASK) > 1, 1)) {
		ORCU__STORE_RELAXED(&r->ctr, c - 1);
	} else {
		orcu__read_unlock_slow();
	}
}

static inline bool orcu_read_ongoing(void)
{
	return (ORCU__LOAD_RELAXED(&orcu__reader.ctr) &
		ORCU__NEST_MASK) != 0;
}

#endif

#ifdef __cplusplus
}
#endif
#endif /* ORCU_H */
