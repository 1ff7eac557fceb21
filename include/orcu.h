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
 * the call and aborts.  Each call's contract sits above it: what it does,
 * when it returns, where it may be called, its errors.
 *
 * Callbacks are user code: no library lock is held while one runs, and
 * from a callback every call is allowed except the ones that would wait
 * for callbacks (orcu_synchronize, orcu_synchronize_expedited,
 * orcu_cond_synchronize, orcu_barrier, orcu_drain, orcu_shutdown), which
 * print one line naming the call and abort.
 *
 * Cancellation: a pthread_cancel() never takes effect inside an orcu call
 * (orcu reaches no cancellation point with cancellation enabled); a
 * pending one takes effect at the thread's next cancellation point after
 * the call.  Do not enable asynchronous cancellation around orcu calls.
 *
 * Linking: the shared library by default; define ORCU_STATIC before
 * including this header when linking liborcu.a into a shared object.
 *
 * Debugging (docs/DEBUGGING.md): -DORCU_PROVE checks dereferences (see
 * "Read-side checks" at the end); a program built with -fsanitize=address
 * or -fsanitize=thread gets, from this ordinary library, pending heads
 * poisoned and grace periods' happens-before edges told to TSan.
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
	long qmax;                /* like ORCU_QMAX: pending per slot past which posts are slowed */
	long lazy_ms;             /* like ORCU_LAZY_MS: longest a lazy callback is held */
	long lazy_max;            /* like ORCU_LAZY_MAX: lazy callbacks a slot holds at most */
	long stall_ms;            /* like ORCU_STALL_MS: stall warning after; -1 disables */
	long inline_takeover_ms;  /* like ORCU_INPLACE_TAKEOVER_MS: in-place offer, then the GP thread */
	int inline_batch;         /* like ORCU_INLINE_BATCH: callbacks per quiescent point, in place */
	int reserved[8];
};

/* ------------------------------------------------------------------ */
/* Statistics (orcu_get_stats): a snapshot, counters since process start. */

struct orcu_stats {
	uint64_t gp_completed;      /* grace periods ended */
	uint64_t gp_expedited;      /* of which hurried (expedited or flood) */
	uint64_t callbacks_queued;  /* orcu_call + orcu_call_lazy */
	uint64_t callbacks_lazy;    /* of which lazy */
	uint64_t callbacks_invoked; /* user callbacks invoked */
	uint64_t callbacks_pending; /* queued - invoked, right now */
	uint64_t callbacks_inline;  /* invoked by application threads at quiescent points (in place) */
	uint64_t barriers;          /* orcu_barrier calls */
	uint64_t barriers_run;      /* barriers that really posted markers (others piggybacked or were idle) */
	uint64_t gp_wakeups;        /* wake-ups issued by the GP thread (leaders, waiters) */
	uint64_t gp_leader_wakeups; /* of which to leaders */
	uint64_t leader_wakeups;    /* follower wake-ups issued by leaders */
	uint64_t enqueue_wakeups;   /* leader wake-ups issued by orcu_call */
	uint64_t takeovers;         /* in-place offers the GP thread took over */
	uint64_t threads_alive;     /* library threads running now */
	uint64_t leaders_alive;
	uint64_t followers_alive;
	uint64_t slots_possible;
	uint64_t slots_online;
	uint64_t slots_offloaded;
	uint64_t adopted_callbacks; /* invoked for slots without threads of their own */
	uint64_t qhimark_crossings; /* flood control */
	uint64_t hurried_gps;
	uint64_t poster_waits;    /* posts slowed past ORCU_QMAX (bounded sleep) */
	uint64_t poster_overruns; /* over ORCU_QMAX where slowing was not allowed */
	uint64_t peak_pending;    /* highest pending of any one slot */
	uint64_t lazy_flushes;
	uint64_t stalls_reported;
	uint64_t gp_thread_cpu_ns; /* CPU time consumed by the GP thread */
	uint64_t reserved[15];
};

/* A stall report, handed to the handler set with orcu_set_stall_handler(). */
struct orcu_stall_reader {
	int tid;
	char name[16];
	const char *flavor;    /* "memb" or "qsbr" */
	unsigned long nesting; /* memb nesting depth; 0 for qsbr */
};

struct orcu_stall_info {
	unsigned long gp_seq; /* the GP that is stalled */
	long waited_ms;       /* how long it has waited so far */
	int nr_readers;       /* readers holding it (first ORCU_STALL_MAX_READERS listed) */
	struct orcu_stall_reader readers[16];
};
#define ORCU_STALL_MAX_READERS 16

typedef void (*orcu_stall_handler_t)(const struct orcu_stall_info *info, void *arg);

