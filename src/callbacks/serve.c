/*
 * serve.c - the in-place engine: who invokes a slot's callbacks when no
 * leader scans it, and the start and retry of the library's threads.
 * Sole owner of the unserved and degraded state (os.c only raises
 * `degraded` when a creation fails) and of the in-place work bitmap.
 * Calls nocb.c, cpu.c (the slots' threads), gp.c, slot.c, registry.c and
 * os.c; gp.c reaches it through orcu__gp_serve_hook.
 *
 * A slot's callbacks never leave it.  A slot is either
 *   a. attached: its group's leader scans it, its follower (or the
 *      leader) invokes (nocb.c);
 *   b. or in place: not offloaded (ORCU_NOCBS), de-offloaded, its leader
 *      missing (a failed creation, the thread cap), never online, a fork
 *      child's, a stopped library's.  One rule serves all of them: the
 *      GP thread moves posted callbacks in and runs the GPs they need
 *      (orcu__serve_gp_turn()); what is ready it offers to the slot's
 *      application threads, which run a batch of it at each quiescent
 *      point (entry.c), and invokes what they left ORCU_INPLACE_TAKEOVER_MS
 *      later.  An offline or never-onlined slot has no application thread
 *      to come by, and a flooded one cannot wait: no offer, the GP thread
 *      invokes at once.  Where no GP thread runs, application threads
 *      that wait (synchronize, barrier, drain, orcu_wait_backlog) or pass
 *      safe points do all of it.  While the GP thread runs callbacks
 *      (which may take long), it counts as not running (gp.c
 *      thr.serving): requesters run their GPs themselves and waiters
 *      serve, so no other slot waits for those callbacks.
 *
 * Why no pending callback is left without a server.
 *  1. A poster to a slot that is not attached publishes its callback,
 *     fences, sets its slot's bit in the work bitmap, then raises
 *     `unserved` and kicks the GP thread if the flag was clear
 *     (orcu__serve_posted()).  A server exchanges the flag to 0, fences,
 *     then for each bit set clears it and serves the slot: one of the
 *     two sees the other (models/serve.pml).  The flag is never left
 *     raised, which would keep every safe point on its slow path, and a
 *     server visits only the slots whose bit is set, not every possible
 *     one.
 *  2. A slot that becomes attached has its leader force-woken after the
 *     attach (orcu__nocb_spawn_slot()); servers of in-place slots may
 *     skip it from then on.  A slot that is detached (orcu_cpu_deoffload)
 *     is posted for as in point 1 after the seq_cst store of `attached`:
 *     a poster that read it attached published before, and the server
 *     sees it.
 *  3. An offer ends: the GP thread sets the slot's bit again and sleeps
 *     at most until the offer's end (orcu__g.inplace_due_ns), then takes
 *     what is left.  If it finds the claim held then by an application
 *     thread's batch, that thread, on leaving, sees the offer over and
 *     posts for the slot as in point 1 (orcu__serve_after_batch(): the
 *     clock only moves on); so it does for a slot attached meanwhile,
 *     whose leader may have found the claim busy (it read `attached` 1
 *     before the scan whose cb_lock we took after).  models/serve.pml's
 *     app, -DNO_HAND_BACK.  An application thread only invokes what was offered
 *     and only where a GP waits for it (slot.c
 *     orcu__slot_safe_to_invoke_here()); never inside orcu_call().
 *  4. Whoever ends a grace period, and the GP thread while it sleeps,
 *     retries missing threads once the backoff allows: at once, then
 *     1 ms doubling to 1 s between failures, reset by a success.  So a
 *     program that only reads and synchronizes gets its threads back.
 *  5. A fork child with callbacks marks the library degraded with its
 *     retry due, sets the bits of its slots with work and raises
 *     `unserved`: its next GP end, safe point or post starts the
 *     threads, and waiters serve meanwhile.  A shutdown serves, after the
 *     join, what was posted while the threads stopped.
 */
#include "os.h"
#include "gp.h"
#include "registry.h"
#include "cpu.h"
#include "nocb.h"
#include "serve.h"
#include "slot.h"

#include <errno.h>

/* ------------------------------------------------------------------ */
/* Starting and retrying the threads (point 4) */

#define RETRY_MAX_NS (1000 * 1000000ull)

static uint64_t retry_backoff_ns; /* under orcu__g.lock */

/* Under orcu__g.lock: start the GP thread and the threads of every slot
 * that needs them.  0, or -EAGAIN (the library runs degraded). */
