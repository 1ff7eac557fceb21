/*
 * call.c - orcu_call() and orcu_call_lazy(): enqueue on the caller's slot,
 * flood control (hurry past ORCU_QHIMARK, poster waits past ORCU_QMAX),
 * lazy holding, the double-post check, and callback invocation (by
 * followers, leaders in flat mode, and application threads on inline
 * slots).  Calls cpu.c for the slot, nocb.c to wake a leader, gp.c for
 * hurried GPs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "trace.h"

#include <search.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Double-post check: a set of pending heads.  Always on in ORCU_DEBUG
 * builds; elsewhere with ORCU_CHECK_CALLS=1 (it costs a lock per call). */

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pending_set;
/* -1 until first use; racing first users compute the same value. */
static _Atomic int check_calls = -1;

static int cmp_ptr(const void *a, const void *b)
{
	return (a > b) - (a < b);
}

static bool check_calls_enabled(void)
{
	int on = orcu__load_relaxed(&check_calls);

	if (orcu__unlikely(on < 0)) {
#ifdef ORCU_DEBUG
		on = 1;
#else
		const char *e = getenv("ORCU_CHECK_CALLS");

		on = e && *e && strcmp(e, "0") != 0;
#endif
		orcu__store_relaxed(&check_calls, on);
	}
	return on;
}

static void double_call_check(struct orcu_head *h, const char *call)
{
	void **found;

	pthread_mutex_lock(&pending_lock);
	found = tfind(h, &pending_set, cmp_ptr);
	if (found) {
		pthread_mutex_unlock(&pending_lock);
		fprintf(stderr, "orcu: %s: callback head %p posted twice while still pending (function %p)\n",
			call, (void *)h, (void *)(uintptr_t)h->func);
		abort();
	}
	tsearch(h, &pending_set, cmp_ptr);
	pthread_mutex_unlock(&pending_lock);
}

void orcu__double_call_forget(struct orcu_head *h)
{
	if (orcu__load_relaxed(&check_calls) <= 0)
		return;
	pthread_mutex_lock(&pending_lock);
	tdelete(h, &pending_set, cmp_ptr);
	pthread_mutex_unlock(&pending_lock);
}

/* fork (init.c): the double-post set's lock, taken last (a callback may
 * post, so invoke_lock is held before pending_lock). */
void orcu__call_fork_prepare(void)
{
	pthread_mutex_lock(&pending_lock);
}

void orcu__call_fork_parent(void)
{
	pthread_mutex_unlock(&pending_lock);
}

void orcu__call_fork_child(void)
{
	pthread_mutex_unlock(&pending_lock);
	if (!orcu__load_relaxed(&orcu__g.initialized))
		return;
	/* A poster counts n_pending before its callback is visible; one that
	 * was between the two when another thread forked left a count with
	 * no callback, and orcu_drain() would never see zero here.  No
	 * invocation is in flight (fork_prepare held every invoke_lock):
	 * recount each slot from what it really holds. */
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];
		long lazy = orcu__mpsc_after_fork(&s->lazyq);
		long n = orcu__mpsc_after_fork(&s->newq) + lazy;

		for (struct orcu_head *h = s->cbl.head; h; h = h->next)
			n += h->func != orcu__barrier_cb;
		orcu__store_relaxed(&s->n_lazy, lazy);
		orcu__store_relaxed(&s->n_pending, n);
	}
}

/* ------------------------------------------------------------------ */
/* Invocation */

static void note_invoked(struct orcu__slot *s, long n)
{
	long left;

	if (!n)
		return;
	orcu__fetch_add_relaxed(&s->n_invoked, (uint64_t)n);
	/* Release: the callbacks' effects are visible to a barrier that
	 * reads n_pending == 0 with acquire (barrier.c). */
	left = orcu__fetch_sub_release(&s->n_pending, n) - n;
	if (orcu__load_relaxed(&s->hurry) && left < orcu__g.qlowmark)
		orcu__store_relaxed(&s->hurry, 0);
	if (left < orcu__g.qhimark) {
		orcu__fetch_add_seq_cst(&s->drain_futex, 1);
		if (orcu__load_seq_cst(&s->drain_waiters))
			orcu__futex_wake(&s->drain_futex, 1 << 30);
	}
}