/* ------------------------------------------------------------------ */
/* Threads and readers                                                 */
/*
 * Where a call may be made, in the words used below:
 *  reader section  between orcu_read_lock() and orcu_read_unlock() (or, in
 *                  an ORCU_QSBR unit, anywhere on an online qsbr thread)
 *  callback        inside a function posted with orcu_call*(), which runs
 *                  with no library lock held
 *  signal handler  only the calls marked async-signal-safe
 *  before orcu_init  the call configures orcu from the environment and
 *                  starts it, after which orcu_init() returns -EBUSY
 *  after orcu_shutdown  the call starts orcu again (same configuration)
 *  fork child      everything works; library threads start on first use
 * Every call below may be made from a fork child, before orcu_init and
 * after orcu_shutdown unless it says otherwise.
 */

/*
 * orcu_register_thread - make the calling thread a memb reader (read-side
 * sections marked with orcu_read_lock/unlock; grace periods need nothing
 * else from it).  Idempotent.  Returns 0, -ENOMEM, -EAGAIN if orcu has no
 * thread-specific data key (PTHREAD_KEYS_MAX was reached when it first
 * needed one; one line), or -EBUSY if the thread is already a qsbr
 * reader.  Not in a reader section; allowed in a callback; not in a
 * signal handler.  orcu_read_lock() on an unregistered thread calls it
 * implicitly.  A grace period sends its barrier (an IPI, which also
 * restarts an rseq critical section the thread is in) to the CPUs a memb
 * reader's affinity allows, unless it is waiting for a grace period
 * itself: pin memb readers away from isolated CPUs and those CPUs get
 * none.
 *
 * Tests: test_gp_memb, test_register_enomem_no_abort, test_no_key,
 *  test_auto_unregister, test_gp_memb_targeted.
 */
ORCU_API int orcu_register_thread(void); /* memb reader; idempotent */

/*
 * orcu_register_thread_qsbr - make the calling thread a qsbr reader: online
 * on return, it is in a read-side section until it calls
 * orcu_quiescent_state() or orcu_thread_offline(), so it must do one of
 * them regularly or it holds every grace period (a stall warning names
 * it).  Idempotent.  Returns 0, -ENOMEM, -EAGAIN as above, or -EBUSY if
 * the thread is already a memb reader.  Same contexts as
 * orcu_register_thread(), but not on an orcu thread (a callback running
 * on one): it would hold every grace period, as it never reaches a
 * quiescent point of its own; -EPERM and one line.
 *
 * Tests: test_gp_qsbr, test_gp_mixed, test_misuse (-EPERM on an orcu
 *  thread).
 */
ORCU_API int orcu_register_thread_qsbr(void); /* qsbr reader; idempotent */

/*
 * orcu_unregister_thread - stop being a reader (either kind); a no-op on an
 * unregistered thread.  Done automatically when a registered thread exits.
 * Aborts with a one-line message inside a reader section.  Allowed in a
 * callback; not in a signal handler.
 *
 * Tests: test_auto_unregister, test_gp_mixed, test_thread_online,
 *  test_misuse (exit inside a section).
 */
ORCU_API void orcu_unregister_thread(void); /* also automatic at thread exit */

/*
 * orcu_quiescent_state - qsbr readers: announce that this thread holds no
 * reference obtained in an earlier section.  Cheap (a load and, when a
 * grace period has begun since the last call, a store).  On an in-place
 * CPU slot (not offloaded) it may also run a few ready callbacks here.  On a memb thread it
 * only does the latter; on an unregistered thread it aborts with a
 * one-line message, as it does inside a memb section (debug builds).  Not
 * in a signal handler.  When no library thread could be created at all,
 * it is a safe point: it may run a grace period and callbacks that no
 * thread serves (docs/API.md, "Degraded mode"), as may
 * orcu_thread_offline() and orcu_thread_online().
 *
 * Tests: test_gp_qsbr, test_qsbr_wait_wakes_gp, test_inplace,
 *  test_no_threads_safe_points.
 */
ORCU_API void orcu_quiescent_state(void);

/*
 * orcu_thread_offline - qsbr readers: enter an extended quiescent state
 * (blocking, sleeping, long computation without references): grace
 * periods stop waiting for this thread until orcu_thread_online().  A
 * no-op for memb threads.  Aborts inside a reader section (memb nesting on
 * this thread).  Not in a signal handler.  Leaves errno as it found it,
 * as orcu_thread_online() does, so the two can bracket a blocking call
 * (epoll_wait, poll, pthread_cond_wait) whose errno is read after them
 * (docs/API.md, "Blocking without holding grace periods").
 *
 * Tests: test_thread_online, test_qsbr_offline_runs_no_callbacks,
 *  test_gp_mixed, test_thread_offline_online_keep_errno.
 */
ORCU_API void orcu_thread_offline(void);

/*
 * orcu_thread_online - qsbr readers: leave the extended quiescent state;
 * on return the thread may read again (it is ordered after the store that
 * makes grace periods wait for it).  A no-op for memb threads.  Not in a
 * signal handler.  Leaves errno as it found it.
 *
 * Tests: test_thread_online, test_qsbr_offline_runs_no_callbacks,
 *  test_no_threads_safe_points, test_thread_offline_online_keep_errno.
 */
ORCU_API void orcu_thread_online(void);

