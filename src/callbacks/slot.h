/*
 * slot.h - the interface of slot.c: one CPU slot, its record, its lock
 * and its named states; the operations are in slot.c.  Nothing here is
 * part of the public API.
 *
 * The slot as one table.  Only slot.c writes a slot: its functions, and
 * the static inlines below that posters call on the orcu_call path; the
 * other modules say what happened through them.  "Written by" names the
 * helper (orcu__slot_ left out), its caller and the lock it holds (g.lock
 * is orcu__g.lock; "no lock": an atomic word written lock-free; the
 * orcu__slots_ and orcu__nocb_ prefixes are left out too); slot.c's
 * static functions are named as they are, and "fork child" is
 * orcu__slots_after_fork_child(), with every cb_lock held.  "Legal" says
 * which values and combinations may be seen.  The [Cn] rules hold
 * whenever cb_lock is free, and orcu__slot_check_at() asserts them at every
 * cb_lock unlock in ORCU_DEBUG builds; the others are stated only, as they
 * depend on orcu__g.lock or on words written without cb_lock, and
 * asserting them under cb_lock alone would raise false alarms.
 *
 * word               written by (caller; lock)        legal
 * ------------------ -------------------------------- -------------------------
 * post.newq          +: push_new (call.c)             taken by
 *                                                     splice_new_locked
 *                                                     (cb_lock)
 * post.lazyq         +: push_lazy (call.c)            taken by
 *                                                     splice_new_locked
 *                                                     (cb_lock), take_lazy
 * post.n_posted      +1: count_post (call.c), before  with the posting queues'
 *                      the push;                      counts: >= cnt.n_done
 *                      entrain_marker (cb_lock); fork (a marker counts as a
 *                      child                          post)
 * post.n_lazy        +1: push_lazy; -n:               counts lazyq, before the
 *                      splice_new_locked (cb_lock);   push
 *                      fork child
 * post.lazy_first_ns push_lazy, the first since a     -
 *                      splice
 * post.peak_pending  note_peak (call.c; a racy max)   statistic
 * st.cpu             init (cpu.c, before publication; fixed
 *                      slot 0: static, slot.c)
 * st.leader
 * st.postqs          add_postq (postq.c claim; CAS)   only grows
 * st.life            set_online, set_offline (cpu.c;  [C1] NEVER_ONLINE
 *                      g.lock, or before publication) --online--> ONLINE
 *                                                     <--online/offline-->
 *                                                     OFFLINE; never back
 * st.offload         set_offload (entry.c             0 or 1: the slot's threads
 *                      orcu_cpu_(de)offload, cpu.c    are wanted (ORCU_NOCBS)
 *                      setup; g.lock)
 * st.attached        1: attach (nocb.c spawn; g.lock) attached =>
 *                    0: detach (entry.c deoffload;    leader->exists (whenever
 *                      g.lock), forget_threads        g.lock is free);
 *                      (nocb.c forget_all; g.lock or  !attached: in place
 *                      fork child)                    (serve.c)
 * st.has_follower    1: follower_started (nocb.c      does not imply attached:
 * st.follower_tid      spawn; g.lock)                 a follower whose leader
 *                    0: forget_threads                could not be created
 * st.orphan_reported report_orphan (xchg, no lock)    0 -> 1, once
 * st.hurry           1: raise_hurry (call.c, posters  any (racy both ways):
 *                      past qhimark; no lock)         in place, the GP thread
 *                    0: note_invoked (invokers, under invokes at once and
 *                      qlowmark; no lock)             makes no offer
 * inv.cbl            splice_new_locked,               cblist.h's invariants
 *                      advance_locked,                (check_list)
 *                      entrain_marker, invoke_done,
 *                      fork child (cb_lock)
 * inv.invoking       invoke_done (claim, release),    [C3] !invoking =>
 *                      fork child (cb_lock)           rest == NULL
 * inv.rest           the claimer: invoke_done         [C4] in_chain => invoking
 * inv.in_chain         (cb_lock); invoke_chain (rest  (a claimer is in a chain
 *                      per callback, in_chain per     only while it holds the
 *                      chain; no lock); fork child    claim)
 * inv.offered_ns     now: offer_locked (serve.c, the  [C5] offered_ns =>
 *                      GP thread's turn; cb_lock)     DONE non-empty
 *                    0: done_drained_locked
 *                      (invoke_done, fork child;
 *                      cb_lock)
 * inv.n_listed       splice_new_locked,               only grows; >= started
 *                      entrain_marker (cb_lock)
 * inv.started        invoke_chain (the claimer, per   the place of the last
 *                      entry, release: postq.c's      entry started
 *                      still_listed()); fork child
 *                      (cb_lock)
 * inv.lazy_armed     set_lazy_armed_locked (nocb.c    a hint for the re-scan
 *                      scan_slot; cb_lock), fork
 *                      child
 * fol.sleep          SLEEPING:                        [C6] SLEEPING =>
 *                      follower_sleeping_locked (the  !fol.stop.  SLEEPING does
 *                      follower; cb_lock)             not imply has_follower:
 *                    AWAKE: follower_claim_locked     the follower may sleep
 *                      (nocb.c wake_follower_locked), before its spawner stores
 *                      follower_stop (cb_lock);       it
 *                      follower_reset (g.lock, no
 *                      follower runs; also the fork
 *                      child's)
 * fol.stop           1: follower_stop (cb_lock)       see fol.sleep
 *                    0: follower_reset (no follower)
 * fol.wake           reset: follower_reset;           the follower waits on it
 *                      notified by the wakers         (nocb.c)
 * marker             entrain_marker (barrier.c        one barrier at a time
 *                      mark_slot; cb_lock)            (barrier.c)
 * cnt.n_done         note_invoked (release; the       <= counted (BUG_ON there)
 *                      claimer, and a marker for what
 *                      ran up to it: note_marker);
 *                      fork child; splice_new_locked
 *                      (a post left out, postq.c)
 * cnt.n_invoked      note_invoked (callbacks, not     statistics
 *                      markers)
 * cnt.n_inline       invoke_done (what n_invoked      statistic
 *                      gained over an in-place batch
 *                      at a quiescent point)
 * cnt.drain          notified by note_invoked; waited -
 *                      on by orcu_wait_backlog
 *                      (call.c)
 *
 * Who invokes.  An attached slot: its follower (its leader where it has
 * none).  A slot in place (not attached: not offloaded, de-offloaded, its
 * threads could not be created, never online, a fork child, a stopped
 * library): serve.c's one rule, the slot's application threads at their
 * quiescent points first (a batch of what the GP thread offered), then
 * the GP thread after ORCU_INPLACE_TAKEOVER_MS, and waiters.  Callbacks
 * never leave their slot.
 */
