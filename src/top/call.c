/*
 * call.c - orcu_call() and orcu_call_lazy(): enqueue on the caller's slot
 * (slot 0 while orcu cannot start for want of memory), flood control
 * (hurry past ORCU_QHIMARK, a bounded delay past ORCU_QMAX, the explicit
 * orcu_wait_backlog()), lazy holding, the double-post check (postcheck.c).
 * Calls entry.c to start, cpu.c for the slot, postq.c (a thread's own
 * queue: claim, switch, push) and mpsc.c (the shared ones) to enqueue,
 * slot.c to count posts, nocb.c to wake a leader, serve.c for slots
 * without threads (and to start the library), postcheck.c, registry.c
 * for the caller's checks, delay.c (debug hooks) and os.c.
 *
 * orcu_call() never waits for callbacks to make progress: its caller may
 * hold a lock that its callbacks take (as with the kernel's and liburcu's
 * call_rcu), so it may be slowed, never blocked.  It never announces a
 * quiescent state either: a qsbr caller stays online throughout.
 */
#include "os.h"
#include "cblist.h"
#include "delay.h"
#include "event.h"
#include "mpsc.h"
#include "postcheck.h"
#include "registry.h"
#include "cpu.h"
#include "nocb.h"
#include "postq.h"
#include "sanitize.h"
#include "serve.h"
#include "slot.h"
#include "entry.h"
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

	if (r->in_callback || orcu__tls.library_thread ||
	    (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK)) {
		orcu__count(poster_overruns, 1);
		return;
	}
	orcu__count(poster_waits, 1);
	orcu__nocb_wake_leader(s->st.leader, true);
	ns = FLOOD_DELAY_MIN_NS + over * (FLOOD_DELAY_MAX_NS / orcu__g.qmax + 1);
	if (ns > FLOOD_DELAY_MAX_NS || ns < 0)
		ns = FLOOD_DELAY_MAX_NS;
	orcu__sleep_ns(ns);
}

int orcu_wait_backlog(long timeout_ms)
{
	struct orcu__slot *s;
	int64_t deadline = -1;
	bool was_online;
	int ret = 0;

	orcu__gp_check_caller("orcu_wait_backlog");
	if (orcu__ensure_started() == -ENOMEM)
		return -ENOMEM;
	s = orcu__current_slot();
	if (timeout_ms >= 0)
		deadline = (int64_t)orcu__now_ns() + (int64_t)timeout_ms * 1000000;
	/* An online qsbr caller would hold the GPs that drain its slot. */
	was_online = orcu__qsbr_offline_for_wait();
	for (;;) {
		/* The slot's invokers notify after raising n_done (pending
		 * falls below qhimark); they never wait for us. */
		uint32_t ticket = orcu__event_prepare(&s->cnt.drain);
		int64_t left = 10 * 1000000LL;

		/* Pairs with note_invoked() (slot.c): the fence of
		 * orcu__event_prepare() above, then the acquire of n_done in
		 * orcu__slot_pending(). */
		if (orcu__slot_pending(s) < orcu__g.qhimark) {
			orcu__event_cancel(&s->cnt.drain);
			break;
		}
		if (deadline >= 0) {
			int64_t now = (int64_t)orcu__now_ns();

			if (now >= deadline) {
				orcu__event_cancel(&s->cnt.drain);
				ret = -ETIMEDOUT;
				break;
			}
			if (deadline - now < left)
				left = deadline - now;
		}
		/* Its server, and where none runs, this waiter (serve.c). */
		orcu__serve_kick(s);
		if (orcu__event_wait(&s->cnt.drain, ticket, left) == -ETIMEDOUT)
			orcu__serve_waited();
	}
	if (was_online)
		orcu_thread_online();
	return ret;
}

/* Past ORCU_QHIMARK the slot's GPs hurry; past ORCU_QMAX the poster is
 * slowed (flood_delay()).  pend: what the slot holds, as the poster sees
 * it. */
static void flood_check(struct orcu__slot *s, long pend)
{
	orcu__slot_note_peak(s, pend);
	if (orcu__likely(pend <= orcu__g.qhimark))
		return;
	if (orcu__slot_raise_hurry(s)) {
		orcu__count(qhimark_crossings, 1);
		orcu__nocb_wake_leader(s->st.leader, true);
	}
	if (pend > orcu__g.qmax)
		flood_delay(s, pend);
}

/*
 * postq.c point 5, the poster's half.  The post was a release store:
 * with membarrier() available the leader's barrier before it sleeps
 * stands in for our fence, except for the first post after a claim (the
 * leader may not count us yet).  A thread that sees the leader asleep
 * wakes it.  The flood checks read other threads' lines, so they come
 * every 64 posts, and at each one while the slot is hurried.
 */
