/*
 * mpsc.c - the lock-free multi-producer, single-consumer callback FIFO that
 * orcu_call() enqueues on.  Producers never block and never take a lock:
 * one exchange of the tail, then a link.  The single consumer (whoever
 * holds the slot's cb_lock) takes the whole queue at once.  Touches nothing
 * but the queue; calls postcheck.c only, to report a double post.
 *
 * Publication point: the seq_cst exchange of the tail.  Once it is done the
 * queue is non-empty (tail != &head) even if the link store is still to
 * come, so a consumer that checks emptiness after that exchange cannot miss
 * the callback; it waits out the short window before the link lands.
 *
 * Double posts.  Posting a head that is still pending rewrites its link,
 * which would silently cut the queue or the slot's list.  The two signs a
 * queue shows at no cost die through postcheck.c (which lists every place
 * a double post is found): a push whose exchange returns the head's own
 * link (the head is the newest one queued), and a take whose last node
 * links somewhere.
 */
#include "os.h"
#include "cblist.h"
#include "mpsc.h"
#include "postcheck.h"

void orcu__mpsc_init(struct orcu__mpsc *q)
{
	q->head = NULL;
	atomic_init(&q->tail, &q->head);
}

bool orcu__mpsc_push(struct orcu__mpsc *q, struct orcu_head *h)
{
	struct orcu_head **prev;

	orcu__link_store_relaxed(&h->next, NULL);
	/* The publication point.  seq_cst: it comes before the caller's read
	 * of a sleep flag.  Pairs with the fence after the leader sets its
	 * flag and the seq_cst loads in orcu__mpsc_empty() of its re-scan
	 * (nocb.c point 2), and with the exchange in orcu__mpsc_take(). */
	prev = orcu__xchg_seq_cst(&q->tail, &h->next);
	/* h was already the newest node here: linking would loop it onto
	 * itself.  Die before writing, at the second call itself. */
	if (orcu__unlikely(prev == &h->next))
		orcu__double_post_die(q, h, true);
	/* Release: h's contents are visible to the consumer that sees the
	 * link.  Pairs with the acquire in wait_link(). */
	orcu__link_store_release(prev, h);
	return prev == &q->head;
}

/* Pairs with the exchange in orcu__mpsc_push() (seq_cst: a re-scan after
 * a fence, nocb.c point 2). */
bool orcu__mpsc_empty(struct orcu__mpsc *q)
{
	return orcu__load_seq_cst(&q->tail) == &q->head;
}

static struct orcu_head *wait_link(struct orcu_head **where)
{
	struct orcu_head *n;

	/* A producer between its exchange and its link: a few instructions.
	 * Pairs with the release link store in orcu__mpsc_push(). */
	while (!(n = orcu__link_load_acquire(where)))
		orcu__cpu_relax();
	return n;
}

long orcu__mpsc_take(struct orcu__mpsc *q, struct orcu_head **first,
		     struct orcu_head **last)
{
	struct orcu_head **old_tail, *h;
	long n = 1;

	/* Order: none needed to see the queue empty; the nodes are read
	 * through wait_link()'s acquire. */
	if (orcu__load_relaxed(&q->tail) == &q->head)
		return 0;
	h = wait_link(&q->head);
	/* tail != &head, so no producer will link into head until we reset
	 * tail: clearing head first is safe. */
	orcu__link_store_relaxed(&q->head, NULL);
	/* Pairs with the exchange in orcu__mpsc_push(): acquire, the last
	 * producer's node is ours to walk to; release, a producer that
	 * exchanges after us links into head, which we cleared above. */
	old_tail = orcu__xchg_acq_rel(&q->tail, &q->head);
	*first = h;
	/* Walk to the node whose next field was the tail, closing any link
	 * a producer has not stored yet. */
	while (&h->next != old_tail) {
		h = wait_link(&h->next);
		n++;
	}
	/* Its producer stored NULL before publishing it, and nobody was given
	 * its link to write: anything else is a second push of this node. */
	if (orcu__unlikely(orcu__link_load_relaxed(&h->next) != NULL))
		orcu__double_post_die(q, h, false);
	*last = h;
	return n;
}

/*
 * fork child: only the forking thread exists.  A producer that was caught
 * between its exchange and its link will never link, and take() would wait
 * for it forever: cut the queue at the first missing link.  The nodes behind
 * the gap are unreachable (their posters do not exist in this process).
 * Returns how many nodes the queue keeps.
 */
long orcu__mpsc_after_fork(struct orcu__mpsc *q)
{
	struct orcu_head **where = &q->head;
	struct orcu_head **tail = orcu__load_relaxed(&q->tail);
	long n = 0;

	while (where != tail) {
		struct orcu_head *h = orcu__link_load_relaxed(where);

		if (!h) {
			orcu__store_relaxed(&q->tail, where);
			break;
		}
		n++;
		where = &h->next;
	}
	return n;
}
