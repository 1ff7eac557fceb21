/*
 * free.c - orcu_free(), orcu_free_rcu() and orcu_retire(): reclaim without
 * a callback.  Owns each posting thread's two open batches (page-sized
 * arrays of pointers, one for free() and one for pointer + deleter
 * pairs), the list of the threads that have them, and the flush of
 * every open batch that orcu_barrier(), orcu_drain(), shutdown and thread
 * exit need.  Calls call.c to post a full batch as one callback,
 * entry.c to wait for a grace period when no batch memory can be had,
 * gp.c for the cookie of a posted batch, postcheck.c for ORCU_CHECK_CALLS,
 * registry.c for the caller's
 * checks and the asymmetric fence, and os.c.
 *
 * Why it is right.
 *  1. A batch is one callback.  Full (or flushed), it is posted with
 *     orcu_call() on the poster's slot, and its callback frees every
 *     pointer it holds: each was unpublished before it was added, so
 *     before the post, so a grace period separates it from its free.
 *     Flood control, orcu_barrier(), orcu_drain(), shutdown, fork and
 *     the statistics count a batch as they count any callback, with no
 *     mechanism of their own.
 *  2. An open batch belongs to its thread, which adds to it with plain
 *     stores between busy = 1 and busy = 0 (the fast path: no atomic
 *     read-modify-write, no fence with membarrier()).  A flusher (any
 *     other thread, always under recs_lock) raises flush, runs
 *     orcu__membarrier_master(), then waits for busy == 0: the owner
 *     either finished its addition (its busy = 0 released it) or will
 *     see flush and take the slow path.  The slow path (opening a
 *     batch, posting the one it fills, or a flush seen) runs under
 *     recs_lock, where no flusher is at work.  The flusher unhooks the
 *     batches, lowers flush, then posts them.  Each side waits only for
 *     a bounded piece of the other: a few stores, or one orcu_call()
 *     (which never waits for callbacks); neither waits holding anything
 *     the other needs to go on.
 *  3. Nothing open is forgotten: orcu_barrier() (orcu__barrier_timed())
 *     flushes every thread's open batches before it entrains its
 *     markers, so every object handed to orcu_free() before the barrier
 *     was called has been freed when it returns.  That needs every batch
 *     to leave its thread's record only as a posted callback: the owner
 *     and a flusher (a barrier, the tick, the thread's exit) alike post
 *     what they unhooked before they release recs_lock.  So a barrier's
 *     flush, under recs_lock, finds each batch still open or already
 *     posted ahead of its markers (a tick that unhooked a batch and
 *     posted it later slipped past a barrier: test_free_fork caught
 *     it).  orcu_drain() repeats while a flush finds anything (a deleter
 *     that retires more); a thread's exit posts its own; each batch,
 *     once opened, arms a lazy callback (the tick, ORCU_LAZY_MS) that
 *     flushes its thread's batches, so a thread that stops posting
 *     holds nothing for long.
 *  4. No batch memory (or no key, so no record: make_key()):
 *     orcu_free() and orcu_retire() wait for a grace
 *     period and free at once (orcu_synchronize()), which is why they
 *     are not allowed in a reader section or a callback (checked on
 *     every call, not only when memory runs out).  The deleter then
 *     runs on the caller's thread, as in a callback (API.md says so: a
 *     lock the caller holds across orcu_retire() must not be one it
 *     takes).  orcu_free_rcu() posts the object's own head instead, its
 *     offset in the object as its function (ORCU__FREE_AT, os.h), and
 *     never blocks; orcu__retire_nb() posts the pair in a small callback
 *     of its own (struct lone), and fails (-ENOMEM, <orcu/rcu.hpp>'s
 *     std::bad_alloc) only when not even that can be had.
 *  5. fork: recs_lock is taken across it (lifecycle.c), so the child
 *     finds each batch open or posted, none in between (an owner that
 *     posted a full batch outside it lost it in the child:
 *     test_free_fork_mid_post).  In the child the threads that are gone
 *     have busy and flush cleared, and their open batches, still
 *     listed, are posted by the child's next flush.  A ring batch one
 *     of them was deleting itself (point 6) keeps what it had not
 *     deleted: its callback never waited for it, and `deleting` is set
 *     to this thread's own claims, so no barrier waits for it either.
 *     Nothing of a gone thread's stack is kept (a pointer to it crashed
 *     a grandchild once the child's threads reused the stack:
 *     test_cxx_fork_twice_in_deleter).
 *  6. Freeing where the memory is hot.  A free() batch its thread posts
 *     also stays on that thread's ring, with the cookie of a GP that
 *     began after its last addition (orcu__gp_snap()).  When the thread
 *     next fills a batch and that GP has ended, it frees the objects
 *     itself, so free() meets the thread's own allocator cache where its
 *     next malloc() looks; the callback then only drops its reference.
 *     One exchange of claimed decides who frees, and the callback that
 *     loses returns at once: the slot's later callbacks do not wait for
 *     the poster's deleters (it spun on them:
 *     test_cxx_claim_loser_does_not_wait).  So a barrier waits for
 *     the poster: before it claims, the poster counts itself in
 *     `deleting` (released to the callback by its exchange, so to the
 *     barrier that waited for the callback), and the barrier, once its
 *     markers ran, waits until `deleting` drains
 *     (orcu__free_wait_deleters()).  A poster that sees a barrier
 *     waiting claims nothing (store, fence, load on both sides), so the
 *     count drains within a page of deleters per poster; the batch is
 *     its callback's.  orcu_retire()'s deleters never run this
 *     way (one may take a lock the caller holds); orcu__retire_nb()'s
 *     do, for <orcu/rcu.hpp>, but only on a later orcu__retire_nb():
 *     P2545 lets a retire "invoke scheduled evaluations" (its note warns
 *     of that very deadlock); a C call or a thread's exit does not, so
 *     they leave such a batch to its callback.  They run marked as in
 *     a callback so a barrier in one aborts instead of waiting for
 *     itself; the poster takes the batch off its ring first, since such
 *     a deleter may retire, fill a batch and reap the ring again.  The
 *     page goes to whoever drops the last reference; the poster keeps
 *     one for its next batch.
 *  7. ORCU_CHECK_CALLS (postcheck.c): every object of orcu_free() and
 *     orcu_retire() is in the double-post set from its call until it is
 *     deleted, so a second call for it is named at once; orcu_free_rcu()
 *     checks its object and head there, then posts the head itself, so
 *     that orcu_call() adds it.  Nothing is lost to the check: an object
 *     leaves the set just before its deletion, wherever that runs.
 *  8. ThreadSanitizer in the user's program (sanitize.h) sees none of
 *     the orders above, so each hand-off that orders the user's
 *     accesses is named to it: an owner's additions are released on the
 *     batch (add_fast(); add_slow() is under recs_lock, which TSan sees)
 *     and acquired by a flusher that unhooks it, before its orcu_call()
 *     releases the head; a poster that deletes from its ring acquires
 *     the GP end, as orcu_poll_state() does, and releases
 *     orcu__san_cb_done after, as an invoker does, for the barrier.
 */