/*
 * orcu_thread_is_online - true if the calling thread is a reader that grace
 * periods currently wait for when it is in a section: a registered memb
 * thread, or a qsbr thread between orcu_thread_online() (or registration)
 * and orcu_thread_offline().  False on an unregistered thread.  Anywhere,
 * async-signal-safe.
 *
 * Tests: test_thread_online, test_shutdown_qsbr_online.
 */
ORCU_API bool orcu_thread_is_online(void);

/* ------------------------------------------------------------------ */
/* Updaters                                                            */

/*
 * orcu_synchronize - wait for a grace period: returns once every reader
 * section that was running when it was called has ended (and everything
 * those readers did is visible to the caller).  Blocks, typically for a
 * few hundred microseconds to milliseconds.  A qsbr caller is taken
 * offline while it waits and brought back online.  Not in a reader
 * section (would deadlock) and not in a callback (would wait for itself):
 * both print one line naming the call and abort.  Not in a signal handler.
 *
 * Tests: test_gp_memb, test_gp_qsbr, test_gp_mixed, test_gp_wait_mixed,
 *  test_reader_wake_targeted, test_gp_skip_waits_for_new_reader,
 *  test_misuse, test_busted_detected, torture_memb_all.
 */
ORCU_API void orcu_synchronize(void);

/*
 * orcu_synchronize_expedited - orcu_synchronize(), hurried: the grace
 * period polls readers more eagerly and skips batching, at some CPU cost to
 * the library.  Same contract.
 *
 * Tests: test_expedited, test_misuse.
 */
ORCU_API void orcu_synchronize_expedited(void);

/*
 * orcu_call - invoke func(head) after a grace period; returns at once.
 * head is usually embedded in the object func frees.  The callback runs on
 * an orcu thread (offloaded CPU slot, the default) or on an application
 * thread of that CPU at its quiescent points (in-place slot), with no
 * library lock held; the callbacks one thread posts on one CPU slot run
 * in the order it posted them (different threads' posts are unordered).
 * Never blocks waiting for callbacks to progress, so the caller may hold
 * locks its callbacks take; past ORCU_QMAX pending on its slot the poster
 * is delayed by a bounded sleep (at most about 1 ms per call).  Allowed
 * everywhere except a signal handler: in a reader section, in a callback,
 * before orcu_init (kept, run once orcu runs), in a fork child.  NULL head
 * or func, or the same head posted twice while pending (checked with
 * ORCU_CHECK_CALLS=1 or in debug builds), prints one line and aborts.
 *
 * Tests: test_postq_order, test_postq_wake,
 *  test_call_never_blocks_on_callbacks, test_call_inplace_runs_nothing,
 *  test_callback_may_take_library_locks, test_flood, test_flood_in_reader,
 *  test_qsbr_call_announces_no_qs, test_early_ctor, test_early_slot,
 *  test_double_call_named, test_double_post_after_take_keeps_list,
 *  test_misuse, test_fork.
 */
ORCU_API void orcu_call(struct orcu_head *head, void (*func)(struct orcu_head *));

/*
 * orcu_call_lazy - orcu_call() for callbacks that may wait: held up to
 * ORCU_LAZY_MS or until ORCU_LAZY_MAX are pending on the slot, to save
 * wake-ups.  orcu_barrier(), orcu_drain(), orcu_reclaim_lazy() and memory
 * pressure flush them.  Same contract as orcu_call(), posting order
 * included: a thread's lazy and ordinary callbacks on one slot run in the
 * order it posted them, so its first orcu_call() on a slot where its lazy
 * callbacks are held flushes that slot's (as the kernel's call_rcu()
 * flushes a CPU's lazy ones).
 *
 * Tests: test_lazy, test_lazy_alone_bounded, test_lazy_order,
 *  test_early_ctor, torture_qsbr_none_flood_lazy_fork.
 */
ORCU_API void orcu_call_lazy(struct orcu_head *head, void (*func)(struct orcu_head *));

/*
 * orcu_barrier - wait until every callback posted (on any thread, lazy or
 * not) before the call has been invoked; callbacks those callbacks post
 * may still be pending (see orcu_drain).  Concurrent barriers share the
 * wait.  Call it before unloading code that posted callbacks (dlclose).
 * Not in a reader section nor in a callback (one line, abort); not in a
 * signal handler.  A qsbr caller is offline while it waits.
 *
 * Tests: test_barrier, test_barrier_never_onlined, test_module_unload,
 *  test_free_barrier, test_qsbr_wait_wakes_gp, test_misuse.
 */
ORCU_API void orcu_barrier(void);

/*
 * orcu_wait_backlog - explicit backpressure: wait until the calling
 * thread's CPU slot holds fewer than ORCU_QHIMARK pending callbacks
 * (timeout_ms < 0: no limit).  Returns 0, or -ETIMEDOUT.  It waits for
 * callbacks, so never call it holding a lock your callbacks take; not in a
 * reader section nor in a callback (one line, abort).  A qsbr caller is
 * offline while it waits.  orcu_call() itself never waits like this.
 *
 * Tests: test_wait_backlog_bound, test_call_never_blocks_on_callbacks,
 *  test_misuse.
 */
