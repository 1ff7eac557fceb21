/*
 * postq.c - a posting thread's own queue on one slot: the fast path of
 * orcu_call(), and who owns which queue.  One producer, the thread that
 * owns the queue, posts with plain stores to the queue: no atomic
 * read-modify-write, no fence, and no store to the head, whose cache line
 * an invoker on another CPU may hold (call.c stores func only when it
 * changed).  One consumer at a time, whoever holds the slot's cb_lock,
 * takes what was published and links the heads.  Owns struct
 * orcu__postq, its segments and their ownership.  Calls postcheck.c's
 * reports of a double post and os.c's thread-exit key.  Used by call.c,
 * the poster, slot.c, the taker, and lifecycle.c at a thread's exit and
 * at the unload.
 *
 * Why the consumer sees every head once, in posting order.
 *  1. A queue is a chain of segments of ORCU__PSEG_N entries; a segment
 *     records the position of its first entry (base), so the position of
 *     every head is its count: the producer writes the entry of position
 *     `posted`, then publishes posted + 1 with a release store; the
 *     consumer reads posted with acquire and takes the entries from
 *     `taken` up to it.  Positions never move, so the consumer needs no
 *     more than the count.  The consumer clears the links of the heads
 *     it takes, then links them: a head met twice in one take shows the
 *     link this take set (a double post).
 *  2. The producer links a new segment (base set first, release) before
 *     it publishes any position in it, so a consumer that passes the end
 *     of a segment finds the next one linked.  A segment the consumer has
 *     passed is one the producer left for good (it publishes only past
 *     it): the consumer may recycle it.
 *  3. Each producer step is one store that the next step can resume from,
 *     in the order: take a spare, link, move pseg, write the entry,
 *     publish.  A thread that stops between two of them (it existed in
 *     the parent of a fork) leaves a queue the next owner continues: an
 *     entry written but not published is overwritten, a linked segment is
 *     followed (never linked twice), a spare taken but not linked is lost
 *     (a fork child's leak, not a lost callback).
 *
 * Who owns which queue, and why no post is missed.
 *  4. Ownership.  The slot lists every queue ever claimed on it, and a
 *     queue outlives its owner.  A thread owns one queue on each of its
 *     last ORCU__POSTQS_PER_THREAD slots (the scheduler may move it back),
 *     claimed by a CAS of `owned` (a free queue first, whose heads stay
 *     ahead of ours), and gives it back (release) when it needs the room
 *     or exits.  Where it owns none it posts to the slot's shared queue.
 *  5. No lost wake-up.  The poster stores its count, then reads the
 *     leader's `sleep` with no fence between; the leader, going to sleep,
 *     stores `sleep`, fences, and if a thread owns a queue in its group
 *     calls membarrier() (a full barrier on every CPU running one of our
 *     threads) before its re-scan: each post is before the re-scan, or
 *     its read of `sleep` after the store (models/postq_wake.pml).  A
 *     claimer is counted in postq_owners (seq_cst) before its first post,
 *     which fences: a leader that read no owner is seen asleep.  Without
 *     membarrier() every post fences.
 *  6. Order.  A thread's posts to one slot are taken in order.  It gives
 *     a queue back only once all its heads were taken (a head left there
 *     would be overtaken by the ones it posts when it comes back), and a
 *     take reads the queues' counts first, then takes the shared queue
 *     and puts its heads first: a thread that posted to the shared queue
 *     and then claims a queue has its later heads counted only once its
 *     earlier ones are in the shared queue.  (When a segment cannot be
 *     allocated the post goes to the shared queue, ahead of the thread's
 *     heads still in its own.)  Lazy posts go to the slot's lazy queue,
 *     kept in order with these by the take (slot.c point 7) and the
 *     poster's flush (call.c lazy_order()).  Posts of different threads
 *     are unordered.
 *  7. Counts and fork.  A queue counts what it published (`posted` only
 *     grows, whoever owns it); a slot's pending count adds them (slot.h).
 *     In a fork child the queues of threads that do not exist lose their
 *     owner; what they published stays (point 3).
 *  8. ThreadSanitizer in the user's program sees the library's malloc()
 *     and free(), not its orders: a segment malloc'ed by a poster and
 *     freed by a consumer would be a race on free.  The producer
 *     releases the new segment (sanitize.h) before it links it, the
 *     consumer acquires it before it frees it: the edge that the link's
 *     release and acquire are.
 */