#include "os.h"
#include "event.h"
#include "seq.h"
#include "gp.h"
#include "postcheck.h"
#include "registry.h"
#include "sanitize.h"
#include "free.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Batches */

#define BATCH_BYTES 4096
/* Posted free() batches a thread keeps an eye on to free them itself
 * (point 6): enough to span a grace period while it posts flat out
 * (64 pages of pairs is about 16,000 retired objects), or the oldest
 * leave the ring before their GP ends and their callback frees them. */
#define RING 64

union entry {
	void *p;
	void (*deleter)(void *);
};

/* BATCH_RETIRE_HOT: orcu__retire_nb()'s (<orcu/rcu.hpp>), whose deleters
 * its poster may run too (point 6). */
enum {
	BATCH_FREE,
	BATCH_RETIRE,
	BATCH_RETIRE_HOT,
	NR_KINDS
};
/* Batches of these kinds go on their poster's ring (point 6). */
#define RINGED(k) ((k) != BATCH_RETIRE)

struct batch {
	struct orcu_head head; /* the batch's one callback (point 1) */
	unsigned n, cap;       /* owner writes; the callback reads */
	unsigned kind;         /* BATCH_FREE: e[i] = p; else pairs e[2i], e[2i+1] */
	_Atomic int claimed;   /* the poster's and the callback's exchange */
	_Atomic int refs;      /* 2 while the poster's ring holds it, else 1 */
	union entry e[];
};