/* Invoke a NULL-terminated chain, in order.  Caller holds s->invoke_lock. */
void orcu__invoke_chain(struct orcu__slot *s, struct orcu_head *chain, bool is_inline)
{
	struct orcu__reader *r = &orcu__reader;
	long user = 0, since = 0;

	r->in_callback++;
	while (chain) {
		struct orcu_head *h = chain;

		chain = h->next;
		if (h->func == orcu__barrier_cb) {
			/* Account for the callbacks ahead of the marker first:
			 * when the barrier returns, n_pending already excludes
			 * them (orcu_drain's total_pending() relies on it). */
			note_invoked(s, since);
			since = 0;
			h->func(h);
			continue;
		}
		if (orcu__load_relaxed(&check_calls) > 0)
			orcu__double_call_forget(h);
		h->func(h);
		user++;
		/* Let waiting posters in without waiting for a huge batch. */
		if (++since == 256) {
			note_invoked(s, since);
			since = 0;
		}
	}
	r->in_callback--;
	orcu__trace2(invoked, s->cpu, user);
	note_invoked(s, since);
	if (is_inline)
		orcu__fetch_add_relaxed(&s->n_inline, (uint64_t)user);
}

/* Inline slots: an application thread at a quiescent point runs a batch. */
void orcu__inline_poll(void)
{
	struct orcu__slot *s;
	struct orcu_head *chain;

	if (orcu__likely(!orcu__load_relaxed(&orcu__g.nr_inline)) ||
	    !orcu__load_acquire(&orcu__g.started))
		return;
	s = orcu__current_slot();
	if (orcu__likely(!orcu__load_relaxed(&s->inline_ready)))
		return;
	if (orcu__reader.in_callback ||
	    (orcu__load_relaxed(&orcu__reader.ctr) & ORCU__NEST_MASK))
		return;
	if (pthread_mutex_trylock(&s->invoke_lock))
		return;
	pthread_mutex_lock(&s->cb_lock);
	orcu__cblist_extract_done(&s->cbl, &chain, orcu__g.inline_batch);
	if (orcu__cblist_seg_empty(&s->cbl, ORCU__CBL_DONE))
		orcu__store_relaxed(&s->inline_ready, 0);
	pthread_mutex_unlock(&s->cb_lock);
	orcu__invoke_chain(s, chain, true);
	pthread_mutex_unlock(&s->invoke_lock);
}

/* ------------------------------------------------------------------ */
/* Enqueue */

/* Past ORCU_QMAX the poster waits until its slot is under the high mark,
 * unless it must not block (read side, callback, library thread). */
static void flood_wait(struct orcu__slot *s)
{
	struct orcu__reader *r = &orcu__reader;

	bool qsbr_online;

	if (r->in_callback || orcu__tls.library_thread ||
	    (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK)) {
		orcu__count(poster_overruns, 1);
		return;
	}
	orcu__count(poster_waits, 1);
	/* An online qsbr poster would hold the GPs that drain its slot. */
	qsbr_online = r->kind == ORCU__KIND_QSBR && orcu__load_relaxed(&r->qs_seq);
	if (qsbr_online)
		orcu_thread_offline();
	orcu__fetch_add_seq_cst(&s->drain_waiters, 1);
	for (;;) {
		uint32_t v = orcu__load_seq_cst(&s->drain_futex);

		if (orcu__load_seq_cst(&s->n_pending) < orcu__g.qhimark)
			break;
		orcu__nocb_wake_leader(s->leader, true);
		orcu__futex_wait(&s->drain_futex, v, 10 * 1000000);
	}
	orcu__fetch_sub_relaxed(&s->drain_waiters, 1);
	if (qsbr_online)
		orcu_thread_online();
}