int orcu__serve_start_locked(void)
{
	int gp, slots;

	ORCU__ASSERT_HELD(&orcu__g.lock);
	if (orcu__load_relaxed(&orcu__g.stopping))
		return 0;
	if (!orcu__load_relaxed(&orcu__g.started))
		orcu__membarrier_init();
	gp = orcu__gp_start_thread();
	slots = orcu__cpu_start_slots();
	/* Pairs with the acquire loads of `started` (orcu__ensure_started(),
	 * orcu__inplace_poll_slow(), orcu_reclaim_lazy()): the threads' records
	 * are set up. */
	orcu__store_release(&orcu__g.started, 1);
	/* Relaxed: a rate limit, under orcu__g.lock. */
	orcu__store_relaxed(&orcu__g.retry_after_ns, orcu__now_ns() + retry_backoff_ns);
	if (gp == 0 && slots == 0) {
		orcu__store_relaxed(&orcu__g.degraded, 0);
		retry_backoff_ns = 0;
		return 0;
	}
	retry_backoff_ns = !retry_backoff_ns                   ? 1000000 :
			   retry_backoff_ns * 2 > RETRY_MAX_NS ? RETRY_MAX_NS :
								 retry_backoff_ns * 2;
	orcu__store_relaxed(&orcu__g.degraded, 1);
	return -EAGAIN;
}

/* Stopped (orcu_shutdown(), a fork child), or degraded and the backoff
 * allows a retry. */
static bool start_due(void)
{
	return !orcu__load_relaxed(&orcu__g.started) ||
	       (orcu__load_relaxed(&orcu__g.degraded) &&
		orcu__now_ns() >= orcu__load_relaxed(&orcu__g.retry_after_ns));
}

/* Start the threads when start_due().  Relaxed loads: decided again
 * under the lock, which a caller ending a GP only tries. */
void orcu__retry(bool wait)
{
	if (!start_due())
		return;
	if (wait)
		pthread_mutex_lock(&orcu__g.lock);
	else if (pthread_mutex_trylock(&orcu__g.lock))
		return;
	if (orcu__load_relaxed(&orcu__g.initialized) && start_due())
		orcu__serve_start_locked();
	pthread_mutex_unlock(&orcu__g.lock);
}

/* ------------------------------------------------------------------ */
/* The work bitmap (point 1): bit i of word i / 64 is set while in-place
 * slot i may have work.  Posters set bits, servers clear the bit of the
 * slot they serve and set it again for an offer (point 3). */

/* Before a configuration only slot 0 exists: its bit is here, and the
 * configuration carries it over (orcu__serve_mark_pending()). */
static _Atomic uint64_t work_before_conf;

/* The bitmap and its word count.  Pairs with the seq_cst store of
 * `initialized` in apply_conf() (entry.c): the bitmap is set up. */
static _Atomic uint64_t *work_words(int *nwords)
{
	if (!orcu__load_acquire(&orcu__g.initialized)) {
		*nwords = 1;
		return &work_before_conf;
	}
	*nwords = (orcu__g.nr_possible + 63) / 64;
	return orcu__g.inplace_work;
}

/* seq_cst: point 1's pair, with the caller's fence before. */
static void mark_work(struct orcu__slot *s)
{
	int nwords;
	_Atomic uint64_t *w = work_words(&nwords) + s->st.cpu / 64;
	uint64_t bit = 1ull << (s->st.cpu % 64);

	if (!(orcu__load_seq_cst(w) & bit))
		orcu__fetch_or_seq_cst(w, bit);
}

/* Point 5: callbacks may wait with no thread for them (a fork child, a
 * configuration after posts to slot 0).  Under orcu__g.lock: a walk of
 * every slot, once. */
void orcu__serve_mark_pending(void)
{
	bool work = false;

	retry_backoff_ns = 0;
	orcu__store_relaxed(&orcu__g.retry_after_ns, 0);
	for (int i = 0; i < orcu__nr_slots(); i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		if (orcu__slot_has_work(s)) {
			mark_work(s);
			work = true;
		}
	}
	orcu__store_relaxed(&orcu__g.degraded, work);
	orcu__store_relaxed(&orcu__g.unserved, work);
}

/* ------------------------------------------------------------------ */
/* Serving in place */

/*
 * Do slot s's work on this thread: move posted callbacks in, drive the GP
 * they need here, then invoke what is ready, or, with `offer` (the GP
 * thread), offer it to the slot's application threads first (point 3).
 * Returns when the offer ends, or 0 when nothing is left offered.  The
 * caller (a waiter, a safe point, the GP thread) is in no read-side
 * section or callback and offline if qsbr, so it may run GPs; it comes
 * online around the invocation only.
 */
