/*
 * slot.c - the operations on one CPU slot that more than one module needs:
 * moving posted callbacks into the segmented list, invoking ready
 * callbacks (one invoker at a time, in FIFO order, with no lock held while
 * user code runs) and repairing slots in a fork child.  Callbacks never
 * leave the slot they were posted to.  Slot 0 and its group's leader are
 * static records here: they exist from program load, so a callback
 * posted before any configuration, or when one fails for want of
 * memory, waits on slot 0 like any other, served by whoever serves a
 * slot without threads (serve.c) until the threads start.  Calls
 * cblist.c, mpsc.c, postq.c (take), postcheck.c (forget) and os.c.
 * Reads registry.c's reader record (qsbr context).
 *
 * Why each callback runs once, in order, and none is lost.
 *  1. Callbacks enter the list, are tagged, advanced and taken only
 *     under the slot's cb_lock, and never leave the slot.
 *  2. Invocation is claimed under cb_lock with `inv.invoking`: the
 *     claimer takes a chain from the front of DONE and is the slot's only
 *     invoker until it gives the claim back, so callbacks run in posting
 *     order.
 *     The claim is a flag, not a mutex held across user code: a callback
 *     may take any library lock (hotplug, fork, shutdown), and a thread
 *     that finds the claim busy leaves the work to its holder, which looks
 *     for more DONE callbacks before it lets go.
 *  3. The claimer records in `inv.rest` the entries of its chain it has
 *     not started: at the claim, then before each callback (with its
 *     place, point 5), so a fork child, where the claimer does not exist,
 *     puts them back in front of DONE.
 *  4. An entry is counted before it is visible (`post.n_posted`, before
 *     the push to the shared queue or under cb_lock for a barrier marker)
 *     or as it becomes visible (its posting queue's `posted`, a release
 *     store), and in `cnt.n_done` after it ran (release), so a barrier
 *     that reads pending (counted - done, orcu__slot_pending()) 0 with
 *     acquire has seen its effects.
 *  5. fork() never snapshots a chain half-run: the forking thread raises
 *     `fork_pending`, then waits until no other claimer is `inv.in_chain`;
 *     a claimer sets in_chain before it reads fork_pending at the start
 *     of a chain (both seq_cst: one of the two sees the other) and parks
 *     there, in_chain 0, while a fork is pending, as it does between two
 *     callbacks when it sees a fork pending (a relaxed load: soon enough;
 *     a chain may be all of DONE, too long to wait for).  The forking
 *     thread's own chain (a fork from a callback) is its to finish.  The
 *     wait is bounded (one second, FORK_WAIT_NS): a callback may be
 *     blocked on something the forking thread holds, such as a lock its
 *     own atfork handler took before ours ran, and would otherwise hang
 *     the fork for ever.  A callback still running then is, in the
 *     child, neither finished nor run again: its claimer stored `rest`
 *     and `started` before it began, and it has run since for the whole
 *     bound; the child resumes with `rest` (one warning per process).  The child recounts
 *     each slot's pending entries from what it holds (lists, queues): a
 *     poster caught between counting a post to the shared queue and
 *     pushing it, or between its exchange and its link
 *     (orcu__mpsc_after_fork()), left a count with no callback.  On the
 *     forking thread's own slot its rest counts too, and what it started
 *     but has not counted in cnt.n_done: the places from
 *     orcu__tls.chain_noted (where it last counted) to `started`, the
 *     callback that forked included.
 *  6. A barrier marker is an entry like a callback, counted in n_posted
 *     when entrained on its own slot behind the slot's last callback, and
 *     a slot has one invoker at a time (point 2), so the marker runs after
 *     every callback posted there before it, including a chain already
 *     claimed.  It counts itself and what ran ahead of it done before it
 *     ends the barrier (orcu__slot_note_marker()), so pending excludes
 *     them when the barrier returns; no other code tells it from a
 *     callback.
 *  7. The slot lists the posting queues of the threads that post to it
 *     (postq.c, which says who owns each, the give-back and the order
 *     rules, and why no post is missed by a leader going to sleep); a
 *     take reads their counts first, then takes the shared queue.
 *
 * The slot's named states (slot.h) change only here, each transition
 * checked: lifecycle and attachment under orcu__g.lock, the offer under
 * cb_lock.  So
 * does every other slot word (slot.h's table says who calls what), and
 * ORCU_DEBUG builds check the table's rules at each cb_lock unlock
 * (orcu__slot_check_at()).
 */
