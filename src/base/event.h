/*
 * event.h - the one way a library thread sleeps: an eventcount over a
 * futex word.  Owns struct orcu__event; calls only the futex wrappers of
 * the OS layer.  Every sleep in the library (GP requests, GP ends, the
 * reader wait, barriers, orcu_wait_backlog(), leaders, followers) is a
 * prepare / re-check / wait on one of these, and every wake a notify.
 *
 * Protocol.
 *   sleeper:  t = orcu__event_prepare(ev);     register, fence, ticket
 *             if (condition holds) { orcu__event_cancel(ev); ... }
 *             else orcu__event_wait(ev, t, timeout_ns);
 *   waker:    store the condition;             (any order)
 *             orcu__event_notify(ev) / orcu__event_notify_all(ev);
 *
 * Why no wake-up is lost (the store -> fence -> load argument, once for
 * every protocol that sleeps on an event).
 *  1. The sleeper stores `waiters` (+1), then a seq_cst fence, then loads
 *     the condition.  The waker stores the condition, then a seq_cst
 *     fence, then loads `waiters`.  The two fences are ordered one way or
 *     the other: if the sleeper's fence comes first, the waker's load sees
 *     the sleeper counted; otherwise the sleeper's re-check sees the
 *     condition and it does not sleep.  Neither can miss both.
 *  2. A waker that sees a sleeper bumps `seq` (release) and then wakes the
 *     futex.  The sleeper waits only while `seq` still equals its ticket,
 *     read after its fence: a bump that lands between the ticket and the
 *     futex_wait makes the wait return at once, so a wake that comes
 *     before the sleep is not lost.  A ticket that already counts the bump
 *     was read with acquire, so the re-check after it sees the condition
 *     the waker stored before bumping: the sleeper does not wait on it.
 *  3. A waker that sees no sleeper pays one fence and one load: no bump,
 *     no system call (idle programs make no wake-ups).
 * What the sleeper re-checks is its protocol's business; what it must
 * re-check is every condition whose waker notifies this event, and the
 * waker must store that condition before it notifies.  A protocol may
 * filter its notifies with a flag of its own (the GP thread's sleep kind,
 * a leader's sleep state); where the filter can skip a notify it needs its
 * own store -> fence -> load pair, stated where it is.
 *
 * Waits may wake spuriously (a notify meant for an earlier sleep, a
 * signal): every sleeper loops on its condition.
 */
#ifndef ORCU_EVENT_H
#define ORCU_EVENT_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"

/* The OS layer's futex calls (also declared in os.h). */
int orcu__futex_wait(_Atomic uint32_t *addr, uint32_t val, int64_t timeout_ns);
void orcu__futex_wake(void *addr, int n);

struct orcu__event {
	_Atomic uint32_t seq; /* wakers bump it (release); sleepers futex-wait on it */
	_Atomic int waiters;  /* sleepers between prepare and wait/cancel */
};

/* orcu__event_notify_n(): wake every sleeper. */
#define ORCU__EVENT_WAKE_ALL INT_MAX

/* Fork child: the threads counted in `waiters` are gone. */
static inline void orcu__event_reset(struct orcu__event *ev)
{
	orcu__store_relaxed(&ev->waiters, 0);
}

/* Register as a sleeper and return the ticket to wait with.  The caller
 * then re-checks its condition and calls orcu__event_wait() or
 * orcu__event_cancel(), exactly one of them. */
static inline uint32_t orcu__event_prepare(struct orcu__event *ev)
{
	orcu__fetch_add_relaxed(&ev->waiters, 1);
	/* Point 1: pairs with the fence in orcu__event_notify_n() (pair #1:
	 * dmb ish / sync on the weakly ordered CPUs). */
	orcu__fence_seq_cst();
	/* Point 2: pairs with the release bump in orcu__event_notify_n(). */
	return orcu__load_acquire(&ev->seq);
}

/* The condition held after all: deregister without sleeping. */
static inline void orcu__event_cancel(struct orcu__event *ev)
{
	orcu__fetch_sub_relaxed(&ev->waiters, 1);
}

/* Sleep until a notify after the ticket was taken, or timeout_ns (< 0:
 * none).  0, or -ETIMEDOUT when the timeout expired. */
static inline int orcu__event_wait(struct orcu__event *ev, uint32_t ticket,
				   int64_t timeout_ns)
{
	int ret = orcu__futex_wait(&ev->seq, ticket, timeout_ns);

	/* Relaxed: a count that lingers costs a waker one idle wake. */
	orcu__fetch_sub_relaxed(&ev->waiters, 1);
	return ret == -ETIMEDOUT ? -ETIMEDOUT : 0;
}

/* After storing the condition: wake up to n sleepers, if there are any.
 * True if some sleeper was registered (a wake-up was sent). */
static inline bool orcu__event_notify_n(struct orcu__event *ev, int n)
{
	/* Point 1: pairs with the fence in orcu__event_prepare(). */
	orcu__fence_seq_cst();
	if (!orcu__load_relaxed(&ev->waiters))
		return false;
	/* Point 2: pairs with the acquire ticket load in orcu__event_prepare(). */
	orcu__fetch_add_release(&ev->seq, 1);
	orcu__futex_wake(&ev->seq, n);
	return true;
}

/* The same where the condition was stored by a seq_cst operation (store
 * or read-modify-write) just before: that operation and the seq_cst load
 * of `waiters` after it stand in for the fence of point 1 (the sleeper's
 * fence precedes the condition's store in the single total order, or its
 * re-check sees the store), so the waker saves a full fence. */
static inline bool orcu__event_notify_all_after_sc(struct orcu__event *ev)
{
	/* Point 1: pairs with the fence in orcu__event_prepare(). */
	if (!orcu__load_seq_cst(&ev->waiters))
		return false;
	/* Point 2: pairs with the acquire ticket load in orcu__event_prepare(). */
	orcu__fetch_add_release(&ev->seq, 1);
	orcu__futex_wake(&ev->seq, ORCU__EVENT_WAKE_ALL);
	return true;
}

/* Events with one sleeper (a leader, a follower, the GP thread). */
static inline bool orcu__event_notify(struct orcu__event *ev)
{
	return orcu__event_notify_n(ev, 1);
}

/* Events any number of threads sleep on (GP ends, barriers, drains). */
static inline bool orcu__event_notify_all(struct orcu__event *ev)
{
	return orcu__event_notify_n(ev, ORCU__EVENT_WAKE_ALL);
}

#endif
