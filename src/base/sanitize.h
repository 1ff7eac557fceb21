/*
 * sanitize.h - what the shipped library tells AddressSanitizer and
 * ThreadSanitizer running in the user's program.  The library
 * is not instrumented; it references the sanitizers' interface weakly, so
 * in a program built without them every helper below is a load and a
 * branch that is never taken.  When the program is built with
 * -fsanitize=address or -fsanitize=thread, the runtime is in the program
 * and the weak references resolve there, also from liborcu.so.  Which
 * runtimes are there is found on first use (orcu__san()).
 *
 * ASan: a posted orcu_head is poisoned from orcu_call() to the moment its
 * callback is invoked; a write to it meanwhile, or a second post, is
 * reported with the user's stack.
 *
 * TSan: the happens-before edges grace periods and callbacks create,
 * which TSan cannot see in uninstrumented code:
 *  - poster -> callback: release on the head at orcu_call(), acquire on
 *    it before the callback runs;
 *  - reader -> GP end: a memb reader's inline unlock is a release store
 *    on its ctr in the user's instrumented code; a qsbr quiescent state
 *    releases its qs_seq here; a thread that unregisters releases a
 *    registry word.  The GP acquires them all before it ends
 *    (registry.c san_gp_end_locked()), then releases orcu__san_gp_end;
 *  - GP end -> callback, orcu_synchronize() and orcu_poll_state():
 *    acquire orcu__san_gp_end;
 *  - callback -> orcu_barrier(), orcu_drain(), orcu_shutdown(): each
 *    invoker releases orcu__san_cb_done before it counts callbacks done;
 *    they acquire it;
 *  - orcu_free() and the retires' batches (free.c point 8): the adder ->
 *    the thread that posts its batch, on the batch; GP end -> a poster
 *    that frees its own earlier batches; its frees -> the barriers, on
 *    orcu__san_cb_done;
 *  - a posting queue's segment, malloc'ed by its poster and freed by a
 *    consumer: released when it is allocated, acquired before it is
 *    freed (postq.c point 8).
 * The liburcu ABI libraries say the same of their uninstrumented read
 * side and pointer helpers, with their own weak references
 * (src/compat/urcu_abi/abi.h).
 *
 * A library built with a sanitizer itself (ORCU_SANITIZE) leaves all of
 * this out: there the sanitizer sees the library's own accesses and
 * orders, which the annotations would only hide (and its own accesses to
 * a pending head would trip the poisoning).  Calls no module: header only.
 */
#ifndef ORCU_SANITIZE_H
#define ORCU_SANITIZE_H

#include "os.h"

#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORCU__LIB_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define ORCU__LIB_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ORCU__LIB_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define ORCU__LIB_TSAN 1
#endif

/* The synchronisation objects (os.c): only their addresses matter. */
ORCU__HIDDEN extern char orcu__san_gp_end, orcu__san_cb_done;

#ifndef ORCU__LIB_ASAN
/* <sanitizer/asan_interface.h>, weakly. */
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
int __asan_address_is_poisoned(void const volatile *addr) __attribute__((weak));
void __asan_report_error(void *pc, void *bp, void *sp, void *addr, int is_write,
			 size_t size) __attribute__((weak));
#define ORCU__HAVE_ASAN() (__asan_poison_memory_region != NULL)
#else
#define ORCU__HAVE_ASAN() 0
#endif
#ifndef ORCU__LIB_TSAN
/* <sanitizer/tsan_interface.h>, weakly. */
void __tsan_acquire(void *addr) __attribute__((weak));
void __tsan_release(void *addr) __attribute__((weak));
#define ORCU__HAVE_TSAN() (__tsan_acquire != NULL && __tsan_release != NULL)
#else
#define ORCU__HAVE_TSAN() 0
#endif

/* Which runtimes the program has, found on first use (a post may come
 * from a constructor that runs before ours would): one load and one
 * untaken branch on every path below when there are none.  Relaxed: any
 * thread computes the same value. */
#define ORCU__SAN_ASAN 1
#define ORCU__SAN_TSAN 2
#define ORCU__SAN_UNKNOWN 4
ORCU__HIDDEN extern _Atomic unsigned char orcu__san_state; /* os.c */

static inline unsigned orcu__san(void)
{
	unsigned f = orcu__load_relaxed(&orcu__san_state);

	if (orcu__likely(f == 0))
		return 0;
	if (f & ORCU__SAN_UNKNOWN) {
		f = (ORCU__HAVE_ASAN() ? ORCU__SAN_ASAN : 0) |
		    (ORCU__HAVE_TSAN() ? ORCU__SAN_TSAN : 0);
		orcu__store_relaxed(&orcu__san_state, (unsigned char)f);
	}
	return f;
}

#ifdef ORCU__LIB_TSAN
/* The library's own TSan sees its orders: nothing to tell it. */
static inline void orcu__tsan_acquire(void *addr) { (void)addr; }
static inline void orcu__tsan_release(void *addr) { (void)addr; }
#else
/* fn, __tsan_acquire() or __tsan_release(), on addr if the program has
 * TSan. */
static inline void orcu__tsan_sync(void (*fn)(void *), void *addr)
{
	if (orcu__unlikely(orcu__san() & ORCU__SAN_TSAN))
		/* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): set only where it exists (orcu__san()) */
		fn(addr);
}

static inline void orcu__tsan_acquire(void *addr) { orcu__tsan_sync(__tsan_acquire, addr); }
static inline void orcu__tsan_release(void *addr) { orcu__tsan_sync(__tsan_release, addr); }
#endif

/* orcu_call*(), before h is published, when orcu__san() is not 0.  ASan:
 * a head still poisoned is pending (or freed): report the write the post
 * is, at the caller's pc (a return address, as ASan's own reports take);
 * then poison it.  TSan: what the poster did happens before the callback.
 * Cold: kept off orcu_call()'s fast path, which pays one load and one
 * branch for it. */
static inline __attribute__((cold)) void orcu__san_post(struct orcu_head *h, void *pc)
{
	unsigned f = orcu__san();

	if (!h)
		return;
#ifndef ORCU__LIB_ASAN
	if (f & ORCU__SAN_ASAN) {
		/* NOLINTBEGIN(clang-analyzer-core.CallAndMessage): the runtime has them */
		if (__asan_address_is_poisoned(h))
			__asan_report_error(pc, __builtin_frame_address(0),
					    __builtin_frame_address(0), h, 1, sizeof(*h));
		__asan_poison_memory_region(h, sizeof(*h));
		/* NOLINTEND(clang-analyzer-core.CallAndMessage) */
	}
#endif
	(void)f;
	(void)pc;
	orcu__tsan_release(h);
}

/* The invoker, before the callback of h: the head is the callback's
 * again, and what its poster did happens before it. */
static inline void orcu__san_invoke(struct orcu_head *h)
{
	unsigned f = orcu__san();

	if (orcu__likely(f == 0))
		return;
#ifndef ORCU__LIB_ASAN
	if (f & ORCU__SAN_ASAN)
		__asan_unpoison_memory_region(h, sizeof(*h));
#endif
	orcu__tsan_acquire(h);
}

static inline bool orcu__tsan_on(void) { return orcu__san() & ORCU__SAN_TSAN; }

#endif