#define BATCH_ENTRIES ((BATCH_BYTES - sizeof(struct batch)) / sizeof(union entry))

/* ORCU_CHECK_CALLS (postcheck.c): each pending object is in the
 * double-post set, from its call to its deletion (point 7). */
static inline bool checking(void)
{
	return orcu__unlikely(orcu__load_relaxed(&orcu__check_calls) != 0) &&
	       orcu__double_call_enabled();
}

static void batch_delete(struct batch *b)
{
	bool check = checking();

	if (b->kind == BATCH_FREE) {
		for (unsigned i = 0; i < b->n; i++) {
			if (check)
				orcu__double_call_forget(b->e[i].p);
			free(b->e[i].p);
		}
	} else {
		for (unsigned i = 0; i < b->n; i += 2) {
			if (check)
				orcu__double_call_forget(b->e[i].p);
			b->e[i + 1].deleter(b->e[i].p);
		}
	}
}

/* Deleters orcu runs on the caller (from its ring, point 6, or for want
 * of memory, point 4) run as in a callback: what would wait for a
 * callback (a barrier) says so and aborts.  And with cancellation
 * disabled, as the callbacks an application thread runs (slot.c): a
 * cancel at a deleter's cancellation point must not unwind this thread
 * halfway (os.c "Cancellation").  The batch b, or else deleter(p). */
static void delete_on_caller(struct batch *b, void *p, void (*deleter)(void *))
{
	int cancel = orcu__nocancel_begin();

	orcu__reader.in_callback++;
	if (b)
		batch_delete(b);
	else
		deleter(p);
	orcu__reader.in_callback--;
	orcu__nocancel_end(cancel);
}

/* Runs as a callback, on the slot the batch was posted to: frees its
 * objects unless its poster has claimed them, and then does not wait for
 * it (point 6). */
static void batch_cb(struct orcu_head *h)
{
	struct batch *b = (struct batch *)h;

	/* Pairs with the exchange in ring_drop(): one of the two frees
	 * them.  Acquire: a claim we lose makes the poster's count in
	 * `deleting` visible to a barrier that waits for us (point 6). */
	if (!orcu__xchg_acq_rel(&b->claimed, true))
		batch_delete(b);
	/* Pairs with the poster's drop in ring_drop(): the last one frees. */
	if (orcu__fetch_sub_acq_rel(&b->refs, 1) == 1)
		free(b);
}

static void batch_post(struct batch *b)
{
	if (b)
		orcu_call(&b->head, batch_cb);
}

/* ------------------------------------------------------------------ */
/* The posting threads' records */

struct free_rec {
	/* Owner writes, flushers read (point 2). */
	_Atomic int busy;
	/* Flushers write under recs_lock, the owner reads. */
	_Atomic int flush;
	/* Open batches: the owner's while busy, a flusher's while flush. */
	struct batch *open[NR_KINDS];
	/* The tick (point 3): armed by the owner while busy, disarmed by
	 * its callback under recs_lock and flush. */
	bool tick_armed;
	bool gone; /* owner exited; under recs_lock */
	struct orcu_head tick;
	struct free_rec *next; /* recs, under recs_lock */
	/* The owner's alone (point 6): posted free() batches, oldest at
	 * ring_head, with the cookie of the GP that lets it free them, and
	 * a page to open the next batch in. */
	unsigned ring_head, ring_n;
	struct batch *ring[RING];
	unsigned long cookie[RING];
	struct batch *spare;
	/* Its claims counted in `deleting` (more than one when a deleter
	 * came back): read by the fork child alone (point 5). */
	int deleting;
};
static pthread_mutex_t recs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct free_rec *recs;
static __thread struct free_rec *own_rec __attribute__((tls_model("initial-exec")));