ORCU_API int orcu_wait_backlog(long timeout_ms);

/*
 * orcu_drain - barrier until no callback is pending anywhere, chains of
 * callbacks that post callbacks included.  timeout_ms < 0 waits as long as
 * it takes.  Returns 0, or -ETIMEDOUT when timeout_ms passed first (the
 * callbacks keep running).  Contexts as orcu_barrier().
 *
 * Tests: test_drain_chain, test_free_barrier, test_misuse.
 */
ORCU_API int orcu_drain(long timeout_ms);

/*
 * orcu_reclaim_lazy - hand every lazily held callback to the grace-period
 * machinery now (for instance on memory pressure); returns without
 * waiting for them.  Anywhere but a signal handler.
 *
 * Tests: test_lazy.
 */
ORCU_API void orcu_reclaim_lazy(void);

/*
 * orcu_get_state - a cookie for the grace period that must end before
 * orcu_poll_state(cookie) is true; starts nothing, never blocks.  Anywhere
 * (reader section and callback included), async-signal-safe once orcu is
 * initialised.
 *
 * Tests: test_polled, test_gp_skip_waits_for_new_reader.
 */
ORCU_API unsigned long orcu_get_state(void);

/*
 * orcu_start_poll - orcu_get_state(), and make sure that grace period
 * starts (without waiting for it): the cookie completes with nobody
 * calling anything but orcu_poll_state(), whether or not the GP thread
 * could be created (a leader, or failing every library thread the next
 * safe point of a registered thread, runs it), and after orcu_shutdown()
 * (it starts orcu again).  In a fork child, a cookie taken in the parent
 * completes once a call that starts orcu ran there (docs/API.md, Fork).
 * Anywhere but a signal handler.
 *
 * Tests: test_polled, test_start_poll_degraded, test_start_poll_enomem,
 *  test_start_poll_vs_shutdown, test_fork_child_sync_only_runs_inherited.
 */
ORCU_API unsigned long orcu_start_poll(void);

/*
 * orcu_poll_state - true once the grace period of cookie has ended: memory
 * unpublished before the cookie was taken may then be freed.  Never
 * blocks; anywhere, async-signal-safe.
 *
 * Tests: test_polled, test_gp_skip_waits_for_new_reader,
 *  test_start_poll_degraded.
 */
ORCU_API bool orcu_poll_state(unsigned long cookie);

/*
 * orcu_cond_synchronize - return at once if orcu_poll_state(cookie), else
 * wait as orcu_synchronize() does, with its restrictions.
 *
 * Tests: test_polled, test_misuse.
 */
ORCU_API void orcu_cond_synchronize(unsigned long cookie);

/* ------------------------------------------------------------------ */
/* Reclaim without writing a callback                                  */
/*
 * The common callback only frees its object: these calls do it for you.
 * Pointers are gathered per posting thread into page-sized batches; a
 * full batch is posted as one callback on the thread's CPU slot, which
 * frees every object in it after a grace period.  A batch counts as one
 * callback for flood control, orcu_barrier(), orcu_drain(),
 * orcu_shutdown(), fork and orcu_get_stats().  orcu_barrier() (and so
 * orcu_drain() and orcu_shutdown()) also posts every thread's partly
 * filled batch first: an object handed to these calls before it is
 * freed when it returns.  A thread's partial batch is also posted when
 * the thread exits, and within about ORCU_LAZY_MS of its first object.
 */

/*
 * orcu_free - free(p) after a grace period, with no orcu_head in the
 * object: p must come from malloc() (or calloc, realloc, aligned_alloc)
 * and be unpublished already.  NULL is ignored.  Usually returns at
 * once; when no batch memory can be had it waits for a grace period and
 * frees p itself (as orcu_synchronize() does, a qsbr caller offline
 * meanwhile), so it is not allowed in a reader section nor in a callback
 * (one line, abort, checked on every call).  Allowed before orcu_init
 * and in a fork child; not in a signal handler.  With ORCU_CHECK_CALLS=1
 * (and in debug builds) an object handed to orcu_free, orcu_retire or
 * orcu_free_rcu again while pending prints one line naming the second
 * call and aborts.
 *
 * Tests: test_free_readers, test_free_barrier, test_free_misuse,
 *  test_free_enomem_blocks, test_free_shutdown,
 *  test_unload_free_thread_exit, test_free_double_post_named.
 */
ORCU_API void orcu_free(void *p);

/*
 * orcu_retire - deleter(p) after a grace period, with no orcu_head in the
 * object: for other allocators, destructors, pools.  deleter runs as a
 * callback does (on an orcu thread for an offloaded slot, no library lock
 * held; it may call orcu_call, not orcu_free or orcu_retire).  p NULL is
 * ignored; a NULL deleter prints one line and aborts.  Same blocking rule
 * and contexts as orcu_free(): when no batch memory can be had, deleter
 * runs (as a callback) on the caller's thread before orcu_retire()
 * returns, so it must not take a lock the caller holds across the call.
 *
 * Tests: test_free_readers, test_free_barrier, test_free_misuse,
 *  test_free_enomem_blocks, test_free_enomem_deleter_rules,
 *  test_free_enomem_cancel, test_free_fork, test_free_fork_mid_post,
 *  test_free_shutdown.
 */
