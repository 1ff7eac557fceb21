/*
 * nocb.c - callback offloading: one leader thread (orcu-og/N) per group of
 * ORCU_NOCB_STRIDE slots and one follower (orcu-oc/N) per online
 * offloaded slot; spawning (only for those), both halves of the leader's
 * and the follower's sleep/wake protocol, polling mode.
 * Calls slot.c to invoke, gp.c to request grace periods, registry.c for
 * membarrier() before a sleep, cblist.c, mpsc.c, config.c for the thread
 * cap, delay.c (debug hooks) and os.c.  serve.c tells it each GP end
 * (orcu__nocb_gp_done(), from gp.c's orcu__gp_end_hook).
 *
 * Why no callback is left behind.
 *  1. A leader's `sleep` state is ORCU__LEADER_AWAKE (zero) when the
 *     leader is awake, and the record is zero-initialised, so a leader that
 *     has just been spawned scans its group before it ever waits: callbacks
 *     posted before it existed are found (before kernel commit
 *     11ed7f934cb8 the flag meant "awake" and started at zero, so a new
 *     leader slept on a non-empty queue).
 *  2. An enqueuer publishes its callback (seq_cst exchange of the queue
 *     tail), then reads `sleep` (seq_cst); the leader sets `sleep` to
 *     SLEEPING, prepares its wake event (a fence), then re-scans every queue
 *     of its group (seq_cst loads) and its own state before it waits.
 *     Either the leader's re-scan sees the callback or the enqueuer sees
 *     SLEEPING; the first enqueuer to claim the state (exchange back to
 *     AWAKE) notifies the event, the others pay nothing.  The leader re-checks
 *     `sleep` after preparing, so a claim that comes before it counted
 *     itself is not lost either (event.h).  models/leader_wake.pml checks
 *     exactly this.
 *  3. While it waits for a grace period the leader stays awake (AWAKE)
 *     and re-scans when the GP ends, so enqueuers need not wake it: the GP
 *     thread wakes one leader per group with work, never a follower.
 *  4. Callbacks are taken from a queue, tagged and advanced only under the
 *     slot's cb_lock, and invoked by whoever holds the slot's invocation
 *     claim (slot.c): each callback is invoked once, in posting order per
 *     slot, and no lock is held while it runs.
 *  5. Lazy callbacks: the first lazy post wakes a sleeping leader, and the
 *     leader's final re-scan counts a lazy queue its last scan did not arm
 *     a timer for as new work, so a lazy callback waits at most
 *     ORCU_LAZY_MS plus one GP, whoever else posts.
 *  6. A slot is `attached` only once its group's leader exists; a follower
 *     that could not be created leaves invocation to the leader.  A leader
 *     scans and invokes only its own attached slots; a slot nobody scans
 *     (not offloaded, de-offloaded, its leader missing) is served in place
 *     (serve.c).  Callbacks never move.  With no GP thread, leaders run GPs themselves: those their
 *     callbacks need, and those orcu_start_poll() asks for on one of
 *     their slots, which forces a wake of the leader (gp.c point 6).
 */
#include "os.h"
#include "cblist.h"
#include "config.h"
#include "delay.h"
#include "event.h"
#include "mpsc.h"
#include "seq.h"
#include "gp.h"
#include "registry.h"
#include "nocb.h"
#include "slot.h"
#include "trace.h"

#include <string.h>
#include <time.h>

/* Leaders between publishing gp_waiting and clearing it: a GP end with
 * none skips the walk over every group. */
static _Atomic int leaders_waiting;

