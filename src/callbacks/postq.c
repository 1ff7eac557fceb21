/*
 * postq.c - a posting thread's own queue on one slot: the fast path of
 * orcu_call().  One producer, the thread that owns the queue, posts with
 * plain stores: no atomic read-modify-write and no fence, so the stores to
 * the head (whose cache line an invoker on another CPU last read) drain in
 * the background instead of stalling each post.  One consumer at a time,
 * whoever holds the slot's cb_lock, takes what was published.  Owns
 * struct orcu__postq and its segments; calls only mpsc.c's report of a
 * double post.  Which thread owns which queue, and the wake-up that the
 * missing fence needs, are slot.c's and call.c's (slot.c point 7).
 *
 * Why the consumer sees every head once, in posting order.
 *  1. A queue is a chain of segments of ORCU__PSEG_N entries; a segment
 *     records the position of its first entry (base), so the position of
 *     every head is its count: the producer writes the entry of position
 *     `posted`, then publishes posted + 1 with a release store; the
 *     consumer reads posted with acquire and takes the entries from
 *     `taken` up to it.  Positions never move, so the consumer needs no
 *     more than the count.
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
 */
#include "internal.h"

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
		q->nspare = 0;          /* the producer took them all */
	if (q->nspare >= ORCU__PSEG_SPARES) {
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

/*
 * Under the slot's cb_lock: the heads from `taken` up to position upto
 * (a count the caller read with orcu__postq_published()), linked in
 * posting order into [*first..*last].  Returns how many.  A head met
 * again (its link already set by this take) was posted twice while
 * pending: reported, naming orcu_call and the slot.
 */
long orcu__postq_take(struct orcu__postq *q, unsigned long upto,
		      struct orcu_head **first, struct orcu_head **last)
{
	unsigned long c = orcu__load_relaxed(&q->taken);
	struct orcu__pseg *seg = q->cseg;
	struct orcu_head *prev = NULL;
	long n = (long)(upto - c);

	if (!n)
		return 0;
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
		/* The producer stored NULL; a link means this take met h before. */
		if (orcu__unlikely(orcu__link_load_relaxed(&h->next) != NULL))
			orcu__double_post_die(q->slot, h, false);
		if (prev)
			orcu__link_store_relaxed(&prev->next, h);
		else
			*first = h;
		prev = h;
	}
	q->cseg = seg;
	*last = prev;
	/* Release: pairs with the acquire in postq_drained() (call.c): the
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