#include "os.h"
#include "cblist.h"
#include "event.h"
#include "mpsc.h"
#include "postcheck.h"
#include "seq.h"
#include "nocb.h"
#include "postq.h"
#include "sanitize.h"
#include "slot.h"
#include "trace.h"

#include <stddef.h>
#include <string.h>

/* Posters write one line on the orcu_call path, and nothing else does
 * there but to take the queues (slot.h). */
_Static_assert(offsetof(struct orcu__slot, st) == ORCU__CACHELINE,
	       "the posters' fields fill exactly one cache line");

/* Slot 0 and its leader (slot.h): as orcu__slot_init() sets up a slot,
 * at program load.  The leader's group size is the configuration's
 * (cpu.c); its zeros are a leader that does not exist. */
struct orcu__leader orcu__leader0 = { .nslots = 1 };
struct orcu__slot orcu__slot0 = {
	.post = { .newq = { .tail = &orcu__slot0.post.newq.head },
		  .lazyq = { .tail = &orcu__slot0.post.lazyq.head } },
	/* CPU 0, NEVER_ONLINE, in place: zeros. */
	.st = { .leader = &orcu__leader0 },
	.inv = { .cb_lock = PTHREAD_MUTEX_INITIALIZER,
		 .cbl = { .tails = { [0 ... ORCU__CBL_NSEGS - 1] = &orcu__slot0.inv.cbl.head } } },
};

void orcu__slot_init(struct orcu__slot *s, int cpu, struct orcu__leader *leader)
{
	memset(s, 0, sizeof(*s));
	s->st.cpu = cpu;
	s->st.leader = leader;
	orcu__mpsc_init(&s->post.newq);
	orcu__mpsc_init(&s->post.lazyq);
	pthread_mutex_init(&s->inv.cb_lock, NULL);
	orcu__cblist_init(&s->inv.cbl);
	/* NEVER_ONLINE, in place: zeros, as for slot 0. */
}

void orcu__slot_lock_bug(const struct orcu__slot *s, const char *file, int line,
			 const char *what)
{
	orcu__die("%s:%d: CPU %d's cb_lock %s", file, line, s->st.cpu, what);
}

#ifdef ORCU_DEBUG
#define check_list(s) orcu__cblist_check(&(s)->inv.cbl)

__attribute__((noreturn)) static void rule_broken(const struct orcu__slot *s, const char *file, int line,
						  const char *rule)
{
	orcu__die("%s:%d: CPU %d's slot breaks %s (slot.h) at cb_lock unlock: life %d "
		  "DONE %s offered %d invoking %d rest %p in_chain %d "
		  "fol.sleep %d fol.stop %d",
		  file, line, s->st.cpu, rule, orcu__load_relaxed(&s->st.life),
		  orcu__cblist_seg_empty(&s->inv.cbl, ORCU__CBL_DONE) ? "empty" : "non-empty",
		  orcu__load_relaxed(&s->inv.offered_ns) != 0, s->inv.invoking,
		  (void *)orcu__load_relaxed(&s->inv.rest),
		  orcu__load_relaxed(&s->inv.in_chain), orcu__load_relaxed(&s->fol.sleep),
		  orcu__load_relaxed(&s->fol.stop));
}

#define RULE(ok, rule) \
	do { \
		if (orcu__unlikely(!(ok))) \
			rule_broken(s, file, line, rule); \
	} while (0)

/*
 * slot.h's table, its [Cn] rules, with cb_lock held (the caller's
 * unlock).  Only words that change under cb_lock are tied together here,
 * or a word written without it that the rule allows either way: in_chain
 * and rest are written without it only by the claimer, while invoking
 * is 1, and life only leaves NEVER_ONLINE.  Relaxed loads: the lock
 * orders what its holders wrote.
 */
void orcu__slot_check_at(const struct orcu__slot *s, const char *file, int line)
{
	int life = orcu__load_relaxed(&s->st.life);
	bool done = !orcu__cblist_seg_empty(&s->inv.cbl, ORCU__CBL_DONE);
	bool offered = orcu__load_relaxed(&s->inv.offered_ns) != 0;
	int sleep = orcu__load_relaxed(&s->fol.sleep);

	RULE(life == ORCU__SLOT_NEVER_ONLINE || life == ORCU__SLOT_ONLINE ||
		     life == ORCU__SLOT_OFFLINE,
	     "[C1] life is a named state");
	RULE(s->inv.invoking == 0 || s->inv.invoking == 1, "[C3] invoking is 0 or 1");
	RULE(s->inv.invoking || !orcu__load_relaxed(&s->inv.rest),
	     "[C3] !invoking => rest == NULL");
	RULE(s->inv.invoking || !orcu__load_relaxed(&s->inv.in_chain),
	     "[C4] in_chain => invoking");
	RULE(!offered || done, "[C5] offered_ns => DONE non-empty");
	RULE(sleep == ORCU__FOLLOWER_AWAKE || sleep == ORCU__FOLLOWER_SLEEPING,
	     "[C6] fol.sleep is AWAKE or SLEEPING");
	RULE(sleep != ORCU__FOLLOWER_SLEEPING || !orcu__load_relaxed(&s->fol.stop),
	     "[C6] fol.sleep SLEEPING => !fol.stop");
}
#undef RULE
#else
#define check_list(s) ((void)0)
#endif

