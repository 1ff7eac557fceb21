/*
 * call.c - orcu_call() and orcu_call_lazy(): enqueue on the caller's slot,
 * flood control (hurry past ORCU_QHIMARK, a bounded delay past ORCU_QMAX,
 * the explicit orcu_wait_backlog()), lazy holding, the double-post check
 * (postcheck.c), and the inline poll after a post to an inline slot.
 * Calls entry.c to start (and for inline polls), cpu.c for the slot,
 * mpsc.c to enqueue, slot.c to invoke and wake a leader, nocb.c for
 * orphans, postcheck.c, registry.c for the caller's checks, and os.c.
 *
 * orcu_call() never waits for callbacks to make progress: its caller may
 * hold a lock that its callbacks take (as with the kernel's and liburcu's
 * call_rcu), so it may be slowed, never blocked.  It never announces a
 * quiescent state either: a qsbr caller stays online throughout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "trace.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Enqueue */

/* Past ORCU_QMAX the poster is slowed: a sleep that grows with the
 * overrun, at most FLOOD_DELAY_MAX_NS per call, never a wait for the slot
 * to drain (its callbacks may need a lock the caller holds, or a
 * quiescent state it has not announced).  Not in a read-side section, a
 * callback or a library thread, which must not sleep at all. */
#define FLOOD_DELAY_MIN_NS 20000L
#define FLOOD_DELAY_MAX_NS 1000000L

static void flood_delay(struct orcu__slot *s, long pend)
{
	struct orcu__reader *r = &orcu__reader;
	long over = pend - orcu__g.qmax, ns;
	struct timespec ts;

	if (r->in_callback || orcu__tls.library_thread ||
	    (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK)) {
		orcu__count(poster_overruns, 1);
		return;
	}
	orcu__count(poster_waits, 1);
	orcu__nocb_wake_leader(s->leader, true);
	ns = FLOOD_DELAY_MIN_NS + over * (FLOOD_DELAY_MAX_NS / orcu__g.qmax + 1);
	if (ns > FLOOD_DELAY_MAX_NS || ns < 0)
		ns = FLOOD_DELAY_MAX_NS;
	ts.tv_sec = 0;
	ts.tv_nsec = ns;
	nanosleep(&ts, NULL);
}

int orcu_wait_backlog(long timeout_ms)
{
	struct orcu__slot *s;
	int64_t deadline = -1;
	bool was_online;
	int ret = 0;

	orcu__gp_check_caller("orcu_wait_backlog");
	orcu__ensure_started();
	s = orcu__current_slot();
	if (timeout_ms >= 0)
		deadline = (int64_t)orcu__now_ns() + (int64_t)timeout_ms * 1000000;
	/* An online qsbr caller would hold the GPs that drain its slot. */
	was_online = orcu__qsbr_offline_for_wait();
	for (;;) {
		/* The slot's invokers notify after raising n_done (pending
		 * falls below qhimark); they never wait for us. */
		uint32_t ticket = orcu__event_prepare(&s->drain);
		int64_t left = 10 * 1000000;

		/* Pairs with note_invoked() (slot.c): the fence of
		 * orcu__event_prepare() above, then the acquire of n_done in
		 * orcu__slot_pending(). */
		if (orcu__slot_pending(s) < orcu__g.qhimark) {
			orcu__event_cancel(&s->drain);
			break;
		}
		if (deadline >= 0) {
			int64_t now = (int64_t)orcu__now_ns();

			if (now >= deadline) {
				orcu__event_cancel(&s->drain);
				ret = -ETIMEDOUT;
				break;
			}
			if (deadline - now < left)
				left = deadline - now;
		}
		orcu__nocb_wake_leader(s->leader, true);
		/* A slot without threads is served by the waiters.  Order:
		 * none needed (orcu__slot_attach()). */
		if (!orcu__load_relaxed(&s->attached)) {
			orcu__event_cancel(&s->drain);
			orcu__slot_serve(s);
		} else {
			orcu__event_wait(&s->drain, ticket, left);
		}
	}
	if (was_online)
		orcu_thread_online();
	return ret;
}

static void do_call(struct orcu_head *h, void (*func)(struct orcu_head *),
		    bool lazy, const char *call)
{
	struct orcu__slot *s;
	long pend;

	if (orcu__unlikely(!h || !func))
		orcu__misuse(call, !h ? "NULL head" : "NULL callback function");
	orcu__ensure_started();
	if (orcu__unlikely(orcu__load_relaxed(&orcu__check_calls) != 0 &&
			   orcu__double_call_enabled()))
		orcu__double_call_check(h, call);
	s = orcu__current_slot();
	h->func = func;
	orcu__delay(ORCU__DELAY_ENQUEUE);
	/* Counted before it is visible, so an invoker never sees it negative.
	 * n_done is the invokers' (another line): read, never written here. */
	pend = orcu__fetch_add_relaxed(&s->n_posted, 1) + 1 -
	       orcu__load_relaxed(&s->n_done);
	if (orcu__unlikely(pend > orcu__load_relaxed(&s->peak_pending)))
		orcu__store_relaxed(&s->peak_pending, pend);
	if (lazy) {
		long nl = orcu__fetch_add_relaxed(&s->n_lazy, 1);

		orcu__count(callbacks_lazy, 1);
		if (nl == 0)
			orcu__store_relaxed(&s->lazy_first_ns, orcu__now_ns());
		orcu__mpsc_push(&s->lazyq, h);
		/* Only the first lazy callback wakes the leader, to arm its timer. */
		if (nl == 0 || nl + 1 >= orcu__g.lazy_max)
			orcu__nocb_wake_leader(s->leader, nl != 0);
	} else {
		orcu__mpsc_push(&s->newq, h);
		orcu__nocb_wake_leader(s->leader, false);
	}
	if (orcu__unlikely(pend > orcu__g.qhimark)) {
		if (!orcu__load_relaxed(&s->hurry)) {
			orcu__store_relaxed(&s->hurry, 1);
			orcu__count(qhimark_crossings, 1);
			orcu__nocb_wake_leader(s->leader, true);
		}
		if (pend > orcu__g.qmax)
			flood_delay(s, pend);
	}
	/* Nobody scans a slot without threads: have one adopted, and with
	 * no leader to adopt it, have the missing threads tried again.
	 * Order: none needed (orcu__slot_attach()). */
	if (orcu__unlikely(!orcu__load_relaxed(&s->attached)) &&
	    !orcu__nocb_orphan_posted())
		orcu__retry_threads();
	if (orcu__unlikely(!orcu__slot_offloaded(s)))
		orcu__inline_poll();
}

void orcu_call(struct orcu_head *head, void (*func)(struct orcu_head *))
{
	do_call(head, func, false, "orcu_call");
}

void orcu_call_lazy(struct orcu_head *head, void (*func)(struct orcu_head *))
{
	do_call(head, func, true, "orcu_call_lazy");
}

/* ------------------------------------------------------------------ */
/* Lazy callbacks */

void orcu__flush_lazy_all(void)
{
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];

		if (!orcu__load_relaxed(&s->n_lazy))
			continue;
		orcu__slot_splice_new(s, true);
		orcu__count(lazy_flushes, 1);
		orcu__nocb_wake_leader(s->leader, true);
	}
}

void orcu_reclaim_lazy(void)
{
	/* Pairs with the store of `started` in start_locked() (entry.c). */
	if (orcu__load_acquire(&orcu__g.started))
		orcu__flush_lazy_all();
}
