/*
 * free.c - orcu_free(), orcu_free_rcu() and orcu_retire(): reclaim without
 * a callback.  Owns each posting thread's two open batches (page-sized
 * arrays of pointers, one for free() and one for pointer + deleter
 * pairs), the list of the threads that have them, and the flush of
 * every open batch that orcu_barrier(), orcu_drain(), shutdown and thread
 * exit need.  Calls call.c to post a full batch as one callback,
 * entry.c to wait for a grace period when no batch memory can be had,
 * gp.c for the cookie of a posted batch, registry.c for the caller's
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
 *  4. No batch memory: orcu_free() and orcu_retire() wait for a grace
 *     period and free at once (orcu_synchronize()), which is why they
 *     are not allowed in a reader section or a callback (checked on
 *     every call, not only when memory runs out).  The deleter then
 *     runs on the caller's thread, as in a callback (API.md says so: a
 *     lock the caller holds across orcu_retire() must not be one it
 *     takes).  orcu_free_rcu() posts the object's own head instead, its
 *     offset in the object as its function (ORCU__FREE_AT, os.h), and
 *     never blocks.
 *  5. fork: recs_lock is taken across it (lifecycle.c), so the child
 *     finds each batch open or posted, none in between (an owner that
 *     posted a full batch outside it lost it in the child:
 *     test_free_fork_mid_post).  In the child the threads that are gone
 *     have busy and flush cleared, and their open batches, still
 *     listed, are posted by the child's next flush; a
 *     ring batch one of them was freeing itself (point 6) is marked
 *     done, so that its callback does not wait for it.
 *  6. Freeing where the memory is hot.  A free() batch its thread posts
 *     also stays on that thread's ring, with the cookie of a GP that
 *     began after its last addition (orcu__gp_snap()).  When the thread
 *     next fills a batch and that GP has ended, it frees the objects
 *     itself, so free() meets the thread's own allocator cache where its
 *     next malloc() looks; the callback then only drops its reference.
 *     One CAS on claim decides who frees; a callback that loses waits
 *     for CLAIM_DONE (the poster frees at most a page of pointers and
 *     holds no lock of ours).  orcu_retire()'s deleters never run this
 *     way (one may take a lock the caller holds); orcu__retire_nb()'s
 *     do, for <orcu/rcu.hpp>, as P2545 lets a retire "invoke scheduled
 *     evaluations" (its note warns of that very deadlock), marked as in
 *     a callback so a barrier in one aborts instead of waiting for
 *     itself; the poster takes the batch off its ring first, since such
 *     a deleter may retire, fill a batch and reap the ring again.  The
 *     page goes to whoever drops the last reference; the poster keeps
 *     one for its next batch.
 *     orcu_barrier() waits for the callbacks, so for the poster's frees.
 */
#include "os.h"
#include "seq.h"
#include "gp.h"
#include "registry.h"
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
/* Who frees a posted free() batch's objects (point 6). */
enum {
	CLAIM_NONE,
	CLAIM_POSTER,
	CLAIM_DONE
};

struct batch {
	struct orcu_head head; /* the batch's one callback (point 1) */
	unsigned n, cap;       /* owner writes; the callback reads */
	unsigned kind;         /* BATCH_FREE: e[i] = p; else pairs e[2i], e[2i+1] */
	_Atomic int claim;     /* CLAIM_*: the poster's and the callback's CAS */
	_Atomic int refs;      /* 2 while the poster's ring holds it, else 1 */
	union entry e[];
};

#define BATCH_ENTRIES ((BATCH_BYTES - sizeof(struct batch)) / sizeof(union entry))