static void unlink_rec_locked(struct free_rec *r)
{
	struct free_rec **pp = &recs;

	while (*pp != r)
		pp = &(*pp)->next;
	*pp = r->next;
}

/* Point 2, the flusher's half, on the records it names (under
 * recs_lock): unhook their open batches into out[] (room for
 * NR_KINDS per record); returns how many it unhooked.  disarm: the
 * tick's own flush (point 3), which disarms it while the owner waits. */
static int steal_locked(struct free_rec **rs, int nr, struct batch **out, bool disarm)
{
	int n = 0;

	for (int i = 0; i < nr; i++)
		orcu__store_relaxed(&rs[i]->flush, 1);
	/* Pairs with orcu__mb_slave() in add_fast(): an owner that did
	 * not see flush has its busy = 1 seen by the loads below. */
	orcu__membarrier_master();
	for (int i = 0; i < nr; i++) {
		struct free_rec *r = rs[i];

		/* Acquire pairs with the release of busy in add_fast(): its
		 * additions are ours to post. */
		while (orcu__load_acquire(&r->busy))
			sched_yield();
		for (int k = 0; k < NR_KINDS; k++) {
			if (r->open[k]) {
				/* For ThreadSanitizer: pairs with the release in
				 * add_fast() (point 8). */
				orcu__tsan_acquire(r->open[k]);
				out[n++] = r->open[k];
			}
			r->open[k] = NULL;
		}
		if (disarm)
			r->tick_armed = false;
	}
	for (int i = 0; i < nr; i++)
		/* Pairs with the acquire in add_fast(): the owner sees its
		 * batches gone. */
		orcu__store_release(&rs[i]->flush, 0);
	return n;
}

static void tick_cb(struct orcu_head *h)
{
	struct free_rec *r = (struct free_rec *)((char *)h - offsetof(struct free_rec, tick));
	struct batch *out[NR_KINDS];
	bool gone;
	int n;

	pthread_mutex_lock(&recs_lock);
	n = steal_locked(&r, 1, out, true);
	for (int i = 0; i < n; i++)
		batch_post(out[i]); /* under recs_lock: point 3 */
	gone = r->gone;
	if (gone)
		unlink_rec_locked(r);
	pthread_mutex_unlock(&recs_lock);
	if (gone)
		free(r);
}

static void ring_drop(struct free_rec *r, bool gp_done);
static void ring_reap(struct free_rec *r, bool hot);

/* Thread exit: post this thread's open batches (as owner: no flusher runs
 * while we hold recs_lock) and leave its ring's to their callbacks; the
 * record goes with it unless its tick is pending, which then frees it. */
static void rec_exit(struct free_rec *r)
{
	bool armed;

	ring_reap(r, false); /* an exit is no retire: free() alone (point 6) */
	while (r->ring_n)
		ring_drop(r, false);
	free(r->spare);
	r->spare = NULL;
	pthread_mutex_lock(&recs_lock);
	for (int k = 0; k < NR_KINDS; k++) {
		batch_post(r->open[k]); /* under recs_lock: point 3 */
		r->open[k] = NULL;
	}
	r->gone = true;
	armed = r->tick_armed;
	if (!armed)
		unlink_rec_locked(r);
	pthread_mutex_unlock(&recs_lock);
	own_rec = NULL;
	if (!armed)
		free(r);
}