static uint64_t serve_slot(struct orcu__slot *s, bool offer)
{
	unsigned long first, last;
	uint64_t now, at, end;
	bool entered;

	orcu__slot_report_orphan(s);
	orcu__slot_lock(s);
	orcu__slot_splice_new_locked(s, true);
	/* Orders the splice before the snapshot; seq_cst (so acquire): what
	 * the GPs we see ended covered is visible to the callbacks we
	 * advance.  Pairs with the seq_cst store of gp_seq in end_gp(), as in
	 * scan_slot() (nocb.c). */
	orcu__fence_seq_cst();
	while (orcu__slot_advance_locked(s, orcu__load_seq_cst(&orcu__gp_seq), &first, &last)) {
		orcu__slot_unlock(s);
		orcu__gp_drive(last, false);
		orcu__slot_lock(s);
	}
	if (offer && orcu__slot_online(s) && !orcu__load_relaxed(&s->st.hurry) &&
	    (at = orcu__slot_offer_locked(s, now = orcu__now_ns()))) {
		end = at + (uint64_t)orcu__g.inline_takeover_ms * 1000000ull;
		if (now < end) {
			orcu__slot_unlock(s);
			return end;
		}
		orcu__count(takeovers, 1);
	}
	orcu__slot_unlock(s);
	entered = orcu__qsbr_enter_for_callbacks();
	if (offer)
		orcu__gp_thread_serving(true);
	orcu__slot_invoke_done(s, 0);
	if (offer)
		orcu__gp_thread_serving(false);
	orcu__qsbr_leave_for_callbacks(entered);
	return 0;
}

/* Point 3: an application thread's batch on s left callbacks; whoever
 * may have found its claim busy (the GP thread once the offer ended, the
 * leader of a slot attached since) is told. */
void orcu__serve_after_batch(struct orcu__slot *s)
{
	uint64_t at = orcu__load_relaxed(&s->inv.offered_ns);

	if (orcu__slot_attached(s) ||
	    (at && orcu__now_ns() >= at + (uint64_t)orcu__g.inline_takeover_ms * 1000000ull))
		orcu__serve_kick(s);
}

/* Every in-place slot whose bit is set (point 1).  Only the GP thread
 * offers; it alone writes the next offer's end. */
static void serve_marked(bool offer)
{
	int nwords;
	_Atomic uint64_t *w = work_words(&nwords);
	uint64_t due = 0;

	for (int i = 0; i < nwords; i++) {
		/* Order: a bit read clear here was set after our exchange of
		 * `unserved`, and its poster raises the flag again. */
		uint64_t bits = orcu__load_relaxed(&w[i]);

		while (bits) {
			int cpu = i * 64 + __builtin_ctzll(bits);
			uint64_t bit = bits & -bits, end;

			bits &= bits - 1;
			/* Pairs with the poster's fence and seq_cst load of its
			 * bit (mark_work()): cleared before the splice. */
			orcu__fetch_and_seq_cst(&w[i], ~bit);
			end = serve_slot(orcu__slot_of(cpu), offer);
			if (end) {
				mark_work(orcu__slot_of(cpu));
				if (!due || end < due)
					due = end;
			}
		}
	}
	/* Relaxed: gp.c's serve_due_ns() reads it on this thread, and a
	 * waiter's turn makes no offer. */
	if (offer)
		orcu__store_relaxed(&orcu__g.inplace_due_ns, due);
}

/* Take `unserved` (or, on the GP thread, an offer's end), then serve.
 * The exchange and fence pair with the fence and raise of a requester
 * (orcu__serve_posted(), orcu__serve_gp_asked()). */
static void serve_unserved(bool offer)
{
	uint64_t due = orcu__load_relaxed(&orcu__g.inplace_due_ns);

	if (!orcu__xchg_relaxed(&orcu__g.unserved, 0) &&
	    !(offer && due && orcu__now_ns() >= due))
		return;
	orcu__fence_seq_cst();
	orcu__gp_run_requested();
	serve_marked(offer);
}

#define SAFE_POINT_GAP_NS (1000 * 1000ull)

/* The next serve, not before: the thread that moves it serves. */
static _Atomic uint64_t safe_point_next_ns;