static void postq_posted(struct orcu__slot *s, unsigned long posted, bool claimed)
{
	struct orcu__leader *l = s->st.leader;

	/* Pairs with the fence of orcu__event_prepare() in leader_sleep()
	 * (nocb.c) after its seq_cst store of `sleep`.  Without the fence
	 * the compiler barrier keeps the store of `posted` before the load
	 * of `sleep` in the code as models/postq_wake.pml has them, and the
	 * leader's membarrier() orders them on the CPU (postq.c point 5;
	 * pair #3: the kernel's smp_mb() on our CPU, on any CPU). */
	if (orcu__unlikely(claimed || !orcu__load_relaxed(&orcu__has_membarrier)))
		orcu__fence_seq_cst();
	else
		orcu__compiler_barrier();
	/* No leader thread (orcu_shutdown() stopped it): serve.c finds the
	 * callback a server. */
	if (orcu__unlikely(orcu__load_relaxed(&l->sleep) == ORCU__LEADER_SLEEPING) &&
	    !orcu__nocb_wake_leader(l, false)) {
		orcu__serve_posted(s);
		orcu__retry(true);
	}
	if (orcu__unlikely((posted & 63) == 0 || orcu__load_relaxed(&s->st.hurry)))
		flood_check(s, orcu__slot_counted(s) - orcu__load_relaxed(&s->cnt.n_done));
}

/* Post h to this thread's own queue on s.  False: post it to the shared
 * queue instead. */
static bool post_own(struct orcu__slot *s, struct orcu_head *h)
{
	struct orcu__postq *q = orcu__tls.postq;
	bool claimed = false;
	unsigned long posted;

	if (orcu__unlikely(!q || q->slot != s)) {
		q = orcu__postq_switch(s, &claimed);
		if (!q)
			return false;
	}
	/* Posted again while it is still the newest head of the queue: the
	 * second call itself reports it and leaves it out, as a take that
	 * meets it later does (postq.c). */
	if (orcu__unlikely(h == q->newest) && !orcu__postq_drained(q)) {
		orcu__double_post_report(s, h);
		return true;
	}
	posted = orcu__postq_push(q, h);
	if (orcu__unlikely(!posted)) {
		if (!orcu__postq_next_seg(q))
			return false;
		posted = orcu__postq_push(q, h);
	}
	postq_posted(s, posted, claimed);
	return true;
}

/* The shared queue: lazy callbacks, and a thread that has no queue of its
 * own on s.  Counted before it is visible, so an invoker never sees it
 * negative; n_done is the invokers' (another line): read, never written
 * here. */
static void post_shared(struct orcu__slot *s, struct orcu_head *h, bool lazy)
{
	long pend;

	orcu__slot_count_post(s);
	orcu__delay(ORCU__DELAY_SHARED_POST);
	pend = orcu__slot_counted(s) - orcu__load_relaxed(&s->cnt.n_done);

	if (lazy) {
		long nl = orcu__slot_push_lazy(s, h);

		orcu__count(callbacks_lazy, 1);
		/* Only the first lazy callback wakes the leader, to arm its timer. */
		if (nl == 0 || nl + 1 >= orcu__g.lazy_max)
			orcu__nocb_wake_leader(s->st.leader, nl != 0);
	} else {
		orcu__slot_push_new(s, h);
		orcu__nocb_wake_leader(s->st.leader, false);
	}
	flood_check(s, pend);
}

/* Hand s's held lazy callbacks to the grace-period machinery now. */
static void lazy_flush(struct orcu__slot *s)
{
	orcu__slot_lock(s);
	orcu__slot_splice_new_locked(s, true);
	orcu__slot_unlock(s);
	orcu__count(lazy_flushes, 1);
	orcu__nocb_wake_leader(s->st.leader, true);
}

/*
 * Posting order across kinds (a thread's callbacks on a slot run in the
 * order it posted them, lazy or not).  A lazy post goes to the slot's
 * lazy queue, which the leader takes only now and then; an ordinary post
 * after it must not overtake it, so the thread's first ordinary post on
 * that slot flushes the lazy queue (as the kernel's call_rcu() flushes a
 * CPU's lazy bypass list).  The thread keeps lazy callbacks held on one
 * slot at a time: a lazy post on another flushes the first.  Ordinary
 * then lazy is the take's order (slot.c orcu__slot_splice_new_locked()).
 */
static void lazy_order(struct orcu__slot *s, bool lazy)
{
	struct orcu__slot *held = orcu__tls.lazy_slot;

	if (held && (held == s) != lazy)
		lazy_flush(held);
	if (lazy || held == s)
		orcu__tls.lazy_slot = lazy ? s : NULL;
}

/* No memory to configure orcu: slot 0, which exists from program load
 * (slot.h), holds the callback until the threads start or a waiter
 * serves it (serve.c).  Said once per process. */
static struct orcu__slot *slot_short_of_memory(const char *call)
{
	static _Atomic int said;