/* A GP ended (gp.c's end hook): wake the leaders waiting for it. */
void orcu__nocb_gp_done(unsigned long seq)
{
	int nwords = (orcu__g.nr_groups + 63) / 64;

	/* seq_cst pairs with leader_wait_gp(): it counts itself, then
	 * re-reads gp_seq; we stored gp_seq, then read the count. */
	if (!orcu__load_seq_cst(&leaders_waiting))
		return;
	for (int w = 0; w < nwords; w++) {
		/* Pairs with the seq_cst fetch_or in leader_wait_gp(). */
		uint64_t bits = orcu__load_seq_cst(&orcu__g.leader_gp_wait[w]);

		while (bits) {
			int g = w * 64 + __builtin_ctzll(bits);
			struct orcu__leader *l = orcu__leader_of(g);
			uint64_t bit = bits & -bits;

			bits &= bits - 1;
			/* Order: the seq_cst load of the bit above pairs with
			 * the fetch_or in leader_wait_gp(), made after the
			 * leader stored gp_wait_seq. */
			if (!orcu__seq_done(seq, orcu__load_relaxed(&l->gp_wait_seq)))
				continue;
			orcu__fetch_and_relaxed(&orcu__g.leader_gp_wait[w], ~bit);
			/* Always notify once the bit is cleared: a leader that
			 * re-armed meanwhile wakes, re-checks and re-arms; it
			 * re-checks gp_seq after preparing (leader_wait_gp()). */
			orcu__event_notify(&l->wake);
			orcu__count(gp_wakeups, 1);
			orcu__count(gp_leader_wakeups, 1);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Wake-ups: the waking side of the leader's and the follower's sleep
 * (points 2 and 3); posters, invokers and hotplug wake through them. */

/* False if the leader's thread does not exist (nothing was woken). */
bool orcu__nocb_wake_leader(struct orcu__leader *l, bool force)
{
	if (force)
		orcu__store_relaxed(&l->force, 1);
	/* No thread yet: the callback stays queued and the leader's first
	 * scan finds it (point 1), or, with no leader to come, the caller
	 * finds it a server (serve.c).  Pairs with the seq_cst store in
	 * orcu__nocb_spawn_slot(): the post was a seq_cst exchange, so if
	 * we read 0 here that scan comes after it (a plain load on x86 and
	 * arm64, as acquire is). */
	if (!orcu__load_seq_cst(&l->exists))
		return false;
	if (orcu__g.nocb_poll && !force)
		return true;
	/* Point 2.  A post was published by a seq_cst exchange of the queue
	 * tail; a seq_cst load of `sleep` after it pairs with the seq_cst
	 * store of `sleep` and the fence in orcu__event_prepare() before the
	 * seq_cst re-scan in leader_sleep() (one of us sees the other), with
	 * no fence on the posting path (pair #2: on aarch64 this ldar does
	 * not pass the exchange's stlxr/swpal; ppc64le and armhf fence the
	 * exchange).  A forced wake published `force`
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
	return true;
}

/* Caller holds s->inv.cb_lock and just made DONE non-empty for the
 * slot's follower (scan_done()). */
static void wake_follower_locked(struct orcu__slot *s)
{
	orcu__slot_assert_locked(s);
	/* fol.sleep is set under cb_lock by a follower that found no work;
	 * we hold cb_lock, so it is asleep or will see our DONE.  It
	 * re-checks the state after preparing its event (follower_main()). */
	if (orcu__slot_follower_claim_locked(s)) {
		orcu__event_notify(&s->fol.wake);
		orcu__count(leader_wakeups, 1);
		orcu__trace1(follower_wake, s->st.cpu);
	}
}

/* ------------------------------------------------------------------ */
/* Leader */

struct scan {
	bool need_gp, hurry, invoke; /* invoke: flat mode has ready callbacks */
	unsigned long first, last;   /* GP targets waited for */
	int64_t timeout_ns;          /* earliest timer (lazy) */
};

static void scan_timer(struct scan *sc, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	if (sc->timeout_ns < 0 || ns < sc->timeout_ns)
		sc->timeout_ns = ns;
}

static void scan_slot(struct orcu__slot *s, uint64_t now, struct scan *sc)
{
	unsigned long first, last, cur;
	bool take_lazy = false;
	long nlazy = orcu__load_relaxed(&s->post.n_lazy);

	if (nlazy) {
		uint64_t due = orcu__load_relaxed(&s->post.lazy_first_ns) +
			       (uint64_t)orcu__g.lazy_ms * 1000000ull;

		if (now >= due || nlazy >= orcu__g.lazy_max ||
		    orcu__slot_has_new(s))
			take_lazy = true;
		else
			scan_timer(sc, (int64_t)(due - now));
	}
	orcu__slot_lock(s);
	orcu__slot_splice_new_locked(s, take_lazy);
	/* Point 5: a timer covers the lazy callbacks that stay queued: armed
	 * above, or here for one still being posted when we took the queue
	 * (counted, not yet pushed: its poster wakes nobody; found by
	 * models/leader_wake.pml -DLAZY). */
	if (take_lazy && orcu__load_relaxed(&s->post.n_lazy)) {
		scan_timer(sc, (int64_t)orcu__g.lazy_ms * 1000000);
		nlazy = 1;
		take_lazy = false;
	}
	orcu__slot_set_lazy_armed_locked(s, nlazy && !take_lazy);
	/* Read after the splice, behind a full fence: the GP we tag with
	 * starts after every callback we just took was posted.  seq_cst (so
	 * acquire): a GP we see ended, with what its readers did, is visible
	 * to the callbacks we advance to DONE (pairs with end_gp()). */
	orcu__fence_seq_cst();
	cur = orcu__load_seq_cst(&orcu__gp_seq);
	if (orcu__slot_advance_locked(s, cur, &first, &last)) {
		if (!sc->need_gp || orcu__seq_lt(first, sc->first))
			sc->first = first;
		if (!sc->need_gp || orcu__seq_lt(sc->last, last))
			sc->last = last;
		sc->need_gp = true;
		if (orcu__load_relaxed(&s->st.hurry))
			sc->hurry = true;
	}
	/* Ready callbacks: the follower's, or ours where it has none. */
	if (!orcu__cblist_seg_empty(&s->inv.cbl, ORCU__CBL_DONE)) {
		if (orcu__load_relaxed(&s->st.has_follower))
			wake_follower_locked(s);
		else
			sc->invoke = true;
	}
	orcu__slot_unlock(s);
}

static bool group_has_new(struct orcu__leader *l)
{
	for (int i = l->first; i < l->first + l->nslots; i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		if (!orcu__load_relaxed(&s->st.attached))
			continue;
		if (orcu__slot_has_new(s))
			return true;
		/* Point 5: lazy callbacks no timer was armed for. */
		if (!orcu__load_relaxed(&s->inv.lazy_armed) && !orcu__mpsc_empty(&s->post.lazyq))
			return true;
	}
	return false;
}

/* Sleep until an enqueuer (or a timer) wakes us.  Point 2 above.  The
 * wakers are application threads posting and library threads forcing a
 * rescan; none of them waits for this leader before it notifies. */
static void leader_sleep(struct orcu__leader *l, int64_t timeout_ns)
{
	uint32_t ticket;

	if (orcu__g.nocb_poll) {
		orcu__sleep_ns(1000000);
		return;
	}
	/* Pairs with the seq_cst load and exchange of `sleep` in
	 * orcu__nocb_wake_leader(). */
	orcu__store_seq_cst(&l->sleep, ORCU__LEADER_SLEEPING);
	orcu__delay(ORCU__DELAY_LEADER_SLEEP);
	/* Its fence orders the state before the re-scan: pairs with the
	 * seq_cst load of `sleep` in orcu__nocb_wake_leader(), and with the
	 * fence a forced wake makes after storing force (and stop). */
	ticket = orcu__event_prepare(&l->wake);
	/* Posts to threads' own queues are plain stores with no fence before
	 * the posters read `sleep` (postq.c point 5): membarrier() makes every
	 * CPU running one of them pass a full barrier, which puts each such
	 * post before our re-scan or its read of `sleep` after our store
	 * (pair #3; no C11 order does this: membarrier(2) promises it).
	 * With no queue owned in the group (seq_cst, pairs with the claimer's
	 * count in postq.c claim()), nobody posts that way. */
	if (orcu__load_seq_cst(&l->postq_owners) && orcu__load_relaxed(&orcu__has_membarrier))
		orcu__membarrier_master();
	if (group_has_new(l) || orcu__load_relaxed(&l->force) ||
	    orcu__load_relaxed(&l->stop) ||
	    orcu__load_seq_cst(&l->sleep) != ORCU__LEADER_SLEEPING) {
		orcu__event_cancel(&l->wake);
		orcu__store_relaxed(&l->sleep, ORCU__LEADER_AWAKE);
		return;
	}
	orcu__event_wait(&l->wake, ticket, timeout_ns);
	orcu__store_relaxed(&l->sleep, ORCU__LEADER_AWAKE);
}

/* Ready callbacks of the group's slots that have no follower (flat mode,
 * a follower that could not be created): this thread invokes them. */
static long leader_invoke(struct orcu__leader *l)
{
	long n = 0;

	for (int i = l->first; i < l->first + l->nslots; i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		/* Order: none needed for attached (orcu__slot_attach()). */
		if (orcu__load_relaxed(&s->st.attached) &&
		    !orcu__load_relaxed(&s->st.has_follower))
			n += orcu__slot_invoke_done(s, 0);
	}
	return n;
}

/* Wait for the GP that the group's earliest callbacks need. */
static void leader_wait_gp(struct orcu__leader *l, const struct scan *sc)
{
	/* The group's bit in orcu__g.leader_gp_wait. */
	int g = l->first / orcu__g.stride;
	_Atomic uint64_t *wait_word = &orcu__g.leader_gp_wait[g / 64];
	uint64_t bit = 1ull << (g % 64);
	uint32_t ticket;

	if (!orcu__gp_thread_running()) {
		/* No GP thread (it could not be created): run the GP here. */
		orcu__gp_drive(sc->first, sc->hurry);
		return;
	}
	orcu__gp_request(sc->last, sc->hurry ? ORCU__GP_HURRY : ORCU__GP_BATCH);
	/* Order: none needed; this only decides whether to wait, and
	 * scan_slot() reads gp_seq again behind a fence. */
	if (orcu__seq_done(orcu__load_relaxed(&orcu__gp_seq), sc->first))
		return;
	/* Order: published by the seq_cst fetch_or of our bit below. */
	orcu__store_relaxed(&l->gp_wait_seq, sc->first);
	/* Pairs with the seq_cst loads in orcu__nocb_gp_done(); the re-check
	 * below closes the window where the GP ended before we published
	 * our wait. */
	orcu__fetch_add_seq_cst(&leaders_waiting, 1);
	orcu__fetch_or_seq_cst(wait_word, bit);
	/* The GP thread notifies after the GP ends, a forced wake after it
	 * sets force: re-check both after preparing (event.h). */
	ticket = orcu__event_prepare(&l->wake);
	if (!orcu__seq_done(orcu__load_seq_cst(&orcu__gp_seq), sc->first) &&
	    !orcu__load_relaxed(&l->force))
		orcu__event_wait(&l->wake, ticket, sc->timeout_ns);
	else
		orcu__event_cancel(&l->wake);
	orcu__fetch_and_relaxed(wait_word, ~bit);
	orcu__fetch_sub_relaxed(&leaders_waiting, 1);
}

static void *leader_main(void *arg)
{
	struct orcu__leader *l = arg;

	orcu__tls.library_slot = l->first;
	/* Order: none needed for stop or force.  A stop publishes nothing
	 * we read, and a forcer's stores are read under cb_lock or
	 * orcu__g.lock, or re-checked after orcu__event_prepare() in
	 * leader_sleep(), whose ticket pairs with the forcer's notify. */
	/* A fork child's copy (retired, lifecycle.c) ends: the child's own
	 * leader for this group is another thread. */
	while (!orcu__load_relaxed(&l->stop) && !orcu__tls.retired) {
		orcu__xchg_relaxed(&l->force, 0);
		uint64_t now = orcu__now_ns();
		struct scan sc = { .timeout_ns = -1 };

		for (int i = l->first; i < l->first + l->nslots; i++) {
			struct orcu__slot *s = orcu__slot_of(i);

			/* Order: as in leader_invoke(). */
			if (orcu__load_relaxed(&s->st.attached))
				scan_slot(s, now, &sc);
		}
		/* Progress made: scan again before sleeping.  A busy claim
		 * means its holder wakes us when it leaves work behind. */
		if (sc.invoke && leader_invoke(l))
			continue;
		if (sc.need_gp) {
			leader_wait_gp(l, &sc);
			continue;
		}
		/* Point 6: GPs asked for while no GP thread runs.  A requester
		 * raised its target, fenced, then forced our wake: taking
		 * `force` above, then the fence in orcu__gp_run_requested(),
		 * we see the target. */
		if (!orcu__gp_thread_running() && orcu__gp_run_requested())
			continue;
		leader_sleep(l, sc.timeout_ns);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Follower */

/* Under cb_lock: ready callbacks nobody is invoking. */
static bool follower_has_work(struct orcu__slot *s)
{
	return !s->inv.invoking && !orcu__cblist_seg_empty(&s->inv.cbl, ORCU__CBL_DONE);
}

static void *follower_main(void *arg)
{
	struct orcu__slot *s = arg;
	uint32_t ticket;

	orcu__tls.library_slot = s->st.cpu;
	/* A fork child's copy (retired, lifecycle.c) ends, as in leader_main(). */
	while (!orcu__tls.retired) {
		orcu__slot_lock(s);
		if (orcu__load_relaxed(&s->fol.stop)) {
			orcu__slot_unlock(s);
			break;
		}
		if (follower_has_work(s)) {
			orcu__slot_unlock(s);
			orcu__slot_invoke_done(s, 0);
			continue;
		}
		/* Set under cb_lock: a waker that makes work for us holds it
		 * too, clears it, then notifies (wake_follower_locked(),
		 * orcu__nocb_request_stop()); neither waits for us. */
		orcu__slot_follower_sleeping_locked(s);
		orcu__slot_unlock(s);
		ticket = orcu__event_prepare(&s->fol.wake);
		if (orcu__load_relaxed(&s->fol.sleep) == ORCU__FOLLOWER_SLEEPING)
			orcu__event_wait(&s->fol.wake, ticket, -1);
		else
			orcu__event_cancel(&s->fol.wake);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Spawning and stopping */

/* Under orcu__g.lock.  Threads for slot s: its follower (unless flat,
 * stride 1) and its group's leader.  0, or the -errno of a creation that
 * failed; the slot is attached only once its leader runs (point 6), and a
 * missing follower leaves invocation to the leader. */
int orcu__nocb_spawn_slot(struct orcu__slot *s)
{
	struct orcu__leader *l = s->st.leader;
	char name[16];
	pthread_t tid;
	int ret = 0, err;

	ORCU__ASSERT_HELD(&orcu__g.lock);
	if (orcu__load_relaxed(&orcu__g.stopping))
		return 0;
	/* Past ORCU_MAX_THREADS a slot goes without a follower (its leader
	 * invokes) and a group without a leader (its slots stay in place,
	 * serve.c). */
	if (orcu__g.stride != 1 && !orcu__load_relaxed(&s->st.has_follower) &&
	    orcu__thread_budget_ok()) {
		snprintf(name, sizeof(name), "orcu-oc/%d", s->st.cpu);
		orcu__slot_follower_reset(s);
		err = orcu__spawn(&tid, name, follower_main, s);
		if (err == 0) {
			orcu__slot_follower_started(s, tid);
			orcu__fetch_add_relaxed(&orcu__g.followers_alive, 1);
		} else {
			ret = err;
		}
	}
	if (!orcu__load_relaxed(&l->exists)) {
		if (!orcu__thread_budget_ok())
			return 0;
		snprintf(name, sizeof(name), "orcu-og/%d", l->first);
		orcu__store_relaxed(&l->stop, 0);
		/* AWAKE: the new leader scans first. */
		orcu__store_relaxed(&l->sleep, ORCU__LEADER_AWAKE);
		orcu__event_reset(&l->wake);
		/* Pairs with the seq_cst load in orcu__nocb_wake_leader():
		 * a waker that sees it sees the record set up, and
		 * a poster that reads 0 after publishing its callback is
		 * found by the new leader's first scan (point 1). */
		orcu__store_seq_cst(&l->exists, 1);
		err = orcu__spawn(&l->tid, name, leader_main, l);
		if (err < 0) {
			/* Order: none needed; no thread to publish to. */
			orcu__store_relaxed(&l->exists, 0);
			return err;
		}
		orcu__fetch_add_relaxed(&orcu__g.leaders_alive, 1);
	}
	if (!orcu__load_relaxed(&s->st.attached)) {
		orcu__slot_attach(s);
		/* Callbacks posted while nobody scanned us: rescan. */
		orcu__nocb_wake_leader(l, true);
	}
	return ret;
}

/* Under orcu__g.lock (orcu_shutdown): tell every thread to stop.  They
 * are joined by orcu__nocb_join_all() without the lock, since a callback
 * running on one of them may want it. */
void orcu__nocb_request_stop(void)
{
	ORCU__ASSERT_HELD(&orcu__g.lock);
	for (int g = 0; g < orcu__g.nr_groups; g++) {
		struct orcu__leader *l = orcu__leader_of(g);

		if (!orcu__load_relaxed(&l->exists))
			continue;
		/* Order: the fence of the forced wake below orders it before
		 * the wake's check of `sleep` (orcu__nocb_wake_leader()). */
		orcu__store_relaxed(&l->stop, 1);
		/* Forced: claims a sleeping leader and notifies its event. */
		orcu__nocb_wake_leader(l, true);
	}
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		if (orcu__load_relaxed(&s->st.has_follower))
			orcu__slot_follower_stop(s);
	}
}

/* Only orcu_shutdown() calls this (orcu__g.stopping keeps spawning and
 * other shutdowns out while the lock is dropped). */
void orcu__nocb_join_all(void)
{
	for (int g = 0; g < orcu__g.nr_groups; g++) {
		struct orcu__leader *l = orcu__leader_of(g);

		/* Order: orcu__g.lock.  l->tid was written under it, and
		 * orcu__nocb_request_stop() took it after every spawn in
		 * this thread (stopping keeps new spawns out). */
		if (orcu__load_relaxed(&l->exists))
			orcu__join(l->tid);
	}
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		/* Pairs with the release in orcu__slot_follower_started():
		 * follower_tid was written before it. */
		if (orcu__load_acquire(&s->st.has_follower))
			orcu__join(s->st.follower_tid);
	}
}

/* After orcu_shutdown()'s joins (under orcu__g.lock), or in a fork child,
 * where only the forking thread exists: no thread serves any slot.  A
 * poster reads SLEEPING, finds no leader and has its callback served
 * (serve.c points 1 and 4); a spawn sets each record up again. */
void orcu__nocb_forget_all(void)
{
	for (int w = 0; w < (orcu__g.nr_groups + 63) / 64; w++)
		orcu__store_relaxed(&orcu__g.leader_gp_wait[w], 0);
	orcu__store_relaxed(&leaders_waiting, 0);
	for (int g = 0; g < orcu__g.nr_groups; g++) {
		struct orcu__leader *l = orcu__leader_of(g);

		orcu__store_relaxed(&l->exists, 0);
		orcu__store_relaxed(&l->force, 0);
		orcu__store_relaxed(&l->sleep, ORCU__LEADER_SLEEPING);
	}
	for (int i = 0; i < orcu__g.nr_possible; i++)
		orcu__slot_forget_threads(orcu__slot_of(i));
	orcu__store_relaxed(&orcu__g.leaders_alive, 0);
	orcu__store_relaxed(&orcu__g.followers_alive, 0);
}