/* In place, after an application thread's own GP wait (orcu_synchronize()
 * and the like), while it waits for callbacks (barrier, drain, backlog:
 * a marker or post on a slot no leader scans raised unserved) or at its
 * safe point: retry the threads, then serve, at most once per
 * SAFE_POINT_GAP_NS in the process. */
void orcu__serve_waited(void)
{
	uint64_t now = orcu__now_ns(), next = orcu__load_relaxed(&safe_point_next_ns);
	bool was_online;

	/* Relaxed: a rate limit that publishes nothing. */
	if (now < next || !orcu__cas_relaxed(&safe_point_next_ns, &next, now + SAFE_POINT_GAP_NS))
		return;
	orcu__retry(true);
	if (orcu__gp_thread_running())
		return;
	was_online = orcu__qsbr_offline_for_wait();
	serve_unserved(false);
	/* Back online as orcu_thread_online() is, without its in-place poll:
	 * the callbacks above ran online (serve_slot()). */
	if (was_online)
		orcu__qsbr_online();
}

/* A safe point is a registered thread outside its sections and callbacks,
 * not a library thread, not the GP owner (a stall handler): there
 * callbacks may run and GPs may be waited for. */
void orcu__safe_point_slow(void)
{
	struct orcu__reader *r = &orcu__reader;

	/* The GP thread serves: nothing to do here (two loads). */
	if (orcu__gp_thread_running() && !orcu__load_relaxed(&orcu__g.degraded))
		return;
	if (r->kind != ORCU__KIND_NONE && !r->in_callback && !orcu__tls.gp_owning &&
	    !orcu__tls.library_thread && !(orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK))
		orcu__serve_waited();
}

/* ------------------------------------------------------------------ */
/* Finding the server (point 1) */

/* Work was published on s, which no leader scans. */
void orcu__serve_posted(struct orcu__slot *s)
{
	/* A post to a thread's own queue was a release store, not an
	 * exchange: the fence puts it before the loads below, as the seq_cst
	 * exchange of the shared queue does (postq.c point 5).  Pairs with the
	 * fence in serve_unserved() and the clear of our bit in
	 * serve_marked(): either the serve after them sees our callback, or
	 * we set the bit, read the flag 0 and raise it (pair #11). */
	orcu__fence_seq_cst();
	mark_work(s);
	if (!orcu__load_relaxed(&orcu__g.unserved)) {
		orcu__store_relaxed(&orcu__g.unserved, 1);
		orcu__gp_kick();
	}
}

/* s has work its server must look at now (a barrier marker, a slot gone
 * offline).  Order: none needed for attached (point 2). */
void orcu__serve_kick(struct orcu__slot *s)
{
	if (orcu__load_relaxed(&s->st.attached))
		orcu__nocb_wake_leader(s->st.leader, true);
	else
		orcu__serve_posted(s);
}

/*
 * orcu_start_poll() asked for a GP and no GP thread runs it (gp.c point
 * 6): start or retry the threads (a new GP thread serves every target
 * raised before it); still none, the leader of the caller's slot runs it
 * (nocb.c point 6), else a waiter or safe point.  The forced wake and
 * orcu__serve_posted() fence: our target is before `force` or `unserved`.
 */
void orcu__serve_gp_asked(void)
{
	orcu__retry(true);
	/* Pairs with the store in apply_conf() (entry.c): slots exist. */
	if (!orcu__gp_thread_running())
		orcu__serve_kick(orcu__load_acquire(&orcu__g.initialized) ? orcu__current_slot() : &orcu__slot0);
}

/*
 * orcu_shutdown(), threads joined and `started` cleared (point 5): every
 * leader reads SLEEPING and does not exist (orcu__nocb_forget_all()), so a
 * later post finds it no thread and starts the library again (call.c);
 * membarrier() (or a fence, when posts fence themselves) puts every
 * earlier post before the scan below, which serves it here.
 */
void orcu__serve_after_stop(void)
{
	/* Pairs with postq_posted()'s fence (call.c), or with the posters'
	 * compiler barrier through membarrier() (a fence without it). */
	orcu__membarrier_master();
	for (int i = 0; i < orcu__nr_slots(); i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		if (!orcu__slot_attached(s) && orcu__slot_has_work(s))
			serve_slot(s, false);
	}
}

/* The GP engine's serve hook (gp.c): a GP ended while degraded, on the
 * thread that ended it (point 4), or the GP thread's turn (points 1, 3). */
void orcu__serve_gp_turn(bool serve)
{
	orcu__retry(false);
	if (serve)
		serve_unserved(true);
}
