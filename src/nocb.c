/*
 * nocb.c - callback offloading: one leader thread (orcu-og/N) per group of
 * ORCU_NOCB_STRIDE slots and one follower (orcu-oc/N) per online slot;
 * spawning (only for online slots), the leader's sleep/wake protocol,
 * polling mode, takeover of inline slots.  Calls call.c to invoke and gp.c
 * to request grace periods.
 *
 * Why no callback is left behind.
 *  1. A leader's `sleep` flag is zero when the leader is awake, and the
 *     record is zero-initialised, so a leader that has just been spawned
 *     scans its group before it ever waits: callbacks posted before it
 *     existed are found (seed 001: the pre-fix flag meant "awake" and
 *     started at zero, so a new leader slept on a non-empty queue).
 *  2. An enqueuer publishes its callback (seq_cst exchange of the queue
 *     tail), fences, then reads `sleep`; the leader sets `sleep` = 1,
 *     fences, then re-scans every queue of its group before futex_wait.
 *     Either the leader's re-scan sees the callback or the enqueuer sees
 *     sleep == 1 and wakes it.  futex_wait blocks only while sleep == 1, so
 *     a wake that lands before the wait is not lost.  models/leader_wake.pml
 *     checks exactly this.
 *  3. While it waits for a grace period the leader stays awake (sleep == 0)
 *     and re-scans when the GP ends, so enqueuers need not wake it: the GP
 *     thread wakes one leader per group with work, never a follower.
 *  4. Callbacks are taken from a queue, tagged and advanced only under the
 *     slot's cb_lock, and invoked only under its invoke_lock: each callback
 *     is invoked once, in posting order per slot.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "trace.h"

#include <string.h>
#include <time.h>

static bool flat(void)
{
	return orcu__g.stride == 1;
}

/* ------------------------------------------------------------------ */
/* Wake-ups */

void orcu__nocb_wake_leader(struct orcu__leader *l, bool force)
{
	if (force)
		orcu__store_relaxed(&l->force, 1);
	/* No thread yet: the callback stays queued and the leader's first
	 * scan finds it (point 1 above). */
	if (!orcu__load_acquire(&l->exists))
		return;
	if (orcu__g.nocb_poll && !force)
		return;
	/* Pairs with the fence after `sleep = 1` in leader_sleep(): our
	 * callback was published by a seq_cst exchange before this fence. */
	orcu__fence_seq_cst();
	if (orcu__load_relaxed(&l->sleep) && orcu__xchg_seq_cst(&l->sleep, 0)) {
		orcu__count(enqueue_wakeups, 1);
		orcu__trace1(leader_wake, l->first);
		orcu__futex_wake(&l->sleep, 1);
	}
	if (force) {
		orcu__fetch_add_seq_cst(&l->futex, 1);
		orcu__futex_wake(&l->futex, 1);
	}
}

static void wake_follower(struct orcu__slot *s)
{
	/* follower_sleep is set under cb_lock by a follower that found DONE
	 * empty; we hold cb_lock and just made DONE non-empty. */
	if (orcu__load_relaxed(&s->follower_sleep)) {
		orcu__store_seq_cst(&s->follower_sleep, 0);
		orcu__futex_wake(&s->follower_sleep, 1);
		orcu__count(leader_wakeups, 1);
		orcu__trace1(follower_wake, s->cpu);
	}
}

void orcu__nocb_gp_done(unsigned long seq)
{
	for (int g = 0; g < orcu__g.nr_groups; g++) {
		struct orcu__leader *l = &orcu__g.leaders[g];

		if (!orcu__load_acquire(&l->gp_waiting))
			continue;
		if (!orcu__seq_done(seq, orcu__load_acquire(&l->gp_wait_seq)))
			continue;
		orcu__store_relaxed(&l->gp_waiting, 0);
		orcu__fetch_add_seq_cst(&l->futex, 1);
		orcu__futex_wake(&l->futex, 1);
		orcu__count(gp_wakeups, 1);
		orcu__count(gp_leader_wakeups, 1);
	}
}

/* ------------------------------------------------------------------ */
/* Leader */

