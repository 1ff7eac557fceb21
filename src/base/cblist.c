/*
 * cblist.c - the segmented callback list (see cblist.h for the layout and
 * its invariants).  Every insertion goes through splice_after(), every
 * removal from the front through cut_front(), so the tail-pointer
 * bookkeeping lives in exactly two places.  Calls seq.h's inlines and
 * only postcheck.c's orcu__double_post_die(), when a head shows up twice.
 */
#include "cblist.h"
#include "postcheck.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CBL_EXPECT(cond) \
	do { \
		if (__builtin_expect(!(cond), 0)) \
			cblist_die(__FILE__, __LINE__, #cond); \
	} while (0)

static void cblist_die(const char *file, int line, const char *what)
{
	/* Abort with the line: no cancel at its write (docs/API.md). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	fprintf(stderr, "%s:%d: cblist: expected %s\n", file, line, what);
	abort();
}

void orcu__cblist_init(struct orcu__cblist *cbl)
{
	*cbl = (struct orcu__cblist){ .head = NULL };
	for (int s = 0; s < ORCU__CBL_NSEGS; s++)
		cbl->tails[s] = &cbl->head;
}

bool orcu__cblist_empty(const struct orcu__cblist *cbl)
{
	return cbl->head == NULL;
}

long orcu__cblist_len(const struct orcu__cblist *cbl)
{
	long n = 0;

	for (int s = 0; s < ORCU__CBL_NSEGS; s++)
		n += cbl->len[s];
	return n;
}

bool orcu__cblist_seg_empty(const struct orcu__cblist *cbl, int seg)
{
	/* The tails say it without trusting len: an empty segment ends where
	 * the one before it ends. */
	struct orcu_head *const *start = seg == 0 ? &cbl->head : cbl->tails[seg - 1];

	return cbl->tails[seg] == start;
}

/*
 * Link the chain first..*tailp (n callbacks) in at the end of segment seg.
 * The empty segments right behind seg share seg's old tail pointer and so
 * must move with it, or they would claim the new callbacks; a later
 * non-empty segment ends at a node of its own and is untouched.
 */
static void splice_after(struct orcu__cblist *cbl, int seg, struct orcu_head *first,
			 struct orcu_head **tailp, long n)
{
	struct orcu_head **old = cbl->tails[seg];

	if (n == 0)
		return;
	*tailp = *old;
	*old = first;
	for (int s = seg; s < ORCU__CBL_NSEGS && cbl->tails[s] == old; s++)
		cbl->tails[s] = tailp;
	cbl->len[seg] += n;
}

void orcu__cblist_enqueue_chain(struct orcu__cblist *cbl, struct orcu_head *first,
				struct orcu_head *last, long n)
{
	struct orcu_head **tail = cbl->tails[ORCU__CBL_NEXT];

	if (n <= 0)
		return;
	/* O(1) signs of a head posted again while it was the last one on this
	 * list: it comes back as the chain's end, or its link, which ends the
	 * list, was rewritten by the new post (a relaxed load: the poster may
	 * be writing it right now).  next is an orcu_head's first member, so
	 * a tail other than &head is the last node itself. */
	if (__builtin_expect(tail == &last->next ||
				     orcu__link_load_relaxed(tail) != NULL,
			     0))
		orcu__double_post_die(cbl, tail == &cbl->head ? first : (struct orcu_head *)(void *)tail,
				      false);
	CBL_EXPECT(last->next == NULL);
	splice_after(cbl, ORCU__CBL_NEXT, first, &last->next, n);
}

/*
 * Make segment `to` (a waiting segment) end where segment `from` ends,
 * absorbing every segment in between.  Only valid for adjacent contiguous
 * ranges, which the list order guarantees.
 */
static void absorb(struct orcu__cblist *cbl, int to, int from)
{
	for (int s = to + 1; s <= from; s++) {
		cbl->len[to] += cbl->len[s];
		cbl->len[s] = 0;
	}
	for (int s = to; s < from; s++)
		cbl->tails[s] = cbl->tails[from];
}

bool orcu__cblist_advance(struct orcu__cblist *cbl, unsigned long cur_seq)
{
	int last_done = ORCU__CBL_DONE;

	/* Tags rise from WAIT to NEXT_READY, so the done segments form a
	 * prefix: stop at the first one still waiting. */
	for (int s = ORCU__CBL_WAIT; s <= ORCU__CBL_NEXT_READY; s++) {
		if (orcu__cblist_seg_empty(cbl, s))
			break;
		if (!orcu__seq_done(cur_seq, cbl->gp_seq[s]))
			break;
		last_done = s;
	}
	if (last_done != ORCU__CBL_DONE)
		absorb(cbl, ORCU__CBL_DONE, last_done);

	/* Keep "WAIT empty implies NEXT_READY empty", so accelerate always has
	 * a free segment to hand out in list order.  WAIT is empty, so it
	 * starts where NEXT_READY starts: it takes NEXT_READY whole, tag and
	 * all. */
	if (orcu__cblist_seg_empty(cbl, ORCU__CBL_WAIT) &&
	    !orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT_READY)) {
		absorb(cbl, ORCU__CBL_WAIT, ORCU__CBL_NEXT_READY);
		cbl->gp_seq[ORCU__CBL_WAIT] = cbl->gp_seq[ORCU__CBL_NEXT_READY];
	}
	return !orcu__cblist_seg_empty(cbl, ORCU__CBL_DONE);
}

