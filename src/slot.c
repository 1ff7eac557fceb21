/*
 * slot.c - the operations on one CPU slot that more than one module needs:
 * moving posted callbacks into the segmented list, moving a slot's
 * callbacks to another slot, invoking ready callbacks (one invoker at a
 * time, in FIFO order, with no lock held while user code runs), serving a
 * slot from a waiting thread, repairing slots in a fork child, and the
 * waking side of nocb.c's sleep protocol.  Calls gp.c (a waiter drives
 * GPs), registry.c (qsbr context), cblist.c, mpsc.c, postcheck.c (forget)
 * and os.c.
 *
 * Why each callback runs once, in order, and none is lost.
 *  1. Callbacks enter the list, are tagged, advanced, moved and taken
 *     only under the slot's cb_lock.
 *  2. Invocation is claimed under cb_lock with `invoking`: the claimer
 *     takes a chain from the front of DONE and is the slot's only invoker
 *     until it gives the claim back, so callbacks run in posting order.
 *     The claim is a flag, not a mutex held across user code: a callback
 *     may take any library lock (hotplug, fork, shutdown), and a thread
 *     that finds the claim busy leaves the work to its holder, which looks
 *     for more DONE callbacks before it lets go.
 *  3. The claimer records the rest of its chain in `inflight` before each
 *     callback (a store ordered before the callback's own stores), so a
 *     fork child, where the claimer does not exist, puts the callbacks
 *     that did not run back in front of DONE.
 *  4. n_pending counts a callback from before it is visible until after it
 *     ran (release), so a barrier that reads 0 with acquire has seen its
 *     effects.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "trace.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Wake-ups: the waking side of nocb.c's leader and follower sleep (its
 * points 1 to 3), here because posters, invokers and hotplug all wake
 * through them, and slot.c is below every one of those. */

void orcu__nocb_wake_leader(struct orcu__leader *l, bool force)
{
	if (force)
		orcu__store_relaxed(&l->force, 1);
	/* No thread yet: the callback stays queued and the leader's first
	 * scan finds it (nocb.c point 1). */
	if (!orcu__load_acquire(&l->exists))
		return;
	if (orcu__g.nocb_poll && !force)
		return;
	/* Point 2.  A post was published by a seq_cst exchange of the queue
	 * tail; a seq_cst load of `sleep` after it pairs with the seq_cst
	 * store of `sleep` and the fence in orcu__event_prepare() before the
	 * seq_cst re-scan in leader_sleep() (one of us sees the other), with
	 * no fence on the posting path.  A forced wake published `force`
	 * relaxed: it fences, and notifies whatever the state (the leader
	 * may wait for a GP, awake). */
	if (force)
		orcu__fence_seq_cst();
	if (orcu__load_seq_cst(&l->sleep) == ORCU__LEADER_SLEEPING &&
	    orcu__xchg_seq_cst(&l->sleep, ORCU__LEADER_AWAKE) == ORCU__LEADER_SLEEPING) {
		orcu__count(enqueue_wakeups, 1);
		orcu__trace1(leader_wake, l->first);
		force = true;
	}
	if (force)
		orcu__event_notify(&l->wake);
}

/* Caller holds s->cb_lock and just made DONE non-empty for the slot's
 * threads: wake the follower, or the leader where there is no follower. */
void orcu__nocb_wake_follower_locked(struct orcu__slot *s)
{
	ORCU__ASSERT_HELD(&s->cb_lock);
	if (!orcu__load_relaxed(&s->has_follower)) {
		orcu__nocb_wake_leader(s->leader, true);
		return;
	}
	/* follower_sleep is set under cb_lock by a follower that found no
	 * work; we hold cb_lock, so it is asleep or will see our DONE.  It
	 * re-checks the state after preparing its event (follower_main()). */
	if (orcu__load_relaxed(&s->follower_sleep) == ORCU__FOLLOWER_SLEEPING) {
		orcu__store_relaxed(&s->follower_sleep, ORCU__FOLLOWER_AWAKE);
		orcu__event_notify(&s->follower_wake);
		orcu__count(leader_wakeups, 1);
		orcu__trace1(follower_wake, s->cpu);
	}
}

void orcu__slot_init(struct orcu__slot *s, int cpu)
{
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	orcu__mpsc_init(&s->newq);
	orcu__mpsc_init(&s->lazyq);
	pthread_mutex_init(&s->cb_lock, NULL);
	orcu__cblist_init(&s->cbl);
	s->barrier_head.func = orcu__barrier_cb;
}

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