/* This thread's exit step (lifecycle.c's table). */
void orcu__free_thread_exit(void)
{
	if (own_rec)
		rec_exit(own_rec);
}

/* The library's image is unloaded (lifecycle.c point 7): the records go
 * with it.  The unload's drain posted and ran every batch and tick: each
 * record ends as at its thread's exit, its ring's pages and its own
 * freed. */
void orcu__free_unload(void)
{
	struct free_rec *r, *next;

	for (r = recs; r; r = next) {
		next = r->next;
		rec_exit(r);
	}
}

static struct free_rec *rec_new(void)
{
	struct free_rec *r;

	/* Without the key (os.c) no thread gets a record, and its objects
	 * take the no-memory path (point 4). */
	if (orcu__thread_exit_arm() != 0 || !(r = calloc(1, sizeof(*r))))
		return NULL;
	pthread_mutex_lock(&recs_lock);
	r->next = recs;
	recs = r;
	pthread_mutex_unlock(&recs_lock);
	own_rec = r;
	return r;
}

/* ------------------------------------------------------------------ */
/* Freeing where the memory is hot (point 6) */

/* Posters running a claimed batch's deleters, and the barriers that wait
 * for them to finish (point 6); the last poster out notifies. */
static _Atomic long deleting;
static _Atomic long barriers_waiting;
static struct orcu__event deleting_done;

static void claim_end(struct free_rec *r, bool counted)
{
	if (counted)
		r->deleting--;
	/* Release pairs with the acquire in orcu__free_wait_deleters(): our
	 * frees happen before a barrier that sees the count drained. */
	if (orcu__fetch_sub_release(&deleting, 1) == 1)
		orcu__event_notify_all(&deleting_done);
}

/* Counts r's owner in `deleting` and returns true, unless a barrier
 * waits for the count to drain, which then must not wait for new claims
 * (the callback frees those batches). */
static bool claim_begin(struct free_rec *r)
{
	orcu__fetch_add_relaxed(&deleting, 1);
	/* Pairs with the fence in orcu__free_wait_deleters(): it sees our
	 * count, or we see it waiting. */
	orcu__fence_seq_cst();
	if (orcu__load_relaxed(&barriers_waiting)) {
		claim_end(r, false);
		return false;
	}
	r->deleting++;
	return true;
}

/* The owner lets go of the oldest batch of its ring, freeing its objects
 * itself if its GP has ended and the callback has not claimed them.  The
 * batch leaves the ring first: a deleter may retire, fill a batch and so
 * come back here (ring_push()), and must find the ring without it. */
static void ring_drop(struct free_rec *r, bool gp_done)
{
	struct batch *b = r->ring[r->ring_head];

	r->ring[r->ring_head] = NULL;
	r->ring_head = (r->ring_head + 1) % RING;
	r->ring_n--;
	if (gp_done && claim_begin(r)) {
		/* Pairs with the exchange in batch_cb(): one of the two
		 * frees them.  Release: counted in `deleting` first. */
		if (!orcu__xchg_acq_rel(&b->claimed, true)) {
			delete_on_caller(b, NULL, NULL);
			/* For ThreadSanitizer: our deletes happen before a
			 * barrier's return, as an invoker's (point 8). */
			orcu__tsan_release(&orcu__san_cb_done);
		}
		claim_end(r, true);
	}
	/* Pairs with the callback's drop in batch_cb(). */
	if (orcu__fetch_sub_acq_rel(&b->refs, 1) == 1) {
		if (!r->spare)
			r->spare = b;
		else
			free(b);
	}
}

/* Free every ring batch whose GP has ended, oldest first.  hot: the
 * caller is orcu__retire_nb(), which may run user deleters; any other
 * leaves a BATCH_RETIRE_HOT batch to its callback (point 6). */
