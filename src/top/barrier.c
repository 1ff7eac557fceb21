/*
 * barrier.c - orcu_barrier() and orcu_drain(): wait until every callback
 * posted before the call has been invoked.  Calls slot.c to entrain
 * markers, serve.c to wake a slot's server and to serve while waiting,
 * gp.c (no batch window while a barrier waits), registry.c for the
 * caller's checks, entry.c to start, free.c to post every thread's open
 * batch of orcu_free() first and to wait for the posters deleting a batch
 * last, delay.c (debug hooks) and os.c.
 *
 * Why it is right.  A slot's callbacks never leave it and are invoked in
 * posting order (one invoker at a time, FIFO list), so one marker
 * entrained behind a slot's last callback, on that slot, is invoked after
 * all of them.  A slot whose pending count is 0 has invoked everything
 * posted to it: invokers count them done with release after the callbacks
 * ran, and we read that with acquire.  Such slots cost a load, nothing
 * more.  A marker is counted in its slot's pending as a callback is (so a
 * slot whose marker waits has work for its server), and counts itself
 * and what ran ahead of it done before it counts the barrier down: when
 * the barrier returns, pending excludes them (orcu_drain() reads it).
 *
 * Slots without threads (kernel commit d7e29933969e).  A slot that never
 * came online has no threads, so a marker there would never run: the 2014
 * kernel hung here.  A slot without callbacks is skipped; one *with*
 * callbacks (posted by a thread bound to it, or before it came online, or
 * whose threads could not be created, or to slot 0 before orcu could
 * start) gets its marker like any other, and its server (serve.c: the
 * GP thread, or this waiter in orcu__serve_waited()) runs it there; the
 * slot is reported once.  The barrier never returns before every earlier callback ran,
 * and never waits on a thread that does not exist.
 *
 * Piggybacking.  barrier_seq counts like gp_seq (odd while a barrier
 * runs).  A caller needs a barrier that *starts* after it arrived:
 * orcu__seq_snap(barrier_seq).  Concurrent callers share that one barrier.
 */
#include "os.h"
#include "delay.h"
#include "event.h"
#include "seq.h"
#include "gp.h"
#include "registry.h"
#include "sanitize.h"
#include "serve.h"
#include "slot.h"
#include "barrier.h"
#include "entry.h"
#include "free.h"
#include "trace.h"

#include <errno.h>
#include <time.h>

static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long barrier_seq;
static _Atomic long barrier_count;
static struct orcu__event barrier_done; /* waiters sleep on it; barrier_count_down() notifies */

/* A marker ran, or the pass ended (barrier_start()): the last of them
 * ends the barrier. */
static void barrier_count_down(void)
{
	unsigned long s;
	/* Release: the callbacks ahead of a marker are done.  Acquire: the
	 * last to count down passes every other countdown's release on to
	 * the waiters.  Pairs with the other countdowns. */
	long left = orcu__fetch_sub_acq_rel(&barrier_count, 1) - 1;

	ORCU__BUG_ON(left < 0);
	if (left > 0)
		return;
	s = orcu__load_relaxed(&barrier_seq);
	/* Pairs with the acquire loads of barrier_seq in
	 * orcu__barrier_timed(): what every marker's invoker saw done is
	 * visible to the waiters.  The notify's fence orders it before the
	 * check for sleepers, who re-check barrier_seq after preparing. */
	orcu__store_release(&barrier_seq, orcu__seq_end(s));
	orcu__gp_set_unbatched(false);
	orcu__event_notify_all(&barrier_done);
}

static void barrier_cb(struct orcu_head *h)
{
	(void)h;
	/* What ran ahead of us on the slot is counted done first: pending
	 * excludes it when the barrier returns (orcu_drain()). */
	orcu__slot_note_marker();
	barrier_count_down();
}

/* In the pass: this barrier's marker for slot s, on s, and s's server
 * woken to run it. */
static void mark_slot(struct orcu__slot *s)
{
	/* Acquire pairs with the release in note_invoked() (slot.c). */
	if (!orcu__slot_pending(s))
		return;
	/* Counted before the marker can run. */
	orcu__fetch_add_relaxed(&barrier_count, 1);
	orcu__slot_entrain_marker(s, barrier_cb);
	orcu__serve_kick(s);
}

static void barrier_start(void)
{
	orcu__store_relaxed(&barrier_seq, orcu__seq_start(orcu__load_relaxed(&barrier_seq)));
	/* Someone waits for callbacks: GPs should not wait for a batch window. */
	orcu__gp_set_unbatched(true);
	/* Pairs with the fence in orcu__barrier_timed(): a caller posted,
	 * fenced, then read barrier_seq; we stored it, fence, then read each
	 * slot's counts.  Either it saw this barrier start (and waits for the
	 * next one), or this pass sees its callbacks counted (pair #10). */
	orcu__fence_seq_cst();
	orcu__store_relaxed(&barrier_count, 1);
	orcu__trace1(barrier_start, orcu__load_relaxed(&barrier_seq));
	for (int i = 0; i < orcu__nr_slots(); i++)
		mark_slot(orcu__slot_of(i));
	orcu__count(barriers_run, 1);
	orcu__delay(ORCU__DELAY_BARRIER);
	/* Drops the bias that kept markers from ending the barrier during
	 * the pass. */
	barrier_count_down();
}

/* How often a waiting barrier checks that something can make progress. */
#define HELP_FIRST_NS (10 * 1000000LL)
#define HELP_MAX_NS (200 * 1000000LL)