/* ------------------------------------------------------------------ */
/* Named state (slot.h) */

/* From any state (ONLINE again is a no-op); OFFLINE only from ONLINE;
 * never back to NEVER_ONLINE.  Order: none needed for life; it publishes
 * nothing, whoever acts on it holds orcu__g.lock, and the others
 * (orcu_get_stats()) take a snapshot. */
void orcu__slot_set_online(struct orcu__slot *s)
{
	orcu__store_relaxed(&s->st.life, ORCU__SLOT_ONLINE);
}

void orcu__slot_set_offline(struct orcu__slot *s)
{
	ORCU__ASSERT_HELD(&orcu__g.lock);
	ORCU__BUG_ON(orcu__load_relaxed(&s->st.life) != ORCU__SLOT_ONLINE);
	orcu__store_relaxed(&s->st.life, ORCU__SLOT_OFFLINE);
}

/* DONE is empty (or gone): an offer to the application threads ends.
 * Under cb_lock. */
static void done_drained_locked(struct orcu__slot *s)
{
	orcu__store_relaxed(&s->inv.offered_ns, 0);
}

/* ORCU_NOCBS at setup, orcu_cpu_offload / orcu_cpu_deoffload: whether
 * the slot's threads are wanted; the caller spawns them, or detaches the
 * slot.  Order: none needed; it changes under orcu__g.lock, which every
 * reader that acts on it holds (stats take a snapshot). */
void orcu__slot_set_offload(struct orcu__slot *s, bool on)
{
	orcu__store_relaxed(&s->st.offload, on);
}

/* Its group's leader runs (it may just have been created).  Order: none
 * needed for attached; it changes under orcu__g.lock and publishes
 * nothing.  A poster that reads it only chooses between the leader's scan
 * and the server rule, and either finds its callback (serve.c points 1
 * and 2).  nr_inplace counts the slots that are not attached. */
void orcu__slot_attach(struct orcu__slot *s)
{
	ORCU__BUG_ON(!orcu__load_relaxed(&s->st.leader->exists));
	if (!orcu__load_relaxed(&s->st.attached))
		orcu__fetch_sub_relaxed(&orcu__g.nr_inplace, 1);
	orcu__store_relaxed(&s->st.attached, 1);
}

/* The leader stops scanning s (orcu_cpu_deoffload, as the kernel's
 * de-offload): s is served in place from now on; the caller finds it a
 * server (serve.c point 2).  Its threads stay, idle. */
void orcu__slot_detach(struct orcu__slot *s)
{
	if (orcu__load_relaxed(&s->st.attached))
		orcu__fetch_add_relaxed(&orcu__g.nr_inplace, 1);
	orcu__store_seq_cst(&s->st.attached, 0);
}

/* After orcu_shutdown()'s joins, or in a fork child (nocb.c
 * orcu__nocb_forget_all(), under orcu__g.lock): no thread serves s. */
void orcu__slot_forget_threads(struct orcu__slot *s)
{
	/* Release, as every store of has_follower; nothing is published. */
	orcu__store_release(&s->st.has_follower, 0);
	orcu__slot_detach(s);
}

/* ------------------------------------------------------------------ */
/* The follower's record (nocb.c runs the thread) */

/* Under orcu__g.lock, before its follower thread is created, or in a fork
 * child (none runs). */
void orcu__slot_follower_reset(struct orcu__slot *s)
{
	orcu__store_relaxed(&s->fol.sleep, ORCU__FOLLOWER_AWAKE);
	orcu__event_reset(&s->fol.wake);
	orcu__store_relaxed(&s->fol.stop, 0);
}

/* Under orcu__g.lock: the follower thread tid runs.  Pairs with the
 * acquire in orcu__nocb_join_all(): follower_tid is written first. */
void orcu__slot_follower_started(struct orcu__slot *s, pthread_t tid)
{
	s->st.follower_tid = tid;
	orcu__store_release(&s->st.has_follower, 1);
}