	/* Relaxed: only keeps the message to one. */
	if (!orcu__xchg_relaxed(&said, 1))
		orcu__warn("%s: cannot start orcu (out of memory); callbacks wait "
			   "on CPU slot 0",
			   call);
	return &orcu__slot0;
}

static void do_call(struct orcu_head *h, void (*func)(struct orcu_head *),
		    bool lazy, const char *call)
{
	struct orcu__slot *s;

	if (orcu__unlikely(!h || !func))
		orcu__misuse(call, !h ? "NULL head" : "NULL callback function");
	if (orcu__unlikely(orcu__ensure_started() == -ENOMEM))
		s = slot_short_of_memory(call);
	else
		s = orcu__current_slot();
	if (orcu__unlikely(orcu__load_relaxed(&orcu__check_calls) != 0 &&
			   orcu__double_call_enabled()))
		orcu__double_call_check(h, call);
	h->func = func;
	orcu__delay(ORCU__DELAY_ENQUEUE);
	if (orcu__unlikely(lazy || orcu__tls.lazy_slot))
		lazy_order(s, lazy);
	if (lazy || !post_own(s, h))
		post_shared(s, h, lazy);
	/* Nobody scans a slot without threads: find it a server (serve.c),
	 * and have the missing threads tried again.  seq_cst, after the post:
	 * a slot attached meanwhile has its leader forced awake after the
	 * store, and either we read 1 or that leader's scan finds our
	 * callback (serve.c point 2).  Pairs with the fence of that forced
	 * wake (orcu__nocb_wake_leader()). */
	if (orcu__unlikely(!orcu__load_seq_cst(&s->st.attached))) {
		orcu__serve_posted(s);
		orcu__retry(true);
	}
	/* No in-place poll here: orcu_call() is not a quiescent point, and
	 * its caller may hold a lock its callbacks take (they run at the
	 * thread's quiescent points, or on library threads). */
}

/*
 * orcu_call()'s common case, kept small: a running library, a thread that
 * owns its queue on the slot it runs on, a slot with threads, room in the
 * queue's segment, and nothing to check.  A full segment is post_own()'s
 * (the push is inline here, not a call: callgrind counts 17 instructions
 * more per post through post_own()).  Anything else (the first post, a
 * move to another slot, a NULL argument, the head posted last, the
 * double-post set or the torture delays) takes do_call().
 */
static inline bool call_fast(struct orcu_head *h, void (*func)(struct orcu_head *))
{
	struct orcu__postq *q = orcu__tls.postq;
	struct orcu__slot *s;
	unsigned long posted;

	/* Pairs with the release in orcu__serve_start_locked() (serve.c). */
	if (orcu__unlikely(!q || !h || !func || !orcu__load_acquire(&orcu__g.started) ||
			   orcu__load_relaxed(&orcu__check_calls) != 0 ||
			   orcu__load_relaxed(&orcu__delay_enabled)))
		return false;
	s = orcu__current_slot();
	/* Order: none needed for attached (do_call()). */
	if (orcu__unlikely(q->slot != s || h == q->newest || orcu__tls.lazy_slot == s ||
			   !orcu__load_relaxed(&s->st.attached)))
		return false;
	/* A head reposted with the same function is not written at all
	 * (postq.c point 1). */
	if (h->func != func)
		h->func = func;
	posted = orcu__postq_push(q, h);
	if (orcu__unlikely(!posted))
		return post_own(s, h);
	postq_posted(s, posted, false);
	return true;
}

void orcu_call(struct orcu_head *head, void (*func)(struct orcu_head *))
{
	/* For the sanitizers in the user's program (sanitize.h), before the
	 * head is published; pc: the caller's, for ASan's report. */
	if (orcu__unlikely(orcu__san()))
		orcu__san_post(head, __builtin_return_address(0));
	if (!call_fast(head, func))
		do_call(head, func, false, "orcu_call");
}

void orcu_call_lazy(struct orcu_head *head, void (*func)(struct orcu_head *))
{
	if (orcu__unlikely(orcu__san())) /* as in orcu_call() */
		orcu__san_post(head, __builtin_return_address(0));
	do_call(head, func, true, "orcu_call_lazy");
}

/* ------------------------------------------------------------------ */
/* Lazy callbacks */

void orcu_reclaim_lazy(void)
{
	/* Lazy callbacks need threads: a fork child, or a library stopped by
	 * orcu_shutdown(), starts them again, as a post would; one never
	 * used stays so.  Acquire pairs with the stores of `initialized` and
	 * `started` (entry.c). */
	if (orcu__load_acquire(&orcu__g.initialized))
		orcu__ensure_started();
	if (!orcu__load_acquire(&orcu__g.started))
		return;
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		if (orcu__load_relaxed(&s->post.n_lazy))
			lazy_flush(s);
	}
}