#include "os.h"
#include "cblist.h"
#include "nocb.h"
#include "postcheck.h"
#include "postq.h"
#include "sanitize.h"
#include "slot.h"

#include <string.h>

/* The producer's next segment, when position p (== posted) is the first
 * past pseg: one a dead owner may have linked already (point 3), a spare
 * the consumer gave back, or a new one.  NULL when memory is short: the
 * caller posts another way. */
struct orcu__pseg *orcu__postq_next_seg(struct orcu__postq *q)
{
	unsigned long p = orcu__load_relaxed(&q->posted);
	struct orcu__pseg *seg = q->pseg;
	/* Pairs with the release link below (ours or a dead owner's). */
	struct orcu__pseg *n = orcu__load_acquire(&seg->next);

	if (!n) {
		n = q->pfree;
		if (!n) {
			/* Pairs with the release of the consumer's push in
			 * give_back(): the segments' free links are set. */
			n = orcu__xchg_acquire(&q->spare, NULL);
		}
		if (n) {
			q->pfree = orcu__load_relaxed(&n->next);
		} else {
			n = malloc(sizeof(*n));
			if (!n)
				return NULL;
			/* Point 8: the consumer frees it. */
			orcu__tsan_release(n);
		}
		orcu__store_relaxed(&n->next, NULL);
		n->base = p;
		/* Release: base and the cleared link are set before a consumer
		 * that follows this link reads them (point 2).  Pairs with the
		 * acquire in orcu__postq_take(). */
		orcu__store_release(&seg->next, n);
	}
	q->pseg = n;
	return n;
}

/* A segment the consumer passed (point 2) goes back to the producer, up to
 * a few; the rest are freed.  Under cb_lock. */
static void give_back(struct orcu__postq *q, struct orcu__pseg *seg)
{
	struct orcu__pseg *old = orcu__load_relaxed(&q->spare);

	if (!old)
		q->nspare = 0; /* the producer took them all */
	if (q->nspare >= ORCU__PSEG_SPARES) {
		/* Point 8: its producer's malloc() happens before. */
		orcu__tsan_acquire(seg);
		free(seg);
		return;
	}
	do {
		orcu__store_relaxed(&seg->next, old);
		/* Release: the free link is set.  Pairs with the producer's
		 * exchange in orcu__postq_next_seg(). */
	} while (!atomic_compare_exchange_weak_explicit(&q->spare, &old, seg,
							memory_order_release,
							memory_order_relaxed));
	q->nspare++;
}

/* The last head this queue put in the slot's list, if its invocation has
 * not begun: its link is in the list (or the chain being invoked), and a
 * post of it now is a second one.  Acquire pairs with the release store
 * of `started` in invoke_chain() (slot.c): a started head's link was read
 * before we may write it.  `started` moves per callback, not per chain:
 * a head of the chain being run, not started yet, is still listed. */
static struct orcu_head *still_listed(struct orcu__postq *q)
{
	unsigned long started = orcu__load_acquire(&q->slot->inv.started);

	return q->last && (long)(started - q->last_ord) < 0 ? q->last : NULL;
}

/*
 * Under the slot's cb_lock: the heads from `taken` up to position upto
 * (a count the caller read with orcu__postq_published()), linked in
 * posting order into [*first..*last].  Returns how many were linked.  A
 * head met again (its link already set by this take) was posted twice
 * while pending: reported, naming orcu_call and the slot.  So is the head
 * this queue put in the list last, posted again before it began to run
 * (after its take, so this queue's own check missed it, call.c
 * post_own()): that post is left out, in one line, and the list behind
 * the first keeps its link; the caller counts it done (upto minus the
 * heads taken minus those linked).
 */