#ifndef ORCU_SLOT_H
#define ORCU_SLOT_H

#include "os.h"
#include "cblist.h"
#include "event.h"
#include "mpsc.h"
#include "postq.h"

enum orcu__slot_life {
	ORCU__SLOT_NEVER_ONLINE,
	ORCU__SLOT_ONLINE,
	ORCU__SLOT_OFFLINE,
};

/* One CPU slot: one sub-struct per owner and lock, each field saying who
 * writes it.  The posters' line is written by posters only on the
 * orcu_call path (the invokers count what they ran in cnt, on another
 * line: pending is posted minus done); invokers write it only to take the
 * queues, once per batch.  post, st and inv each start a cache line; fol,
 * marker and cnt follow inv. */
struct orcu__slot {
	/* --- enqueue side: written by posting threads --- */
	struct {
		struct orcu__mpsc newq ORCU__ALIGNED; /* non-lazy callbacks */
		struct orcu__mpsc lazyq;              /* lazy callbacks */
		/* shared-queue posters +1 before publishing; with the
		 * posting queues' counts, what was posted */
		_Atomic long n_posted;
		_Atomic long n_lazy;            /* posters +1, whoever splices lazyq resets */
		_Atomic uint64_t lazy_first_ns; /* first lazy post since the last splice */
		_Atomic long peak_pending;      /* posters, when a post passes it */
	} post;

	/* --- changed through slot.c's helpers, read by everyone --- */
	struct {
		int cpu ORCU__ALIGNED;
		struct orcu__leader *leader; /* the group's leader record (always set) */
		/* Posting queues of threads (postq.c): pushed by claimers, never
		 * removed; a queue outlives its owner and serves the next one. */
		struct orcu__postq *_Atomic postqs;
		_Atomic int life;            /* enum orcu__slot_life; under orcu__g.lock */
		_Atomic int offload;         /* its threads are wanted (ORCU_NOCBS); under orcu__g.lock */
		_Atomic int attached;        /* its leader scans it; else in place */
		_Atomic int has_follower;    /* follower thread exists */
		_Atomic int orphan_reported; /* served-without-threads report printed (serve.c) */
		/* flood: over qhimark (posters set it), cleared under qlowmark
		 * (invokers); read by every post, so on this read-mostly line */
		_Atomic int hurry;
		pthread_t follower_tid;
	} st;