/* The follower, under cb_lock, found no work: it sleeps on fol.wake until
 * a waker that holds cb_lock clears it (wake_follower_locked() in nocb.c,
 * orcu__slot_follower_stop()); neither waits for it. */
void orcu__slot_follower_sleeping_locked(struct orcu__slot *s)
{
	orcu__slot_assert_locked(s);
	orcu__store_relaxed(&s->fol.sleep, ORCU__FOLLOWER_SLEEPING);
}

/* Under cb_lock: a waker (wake_follower_locked() in nocb.c) claims a
 * sleeping follower; true if it must notify it. */
bool orcu__slot_follower_claim_locked(struct orcu__slot *s)
{
	orcu__slot_assert_locked(s);
	if (orcu__load_relaxed(&s->fol.sleep) != ORCU__FOLLOWER_SLEEPING)
		return false;
	orcu__store_relaxed(&s->fol.sleep, ORCU__FOLLOWER_AWAKE);
	return true;
}

/* Under orcu__g.lock (orcu_shutdown): s's follower leaves its loop; it is
 * joined later (orcu__nocb_join_all()). */
void orcu__slot_follower_stop(struct orcu__slot *s)
{
	orcu__slot_lock(s);
	orcu__store_relaxed(&s->fol.stop, 1);
	orcu__store_relaxed(&s->fol.sleep, ORCU__FOLLOWER_AWAKE);
	orcu__slot_unlock(s);
	orcu__event_notify(&s->fol.wake);
}

/* ------------------------------------------------------------------ */
/* The leader's decisions (nocb.c scan_slot(), scan_done()), under cb_lock */

/* Relaxed: a hint for the re-scan (group_has_new()). */
void orcu__slot_set_lazy_armed_locked(struct orcu__slot *s, bool armed)
{
	orcu__slot_assert_locked(s);
	orcu__store_relaxed(&s->inv.lazy_armed, armed);
}

/* In place (serve.c): the ready callbacks are offered to the slot's
 * application threads from now on, unless they were already; returns
 * when the offer was made, 0 if nothing is ready.  Order: none needed; a
 * hint, and an invoker claims the callbacks under cb_lock. */
uint64_t orcu__slot_offer_locked(struct orcu__slot *s, uint64_t now)
{
	uint64_t at = orcu__load_relaxed(&s->inv.offered_ns);

	orcu__slot_assert_locked(s);
	if (orcu__cblist_seg_empty(&s->inv.cbl, ORCU__CBL_DONE))
		return 0;
	if (!at)
		orcu__store_relaxed(&s->inv.offered_ns, at = now);
	return at;
}

/* ------------------------------------------------------------------ */
/* Lists */

/* Anything posted that no take has moved into the list yet.  seq_cst:
 * a leader's re-scan before it sleeps (nocb.c point 2; postq.c point 5). */
bool orcu__slot_has_new(struct orcu__slot *s)
{
	if (!orcu__mpsc_empty(&s->post.newq))
		return true;
	/* Pairs with the release push in orcu__slot_add_postq() (slot.h). */
	for (struct orcu__postq *q = orcu__load_acquire(&s->st.postqs); q; q = q->next)
		if (orcu__load_seq_cst(&q->posted) != orcu__load_relaxed(&q->taken))
			return true;
	return false;
}

/* Anything counted and not yet invoked (a barrier marker counts too) is
 * here: the slot needs a server. */
bool orcu__slot_has_work(struct orcu__slot *s)
{
	return orcu__slot_pending(s) > 0;
}

/* Once per slot: s never came online, yet holds callbacks (kernel commit
 * d7e29933969e's case).  A slot without threads for another reason was
 * said once already (a failed creation, the thread cap). */
void orcu__slot_report_orphan(struct orcu__slot *s)
{
	/* Relaxed: only keeps the message to one per slot.  Before a
	 * configuration slot 0 stands for no CPU: its posters said why. */
	if (!orcu__load_relaxed(&orcu__g.initialized) || orcu__slot_ever_online(s) ||
	    orcu__load_relaxed(&s->st.orphan_reported) || !orcu__slot_pending(s) ||
	    orcu__xchg_relaxed(&s->st.orphan_reported, 1))
		return;
	orcu__warn("CPU %d never came online and holds %ld callback(s): served in place",
		   s->st.cpu, orcu__slot_pending(s));
}

/* Under cb_lock: n heads taken from a queue, first to last, at the end
 * of the list. */
static void enlist(struct orcu__slot *s, struct orcu_head *first, struct orcu_head *last, long n)
{
	if (!n)
		return;
	orcu__cblist_enqueue_chain(&s->inv.cbl, first, last, n);
	s->inv.n_listed += (unsigned long)n;
}