long orcu__postq_take(struct orcu__postq *q, unsigned long upto,
		      struct orcu_head **first, struct orcu_head **last)
{
	unsigned long c = orcu__load_relaxed(&q->taken);
	struct orcu__pseg *seg = q->cseg;
	struct orcu_head *prev = NULL, *again;
	long n = 0;

	if (c == upto)
		return 0;
	again = still_listed(q);
	/* Point 1: the producer wrote no link; clear them all first (not
	 * the link of a head still listed).  The segments' links and
	 * entries are read as in the loop below. */
	for (unsigned long i = c; i != upto; i++) {
		struct orcu_head *h;

		if (i - seg->base == ORCU__PSEG_N)
			seg = orcu__load_acquire(&seg->next);
		h = orcu__load_relaxed(&seg->e[i - seg->base]);
		if (h != again)
			orcu__link_store_relaxed(&h->next, NULL);
	}
	seg = q->cseg;
	for (; c != upto; c++) {
		struct orcu_head *h;

		if (c - seg->base == ORCU__PSEG_N) {
			/* Pairs with the release link in orcu__postq_next_seg(). */
			struct orcu__pseg *next = orcu__load_acquire(&seg->next);

			give_back(q, seg);
			seg = next;
		}
		/* Relaxed: published by the acquire of posted (point 1). */
		h = orcu__load_relaxed(&seg->e[c - seg->base]);
		if (orcu__unlikely(h == again)) {
			orcu__double_post_report(q->slot, h);
			continue;
		}
		/* Cleared above; a link means this take met h before. */
		if (orcu__unlikely(orcu__link_load_relaxed(&h->next) != NULL))
			orcu__double_post_die(q->slot, h, false);
		if (prev)
			orcu__link_store_relaxed(&prev->next, h);
		else
			*first = h;
		prev = h;
		n++;
	}
	q->cseg = seg;
	*last = prev;
	/* The caller puts the chain in the list now, behind n_listed. */
	if (prev) {
		q->last = prev;
		q->last_ord = q->slot->inv.n_listed + (unsigned long)n;
	}
	/* Release: pairs with the acquire in orcu__postq_drained(): the
	 * producer's double-post check and its release of a drained queue. */
	orcu__store_release(&q->taken, upto);
	return n;
}

/* A new queue with one empty segment, owned by the caller; NULL when
 * memory is short. */
struct orcu__postq *orcu__postq_new(struct orcu__slot *s)
{
	struct orcu__postq *q = aligned_alloc(ORCU__CACHELINE, sizeof(*q));
	struct orcu__pseg *seg = malloc(sizeof(*seg));

	if (!q || !seg) {
		free(q);
		free(seg);
		return NULL;
	}
	memset(q, 0, sizeof(*q));
	seg->base = 0;
	atomic_init(&seg->next, NULL);
	q->pseg = q->cseg = seg;
	q->slot = s;
	atomic_init(&q->owned, 1);
	return q;
}

/* ------------------------------------------------------------------ */
/* Ownership (points 4 to 7) */

static struct orcu__postq *claim(struct orcu__slot *s)
{
	struct orcu__postq *q;

	/* A queue whose owner left: its heads stay in order, ours follow. */
	for (q = orcu__load_acquire(&s->st.postqs); q; q = q->next) {
		int free_ = 0;

		/* Acquire: the last owner's producer fields.  Pairs with the
		 * release in give_up(). */
		if (!orcu__load_relaxed(&q->owned) && orcu__cas_acq_rel(&q->owned, &free_, 1))
			break;
	}
	if (!q) {
		q = orcu__postq_new(s);
		if (!q)
			return NULL;
		orcu__slot_add_postq(s, q);
	}
	/* seq_cst: pairs with the leader's read of postq_owners after it
	 * published that it sleeps (nocb.c leader_sleep()); a claimer's first
	 * post then fences (call.c). */
	orcu__fetch_add_seq_cst(&s->st.leader->postq_owners, 1);
	return q;
}