static void ring_reap(struct free_rec *r, bool hot)
{
	/* Acquire pairs with the store that ends a GP: what readers did is
	 * visible before we free (as in orcu_poll_state()). */
	unsigned long seq = orcu__load_acquire(&orcu__gp_seq);

	/* For ThreadSanitizer, the same edge (point 8). */
	orcu__tsan_acquire(&orcu__san_gp_end);
	while (r->ring_n && orcu__seq_done(seq, r->cookie[r->ring_head]))
		ring_drop(r, hot || r->ring[r->ring_head]->kind == BATCH_FREE);
}

/* A ringed batch its owner posted (holding a second reference) goes on
 * its ring; hot as for ring_reap(). */
static void ring_push(struct free_rec *r, struct batch *b, bool hot)
{
	if (r->ring_n == RING)
		ring_drop(r, false);
	/* After every addition: the GP of this cookie began after each of
	 * the objects was unpublished. */
	r->cookie[(r->ring_head + r->ring_n) % RING] = orcu__gp_snap();
	r->ring[(r->ring_head + r->ring_n) % RING] = b;
	r->ring_n++;
	ring_reap(r, hot);
}

/* ------------------------------------------------------------------ */
/* Adding */

static struct batch *batch_new(struct free_rec *r, unsigned k)
{
	struct batch *b = r->spare;

	if (b)
		r->spare = NULL;
	else if (!(b = malloc(BATCH_BYTES)))
		return NULL;
	b->n = 0;
	b->cap = (unsigned)BATCH_ENTRIES & ~1u;
	b->kind = k;
	orcu__store_relaxed(&b->claimed, false);
	orcu__store_relaxed(&b->refs, 1);
	return b;
}

/* add()'s common case: room for more than this entry in the open batch
 * (the one that fills it takes add_slow(), which posts it). */
static inline bool add_fast(struct free_rec *r, unsigned k, void *p, void (*deleter)(void *))
{
	struct batch *b;
	bool added = false;

	if (orcu__unlikely(!r))
		return false;
	orcu__store_relaxed(&r->busy, 1);
	/* Pairs with orcu__membarrier_master() in steal_locked(). */
	orcu__mb_slave();
	/* Acquire pairs with the release that lowers flush in
	 * steal_locked(); only then is open[k] ours to read (a flusher may
	 * have been unhooking it). */
	if (orcu__likely(!orcu__load_acquire(&r->flush)) && (b = r->open[k]) &&
	    orcu__likely(b->n + 2 < b->cap)) {
		b->e[b->n].p = p;
		if (k != BATCH_FREE)
			b->e[b->n + 1].deleter = deleter;
		b->n += k != BATCH_FREE ? 2 : 1;
		added = true;
		/* For ThreadSanitizer: what we did before the call happens
		 * before a flusher posts the batch (point 8). */
		orcu__tsan_release(b);
	}
	/* Pairs with the acquire of busy in steal_locked(). */
	orcu__store_release(&r->busy, 0);
	return added;
}

/* Add p (and its deleter) to this thread's open batch of kind k, opening
 * one, or posting the one it fills.  Returns 0, or -ENOMEM when no batch
 * memory can be had (nothing was added).  Under recs_lock: no flusher is
 * at work (point 2), and a fork finds a full batch still open or already
 * posted, never between the two (point 5). */
static int add_slow(unsigned k, void *p, void (*deleter)(void *))
{
	struct free_rec *r = own_rec;
	struct batch *b, *full = NULL;
	bool arm = false;

	if (!r && !(r = rec_new()))
		return -ENOMEM;
	pthread_mutex_lock(&recs_lock);
	b = r->open[k];
	if (!b) {
		if (!(b = batch_new(r, k))) {
			pthread_mutex_unlock(&recs_lock);
			return -ENOMEM;
		}
		r->open[k] = b;
		arm = !r->tick_armed;
		r->tick_armed = true;
	}
	b->e[b->n++].p = p;
	if (k != BATCH_FREE)
		b->e[b->n++].deleter = deleter;
	if (b->n + 2 > b->cap) {
		full = b;
		r->open[k] = NULL;
		if (RINGED(k))
			orcu__store_relaxed(&full->refs, 2);
		batch_post(full); /* under recs_lock: points 3 and 5 */
	}
	pthread_mutex_unlock(&recs_lock);
	if (full && RINGED(k))
		ring_push(r, full, k == BATCH_RETIRE_HOT);
	if (arm)
		orcu_call_lazy(&r->tick, tick_cb);
	return 0;
}