ORCU_API void orcu_retire(void *p, void (*deleter)(void *));

/*
 * orcu_free_rcu - free(p) after a grace period, p (a pointer to a struct
 * from malloc) holding a struct orcu_head named field, which must lie in
 * its first ORCU_FREE_RCU_MAX_OFFSET bytes (4096 on 64-bit).  Batched as
 * orcu_free(); when no batch memory can be had the head is posted
 * instead, so it never blocks: allowed everywhere orcu_call() is (reader
 * section and callback included).  p is evaluated once; a field that is
 * not a struct orcu_head, or lies too far, does not compile.
 *
 * Tests: test_free_readers, test_free_barrier, test_free_misuse,
 *  test_free_enomem_blocks.
 */
#define ORCU_FREE_RCU_MAX_OFFSET (512 * sizeof(void *))
/* clang-format off */
#define orcu_free_rcu(p, field) \
	orcu__free_rcu((p), offsetof(__typeof__(*(p)), field) + \
		       0 * sizeof(orcu__is_head(&((__typeof__(*(p)) *)0)->field)) + \
		       0 * sizeof(char[offsetof(__typeof__(*(p)), field) < \
				       ORCU_FREE_RCU_MAX_OFFSET ? 1 : -1]))
static inline int orcu__is_head(struct orcu_head *h) { return h != 0; }
/* clang-format on */
ORCU_API void orcu__free_rcu(void *p, size_t offset);
/* orcu_retire() that never blocks: -ENOMEM (nothing done) when no
 * memory can be had (no batch, nor a few bytes for a callback of its
 * own); anywhere orcu_call() is.  For <orcu/rcu.hpp>: as
 * P2545 allows, the deleters of earlier calls may run in a later call,
 * on the caller's thread (as in a callback), when their GP has ended. */
ORCU_API int orcu__retire_nb(void *p, void (*deleter)(void *));

/* ------------------------------------------------------------------ */
/* Configuration, CPUs, offloading                                     */

/*
 * orcu_init - configure orcu (cfg NULL or zero fields: defaults, or the
 * ORCU_* environment) and start it.  Optional; call it before any other
 * orcu call.  Returns 0; -EINVAL for a bad configuration (one line names
 * the field and the text; nothing is applied); -EBUSY if orcu is already
 * initialised (by an earlier orcu_init or by any earlier orcu call);
 * -EAGAIN if a library thread could not be created: orcu works, degraded
 * (grace periods run on callers, callbacks are served by other threads or,
 * with none, at application threads' safe points), and retries later.  Not in a reader section, callback or signal handler.
 *
 * Tests: test_config_errors, test_config_rejects_adjusted,
 *  test_config_enomem_not_reconfigured, test_init_eagain_then_posts_run,
 *  test_misuse (-EBUSY after first use).
 */
ORCU_API int orcu_init(const struct orcu_config *cfg);

/*
 * orcu_cpu_online - declare CPU slot cpu online (as if a thread had been
 * seen running there) and start its threads.  Returns 0, -EINVAL if cpu is
 * not a possible CPU, or -EAGAIN if its thread could not be created (its
 * callbacks are served elsewhere meanwhile).  Allowed in a callback and a
 * fork child; not in a signal handler.
 *
 * Tests: test_early_slot, test_hotplug_load.
 */
ORCU_API int orcu_cpu_online(int cpu);

/*
 * orcu_cpu_offline - take slot cpu offline.  Its callbacks stay on it: its
 * threads go on draining it (an in-place slot's at once, no longer waiting
 * for application threads).  Returns 0 (also if it was offline), -EINVAL
 * for an impossible cpu, -ENOMEM if orcu cannot be configured, or -EBUSY
 * for the last online slot.  Never waits for callbacks, so it is allowed
 * in a callback, even one of the slot it takes offline; not in a signal
 * handler.
 *
 * Tests: test_offline_without_threads, test_offline_inplace_drained,
 *  test_hotplug_load, test_fork_child_barrier_offline_offloaded.
 */
ORCU_API int orcu_cpu_offline(int cpu);

/*
 * orcu_cpu_offload / orcu_cpu_deoffload - switch slot cpu's callbacks to
 * offload threads (started now if the slot is online) / to in-place
 * service (the slot's application threads at their quiescent points, then
 * the GP thread), at run time; callbacks already queued are kept and keep
 * their order.  Return 0, -EINVAL for an impossible cpu, or (offload)
 * -EAGAIN if a thread could not be created: the slot stays in place and
 * the creation is retried.  Allowed in a callback; not in a signal
 * handler.
 *
 * Tests: test_offload_toggle, test_nocbs_none_no_threads.
 */
ORCU_API int orcu_cpu_offload(int cpu);
ORCU_API int orcu_cpu_deoffload(int cpu);