static void give_up(struct orcu__postq *q)
{
	/* Release: our posts come before a leader that reads the count or
	 * the queue free (point 5), and before the next owner's. */
	orcu__fetch_sub_release(&q->slot->st.leader->postq_owners, 1);
	orcu__store_release(&q->owned, 0);
}

/* Every head of q was taken into its slot's list. */
bool orcu__postq_drained(struct orcu__postq *q)
{
	/* Pairs with the release in orcu__postq_take(). */
	return orcu__load_acquire(&q->taken) == orcu__load_relaxed(&q->posted);
}

/* This thread's exit step (lifecycle.c's table): its queues go back to
 * their slots. */
void orcu__postq_thread_exit(void)
{
	orcu__tls.postq = NULL;
	while (orcu__tls.npostqs > 0)
		give_up(orcu__tls.postqs[--orcu__tls.npostqs]);
}

static void free_segs(struct orcu__pseg *seg)
{
	for (struct orcu__pseg *next; seg; seg = next) {
		next = orcu__load_relaxed(&seg->next);
		free(seg);
	}
}

/* The library's image is unloaded (lifecycle.c point 7): the queues go
 * with it.  The drain took every head, and no thread posts any more: a
 * queue's segments are the chain from the consumer's on, the spares and
 * the owner's free ones. */
void orcu__postq_unload(void)
{
	int n = orcu__load_relaxed(&orcu__g.initialized) ? orcu__g.nr_possible : 1;

	for (int i = 0; i < n; i++) {
		struct orcu__slot *s = orcu__slot_of(i);
		struct orcu__postq *q = orcu__load_relaxed(&s->st.postqs), *next;

		for (; q; q = next) {
			next = q->next;
			free_segs(q->cseg);
			free_segs(orcu__load_relaxed(&q->spare));
			free_segs(q->pfree);
			free(q);
		}
		orcu__store_relaxed(&s->st.postqs, NULL);
	}
}

/* Point 4: the queue this thread posts to on s, when its current one is
 * on another slot: one it owns there, or a new claim (*claimed); NULL
 * means "post to the shared queue". */
struct orcu__postq *orcu__postq_switch(struct orcu__slot *s, bool *claimed)
{
	struct orcu__tls *t = &orcu__tls;
	struct orcu__postq *q;
	int i;

	for (i = 0; i < t->npostqs; i++)
		if (t->postqs[i]->slot == s) {
			t->postq = t->postqs[i];
			*claimed = false;
			return t->postq;
		}
	if (t->npostqs == ORCU__POSTQS_PER_THREAD) {
		/* Point 6: give back only a drained queue. */
		for (i = 0; i < t->npostqs && !orcu__postq_drained(t->postqs[i]); i++)
			;
		if (i == t->npostqs)
			return NULL;
		q = t->postqs[i];
		t->postqs[i] = t->postqs[--t->npostqs];
		if (t->postq == q)
			t->postq = NULL;
		give_up(q);
	}
	/* Our exit gives back what we own: armed with the first queue. */
	if (t->npostqs == 0 && orcu__thread_exit_arm() != 0)
		return NULL;
	q = claim(s);
	if (!q)
		return NULL;
	t->postqs[t->npostqs++] = q;
	t->postq = q;
	*claimed = true;
	return q;
}

/* fork child, cb_lock held: queues of threads that do not exist here have
 * no owner (point 7). */
void orcu__postq_after_fork(struct orcu__slot *s)
{
	for (struct orcu__postq *q = orcu__load_relaxed(&s->st.postqs); q; q = q->next) {
		bool ours = false;

		for (int i = 0; i < orcu__tls.npostqs; i++)
			ours |= orcu__tls.postqs[i] == q;
		if (ours || !orcu__load_relaxed(&q->owned))
			continue;
		orcu__store_relaxed(&q->owned, 0);
		orcu__fetch_sub_relaxed(&s->st.leader->postq_owners, 1);
	}
}