/* Move every callback of `from` not yet claimed for invocation to the end
 * of `to` (hotplug of an inline slot, adoption of a slot without threads);
 * n_pending moves with them.  Barrier markers move too, to keep their
 * place behind the callbacks, but n_pending never counted them.  A chain
 * already claimed stays with its invoker, and from's n_pending with it.
 * Returns the number of callbacks moved and, in *first_func, the first
 * one's function (for reports: once moved, they may run at any time). */
long orcu__slot_move_all(struct orcu__slot *from, struct orcu__slot *to,
			 void (**first_func)(struct orcu_head *))
{
	struct orcu_head *first, *last = NULL;
	long n, user = 0;

	pthread_mutex_lock(&from->cb_lock);
	orcu__slot_splice_new_locked(from, true);
	n = orcu__cblist_take_all(&from->cbl, &first);
	orcu__store_relaxed(&from->inline_ready, 0);
	from->takeover = 0;
	pthread_mutex_unlock(&from->cb_lock);
	if (!n)
		return 0;
	*first_func = first->func;
	for (struct orcu_head *h = first; h; h = h->next) {
		user += h->func != orcu__barrier_cb;
		last = h;
	}
	orcu__fetch_add_relaxed(&to->n_pending, user);
	/* Counted before they can run: whoever sees them invoked sees them
	 * counted as adopted. */
	orcu__count(adopted, (uint64_t)user);
	pthread_mutex_lock(&to->cb_lock);
	orcu__cblist_enqueue_chain(&to->cbl, first, last, n);
	pthread_mutex_unlock(&to->cb_lock);
	orcu__fetch_sub_release(&from->n_pending, user);
	orcu__nocb_wake_leader(to->leader, true);
	return user;
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
	/* The notify's fence orders our decrement before its waiter check:
	 * pairs with the re-check of n_pending in orcu_wait_backlog(). */
	if (left < orcu__g.qhimark)
		orcu__event_notify_all(&s->drain);
}

/* Invoke a NULL-terminated chain, in order (point 3 for inflight). */
static void invoke_chain(struct orcu__slot *s, struct orcu_head *chain, bool is_inline)
{
	struct orcu__reader *r = &orcu__reader;
	long user = 0, since = 0;

	r->in_callback++;
	while (chain) {
		struct orcu_head *h = chain;

		chain = h->next;
		orcu__store_relaxed(&s->inflight, chain);
		/* Orders the store above before the callback's stores (a fork
		 * snapshot that holds any of its effects holds this too). */
		orcu__fence_release();
		if (h->func == orcu__barrier_cb) {
			/* Account for the callbacks ahead of the marker first:
			 * when the barrier returns, n_pending already excludes
			 * them (orcu_drain's total_pending() relies on it). */
			note_invoked(s, since);
			since = 0;
			h->func(h);
			continue;
		}
		if (orcu__unlikely(orcu__load_relaxed(&orcu__check_calls) > 0))
			orcu__double_call_forget(h);
		h->func(h);
		user++;
		/* Let backlog waiters in without waiting for a huge batch. */
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

/*
 * Claim the slot's invocation (point 2) and invoke up to `limit` (<= 0:
 * all) ready callbacks on this thread, again while more are ready and
 * there is no limit.  Returns how many were invoked; 0 if none were ready
 * or another thread holds the claim.  The caller holds no library lock.
 */
long orcu__slot_invoke_done(struct orcu__slot *s, long limit, bool is_inline)
{
	struct orcu_head *chain;
	long n, total = 0;
	bool more;

	pthread_mutex_lock(&s->cb_lock);
	if (s->invoking) {
		pthread_mutex_unlock(&s->cb_lock);
		return 0;
	}
	for (;;) {
		n = orcu__cblist_extract_done(&s->cbl, &chain, limit);
		if (orcu__cblist_seg_empty(&s->cbl, ORCU__CBL_DONE)) {
			orcu__store_relaxed(&s->inline_ready, 0);
			s->takeover = 0;
		}
		if (!n)
			break;
		s->invoking = 1;
		orcu__store_relaxed(&s->inflight, chain);
		orcu__tls.invoking_slot = s;
		pthread_mutex_unlock(&s->cb_lock);

		invoke_chain(s, chain, is_inline);
		total += n;

		pthread_mutex_lock(&s->cb_lock);
		orcu__tls.invoking_slot = NULL;
		orcu__store_relaxed(&s->inflight, NULL);
		s->invoking = 0;
		if (limit > 0)
			break;
	}
	/* A thread that found the claim busy left its work to us; with a
	 * limit we stop early, so hand what is left to the slot's threads. */
	more = !orcu__cblist_seg_empty(&s->cbl, ORCU__CBL_DONE);
	if (more && total)
		orcu__nocb_wake_follower_locked(s);
	pthread_mutex_unlock(&s->cb_lock);
	return total;
}

/* Callbacks run only where a GP waits for them to finish: a library
 * thread, or an application thread outside its read-side sections and
 * outside another callback, and for qsbr only while online. */
bool orcu__slot_safe_to_invoke_here(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->in_callback || (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK))
		return false;
	return r->kind != ORCU__KIND_QSBR || orcu__load_relaxed(&r->qs_seq) != 0;
}

/*
 * A thread that waits for callbacks (barrier, drain) does a slot's work
 * when the slot has no threads to do it: move posted callbacks in, drive
 * the GP they need on this thread, invoke them.  The caller is not in a
 * read-side section or a callback (orcu__gp_check_caller()) and is offline
 * if it is a qsbr thread, so it may run GPs; it comes online around the
 * invocation only.
 */
void orcu__slot_serve(struct orcu__slot *s)
{
	unsigned long first, last;
	bool wait, entered;

	pthread_mutex_lock(&s->cb_lock);
	orcu__slot_splice_new_locked(s, true);
	orcu__cblist_advance(&s->cbl, orcu__load_acquire(&orcu__gp_seq));
	/* The fence orders the splice before the snapshot (as gp_snap()). */
	orcu__fence_seq_cst();
	orcu__cblist_accelerate(&s->cbl,
		orcu__seq_snap(orcu__load_relaxed(&orcu__gp_seq)));
	wait = orcu__cblist_wait_range(&s->cbl, &first, &last);
	pthread_mutex_unlock(&s->cb_lock);
	if (wait) {
		orcu__gp_drive(last, false);
		pthread_mutex_lock(&s->cb_lock);
		orcu__cblist_advance(&s->cbl, orcu__load_acquire(&orcu__gp_seq));
		pthread_mutex_unlock(&s->cb_lock);
	}
	entered = orcu__qsbr_enter_for_callbacks();
	orcu__slot_invoke_done(s, 0, false);
	orcu__qsbr_leave_for_callbacks(entered);
}

/* Serve every slot that no leader scans (the GP thread when no leader
 * runs, a waiting barrier when no thread runs at all). */
void orcu__slots_serve_unattached(void)
{
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];

		if (!orcu__load_acquire(&s->attached))
			orcu__slot_serve(s);
	}
}