/*
 * orcu_thread_bind_cpu - the calling thread posts to (and, in place, serves)
 * slot cpu whatever CPU it runs on: for virtual topologies and
 * thread-per-core programs.  -1 follows the real CPU again.  Returns 0 or
 * -EINVAL for an impossible cpu.  Anywhere but a signal handler.
 *
 * Tests: test_barrier_never_onlined, test_threadless_slot_drained,
 *  test_lying_topology.
 */
ORCU_API int orcu_thread_bind_cpu(int cpu);

/*
 * orcu_current_cpu - the slot orcu_call() would use now from this thread
 * (its bound slot, or the CPU it runs on).  Anywhere but a signal handler.
 *
 * Tests: test_early_slot, test_lying_topology,
 *  test_config_possible_only_caps_threads.
 */
ORCU_API int orcu_current_cpu(void); /* the slot orcu_call() would use now */

/* ------------------------------------------------------------------ */
/* Observability and lifetime                                          */

/*
 * orcu_get_stats - fill *out with a snapshot of the counters (each read
 * atomically; the set is not one instant).  Never blocks on grace periods
 * or callbacks.  Anywhere but a signal handler.
 *
 * Tests: test_nocb_poll, test_wake_economy, test_stats_vs_shutdown,
 *  test_flood.
 */
ORCU_API void orcu_get_stats(struct orcu_stats *out);

/*
 * orcu_slot_pending - callbacks pending on slot cpu right now, or -EINVAL
 * for an impossible cpu.  Anywhere but a signal handler.
 *
 * Tests: test_threadless_slot_drained, test_offline_inplace_drained,
 *  test_wait_backlog_bound.
 */
ORCU_API long orcu_slot_pending(int cpu); /* pending callbacks of one slot, or -EINVAL */

/*
 * orcu_set_stall_handler - called, instead of the default one-line report
 * on stderr, when a grace period has waited ORCU_STALL_MS (then at doubling
 * intervals); NULL restores the default.  The handler runs on the thread
 * that is running the grace period (the GP thread, or a thread waiting in
 * orcu_synchronize), with no library lock held, and may call anything that
 * does not wait for a grace period or callbacks; those print one line
 * naming the call and abort there.
 *
 * Tests: test_stall, test_stall_handler_pair, test_fork_in_stall_handler,
 *  test_misuse.
 */
ORCU_API void orcu_set_stall_handler(orcu_stall_handler_t handler, void *arg);

/*
 * orcu_shutdown - wait for every pending callback (as orcu_drain(-1)),
 * those kept while orcu could not start for want of memory included (it
 * runs them itself if it must), then stop and join every library thread;
 * orcu holds no thread and no memory a leak checker would report.  Reusable after: the next call that
 * needs orcu starts it again.  Returns 0; a caller that finds another
 * shutdown in progress returns -EBUSY at once (concurrent callers either
 * complete or get -EBUSY, never hang).  Not in a reader section nor in a
 * callback (one line, abort); not in a signal handler.
 *
 * Tests: test_shutdown_reuse, test_shutdown_vs_posts,
 *  test_shutdown_races_synchronize, test_shutdown_qsbr_online,
 *  test_shutdown_waits_held_callbacks, test_free_shutdown, test_misuse.
 */
ORCU_API int orcu_shutdown(void);

/* ------------------------------------------------------------------ */
/* Pointer publication                                                 */

/*
 * orcu_dereference - a single load whose address dependency orders the
 * reads through the pointer on every architecture Linux runs on except
 * Alpha (as in the kernel's READ_ONCE-based rcu_dereference).  C11's
 * consume is compiled as acquire, which also forbids the compiler from
 * overlapping a reader's loop iterations; so it is used only where the
 * hardware or ThreadSanitizer (which tracks only explicit orders) needs it.
 * Use it inside a read-side section on the pointer (an lvalue) that
 * updaters publish; anywhere, async-signal-safe.  With ORCU_PROVE it
 * checks that it is inside one (see "Read-side checks" below).
 *
 * Tests: debugging_prove, header_cxx_prove, test_gp_memb.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ORCU__TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define ORCU__TSAN 1
#endif
#if defined(__alpha__) || defined(ORCU__TSAN)
#define orcu__dereference_load(p) __atomic_load_n(&(p), __ATOMIC_CONSUME)
#else
#define orcu__dereference_load(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#endif
/* orcu_assign_pointer - publish v in p (an lvalue): a release store, so
 * whatever was written to *v before is seen by readers that dereference
 * it.  Anywhere, async-signal-safe.
 *
 * Tests: test_gp_memb, test_gp_qsbr.
 */
#define orcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
/* orcu_xchg_pointer - publish v in *pp and return the old value, fully
 * ordered; the old object may be freed after a grace period (orcu_call,
 * orcu_synchronize).  Anywhere, async-signal-safe.
 *
 * Tests: test_gp_memb, test_gp_qsbr, torture_memb_all.
 */
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
/* Set in the ctr of a registered memb reader (and in orcu__gp_ctr, which
 * its outermost lock copies): ctr == ORCU__MEMB_IDLE is "memb, outside any
 * section", so the inline fast paths test one word, as liburcu's do.  An
 * unregistered thread's ctr is 0 and a qsbr thread's holds its nesting
 * only: both take the slow path at their outermost lock and unlock. */
