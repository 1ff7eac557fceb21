/*
 * serve.c - the server rule: who invokes a slot's callbacks when its own
 * threads are missing, and the start and retry of the library's threads.
 * Sole owner of the unserved and degraded state (os.c only raises
 * `degraded` when a creation fails).  Calls nocb.c, cpu.c (the slots'
 * threads), gp.c, slot.c, registry.c and os.c; gp.c reaches it through
 * orcu__gp_serve_hook.
 *
 * A slot's callbacks never leave it.  Two ranks serve them:
 *   a. its own threads: its group's leader scans it once it is attached,
 *      its follower (or the leader) invokes;
 *   b. else, in place, whoever drives grace periods: the GP thread
 *      (orcu__serve_gp_turn()), or where none runs, application threads
 *      that wait (synchronize, barrier, drain, orcu_wait_backlog) or pass
 *      safe points.  A leader missing (a failed creation, the thread
 *      cap), a slot never online and a library stopped are all this case.
 *      While the GP thread runs such callbacks (which may take long), it
 *      counts as not running (gp.c thr.serving): requesters run their
 *      GPs themselves, so no other slot waits for those callbacks.
 *
 * Why no pending callback is left without a server.
 *  1. A poster to a slot that is not attached publishes its callback,
 *     fences, then raises `unserved` and kicks the GP thread if the flag
 *     was clear (orcu__serve_posted()).  A server exchanges the flag to
 *     0, fences, then scans: one of the two sees the other
 *     (models/serve.pml).  The flag is never left raised, which would
 *     keep every safe point on its slow path.
 *  2. A slot that becomes attached has its leader force-woken after the
 *     attach (orcu__nocb_spawn_slot()); servers of unattached slots may
 *     skip it from then on.
 *  3. Whoever ends a grace period, and the GP thread while it sleeps,
 *     retries missing threads once the backoff allows: at once, then
 *     1 ms doubling to 1 s between failures, reset by a success.  So a
 *     program that only reads and synchronizes gets its threads back.
 *  4. A fork child with callbacks marks the library degraded with its
 *     retry due and raises `unserved`: its next GP end, safe point or
 *     post starts the threads, and waiters serve meanwhile.  A shutdown
 *     serves, after the join, what was posted while the threads stopped.
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
/* Starting and retrying the threads (point 3) */

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
	 * orcu__inline_poll_slow(), orcu_reclaim_lazy()): the threads' records
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

/* Point 4: callbacks may wait with no thread for them (a fork child, a
 * configuration after posts to slot 0).  Under orcu__g.lock. */
void orcu__serve_mark_pending(void)
{
	bool work = false;

	retry_backoff_ns = 0;
	orcu__store_relaxed(&orcu__g.retry_after_ns, 0);
	for (int i = 0; i < orcu__nr_slots(); i++)
		work |= orcu__slot_has_work(orcu__slot_of(i));
	orcu__store_relaxed(&orcu__g.degraded, work);
	orcu__store_relaxed(&orcu__g.unserved, work);
}

/* ------------------------------------------------------------------ */
/* Serving in place (rule b) */

/*
 * Do slot s's work on this thread: move posted callbacks in, drive the GP
 * they need here, invoke them.  The caller (a waiter, a safe point, the GP
 * thread) is in no read-side section or callback and offline if qsbr, so
 * it may run GPs; it comes online around the invocation only.
 */
static void serve_slot(struct orcu__slot *s)
{
	unsigned long first, last;
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
	orcu__slot_unlock(s);
	entered = orcu__qsbr_enter_for_callbacks();
	orcu__slot_invoke_done(s, 0);
	orcu__qsbr_leave_for_callbacks(entered);
}

/* Every slot that no leader scans and that has work.  Order: none needed
 * for attached (orcu__slot_attach()); serving takes the cb_lock, and a
 * callback counted after the check raises its own flag (point 1). */
static void serve_unattached(void)
{
	for (int i = 0; i < orcu__nr_slots(); i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		if (!orcu__load_relaxed(&s->st.attached) && orcu__slot_has_work(s))
			serve_slot(s);
	}
}

/* Rule b: take `unserved`, then serve.  The exchange and fence pair with
 * the fence and raise of a requester (orcu__serve_posted(),
 * orcu__serve_gp_asked(), orcu__nocb_wake_follower_locked()). */
static void serve_unserved(void)
{
	if (!orcu__xchg_relaxed(&orcu__g.unserved, 0))
		return;
	orcu__fence_seq_cst();
	orcu__gp_run_requested();
	serve_unattached();
}

#define SAFE_POINT_GAP_NS (1000 * 1000ull)

/* The next serve, not before: the thread that moves it serves. */
static _Atomic uint64_t safe_point_next_ns;

/* Rule b after an application thread's own GP wait (orcu_synchronize()
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
	serve_unserved();
	/* Back online as orcu_thread_online() is, without its inline poll:
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

	if (r->kind != ORCU__KIND_NONE && !r->in_callback && !orcu__tls.gp_owning &&
	    !orcu__tls.library_thread && !(orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK))
		orcu__serve_waited();
}

/* ------------------------------------------------------------------ */
/* Finding the server (point 1) */

/* Work was published on a slot that no leader scans. */
void orcu__serve_posted(void)
{
	/* A post to a thread's own queue was a release store, not an
	 * exchange: the fence puts it before the loads below, as the seq_cst
	 * exchange of the shared queue does (postq.c point 5).  Pairs with the
	 * fence in serve_unserved(): either the scan after its exchange sees
	 * our callback, or the flag we read is 0 and we raise it (pair #11). */
	orcu__fence_seq_cst();
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
		orcu__serve_posted();
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
 * orcu_shutdown(), threads joined and `started` cleared (point 4): every
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
	serve_unattached();
}

/* The GP engine's serve hook (gp.c): a GP ended while degraded, on the
 * thread that ended it (point 3), or the GP thread's turn (rule b). */
void orcu__serve_gp_turn(bool serve)
{
	orcu__retry(false);
	if (serve)
		serve_unserved();
}