struct scan {
	bool need_gp, hurry, invoke;  /* invoke: flat mode has ready callbacks */
	unsigned long first, last;    /* GP targets waited for */
	int64_t timeout_ns;           /* earliest timer (inline takeover, lazy) */
};

static void scan_timer(struct scan *sc, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	if (sc->timeout_ns < 0 || ns < sc->timeout_ns)
		sc->timeout_ns = ns;
}

static void scan_slot(struct orcu__slot *s, bool force, uint64_t now, struct scan *sc)
{
	unsigned long first, last, cur;
	bool take_lazy = force;
	long nlazy = orcu__load_relaxed(&s->n_lazy);

	if (nlazy) {
		uint64_t due = orcu__load_relaxed(&s->lazy_first_ns) +
			       (uint64_t)orcu__g.lazy_ms * 1000000ull;

		if (now >= due || nlazy >= orcu__g.lazy_max ||
		    !orcu__mpsc_empty(&s->newq))
			take_lazy = true;
		else
			scan_timer(sc, (int64_t)(due - now));
	}
	pthread_mutex_lock(&s->cb_lock);
	orcu__slot_splice_new_locked(s, take_lazy);
	/* Read after the splice: the GP we tag with starts after every
	 * callback we just took was posted. */
	cur = orcu__load_seq_cst(&orcu__gp_seq);
	orcu__cblist_advance(&s->cbl, cur);
	orcu__cblist_accelerate(&s->cbl, orcu__seq_snap(cur));
	if (orcu__cblist_wait_range(&s->cbl, &first, &last)) {
		if (!sc->need_gp || orcu__seq_lt(first, sc->first))
			sc->first = first;
		if (!sc->need_gp || orcu__seq_lt(sc->last, last))
			sc->last = last;
		sc->need_gp = true;
		if (orcu__load_relaxed(&s->hurry))
			sc->hurry = true;
	}
	if (!orcu__cblist_seg_empty(&s->cbl, ORCU__CBL_DONE)) {
		if (orcu__load_relaxed(&s->offloaded) || orcu__load_relaxed(&s->hurry)) {
			orcu__store_relaxed(&s->inline_ready, 0);
			if (flat())
				sc->invoke = true;
			else
				wake_follower(s);
		} else if (!orcu__load_relaxed(&s->inline_ready)) {
			/* Inline: the slot's own threads get the first chance. */
			s->inline_deadline_ns = now + (uint64_t)orcu__g.inline_takeover_ms * 1000000ull;
			orcu__store_release(&s->inline_ready, 1);
			scan_timer(sc, (int64_t)(s->inline_deadline_ns - now));
		} else if (now >= s->inline_deadline_ns) {
			orcu__fetch_add_relaxed(&s->n_takeover, 1);
			orcu__count(takeovers, 1);
			if (flat())
				sc->invoke = true;
			else {
				orcu__store_relaxed(&s->follower_sleep, 1);
				wake_follower(s);
			}
		} else {
			scan_timer(sc, (int64_t)(s->inline_deadline_ns - now));
		}
	}
	pthread_mutex_unlock(&s->cb_lock);
}

static void invoke_ready(struct orcu__slot *s, long limit)
{
	struct orcu_head *chain;

	pthread_mutex_lock(&s->invoke_lock);
	pthread_mutex_lock(&s->cb_lock);
	orcu__cblist_extract_done(&s->cbl, &chain, limit);
	if (orcu__cblist_seg_empty(&s->cbl, ORCU__CBL_DONE))
		orcu__store_relaxed(&s->inline_ready, 0);
	pthread_mutex_unlock(&s->cb_lock);
	orcu__invoke_chain(s, chain, false);
	pthread_mutex_unlock(&s->invoke_lock);
}

static bool group_has_new(struct orcu__leader *l)
{
	for (int i = l->first; i < l->first + l->nslots; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];

		if (orcu__load_relaxed(&s->attached) && !orcu__mpsc_empty(&s->newq))
			return true;
	}
	return false;
}