#define ORCU__MEMB_IDLE (ORCU__PHASE << 1)

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
#define ORCU__RMW_SEQ_CST(p) ((void)__atomic_fetch_add((p), 0, __ATOMIC_SEQ_CST))
#else
#define ORCU__ATOMIC(T) _Atomic T
#define ORCU__LOAD_RELAXED(p) atomic_load_explicit((p), memory_order_relaxed)
#define ORCU__STORE_RELAXED(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define ORCU__STORE_RELEASE(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define ORCU__SIGNAL_FENCE() atomic_signal_fence(memory_order_seq_cst)
#define ORCU__THREAD_FENCE() atomic_thread_fence(memory_order_seq_cst)
#define ORCU__RMW_SEQ_CST(p) ((void)atomic_fetch_add_explicit((p), 0, memory_order_seq_cst))
#endif

struct orcu__reader {
	ORCU__ATOMIC(unsigned long) ctr;    /* owner writes; GP thread reads: phase | nesting */
	ORCU__ATOMIC(unsigned long) qs_seq; /* qsbr: owner writes, GP thread reads; 0 = offline */
	int kind;                           /* owner writes and reads */
	int in_callback;                    /* owner: > 0 while invoking a callback */
	void *rec;                          /* owner: the registry record */
};

ORCU_API extern __thread struct orcu__reader orcu__reader
	__attribute__((tls_model("initial-exec")));
ORCU_API extern ORCU__ATOMIC(unsigned long) orcu__gp_ctr; /* phase | 1 */
ORCU_API extern ORCU__ATOMIC(int) orcu__has_membarrier;   /* 0: full-fence readers */
ORCU_API extern ORCU__ATOMIC(int) orcu__gp_wait;          /* 1: a GP sleeps on readers */
ORCU_API void orcu__reader_wake_gp(void);
ORCU_API void orcu__reader_left_gp(unsigned long ctr);
ORCU_API void orcu__read_lock_slow(void);
ORCU_API void orcu__read_unlock_slow(void);
ORCU_API void orcu__qsbr_check_lock(void);

static inline void orcu__mb_slave(void)
{
	/* Pairs with the membarrier() or full fence in the GP engine.  The
	 * signal fence orders nothing on the CPU, on any CPU: the GP's
	 * membarrier() runs a full barrier on ours (docs/DESIGN-NOTES.md,
	 * pairs #4 and #5). */
	if (__builtin_expect(ORCU__LOAD_RELAXED(&orcu__has_membarrier), 1))
		ORCU__SIGNAL_FENCE();
	else
#ifndef ORCU__TSAN
		ORCU__THREAD_FENCE();
#else
		/* ThreadSanitizer does not model fences (gcc's -Wtsan says
		 * so): a seq_cst read-modify-write of the thread's own ctr,
		 * a full barrier on the hardware, that TSan sees as an atomic
		 * access of a word no other thread writes. */
		ORCU__RMW_SEQ_CST(&orcu__reader.ctr);
#endif
}

/*
 * The read side.
 *
 * orcu_read_lock - begin a read-side section: pointers loaded with
 * orcu_dereference() until the matching orcu_read_unlock() stay valid.
 * Nestable.  Inline and wait-free: a thread-local store and a compiler
 * barrier (memb), nothing at all in an ORCU_QSBR unit.  On an unregistered
 * thread the first call registers it as a memb reader (aborting with one
 * line if that fails).  On a qsbr thread outside ORCU_QSBR units it counts
 * nesting only.  Allowed in a callback; async-signal-safe on a registered
 * thread.
 *
 * orcu_read_unlock - end the section; an unmatched unlock prints one line
 * and aborts.  Same contexts.
 *
 * orcu_read_ongoing - memb: true inside a section.  In an ORCU_QSBR unit,
 * as liburcu-qsbr answers: true while the qsbr thread is online (between
 * registration or orcu_thread_online() and orcu_thread_offline() or
 * unregistration).  Anywhere, async-signal-safe.
 *
 * An ORCU_QSBR unit promises its sections run only on qsbr threads (debug
 * builds check); code shared by both kinds is compiled without it.
 *
 * Tests: test_gp_memb, test_gp_qsbr, test_thread_online,
 *  test_signal_in_unpark_fenced, test_misuse (unbalanced unlock),
 *  header_cxx_qsbr.
 */
#if defined(ORCU_QSBR)

/* A qsbr thread is inside a read-side section whenever it is online: as
 * liburcu-qsbr answers, false once it is offline or unregistered. */
static inline bool orcu_read_ongoing(void)
{
	return ORCU__LOAD_RELAXED(&orcu__reader.qs_seq) != 0;
}

#if !defined(ORCU_DEBUG)
static inline void orcu_read_lock(void)
{
}
static inline void orcu_read_unlock(void) {}
#else
static inline void orcu_read_lock(void)
{
	orcu__qsbr_check_lock();
}
static inline void orcu_read_unlock(void) {}
#endif