int orcu__barrier_timed(int64_t deadline_ns)
{
	unsigned long snap, s;

	/* Short of memory, slot 0 alone exists: it is marked as any slot. */
	orcu__ensure_started();
	orcu__count(barriers, 1);
	/* Objects handed to orcu_free() and orcu_retire() before the call
	 * are callbacks from here on (free.c point 3). */
	orcu__free_flush_all();
	/* Pairs with the fence in barrier_start(): the callbacks this
	 * caller posted (or saw posted) are counted before we read which
	 * barrier runs, so one that started too early to see them is not
	 * taken for ours. */
	orcu__fence_seq_cst();
	snap = orcu__seq_snap(orcu__load_relaxed(&barrier_seq));
	for (;;) {
		uint32_t ticket;

		/* Pairs with the release in barrier_count_down().  A batch
		 * whose callback ran may still be deleted by its poster
		 * (free.c point 6): wait for it too. */
		if (orcu__seq_done(orcu__load_acquire(&barrier_seq), snap))
			return orcu__free_wait_deleters(deadline_ns);
		pthread_mutex_lock(&barrier_lock);
		/* barrier_lock, held by every start, makes this see the last
		 * one.  Acquire: a barrier we start after the last one ended
		 * comes after its markers' invokers were done with them (it
		 * entrains them again).  Pairs with the release in
		 * barrier_count_down(); an end it misses, the acquire below sees. */
		s = orcu__load_acquire(&barrier_seq);
		if (!orcu__seq_in_progress(s) && !orcu__seq_done(s, snap))
			barrier_start();
		pthread_mutex_unlock(&barrier_lock);
		for (int64_t tick = HELP_FIRST_NS;; tick = tick * 2 < HELP_MAX_NS ? tick * 2 : HELP_MAX_NS) {
			int64_t left = tick;

			/* Pairs with the store that ends the barrier in
			 * barrier_count_down(), before its notify. */
			ticket = orcu__event_prepare(&barrier_done);
			s = orcu__load_acquire(&barrier_seq);
			if (!orcu__seq_in_progress(s) || orcu__seq_done(s, snap)) {
				orcu__event_cancel(&barrier_done);
				break;
			}
			if (deadline_ns >= 0) {
				int64_t rest = deadline_ns - (int64_t)orcu__now_ns();

				if (rest <= 0) {
					orcu__event_cancel(&barrier_done);
					return -ETIMEDOUT;
				}
				if (rest < left)
					left = rest;
			}
			/* The last marker's invoker wakes us (barrier_count_down());
			 * if no thread can run it, the timeout lets us serve
			 * (serve.c, in place). */
			if (orcu__event_wait(&barrier_done, ticket, left) == -ETIMEDOUT)
				orcu__serve_waited();
		}
	}
}

void orcu_barrier(void)
{
	bool was_online;

	orcu__gp_check_caller("orcu_barrier");
	was_online = orcu__qsbr_offline_for_wait();
	orcu__barrier_timed(-1);
	/* For ThreadSanitizer: the callbacks happen before our return
	 * (sanitize.h). */
	orcu__tsan_acquire(&orcu__san_cb_done);
	if (was_online)
		orcu_thread_online();
}

/* Whether nothing counted on any slot was pending, at one instant.  A
 * callback may post to another slot than its own, so summing each slot's
 * pending in turn can miss a chain that moves: read B, the callback posts
 * to B and counts done on A, read A.  So every done count is read first,
 * then every posted one.  Acquire: a callback counted done was counted
 * posted before, and so was all it posted (pairs with the release in
 * note_invoked(), slot.c).  The sums are equal only if nothing was
 * pending between the two passes. */
static bool all_invoked(void)
{
	long done = 0, posted = 0;

	for (int i = 0; i < orcu__nr_slots(); i++)
		done += orcu__load_acquire(&orcu__slot_of(i)->cnt.n_done);
	for (int i = 0; i < orcu__nr_slots(); i++)
		posted += orcu__slot_counted(orcu__slot_of(i));
	return posted == done;
}

int orcu_drain(long timeout_ms)
{
	int64_t deadline = -1;
	int ret;
	bool was_online;

	orcu__gp_check_caller("orcu_drain");
	if (timeout_ms >= 0)
		deadline = (int64_t)orcu__now_ns() + (int64_t)timeout_ms * 1000000;
	was_online = orcu__qsbr_offline_for_wait();
	for (;;) {
		ret = orcu__barrier_timed(deadline);
		/* A deleter may have retired more into its thread's batch. */
		if (ret < 0 || (all_invoked() && orcu__free_flush_all() == 0))
			break;
		if (deadline >= 0 && (int64_t)orcu__now_ns() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	orcu__tsan_acquire(&orcu__san_cb_done); /* as in orcu_barrier() */
	if (was_online)
		orcu_thread_online();
	return ret;
}

/* fork (lifecycle.c): a barrier_lock held by another thread at fork time would
 * never be released in the child, where only the forking thread exists.
 * Taken first in fork_prepare (barrier_start takes the slot locks inside
 * it), so no barrier is half-started across the fork;
 * markers already entrained are inherited with the lists and still end
 * that barrier in the child.  Parent and child unlock alike. */
void orcu__barrier_fork_lock(void)
{
	pthread_mutex_lock(&barrier_lock);
}

void orcu__barrier_fork_unlock(void)
{
	pthread_mutex_unlock(&barrier_lock);
}