/* Sleep until an enqueuer (or a timer) wakes us.  Point 2 above. */
static void leader_sleep(struct orcu__leader *l, int64_t timeout_ns)
{
	if (orcu__g.nocb_poll) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		return;
	}
	orcu__store_seq_cst(&l->sleep, 1);
	orcu__delay(ORCU__DELAY_LEADER_SLEEP);
	/* Pairs with the fence in orcu__nocb_wake_leader(). */
	orcu__fence_seq_cst();
	if (group_has_new(l) || orcu__load_acquire(&l->force) ||
	    orcu__load_acquire(&l->stop)) {
		orcu__store_relaxed(&l->sleep, 0);
		return;
	}
	orcu__futex_wait_int(&l->sleep, 1, timeout_ns);
	orcu__store_relaxed(&l->sleep, 0);
}

static void *leader_main(void *arg)
{
	struct orcu__leader *l = arg;

	orcu__tls.library_slot = l->first;
	while (!orcu__load_acquire(&l->stop)) {
		uint32_t fv = orcu__load_acquire(&l->futex);
		bool force = orcu__xchg_acq_rel(&l->force, 0) != 0;
		uint64_t now = orcu__now_ns();
		struct scan sc = { .timeout_ns = -1 };

		for (int i = l->first; i < l->first + l->nslots; i++) {
			struct orcu__slot *s = &orcu__g.slots[i];

			if (orcu__load_acquire(&s->attached))
				scan_slot(s, force, now, &sc);
		}
		if (sc.invoke) {
			/* Flat mode: this thread is also the slot's invoker. */
			for (int i = l->first; i < l->first + l->nslots; i++)
				if (orcu__load_acquire(&orcu__g.slots[i].attached))
					invoke_ready(&orcu__g.slots[i], 0);
			continue;
		}
		if (sc.need_gp) {
			orcu__gp_request(sc.last, sc.hurry ? ORCU__GP_HURRY : ORCU__GP_BATCH);
			if (orcu__seq_done(orcu__load_acquire(&orcu__gp_seq), sc.first))
				continue;
			orcu__store_release(&l->gp_wait_seq, sc.first);
			/* Pairs with the acquire in orcu__nocb_gp_done(); the
			 * re-check below closes the window where the GP ended
			 * before we published our wait. */
			orcu__store_seq_cst(&l->gp_waiting, 1);
			if (!orcu__seq_done(orcu__load_seq_cst(&orcu__gp_seq), sc.first) &&
			    !orcu__load_acquire(&l->force))
				orcu__futex_wait(&l->futex, fv, sc.timeout_ns);
			orcu__store_relaxed(&l->gp_waiting, 0);
			continue;
		}
		leader_sleep(l, sc.timeout_ns);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Follower */

static void *follower_main(void *arg)
{
	struct orcu__slot *s = arg;

	orcu__tls.library_slot = s->cpu;
	for (;;) {
		struct orcu_head *chain;
		long n;

		pthread_mutex_lock(&s->invoke_lock);
		pthread_mutex_lock(&s->cb_lock);
		if (orcu__load_relaxed(&s->follower_stop)) {
			pthread_mutex_unlock(&s->cb_lock);
			pthread_mutex_unlock(&s->invoke_lock);
			break;
		}
		/* Inline slots are ours only on takeover (leader cleared sleep). */
		if (!orcu__load_relaxed(&s->offloaded) &&
		    !orcu__load_relaxed(&s->hurry) &&
		    orcu__load_relaxed(&s->follower_sleep))
			n = 0;
		else
			n = orcu__cblist_extract_done(&s->cbl, &chain, 0);
		if (n == 0) {
			orcu__store_relaxed(&s->follower_sleep, 1);
			pthread_mutex_unlock(&s->cb_lock);
			pthread_mutex_unlock(&s->invoke_lock);
			orcu__futex_wait_int(&s->follower_sleep, 1, -1);
			continue;
		}
		orcu__store_relaxed(&s->inline_ready, 0);
		pthread_mutex_unlock(&s->cb_lock);
		orcu__invoke_chain(s, chain, false);
		pthread_mutex_unlock(&s->invoke_lock);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Spawning and stopping (under orcu__g.lock) */

int orcu__nocb_spawn_slot(struct orcu__slot *s)
{
	struct orcu__leader *l = s->leader;
	char name[16];
	int ret;

	ORCU__ASSERT_HELD(&orcu__g.lock);
	if (orcu__load_relaxed(&s->attached))
		return 0;
	if (!flat()) {
		snprintf(name, sizeof(name), "orcu-oc/%d", s->cpu);
		orcu__store_relaxed(&s->follower_sleep, 0);
		orcu__store_relaxed(&s->follower_stop, 0);
		ret = orcu__spawn(&s->follower_tid, name, follower_main, s);
		if (ret < 0)
			return ret;
		orcu__store_release(&s->has_follower, 1);
		orcu__fetch_add_relaxed(&orcu__g.followers_alive, 1);
	}
	/* Attach before the leader can run, so its first scan includes us. */
	orcu__store_release(&s->attached, 1);
	if (!orcu__load_relaxed(&l->exists)) {
		snprintf(name, sizeof(name), "orcu-og/%d", l->first);
		orcu__store_relaxed(&l->stop, 0);
		/* sleep stays 0 (awake): the new leader scans first. */
		orcu__store_relaxed(&l->sleep, 0);
		orcu__store_release(&l->exists, 1);
		ret = orcu__spawn(&l->tid, name, leader_main, l);
		if (ret < 0) {
			orcu__store_release(&l->exists, 0);
			return ret;
		}
		orcu__fetch_add_relaxed(&orcu__g.leaders_alive, 1);
	} else {
		orcu__nocb_wake_leader(l, true);
	}
	return 0;
}

void orcu__nocb_stop_all(void)
{
	ORCU__ASSERT_HELD(&orcu__g.lock);
	for (int g = 0; g < orcu__g.nr_groups; g++) {
		struct orcu__leader *l = &orcu__g.leaders[g];

		if (!orcu__load_relaxed(&l->exists))
			continue;
		orcu__store_seq_cst(&l->stop, 1);
		orcu__nocb_wake_leader(l, true);
		orcu__store_seq_cst(&l->sleep, 0);
		orcu__futex_wake(&l->sleep, 1);
		pthread_join(l->tid, NULL);
		orcu__store_relaxed(&l->exists, 0);
		orcu__store_relaxed(&l->gp_waiting, 0);
		orcu__store_relaxed(&l->force, 0);
		orcu__fetch_sub_relaxed(&orcu__g.leaders_alive, 1);
	}
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];

		if (orcu__load_relaxed(&s->has_follower)) {
			pthread_mutex_lock(&s->cb_lock);
			orcu__store_relaxed(&s->follower_stop, 1);
			orcu__store_seq_cst(&s->follower_sleep, 0);
			pthread_mutex_unlock(&s->cb_lock);
			orcu__futex_wake(&s->follower_sleep, 1);
			pthread_join(s->follower_tid, NULL);
			orcu__store_relaxed(&s->has_follower, 0);
			orcu__fetch_sub_relaxed(&orcu__g.followers_alive, 1);
		}
		orcu__store_relaxed(&s->attached, 0);
		orcu__store_relaxed(&s->inline_ready, 0);
	}
}

void orcu__nocb_after_fork_child(void)
{
	/* No leader or follower survived.  Put back what a follower had
	 * taken for invocation but not run, then forget the threads; every
	 * callback stays queued and the respawned leaders find it. */
	for (int g = 0; g < orcu__g.nr_groups; g++) {
		struct orcu__leader *l = &orcu__g.leaders[g];

		orcu__store_relaxed(&l->exists, 0);
		orcu__store_relaxed(&l->sleep, 0);
		orcu__store_relaxed(&l->gp_waiting, 0);
		orcu__store_relaxed(&l->stop, 0);
		orcu__store_relaxed(&l->force, 1);
	}
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = &orcu__g.slots[i];

		orcu__store_relaxed(&s->attached, 0);
		orcu__store_relaxed(&s->has_follower, 0);
		orcu__store_relaxed(&s->follower_sleep, 0);
		orcu__store_relaxed(&s->inline_ready, 0);
		orcu__store_relaxed(&s->drain_waiters, 0);
	}
	orcu__store_relaxed(&orcu__g.leaders_alive, 0);
	orcu__store_relaxed(&orcu__g.followers_alive, 0);
}