/*
 * Move what was posted (and, with take_lazy, what is held lazily) into the
 * segmented list.  Caller holds s->inv.cb_lock.
 * Point 7: the posting queues' counts are read first, the shared queue
 * taken next, and its heads go in first: a thread that posted to the
 * shared queue and then to a queue of its own (it came back to this slot)
 * has its later heads counted only if its earlier ones are in the shared
 * queue by then.  The lazy queue is taken before all of them and put in
 * last: a lazy head taken was posted after every ordinary head of its
 * thread that the counts and the shared queue then hold (its take
 * acquires the push, which follows them), so it goes in behind them.
 * The other order, lazy then ordinary, is the poster's: its ordinary post
 * flushes its held lazy ones first (call.c lazy_flush()).
 */
void orcu__slot_splice_new_locked(struct orcu__slot *s, bool take_lazy)
{
	struct orcu_head *first, *last, *lfirst = NULL, *llast = NULL;
	struct orcu__postq *qs;
	long n, nlazy = 0;

	orcu__slot_assert_locked(s);
	if (take_lazy && orcu__load_relaxed(&s->post.n_lazy))
		nlazy = orcu__mpsc_take(&s->post.lazyq, &lfirst, &llast);
	/* Pairs with the release push in orcu__slot_add_postq() (slot.h). */
	qs = orcu__load_acquire(&s->st.postqs);
	for (struct orcu__postq *q = qs; q; q = q->next)
		q->snap = orcu__postq_published(q);
	n = orcu__mpsc_take(&s->post.newq, &first, &last);
	enlist(s, first, last, n);
	for (struct orcu__postq *q = qs; q; q = q->next) {
		unsigned long from = orcu__load_relaxed(&q->taken);

		n = orcu__postq_take(q, q->snap, &first, &last);
		enlist(s, first, last, n);
		/* Second posts left out (postq.c) were counted by their
		 * queue and will never run: done.  Release, as note_invoked(). */
		if ((long)(q->snap - from) != n)
			orcu__fetch_add_release(&s->cnt.n_done, (long)(q->snap - from) - n);
	}
	enlist(s, lfirst, llast, nlazy);
	if (nlazy)
		orcu__fetch_sub_relaxed(&s->post.n_lazy, nlazy);
}

/* Under cb_lock: move what waited for GPs ended by `cur` to DONE, tag what
 * is new with the GP that starts after cur (the caller read cur after the
 * splice, behind a full fence), and return the range of GPs still waited
 * for, as orcu__cblist_wait_range(). */
bool orcu__slot_advance_locked(struct orcu__slot *s, unsigned long cur,
			       unsigned long *first, unsigned long *last)
{
	orcu__slot_assert_locked(s);
	orcu__cblist_advance(&s->inv.cbl, cur);
	orcu__cblist_accelerate(&s->inv.cbl, orcu__seq_snap(cur));
	check_list(s);
	return orcu__cblist_wait_range(&s->inv.cbl, first, last);
}

/* orcu_barrier: the slot's marker, running func, behind everything posted
 * to it, counted as a post is (point 6).  The caller has counted it in the
 * barrier too (barrier.c). */
void orcu__slot_entrain_marker(struct orcu__slot *s, void (*func)(struct orcu_head *))
{
	orcu__slot_lock(s);
	/* After the previous marker's run: barrier.c starts a barrier only
	 * after acquiring the last one's end. */
	s->marker.func = func;
	orcu__slot_splice_new_locked(s, true);
	orcu__fetch_add_relaxed(&s->post.n_posted, 1);
	orcu__cblist_entrain(&s->inv.cbl, &s->marker);
	s->inv.n_listed++;
	check_list(s);
	orcu__slot_unlock(s);
}

/* ------------------------------------------------------------------ */
/* Invocation */

/* n entries of s ran, user of them callbacks (the rest markers): counted
 * done, and in the statistics. */