/* Threads exist for online slots, and for slots that went offline with
 * work left (an offloaded slot's follower keeps draining it). */
bool orcu__slot_needs_threads(struct orcu__slot *s)
{
	bool work;

	if (orcu__load_acquire(&s->online))
		return true;
	if (!orcu__load_acquire(&s->ever_online))
		return false;
	pthread_mutex_lock(&s->cb_lock);
	work = !orcu__cblist_empty(&s->cbl) || s->invoking ||
	       !orcu__mpsc_empty(&s->newq) || !orcu__mpsc_empty(&s->lazyq);
	pthread_mutex_unlock(&s->cb_lock);
	return work;
}

/*
 * fork child (lifecycle, with every cb_lock still held): only the forking
 * thread exists.  Chains other threads had claimed go back in front of
 * DONE (point 3); the forking thread's own claim, if it forked from a
 * callback, stays with it.  Then n_pending is recounted from what each
 * slot really holds: a poster caught between counting and publishing left
 * a count with no callback, and orcu_drain() would never see zero.
 */
void orcu__slots_after_fork_child(void)
{
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];
		struct orcu_head *rest = orcu__load_relaxed(&s->inflight), *last = NULL;
		long lazy, n, chain_n = 0;

		for (struct orcu_head *h = rest; h; h = h->next) {
			chain_n++;
			last = h;
		}
		if (s->invoking && s != orcu__tls.invoking_slot) {
			orcu__cblist_requeue_done(&s->cbl, rest, last, chain_n);
			orcu__store_relaxed(&s->inflight, NULL);
			s->invoking = 0;
		}
		lazy = orcu__mpsc_after_fork(&s->lazyq);
		n = orcu__mpsc_after_fork(&s->newq) + lazy;
		orcu__store_relaxed(&s->n_lazy, lazy);
		/* The forking thread's own chain is its to account for, as
		 * it goes on invoking it here: keep that slot's count. */
		if (s != orcu__tls.invoking_slot) {
			for (struct orcu_head *h = s->cbl.head; h; h = h->next)
				n += h->func != orcu__barrier_cb;
			orcu__store_relaxed(&s->n_pending, n);
		}
		orcu__event_reset(&s->drain);
		s->takeover = 0;
		s->lazy_armed = 0;
		orcu__store_relaxed(&s->follower_sleep, ORCU__FOLLOWER_AWAKE);
		orcu__event_reset(&s->follower_wake);
		orcu__store_relaxed(&s->inline_ready, 0);
	}
}