#else

static inline void orcu_read_lock(void)
{
	struct orcu__reader *r = &orcu__reader;
	unsigned long c = ORCU__LOAD_RELAXED(&r->ctr);

	if (__builtin_expect(c == ORCU__MEMB_IDLE, 1)) {
		/* Release (a plain store on x86): a GP that sees this value is
		 * ordered after our previous section, whose unlock it may not
		 * have seen; pairs with the acquire scan (registry.c point 3). */
		ORCU__STORE_RELEASE(&r->ctr, ORCU__LOAD_RELAXED(&orcu__gp_ctr));
		orcu__mb_slave();
	} else if (__builtin_expect((c & ORCU__NEST_MASK) != 0, 1)) {
		/* Nested (memb or qsbr).  Release for the same reason as the
		 * outermost store. */
		ORCU__STORE_RELEASE(&r->ctr, c + 1);
	} else {
		/* Unregistered (registers as memb), or a qsbr thread. */
		orcu__read_lock_slow();
	}
}

static inline void orcu_read_unlock(void)
{
	struct orcu__reader *r = &orcu__reader;
	unsigned long c = ORCU__LOAD_RELAXED(&r->ctr);

	if (__builtin_expect((c & (ORCU__MEMB_IDLE | ORCU__NEST_MASK)) ==
				     (ORCU__MEMB_IDLE | 1),
			     1)) {
		orcu__mb_slave();
		/* Release costs nothing on x86: pairs with the acquire scan
		 * (registry.c point 3). */
		ORCU__STORE_RELEASE(&r->ctr, ORCU__MEMB_IDLE);
		/* Store, then load: the GP's membarrier() after it sets
		 * orcu__gp_wait orders the two (models/reader_wake.pml).  Only
		 * a section the GP waits for wakes it (its phase, in c). */
		ORCU__SIGNAL_FENCE();
		if (__builtin_expect(ORCU__LOAD_RELAXED(&orcu__gp_wait), 0))
			orcu__reader_left_gp(c);
	} else if (__builtin_expect((c & ORCU__NEST_MASK) > 1, 1)) {
		ORCU__STORE_RELEASE(&r->ctr, c - 1);
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

/* ------------------------------------------------------------------ */
/* Read-side checks                                                    */
/*
 * orcu_dereference_check(p, cond) - orcu_dereference(p) that is also
 * legal outside a read-side section when cond is true (say, the updater
 * holds the lock that serialises updates of p).
 *
 * orcu_dereference_protected(p, cond) - the updater's plain load of p,
 * legal only when cond is true (the lock is held: p cannot change under
 * it, so no ordering is needed).
 *
 * A read-side section here is memb nesting on this thread (between
 * orcu_read_lock() and orcu_read_unlock()) or a qsbr thread that is
 * online.  Without ORCU_PROVE, cond is never evaluated and these compile
 * to exactly orcu_dereference(p) and a plain load.  When the calling
 * unit is compiled with -DORCU_PROVE, orcu_dereference() outside a
 * section (on an unregistered thread, outside memb nesting, or on an
 * offline qsbr thread), orcu_dereference_check(p, 0) outside one and
 * orcu_dereference_protected(p, 0) print one line,
 *	suspicious orcu usage: <call> <what is wrong> at <file>:<line>
 * naming the caller's file and line, and abort; legal uses print
 * nothing.  The check costs a thread-local load and a branch per
 * dereference (docs/DEBUGGING.md).
 *
 * Tests: debugging_prove, header_cxx_prove.
 */
ORCU_API void orcu__prove_failed(const char *call, int reader_check,
				 const char *file, int line);

#ifdef ORCU_PROVE
static inline bool orcu__prove_reading(void)
{
	return (ORCU__LOAD_RELAXED(&orcu__reader.ctr) & ORCU__NEST_MASK) != 0 ||
	       ORCU__LOAD_RELAXED(&orcu__reader.qs_seq) != 0;
}
#define orcu__prove(ok, call, reader_check) \
	((ok) ? (void)0 : orcu__prove_failed(call, reader_check, __FILE__, __LINE__))
#define orcu_dereference(p) \
	(orcu__prove(orcu__prove_reading(), "orcu_dereference()", 1), \
	 orcu__dereference_load(p))
#define orcu_dereference_check(p, cond) \
	(orcu__prove((cond) || orcu__prove_reading(), "orcu_dereference_check()", 2), \
	 orcu__dereference_load(p))
#define orcu_dereference_protected(p, cond) \
	(orcu__prove((cond), "orcu_dereference_protected()", 0), (p))
#else
#define orcu_dereference(p) orcu__dereference_load(p)
#define orcu_dereference_check(p, cond) ((void)sizeof(!(cond)), orcu__dereference_load(p))
#define orcu_dereference_protected(p, cond) ((void)sizeof(!(cond)), (p))
#endif

#ifdef __cplusplus
}
#endif
#endif /* ORCU_H */