bool orcu__cblist_accelerate(struct orcu__cblist *cbl, unsigned long snap)
{
	int last, to;

	if (orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT))
		return !orcu__cblist_seg_empty(cbl, ORCU__CBL_WAIT);

	last = orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT_READY) ?
		       ORCU__CBL_WAIT :
		       ORCU__CBL_NEXT_READY;
	/* NEXT sits behind `last` in the list, so it can only join `last`
	 * (FIFO).  Equal tag: the normal merge.  A later tag than snap means a
	 * caller passed a stale snap; waiting for the later GP is still safe. */
	if (!orcu__cblist_seg_empty(cbl, ORCU__CBL_WAIT) &&
	    orcu__seq_ge(cbl->gp_seq[last], snap)) {
		absorb(cbl, last, ORCU__CBL_NEXT);
		return true;
	}
	/* WAIT empty (NEXT_READY is empty too): NEXT becomes WAIT.  Else snap
	 * is later than every tag: NEXT gets NEXT_READY, either free or (both
	 * segments taken with earlier tags) shared, its tag raised to snap:
	 * its callbacks then wait one GP longer than needed, never less. */
	to = orcu__cblist_seg_empty(cbl, ORCU__CBL_WAIT) ? ORCU__CBL_WAIT : ORCU__CBL_NEXT_READY;
	absorb(cbl, to, ORCU__CBL_NEXT);
	cbl->gp_seq[to] = snap;
	return true;
}

bool orcu__cblist_wait_range(const struct orcu__cblist *cbl, unsigned long *first,
			     unsigned long *last)
{
	if (orcu__cblist_seg_empty(cbl, ORCU__CBL_WAIT))
		return false;
	*first = cbl->gp_seq[ORCU__CBL_WAIT];
	*last = orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT_READY) ?
			cbl->gp_seq[ORCU__CBL_WAIT] :
			cbl->gp_seq[ORCU__CBL_NEXT_READY];
	return true;
}

/*
 * Detach the first n callbacks (all in DONE) as a NULL-terminated chain.
 * Every tail pointer that pointed at the last detached ->next (DONE's, and
 * the empty segments behind it) must fall back to &head.
 */
static struct orcu_head *cut_front(struct orcu__cblist *cbl, long n)
{
	struct orcu_head *first = cbl->head;
	struct orcu_head **endp = &cbl->head;

	/* All of DONE (the offloaded invokers' case): its tail already points
	 * at the last ->next, so do not walk n cold nodes to find it. */
	if (n == cbl->len[ORCU__CBL_DONE])
		endp = cbl->tails[ORCU__CBL_DONE];
	else
		for (long i = 0; i < n; i++) {
			/* The segment ends before its count: a head posted again
			 * while here had its link cut. */
			if (__builtin_expect(*endp == NULL, 0))
				orcu__double_post_die(cbl, endp == &cbl->head ? first : (struct orcu_head *)(void *)endp,
						      false);
			endp = &(*endp)->next;
		}
	cbl->head = *endp;
	*endp = NULL;
	for (int s = 0; s < ORCU__CBL_NSEGS; s++)
		if (cbl->tails[s] == endp)
			cbl->tails[s] = &cbl->head;
	cbl->len[ORCU__CBL_DONE] -= n;
	return first;
}

long orcu__cblist_extract_done(struct orcu__cblist *cbl, struct orcu_head **out,
			       long limit)
{
	long n = cbl->len[ORCU__CBL_DONE];

	if (limit > 0 && limit < n)
		n = limit;
	*out = n ? cut_front(cbl, n) : NULL;
	return n;
}

void orcu__cblist_entrain(struct orcu__cblist *cbl, struct orcu_head *h)
{
	int seg = ORCU__CBL_NEXT;

	/* The last non-empty segment, or DONE when all are empty: h then
	 * shares the tag of the callback in front of it. */
	while (seg > ORCU__CBL_DONE && orcu__cblist_seg_empty(cbl, seg))
		seg--;
	splice_after(cbl, seg, h, &h->next, 1);
}

long orcu__cblist_take_all(struct orcu__cblist *cbl, struct orcu_head **out)
{
	long n = orcu__cblist_len(cbl);

	*out = cbl->head;
	orcu__cblist_init(cbl);
	return n;
}

void orcu__cblist_check(const struct orcu__cblist *cbl)
{
	struct orcu_head *const *p = &cbl->head;

	for (int s = 0; s < ORCU__CBL_NSEGS; s++) {
		CBL_EXPECT(cbl->len[s] >= 0);
		for (long i = 0; i < cbl->len[s]; i++) {
			CBL_EXPECT(*p != NULL); /* len[s] callbacks in segment s */
			p = &(*p)->next;
		}
		CBL_EXPECT(cbl->tails[s] == p); /* tails[s] ends segment s */
	}
	CBL_EXPECT(*p == NULL); /* nothing behind NEXT */
	CBL_EXPECT(!orcu__cblist_seg_empty(cbl, ORCU__CBL_WAIT) ||
		   orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT_READY));
	if (!orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT_READY))
		CBL_EXPECT(orcu__seq_lt(cbl->gp_seq[ORCU__CBL_WAIT],
					cbl->gp_seq[ORCU__CBL_NEXT_READY]));
}

void orcu__cblist_requeue_done(struct orcu__cblist *cbl, struct orcu_head *first,
			       struct orcu_head *last, long n)
{
	if (n == 0)
		return;
	last->next = cbl->head;
	cbl->head = first;
	/* Every segment that was empty up to here now ends where the new
	 * DONE does; a non-empty one keeps its own tail. */
	for (int s = 0; s < ORCU__CBL_NSEGS && cbl->tails[s] == &cbl->head; s++)
		cbl->tails[s] = &last->next;
	cbl->len[ORCU__CBL_DONE] += n;
}