static inline int add(unsigned k, void *p, void (*deleter)(void *))
{
	if (orcu__likely(add_fast(own_rec, k, p, deleter)))
		return 0;
	return add_slow(k, p, deleter);
}

/* Point 4: no batch memory.  The caller was checked. */
static void wait_and_delete(void *p, void (*deleter)(void *))
{
	orcu_synchronize();
	if (checking())
		orcu__double_call_forget(p);
	delete_on_caller(NULL, p, deleter ? deleter : free);
}

static inline void check_may_block(const char *call)
{
	struct orcu__reader *rd = &orcu__reader;

	if (orcu__unlikely(rd->in_callback ||
			   (orcu__load_relaxed(&rd->ctr) & ORCU__NEST_MASK)))
		orcu__gp_check_caller(call);
}

void orcu_free(void *p)
{
	check_may_block("orcu_free");
	if (p && checking())
		orcu__double_free_check(p, "orcu_free", true);
	if (p && orcu__unlikely(add(BATCH_FREE, p, NULL) != 0))
		wait_and_delete(p, NULL);
}

void orcu_retire(void *p, void (*deleter)(void *))
{
	check_may_block("orcu_retire");
	if (!deleter)
		orcu__misuse("orcu_retire", "NULL deleter");
	if (p && checking())
		orcu__double_free_check(p, "orcu_retire", true);
	if (p && orcu__unlikely(add(BATCH_RETIRE, p, deleter) != 0))
		wait_and_delete(p, deleter);
}

/* One object orcu__retire_nb() could not batch, as its own callback. */
struct lone {
	struct orcu_head head;
	void *p;
	void (*deleter)(void *);
};

static void lone_cb(struct orcu_head *h)
{
	struct lone *l = (struct lone *)h;
	void *p = l->p;
	void (*deleter)(void *) = l->deleter;

	free(l);
	if (checking())
		orcu__double_call_forget(p);
	deleter(p);
}

int orcu__retire_nb(void *p, void (*deleter)(void *))
{
	struct lone *l;

	if (!deleter)
		orcu__misuse("orcu_retire", "NULL deleter");
	if (!p)
		return 0;
	if (checking())
		orcu__double_free_check(p, "rcu_retire", true);
	if (orcu__likely(add(BATCH_RETIRE_HOT, p, deleter) == 0))
		return 0;
	/* No record (no key left: point 4) or no page: a callback of its
	 * own, if a few bytes can be had. */
	if (!(l = malloc(sizeof(*l)))) {
		if (checking()) /* not retired: the caller may post it */
			orcu__double_call_forget(p);
		return -ENOMEM;
	}
	l->p = p;
	l->deleter = deleter;
	orcu_call(&l->head, lone_cb);
	return 0;
}

void orcu__free_rcu(void *p, size_t offset)
{
	/* The macro checks this at compile time; a direct call here. */
	if (orcu__unlikely(offset >= ORCU_FREE_RCU_MAX_OFFSET || offset % sizeof(void *)))
		orcu__misuse("orcu_free_rcu", "the head is not within the object's first "
					      "ORCU_FREE_RCU_MAX_OFFSET bytes at a pointer-aligned offset");
	/* Checked: its head, posted, is in the set until it is freed, and
	 * neither it nor the object may be there already (point 7). */
	if (p && checking()) {
		orcu__double_free_check(p, "orcu_free_rcu", false);
		orcu__double_free_check((char *)p + offset, "orcu_free_rcu", false);
		orcu_call((struct orcu_head *)((char *)p + offset), ORCU__FREE_AT(offset));
		return;
	}
	if (p && orcu__unlikely(add(BATCH_FREE, p, NULL) != 0))
		orcu_call((struct orcu_head *)((char *)p + offset), ORCU__FREE_AT(offset));
}