static void note_invoked(struct orcu__slot *s, long n, long user)
{
	long done, left;

	if (!n)
		return;
	/* For ThreadSanitizer: the callbacks before a barrier or a drain
	 * returns (sanitize.h). */
	orcu__tsan_release(&orcu__san_cb_done);
	orcu__fetch_add_relaxed(&s->cnt.n_invoked, (uint64_t)user);
	/* Served by a thread not its own (serve.c): counted before n_done,
	 * so a barrier that returns has them counted.  Relaxed: a count. */
	if (!orcu__load_relaxed(&s->st.attached))
		orcu__count(adopted, user);
	orcu__trace2(invoked, s->st.cpu, user);
	/* Release: the callbacks' effects are visible to a barrier that
	 * reads pending == 0.  Pairs with the acquire of n_done in
	 * orcu__slot_pending().  They were counted in n_posted before we
	 * could take them. */
	done = orcu__fetch_add_release(&s->cnt.n_done, n) + n;
	left = orcu__slot_counted(s) - done;
	ORCU__BUG_ON(left < 0);
	if (orcu__load_relaxed(&s->st.hurry) && left < orcu__g.qlowmark)
		orcu__store_relaxed(&s->st.hurry, 0);
	/* The notify's fence orders our n_done increment before its waiter check:
	 * pairs with the re-check of the pending count in
	 * orcu_wait_backlog(). */
	if (left < orcu__g.qhimark)
		orcu__event_notify_all(&s->cnt.drain);
}

/* The claimer of s: every entry it started and has not counted yet is
 * done (markers of them not callbacks). */
static void note_started(struct orcu__slot *s, long markers)
{
	unsigned long now = orcu__load_relaxed(&s->inv.started);
	long n = (long)(now - orcu__tls.chain_noted);

	orcu__tls.chain_noted = now;
	note_invoked(s, n, n - markers);
}

/* barrier.c's marker, run by its slot's claimer (point 6): the entries
 * ahead of it and the marker itself are counted done before the barrier
 * can end, so pending excludes them when it returns (orcu_drain()'s
 * all_invoked() relies on it); the marker is no callback in the
 * statistics. */
void orcu__slot_note_marker(void)
{
	note_started(orcu__tls.invoking_slot, 1);
}

/* ------------------------------------------------------------------ */
/* fork and the invokers (point 5) */

/* Forks in progress (several threads may fork at once). */
static _Atomic int fork_pending;
/* Parked claimers wait on it for fork_pending to fall to 0; a forking
 * thread waits on it for the claimers to leave in_chain. */
static struct orcu__event fork_event;

static void chain_end(struct orcu__slot *s)
{
	/* Pairs with orcu__slots_fork_quiesce() as chain_begin() does, the
	 * other way: a forking thread that read in_chain 1 before our store
	 * is waiting, and we see its fork_pending; the notify's fence orders
	 * our store before its waiter check. */
	orcu__store_seq_cst(&s->inv.in_chain, 0);
	if (orcu__unlikely(orcu__load_seq_cst(&fork_pending)))
		orcu__event_notify_all(&fork_event);
}

/* The claimer of s enters its chain, or comes back into it; while a fork
 * is pending it parks outside it first, holding its claim and `rest`. */
static void chain_begin(struct orcu__slot *s)
{
	for (;;) {
		/* Pairs with orcu__slots_fork_quiesce(): it raises
		 * fork_pending, then reads in_chain; we set in_chain, then
		 * read fork_pending (pair #12: all seq_cst, so one of us sees
		 * the other). */
		orcu__store_seq_cst(&s->inv.in_chain, 1);
		if (orcu__likely(!orcu__load_seq_cst(&fork_pending)))
			return;
		chain_end(s);
		for (;;) {
			uint32_t ticket = orcu__event_prepare(&fork_event);

			/* Pairs with the decrement and notify in
			 * orcu__slots_fork_resume_parent(). */
			if (!orcu__load_seq_cst(&fork_pending)) {
				orcu__event_cancel(&fork_event);
				break;
			}
			orcu__event_wait(&fork_event, ticket, -1);
		}
	}
}

/* A slot whose claimer (not us) is inside a chain, or NULL. */
static struct orcu__slot *other_chain_running(void)
{
	for (int i = 0; i < orcu__nr_slots(); i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		/* Pairs with the seq_cst stores of in_chain in chain_begin()
		 * and chain_end(). */
		if (s != orcu__tls.invoking_slot && orcu__load_seq_cst(&s->inv.in_chain))
			return s;
	}
	return NULL;
}

static _Atomic int fork_overrun_warned;

/* Point 5's bound: a claimer still in its callback this long after the
 * fork began may be waiting for something the forking thread holds (a
 * lock its own atfork handler took): the fork goes on without it. */
#define FORK_WAIT_NS (1000 * 1000000LL)