static void do_call(struct orcu_head *h, void (*func)(struct orcu_head *),
		    bool lazy, const char *call)
{
	struct orcu__slot *s;
	long pend;

	if (orcu__unlikely(!h || !func))
		orcu__misuse(call, !h ? "NULL head" : "NULL callback function");
	orcu__ensure_started();
	if (orcu__unlikely(check_calls_enabled()))
		double_call_check(h, call);
	s = orcu__current_slot();
	h->func = func;
	orcu__delay(ORCU__DELAY_ENQUEUE);
	/* Counted before it is visible, so an invoker never sees it negative. */
	pend = orcu__fetch_add_relaxed(&s->n_pending, 1) + 1;
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
			flood_wait(s);
	}
	if (orcu__unlikely(!orcu__load_relaxed(&s->offloaded)))
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
/* Slot-level moves used by the leader, the barrier and hotplug. */

/* Move what was posted (and, with take_lazy, what is held lazily) into the
 * segmented list.  Caller holds s->cb_lock.  Returns how many moved. */
long orcu__slot_splice_new_locked(struct orcu__slot *s, bool take_lazy)
{
	struct orcu_head *first, *last;
	long n, total = 0;

	ORCU__ASSERT_HELD(&s->cb_lock);
	if (take_lazy && orcu__load_relaxed(&s->n_lazy)) {
		n = orcu__mpsc_take(&s->lazyq, &first, &last);
		if (n) {
			orcu__cblist_enqueue_chain(&s->cbl, first, last, n);
			orcu__fetch_sub_relaxed(&s->n_lazy, n);
			total += n;
		}
	}
	n = orcu__mpsc_take(&s->newq, &first, &last);
	if (n) {
		orcu__cblist_enqueue_chain(&s->cbl, first, last, n);
		total += n;
	}
	return total;
}

/* Move every callback of `from` not yet being invoked to the end of `to`
 * (hotplug of an inline slot, adoption of a never-onlined one); n_pending
 * moves with them.  Barrier markers move too, to keep their place behind
 * the callbacks, but n_pending never counted them.  Returns the number of
 * callbacks moved and, in *first_func, the first one's function (for
 * reports: once moved, the callbacks may run and be freed at any time). */
long orcu__slot_move_all(struct orcu__slot *from, struct orcu__slot *to,
			 void (**first_func)(struct orcu_head *))
{
	struct orcu_head *first, *last = NULL;
	long n, user = 0;

	pthread_mutex_lock(&from->invoke_lock);
	pthread_mutex_lock(&from->cb_lock);
	orcu__slot_splice_new_locked(from, true);
	n = orcu__cblist_take_all(&from->cbl, &first);
	orcu__store_relaxed(&from->inline_ready, 0);
	pthread_mutex_unlock(&from->cb_lock);
	if (n) {
		*first_func = first->func;
		for (struct orcu_head *h = first; h; h = h->next) {
			user += h->func != orcu__barrier_cb;
			last = h;
		}
		orcu__fetch_add_relaxed(&to->n_pending, user);
		pthread_mutex_lock(&to->cb_lock);
		orcu__cblist_enqueue_chain(&to->cbl, first, last, n);
		pthread_mutex_unlock(&to->cb_lock);
		orcu__fetch_sub_release(&from->n_pending, user);
		orcu__count(adopted, (uint64_t)user);
		orcu__nocb_wake_leader(to->leader, true);
	}
	pthread_mutex_unlock(&from->invoke_lock);
	return user;
}

void orcu__flush_lazy_all(void)
{
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];

		if (!orcu__load_relaxed(&s->n_lazy))
			continue;
		pthread_mutex_lock(&s->cb_lock);
		orcu__slot_splice_new_locked(s, true);
		pthread_mutex_unlock(&s->cb_lock);
		orcu__count(lazy_flushes, 1);
		orcu__nocb_wake_leader(s->leader, true);
	}
}

void orcu_reclaim_lazy(void)
{
	if (orcu__load_acquire(&orcu__g.started))
		orcu__flush_lazy_all();
}
