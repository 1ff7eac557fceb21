/*
 * cblist.h - the segmented callback list: one singly linked FIFO of
 * orcu_heads cut into four segments (DONE, WAIT, NEXT_READY, NEXT) by tail
 * pointers, each waiting segment tagged with the gp_seq it waits for.
 * A pure data structure: no locking, no atomics, no allocation; the caller
 * serialises access.  Uses seq.h for every sequence comparison, and reports
 * a head found posted twice through orcu__double_post_die() (postcheck.c).
 */
#ifndef ORCU_CBLIST_H
#define ORCU_CBLIST_H

#include <stdbool.h>

#include "orcu.h"
#include "seq.h"

/*
 * Links: an orcu_head's next field (or a queue's head pointer), a plain
 * pointer in the public struct.  The lists use it plainly, under cb_lock.
 * Where another thread may write or read it at the same time (a producer
 * of mpsc.c linking, a double post rewriting it), it is accessed through
 * these, which say the order; the caller says what the order pairs with.
 */
static inline struct orcu_head *orcu__link_load_relaxed(struct orcu_head *const *link)
{
	return __atomic_load_n(link, __ATOMIC_RELAXED);
}

static inline struct orcu_head *orcu__link_load_acquire(struct orcu_head *const *link)
{
	/* Order: the caller names the release it pairs with. */
	return __atomic_load_n(link, __ATOMIC_ACQUIRE);
}

static inline void orcu__link_store_relaxed(struct orcu_head **link, struct orcu_head *h)
{
	__atomic_store_n(link, h, __ATOMIC_RELAXED);
}

static inline void orcu__link_store_release(struct orcu_head **link, struct orcu_head *h)
{
	/* Order: the caller names the acquire it pairs with. */
	__atomic_store_n(link, h, __ATOMIC_RELEASE);
}

/*
 * Segments in list order.  DONE: its GP has ended, ready to invoke.
 * WAIT, NEXT_READY: tagged with the GP end (an orcu__seq_snap() target)
 * they wait for; WAIT's tag is strictly earlier than NEXT_READY's.
 * NEXT: queued but not yet tagged (accelerate gives them a tag).
 */
enum {
	ORCU__CBL_DONE,
	ORCU__CBL_WAIT,
	ORCU__CBL_NEXT_READY,
	ORCU__CBL_NEXT,
	ORCU__CBL_NSEGS
};

/*
 * Invariants (checked by orcu__cblist_check: after every step in
 * tests/unit/test_cblist.c, after advance/accelerate/entrain in ORCU_DEBUG builds):
 *  - tails[s] points at the ->next field of the last callback of segments
 *    0..s, or at &head if all of them are empty; so segment s is empty iff
 *    tails[s] == tails[s - 1] (or == &head for DONE);
 *  - len[s] is the number of callbacks in segment s;
 *  - *tails[NEXT] == NULL;
 *  - WAIT empty implies NEXT_READY empty (advance compacts), so "anything
 *    waits for a GP" is simply "WAIT is non-empty";
 *  - gp_seq[] is meaningful only for a non-empty WAIT / NEXT_READY.
 */
struct orcu__cblist {
	struct orcu_head *head;
	struct orcu_head **tails[ORCU__CBL_NSEGS];
	unsigned long gp_seq[ORCU__CBL_NSEGS];
	long len[ORCU__CBL_NSEGS];
};

void orcu__cblist_init(struct orcu__cblist *cbl);
bool orcu__cblist_empty(const struct orcu__cblist *cbl);
long orcu__cblist_len(const struct orcu__cblist *cbl);
bool orcu__cblist_seg_empty(const struct orcu__cblist *cbl, int seg);

/* Append the NULL-terminated chain first..last of n callbacks to NEXT.
 * A chain whose last node already ends this list, or a list whose last
 * node links somewhere, means a head was posted twice: reported. */
void orcu__cblist_enqueue_chain(struct orcu__cblist *cbl, struct orcu_head *first,
				struct orcu_head *last, long n);

/*
 * Move every waiting segment whose tag is done at cur_seq into DONE, in
 * FIFO order.  Returns true if DONE is non-empty afterwards.
 */
bool orcu__cblist_advance(struct orcu__cblist *cbl, unsigned long cur_seq);

/*
 * Tag NEXT with snap: merge it into the last waiting segment if that one
 * already waits for snap (or, abnormally, for a later GP); else give it the
 * first free waiting segment; else merge it into NEXT_READY and raise
 * NEXT_READY's tag to snap.  Returns true if any callback waits for a GP.
 */
bool orcu__cblist_accelerate(struct orcu__cblist *cbl, unsigned long snap);

/*
 * If any callback is tagged (WAIT / NEXT_READY; NEXT has no tag yet), store
 * the earliest and latest tags and return true; else return false.
 */
bool orcu__cblist_wait_range(const struct orcu__cblist *cbl, unsigned long *first,
			     unsigned long *last);

/*
 * Detach up to limit (<= 0: all) callbacks from the front of DONE as a
 * NULL-terminated chain in *out (NULL if none); returns how many.
 */
long orcu__cblist_extract_done(struct orcu__cblist *cbl, struct orcu_head **out,
			       long limit);

/*
 * Insert h behind the last callback, in the last non-empty segment (taking
 * its tag), or into DONE if the list is empty: the barrier marker.
 */
void orcu__cblist_entrain(struct orcu__cblist *cbl, struct orcu_head *h);

/*
 * Put the chain first..last of n callbacks back in front of DONE: callbacks
 * taken for invocation that never ran (a fork child's other threads).
 */
void orcu__cblist_requeue_done(struct orcu__cblist *cbl, struct orcu_head *first,
			       struct orcu_head *last, long n);

/* Detach everything, in FIFO order, as one NULL-terminated chain. */
long orcu__cblist_take_all(struct orcu__cblist *cbl, struct orcu_head **out);

/* Walk the list (O(n)) and die with one line on a broken invariant above. */
void orcu__cblist_check(const struct orcu__cblist *cbl);

#endif