	/* --- segmented list and invoker state: under cb_lock --- */
	struct {
		pthread_mutex_t cb_lock ORCU__ALIGNED;
		/* ORCU_DEBUG: the holder of cb_lock (its orcu__tls), else unused.
		 * Present in every build so the layout does not depend on it. */
		void *_Atomic cb_owner;
		struct orcu__cblist cbl;
		int invoking; /* a thread is invoking a chain taken from DONE */
		/* its leader's last scan (under cb_lock) saw lazy callbacks and
		 * armed a timer; read by that leader's re-scan */
		_Atomic int lazy_armed;
		/* In place: when the GP thread offered DONE to the slot's
		 * application threads (0: no offer); it takes what is left
		 * ORCU_INPLACE_TAKEOVER_MS later (serve.c). */
		_Atomic uint64_t offered_ns;
		/* The entries of the chain being invoked that the claimer has
		 * not started: set at the claim, then before each callback; a
		 * fork child puts them back (slot.c point 3). */
		struct orcu_head *_Atomic rest;
		/* 1 while the claimer runs a chain, 0 while it is parked
		 * before or in one for a fork (slot.c point 5): claimer only. */
		_Atomic int in_chain;
		/* Places in the list, counted from the first entry ever put in
		 * (callbacks and markers): how many were put in, and the place
		 * of the last one whose invocation began (the claimer, release,
		 * before each entry; takers read it under cb_lock, postq.c). */
		unsigned long n_listed;
		_Atomic unsigned long started;
	} inv;

	/* --- the follower's sleep (nocb.c) --- */
	struct {
		_Atomic int sleep;       /* orcu__follower_state: follower sets under cb_lock; waker clears under it */
		struct orcu__event wake; /* the follower sleeps on it */
		_Atomic int stop;
	} fol;

	/* --- the barrier marker of this slot (barrier.c, one barrier at a
	 * time): an entry of the list, counted as a post is --- */
	struct orcu_head marker;

	/* --- written by the invoker --- */
	struct {
		_Atomic long n_done; /* invokers +n after invoking (release) */
		_Atomic uint64_t n_invoked;
		_Atomic uint64_t n_inline;
		/* orcu_wait_backlog(): callers sleep on it until the slot drains;
		 * invokers notify it after each batch below qhimark (slot.c) */
		struct orcu__event drain;
	} cnt;
};

/* ------------------------------------------------------------------ */
/* Slot 0 and its group's leader are static (slot.c): they exist from
 * program load, as the kernel's boot CPU's record does, so a callback
 * always has a slot, also before any configuration or when one fails for
 * want of memory.  The configured arrays (cpu.c) leave element 0 unused. */
ORCU__HIDDEN extern struct orcu__slot orcu__slot0;

/* Slot cpu: one that exists (slot 0, or any once configured). */
static inline struct orcu__slot *orcu__slot_of(int cpu)
{
	return cpu ? &orcu__g.slots[cpu] : &orcu__slot0;
}

/* How many slots a walk visits: the configured ones, or slot 0 alone
 * before a configuration.  Pairs with the seq_cst store in apply_conf()
 * (entry.c), which publishes the slots; seq_cst for
 * orcu__slots_fork_quiesce(): a fork that reads 0 is seen by every
 * chain on the slots set up after. */
static inline int orcu__nr_slots(void)
{
	return orcu__load_seq_cst(&orcu__g.initialized) ? orcu__g.nr_possible : 1;
}

/* ------------------------------------------------------------------ */
/* cb_lock.  In ORCU_DEBUG builds the holder is recorded: locking a slot
 * this thread holds, unlocking or asserting one it does not, dies with
 * file:line. */

void orcu__slot_lock_bug(const struct orcu__slot *s, const char *file, int line,
			 const char *what) __attribute__((noreturn));

#ifdef ORCU_DEBUG
/* The [Cn] rules of the table above, with cb_lock held; a broken one dies
 * naming file:line (the unlock's) and the rule. */
void orcu__slot_check_at(const struct orcu__slot *s, const char *file, int line);
#define orcu__slot_lock(s) orcu__slot_lock_at((s), __FILE__, __LINE__)
#define orcu__slot_unlock(s) orcu__slot_unlock_at((s), __FILE__, __LINE__)
#define orcu__slot_assert_locked(s) orcu__slot_assert_locked_at((s), __FILE__, __LINE__)