/* fork_prepare, before any library lock (a callback may take them). */
void orcu__slots_fork_quiesce(void)
{
	/* Pairs with the seq_cst store of in_chain then load of fork_pending
	 * in chain_begin(). */
	orcu__fetch_add_seq_cst(&fork_pending, 1);
	/* other_chain_running() reads which slots exist (orcu__nr_slots()):
	 * slots set up after that start their chains with fork_pending
	 * already raised (chain_begin()). */
	uint64_t deadline = orcu__now_ns() + FORK_WAIT_NS;

	for (;;) {
		uint32_t ticket = orcu__event_prepare(&fork_event);
		struct orcu__slot *s = other_chain_running();
		uint64_t now;

		if (!s) {
			orcu__event_cancel(&fork_event);
			return;
		}
		now = orcu__now_ns();
		if (now >= deadline) {
			orcu__event_cancel(&fork_event);
			/* Relaxed: only keeps the message to one per process. */
			if (!orcu__xchg_relaxed(&fork_overrun_warned, 1))
				orcu__warn("fork: a callback on CPU %d still runs after %lld ms "
					   "(waiting for a lock the forking thread holds?): "
					   "the child will not run it",
					   s->st.cpu,
					   (long long)(FORK_WAIT_NS / 1000000));
			return;
		}
		orcu__event_wait(&fork_event, ticket, (int64_t)(deadline - now));
	}
}

/* After fork, every library lock released: the parent's claimers go on.
 * Pairs with the re-check in chain_begin() (the notify fences). */
void orcu__slots_fork_resume_parent(void)
{
	orcu__fetch_sub_release(&fork_pending, 1);
	orcu__event_notify_all(&fork_event);
}

/* In the child no claimer is parked (they were other threads) and no
 * other fork is in progress. */
void orcu__slots_fork_resume_child(void)
{
	orcu__store_relaxed(&fork_pending, 0);
	orcu__event_reset(&fork_event);
}

/* ------------------------------------------------------------------ */
/* Invocation */

/* Invoke a NULL-terminated chain, in order (points 3 and 5). */
static void invoke_chain(struct orcu__slot *s, struct orcu_head *chain)
{
	struct orcu__reader *r = &orcu__reader;
	/* The chain is the list's next entries: the claimer started every
	 * one before it. */
	unsigned long place = orcu__load_relaxed(&s->inv.started);

	r->in_callback++;
	chain_begin(s);
	orcu__tls.chain_noted = place;
	/* For ThreadSanitizer: the GPs these callbacks waited for ended
	 * before we took them (sanitize.h). */
	orcu__tsan_acquire(&orcu__san_gp_end);
	while (chain) {
		struct orcu_head *h = chain;

		/* A fork waits for us to leave the chain (point 5): we step
		 * out with `rest` at h.  Relaxed: we see it soon enough, and
		 * it waits for in_chain, not for this. */
		if (orcu__unlikely(orcu__load_relaxed(&fork_pending))) {
			chain_end(s);
			chain_begin(s);
		}
		chain = h->next;
		orcu__store_relaxed(&s->inv.rest, chain);
		/* Release: rest, and our read of h's link, before `started`:
		 * pairs with the acquire in still_listed() (postq.c), whose
		 * taker may write the link once h is started. */
		orcu__store_release(&s->inv.started, ++place);
		if (orcu__unlikely(orcu__load_relaxed(&orcu__check_calls) > 0))
			orcu__double_call_forget(h);
		orcu__san_invoke(h); /* for the sanitizers (sanitize.h) */
		if (orcu__unlikely(ORCU__IS_FREE_AT(h->func)))
			free((char *)h - ((uintptr_t)h->func - 1));
		else
			h->func(h);
		/* Let backlog waiters in without waiting for a huge batch. */
		if (place - orcu__tls.chain_noted >= 256)
			note_started(s, 0);
	}
	chain_end(s);
	r->in_callback--;
	note_started(s, 0);
}

/*
 * Claim the slot's invocation (point 2) and invoke up to `limit` (<= 0:
 * all) ready callbacks on this thread, again while more are ready and
 * there is no limit.  Returns how many were invoked; 0 if none were ready
 * or another thread holds the claim.  The caller holds no library lock.
 * A limit is an in-place batch at a quiescent point (entry.c;
 * ORCU_INLINE_BATCH is at least 1), counted in n_inline; what it leaves
 * stays offered, and the GP thread takes it at the offer's end (serve.c).
 */