/* ------------------------------------------------------------------ */
/* Flushes: barrier, drain, fork */

int orcu__free_flush_all(void)
{
	struct free_rec **rs = NULL;
	struct batch **out = NULL;
	int nr = 0, n = 0;

	pthread_mutex_lock(&recs_lock);
	for (struct free_rec *r = recs; r; r = r->next)
		nr++;
	/* Arrays of pointers: sizeof(*rs) is meant (clang-tidy 14 asks). */
	/* NOLINTBEGIN(bugprone-sizeof-expression) */
	rs = nr ? malloc(sizeof(*rs) * (size_t)nr) : NULL;
	out = nr ? malloc(sizeof(*out) * NR_KINDS * (size_t)nr) : NULL;
	/* NOLINTEND(bugprone-sizeof-expression) */
	if (rs && out) {
		int i = 0;

		/* One membarrier() for every thread's records. */
		for (struct free_rec *r = recs; r; r = r->next)
			rs[i++] = r;
		n = steal_locked(rs, nr, out, false);
		for (i = 0; i < n; i++)
			batch_post(out[i]); /* under recs_lock: point 3 */
	} else {
		/* No memory for the lists: a record at a time. */
		for (struct free_rec *r = recs; r; r = r->next) {
			struct batch *one[NR_KINDS];
			int k = steal_locked(&r, 1, one, false);

			for (int j = 0; j < k; j++)
				batch_post(one[j]);
			n += k;
		}
	}
	pthread_mutex_unlock(&recs_lock);
	free(out);
	free(rs);
	return n;
}

int orcu__free_wait_deleters(int64_t deadline_ns)
{
	int ret = 0;

	orcu__fetch_add_relaxed(&barriers_waiting, 1);
	/* Pairs with the fence in claim_begin(): no claim we do not see
	 * counted starts after this, so the count drains. */
	orcu__fence_seq_cst();
	for (;;) {
		int64_t left = -1;
		/* Pairs with the notify in claim_end(). */
		uint32_t ticket = orcu__event_prepare(&deleting_done);

		/* Acquire pairs with the release in claim_end(). */
		if (orcu__load_acquire(&deleting) == 0) {
			orcu__event_cancel(&deleting_done);
			break;
		}
		if (deadline_ns >= 0 && (left = deadline_ns - (int64_t)orcu__now_ns()) <= 0) {
			orcu__event_cancel(&deleting_done);
			ret = -ETIMEDOUT;
			break;
		}
		/* The last poster out wakes us: it runs a page of deleters
		 * and waits for nothing of ours (point 6). */
		orcu__event_wait(&deleting_done, ticket, left);
	}
	orcu__fetch_sub_relaxed(&barriers_waiting, 1);
	return ret;
}

void orcu__free_fork_prepare(void)
{
	pthread_mutex_lock(&recs_lock);
}

void orcu__free_fork_parent(void)
{
	pthread_mutex_unlock(&recs_lock);
}

void orcu__free_fork_child(void)
{
	/* Point 5: only this thread runs, and it is in no addition and no
	 * barrier.  Of the posters counted in `deleting`, only this thread
	 * (forked from a deleter) goes on: a batch a thread that is gone
	 * claimed keeps what it had not freed, and no barrier waits for it. */
	for (struct free_rec *r = recs; r; r = r->next) {
		orcu__store_relaxed(&r->busy, 0);
		orcu__store_relaxed(&r->flush, 0);
	}
	orcu__store_relaxed(&deleting, own_rec ? own_rec->deleting : 0);
	orcu__store_relaxed(&barriers_waiting, 0);
	orcu__event_reset(&deleting_done);
	pthread_mutex_unlock(&recs_lock);
}