static void batch_delete(struct batch *b)
{
	if (b->kind == BATCH_FREE) {
		for (unsigned i = 0; i < b->n; i++)
			free(b->e[i].p);
	} else {
		for (unsigned i = 0; i < b->n; i += 2)
			b->e[i + 1].deleter(b->e[i].p);
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
 * objects unless its poster has claimed them (point 6). */
static void batch_cb(struct orcu_head *h)
{
	struct batch *b = (struct batch *)h;
	int c = CLAIM_NONE;

	/* Acquire pairs with the release of CLAIM_DONE in ring_drop(): the
	 * poster freed them, and is done with them. */
	if (orcu__cas_acq_rel(&b->claim, &c, CLAIM_DONE))
		batch_delete(b);
	else
		while (orcu__load_acquire(&b->claim) != CLAIM_DONE)
			sched_yield();
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

/* A ring batch its owner is freeing, on the owner's stack (ring_drop());
 * prev: the one it was freeing when a deleter came back (point 6). */
struct freeing {
	struct batch *b;
	struct freeing *prev;
};

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
	/* The batches it has taken off its ring to free them, innermost
	 * first: read by the fork child alone (point 5). */
	struct freeing *_Atomic freeing;
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
			if (r->open[k])
				out[n++] = r->open[k];
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
static void ring_reap(struct free_rec *r);

/* Thread exit: post this thread's open batches (as owner: no flusher runs
 * while we hold recs_lock) and leave its ring's to their callbacks; the
 * record goes with it unless its tick is pending, which then frees it. */
static void rec_exit(struct free_rec *r)
{
	bool armed;

	ring_reap(r);
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

/* The owner lets go of the oldest batch of its ring, freeing its objects
 * itself if its GP has ended and the callback has not claimed them.  The
 * batch leaves the ring first: a deleter may retire, fill a batch and so
 * come back here (ring_push()), and must find the ring without it. */
static void ring_drop(struct free_rec *r, bool gp_done)
{
	struct batch *b = r->ring[r->ring_head];
	int c = CLAIM_NONE;

	r->ring[r->ring_head] = NULL;
	r->ring_head = (r->ring_head + 1) % RING;
	r->ring_n--;
	if (gp_done) {
		struct freeing f = { b, orcu__load_relaxed(&r->freeing) };

		/* Listed before it can be CLAIM_POSTER (the CAS orders the
		 * store), for a fork child (point 5). */
		orcu__store_relaxed(&r->freeing, &f);
		/* Pairs with the CAS in batch_cb(): one of the two frees
		 * them. */
		if (orcu__cas_acq_rel(&b->claim, &c, CLAIM_POSTER)) {
			delete_on_caller(b, NULL, NULL);
			/* Pairs with the acquire in batch_cb(). */
			orcu__store_release(&b->claim, CLAIM_DONE);
		}
		/* Unlisted once CLAIM_DONE (the release orders it). */
		orcu__store_release(&r->freeing, f.prev);
	}
	/* Pairs with the callback's drop in batch_cb(). */
	if (orcu__fetch_sub_acq_rel(&b->refs, 1) == 1) {
		if (!r->spare)
			r->spare = b;
		else
			free(b);
	}
}

/* Free every ring batch whose GP has ended, oldest first. */
static void ring_reap(struct free_rec *r)
{
	/* Acquire pairs with the store that ends a GP: what readers did is
	 * visible before we free (as in orcu_poll_state()). */
	unsigned long seq = orcu__load_acquire(&orcu__gp_seq);

	while (r->ring_n && orcu__seq_done(seq, r->cookie[r->ring_head]))
		ring_drop(r, true);
}

/* A free() batch its owner posted (holding a second reference) goes on
 * its ring. */
static void ring_push(struct free_rec *r, struct batch *b)
{
	if (r->ring_n == RING)
		ring_drop(r, false);
	/* After every addition: the GP of this cookie began after each of
	 * the objects was unpublished. */
	r->cookie[(r->ring_head + r->ring_n) % RING] = orcu__gp_snap();
	r->ring[(r->ring_head + r->ring_n) % RING] = b;
	r->ring_n++;
	ring_reap(r);
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
	orcu__store_relaxed(&b->claim, CLAIM_NONE);
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
		ring_push(r, full);
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
	if (p && orcu__unlikely(add(BATCH_FREE, p, NULL) != 0))
		wait_and_delete(p, NULL);
}

void orcu_retire(void *p, void (*deleter)(void *))
{
	check_may_block("orcu_retire");
	if (!deleter)
		orcu__misuse("orcu_retire", "NULL deleter");
	if (p && orcu__unlikely(add(BATCH_RETIRE, p, deleter) != 0))
		wait_and_delete(p, deleter);
}

int orcu__retire_nb(void *p, void (*deleter)(void *))
{
	if (!deleter)
		orcu__misuse("orcu_retire", "NULL deleter");
	return p ? add(BATCH_RETIRE_HOT, p, deleter) : 0;
}

void orcu__free_rcu(void *p, size_t offset)
{
	/* The macro checks this at compile time; a direct call here. */
	if (orcu__unlikely(offset >= ORCU_FREE_RCU_MAX_OFFSET || offset % sizeof(void *)))
		orcu__misuse("orcu_free_rcu", "the head is not within the object's first "
					      "ORCU_FREE_RCU_MAX_OFFSET bytes at a pointer-aligned offset");
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
	/* Point 5: only this thread runs, and it is in no addition.  A batch
	 * a thread that is gone was freeing itself is done here: its
	 * callback must not wait for it (what it had not freed stays).  It
	 * is off the ring (ring_drop()), on the list its thread's stack
	 * holds, which the child has a copy of. */
	for (struct free_rec *r = recs; r; r = r->next) {
		orcu__store_relaxed(&r->busy, 0);
		orcu__store_relaxed(&r->flush, 0);
		if (r == own_rec) /* forked from a deleter: it goes on */
			continue;
		for (struct freeing *f = orcu__load_relaxed(&r->freeing); f; f = f->prev)
			if (orcu__load_relaxed(&f->b->claim) == CLAIM_POSTER)
				orcu__store_relaxed(&f->b->claim, CLAIM_DONE);
	}
	pthread_mutex_unlock(&recs_lock);
}