long orcu__slot_invoke_done(struct orcu__slot *s, long limit)
{
	struct orcu_head *chain;
	long n, total = 0;
	int cancel_state = PTHREAD_CANCEL_DISABLE;
	uint64_t invoked;

	orcu__slot_lock(s);
	if (s->inv.invoking) {
		orcu__slot_unlock(s);
		return 0;
	}
	/* An application thread serving callbacks (in place, or waiting) is
	 * not cancelled while it holds the claim: a callback at a
	 * cancellation point would unwind it with the slot claimed for ever.
	 * A cancel waits for the thread's next cancellation point after. */
	if (!orcu__tls.library_thread)
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	for (;;) {
		n = orcu__cblist_extract_done(&s->inv.cbl, &chain, limit);
		if (orcu__cblist_seg_empty(&s->inv.cbl, ORCU__CBL_DONE))
			done_drained_locked(s);
		if (!n)
			break;
		s->inv.invoking = 1;
		orcu__store_relaxed(&s->inv.rest, chain);
		orcu__tls.invoking_slot = s;
		orcu__slot_unlock(s);

		/* n_invoked is the claimer's (and its markers'): what it
		 * adds over the chain are the callbacks it ran. */
		invoked = orcu__load_relaxed(&s->cnt.n_invoked);
		invoke_chain(s, chain);
		total += n;
		if (limit > 0)
			orcu__fetch_add_relaxed(&s->cnt.n_inline,
						orcu__load_relaxed(&s->cnt.n_invoked) - invoked);

		orcu__slot_lock(s);
		orcu__tls.invoking_slot = NULL;
		orcu__store_relaxed(&s->inv.rest, NULL);
		s->inv.invoking = 0;
		if (limit > 0)
			break;
	}
	orcu__slot_unlock(s);
	if (cancel_state != PTHREAD_CANCEL_DISABLE)
		pthread_setcancelstate(cancel_state, NULL);
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

/* fork (lifecycle): every slot's cb_lock, in slot order (no thread holds
 * two), released in reverse. */
void orcu__slots_lock_all(void)
{
	for (int i = 0; i < orcu__nr_slots(); i++)
		orcu__slot_lock(orcu__slot_of(i));
}

void orcu__slots_unlock_all(void)
{
	for (int i = orcu__nr_slots() - 1; i >= 0; i--)
		orcu__slot_unlock(orcu__slot_of(i));
}

/*
 * fork child (lifecycle, with every cb_lock still held): only the forking
 * thread exists.  What other threads' claimers did not start goes back in
 * front of DONE (point 3); the forking thread's own claim, if it forked
 * from a callback, stays with it.  Then the pending count is reset from
 * what each slot really holds, markers included (point 5): a poster
 * caught between counting and publishing left a count with no callback,
 * and orcu_drain() would never see zero.
 */
void orcu__slots_after_fork_child(void)
{
	for (int i = 0; i < orcu__nr_slots(); i++) {
		struct orcu__slot *s = orcu__slot_of(i);
		struct orcu_head *rest = orcu__load_relaxed(&s->inv.rest);
		long lazy, n = 0;

		if (s == orcu__tls.invoking_slot) {
			/* The forking thread's own chain goes on here: its
			 * rest, and what it started (the callback that forked
			 * included) but has not counted in n_done yet, which
			 * it will (invoke_chain()). */
			for (struct orcu_head *h = rest; h; h = h->next)
				n++;
			n += (long)(s->inv.started - orcu__tls.chain_noted);
		} else {
			if (s->inv.invoking) {
				struct orcu_head *last = NULL;

				for (struct orcu_head *h = rest; h; h = h->next, n++)
					last = h;
				orcu__cblist_requeue_done(&s->inv.cbl, rest, last, n);
				n = 0;
				orcu__store_relaxed(&s->inv.rest, NULL);
				s->inv.invoking = 0;
			}
			/* Every entry no longer listed was started (a claimer
			 * caught between storing rest and `started` may not
			 * have said so). */
			orcu__store_relaxed(&s->inv.started,
					    s->inv.n_listed - (unsigned long)orcu__cblist_len(&s->inv.cbl));
			orcu__store_relaxed(&s->inv.in_chain, 0);
		}
		lazy = orcu__mpsc_after_fork(&s->post.lazyq);
		n += orcu__mpsc_after_fork(&s->post.newq) + lazy + orcu__cblist_len(&s->inv.cbl);
		orcu__store_relaxed(&s->post.n_lazy, lazy);
		orcu__postq_after_fork(s);
		/* The posting queues' counts stay: what they still hold is
		 * what they published and no take took. */
		for (struct orcu__postq *q = s->st.postqs; q; q = q->next)
			n -= (long)orcu__load_relaxed(&q->taken);
		orcu__store_relaxed(&s->cnt.n_done, 0);
		orcu__store_relaxed(&s->post.n_posted, n);
		orcu__event_reset(&s->cnt.drain);
		done_drained_locked(s);
		orcu__store_relaxed(&s->inv.lazy_armed, 0);
		orcu__slot_follower_reset(s);
	}
}