static inline void orcu__slot_lock_at(struct orcu__slot *s, const char *file, int line)
{
	if (orcu__load_relaxed(&s->inv.cb_owner) == (void *)&orcu__tls)
		orcu__slot_lock_bug(s, file, line, "locked by this thread already");
	pthread_mutex_lock(&s->inv.cb_lock);
	orcu__store_relaxed(&s->inv.cb_owner, (void *)&orcu__tls);
}

static inline void orcu__slot_unlock_at(struct orcu__slot *s, const char *file, int line)
{
	if (orcu__load_relaxed(&s->inv.cb_owner) != (void *)&orcu__tls)
		orcu__slot_lock_bug(s, file, line, "unlocked by a thread not holding it");
	orcu__slot_check_at(s, file, line);
	orcu__store_relaxed(&s->inv.cb_owner, NULL);
	pthread_mutex_unlock(&s->inv.cb_lock);
}

static inline void orcu__slot_assert_locked_at(const struct orcu__slot *s,
					       const char *file, int line)
{
	if (orcu__load_relaxed(&s->inv.cb_owner) != (void *)&orcu__tls)
		orcu__slot_lock_bug(s, file, line, "expected to be locked by this thread");
}
#else
static inline void orcu__slot_lock(struct orcu__slot *s)
{
	pthread_mutex_lock(&s->inv.cb_lock);
}

static inline void orcu__slot_unlock(struct orcu__slot *s)
{
	pthread_mutex_unlock(&s->inv.cb_lock);
}

#define orcu__slot_assert_locked(s) ((void)(s))
#endif

/* ------------------------------------------------------------------ */
/* Named state, read without a lock.  Order: none needed (slot.c,
 * orcu__slot_set_online()). */

static inline bool orcu__slot_online(struct orcu__slot *s)
{
	return orcu__load_relaxed(&s->st.life) == ORCU__SLOT_ONLINE;
}

static inline bool orcu__slot_ever_online(struct orcu__slot *s)
{
	return orcu__load_relaxed(&s->st.life) != ORCU__SLOT_NEVER_ONLINE;
}

static inline bool orcu__slot_offloaded(struct orcu__slot *s)
{
	return orcu__load_relaxed(&s->st.offload);
}

static inline bool orcu__slot_attached(struct orcu__slot *s)
{
	return orcu__load_relaxed(&s->st.attached);
}

/*
 * Callbacks posted: to the shared queues, and to the posting queues, each of which counts what it published (a count
 * that only grows, whoever owns the queue).  Acquire keeps each read in
 * its place.
 */
static inline long orcu__slot_counted(struct orcu__slot *s)
{
	long n = orcu__load_acquire(&s->post.n_posted);

	/* Pairs with the release push in postq.c claim(). */
	for (struct orcu__postq *q = orcu__load_acquire(&s->st.postqs); q; q = q->next)
		n += (long)orcu__postq_published(q);
	return n;
}

/*
 * Callbacks counted but not yet invoked, as one value the
 * slot really had: the count is read before and after n_done, and the pair
 * is taken when it did not move in between (after a few tries, the later
 * read: never negative, at most too high).  n_done never passes the
 * count.  Acquire on n_done: 0 means the effects of every callback counted
 * so far are visible (pairs with the release in note_invoked(), slot.c).
 */
static inline long orcu__slot_pending(struct orcu__slot *s)
{
	long posted = orcu__slot_counted(s), again, done;

	for (int tries = 0;; tries++) {
		done = orcu__load_acquire(&s->cnt.n_done);
		again = orcu__slot_counted(s);
		if (again == posted || tries == 8)
			return again - done;
		posted = again;
	}
}

/* A claimer's new posting queue (postq.c claim()), pushed and never
 * removed. */
static inline void orcu__slot_add_postq(struct orcu__slot *s, struct orcu__postq *q)
{
	struct orcu__postq *head = orcu__load_relaxed(&s->st.postqs);

	do {
		q->next = head;
		/* Release: the queue is set up before a consumer that finds it
		 * reads it.  Pairs with the acquire loads of postqs (slot.h,
		 * orcu__slot_splice_new_locked()). */
	} while (!atomic_compare_exchange_weak_explicit(&s->st.postqs, &head, q,
							memory_order_release,
							memory_order_relaxed));
}

/* ------------------------------------------------------------------ */
/* The posters' writes (call.c), inline: the orcu_call path makes no call
 * for them. */

/* A post to the shared queue, counted before it is visible (slot.c
 * point 4). */
static inline void orcu__slot_count_post(struct orcu__slot *s)
{
	orcu__fetch_add_relaxed(&s->post.n_posted, 1);
}

static inline void orcu__slot_push_new(struct orcu__slot *s, struct orcu_head *h)
{
	orcu__mpsc_push(&s->post.newq, h);
}

/* h, counted, on the lazy queue.  Returns the lazy count before it: 0 for
 * the first since the last splice, whose time is noted (before the push). */
static inline long orcu__slot_push_lazy(struct orcu__slot *s, struct orcu_head *h)
{
	long nl = orcu__fetch_add_relaxed(&s->post.n_lazy, 1);

	if (nl == 0)
		orcu__store_relaxed(&s->post.lazy_first_ns, orcu__now_ns());
	orcu__mpsc_push(&s->post.lazyq, h);
	return nl;
}

/* pend: what the slot holds, as a poster sees it.  Relaxed: a statistic,
 * and two posters may race (the higher one may be lost). */
static inline void orcu__slot_note_peak(struct orcu__slot *s, long pend)
{
	if (orcu__unlikely(pend > orcu__load_relaxed(&s->post.peak_pending)))
		orcu__store_relaxed(&s->post.peak_pending, pend);
}

/* Past qhimark: true if hurry was clear and this poster raised it.
 * Relaxed: a hint (the caller force-wakes the leader). */
static inline bool orcu__slot_raise_hurry(struct orcu__slot *s)
{
	if (orcu__load_relaxed(&s->st.hurry))
		return false;
	orcu__store_relaxed(&s->st.hurry, 1);
	return true;
}

/* ------------------------------------------------------------------ */
/* slot.c */
void orcu__slot_init(struct orcu__slot *s, int cpu, struct orcu__leader *leader);
/* Lifecycle, under orcu__g.lock (or before the slots are published). */
void orcu__slot_set_online(struct orcu__slot *s);
void orcu__slot_set_offline(struct orcu__slot *s);
/* Threads wanted, attached or in place: under orcu__g.lock (or in a fork
 * child). */
void orcu__slot_set_offload(struct orcu__slot *s, bool on);
void orcu__slot_attach(struct orcu__slot *s);
void orcu__slot_detach(struct orcu__slot *s);
void orcu__slot_forget_threads(struct orcu__slot *s);
/* The follower's record (nocb.c runs the thread) */
void orcu__slot_follower_reset(struct orcu__slot *s);
void orcu__slot_follower_started(struct orcu__slot *s, pthread_t tid);
void orcu__slot_follower_sleeping_locked(struct orcu__slot *s);
bool orcu__slot_follower_claim_locked(struct orcu__slot *s);
void orcu__slot_follower_stop(struct orcu__slot *s);
/* The leader's decisions, under cb_lock */
void orcu__slot_set_lazy_armed_locked(struct orcu__slot *s, bool armed);
/* In place: the GP thread's offer to the slot's application threads */
uint64_t orcu__slot_offer_locked(struct orcu__slot *s, uint64_t now);
/* Lists */
bool orcu__slot_has_new(struct orcu__slot *s);
void orcu__slot_splice_new_locked(struct orcu__slot *s, bool take_lazy);
bool orcu__slot_advance_locked(struct orcu__slot *s, unsigned long cur,
			       unsigned long *first, unsigned long *last);
void orcu__slot_entrain_marker(struct orcu__slot *s, void (*func)(struct orcu_head *));
void orcu__slot_note_marker(void);
/* Invocation */
long orcu__slot_invoke_done(struct orcu__slot *s, long limit);
bool orcu__slot_safe_to_invoke_here(void);
bool orcu__slot_has_work(struct orcu__slot *s);
void orcu__slot_report_orphan(struct orcu__slot *s);
/* fork (lifecycle): every cb_lock, in slot order, and back */
void orcu__slots_lock_all(void);
void orcu__slots_unlock_all(void);
void orcu__slots_after_fork_child(void);
/* fork: stop every other invoker between two callbacks, and let them go */
void orcu__slots_fork_quiesce(void);
void orcu__slots_fork_resume_parent(void);
void orcu__slots_fork_resume_child(void);

#endif
