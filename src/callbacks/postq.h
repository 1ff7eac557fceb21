/*
 * postq.h - the interface of postq.c: a posting thread's own queue on one
 * slot (struct orcu__postq), its inline push, and who owns which queue
 * (the rules: postq.c points 4 to 7).
 */
#ifndef ORCU_POSTQ_H
#define ORCU_POSTQ_H

#include "os.h"
#include "cblist.h"

struct orcu__slot;

/* A posting thread's own queue on one slot (postq.c): the producer, its
 * owner, posts with plain stores; the consumer holds the slot's cb_lock.
 * Entries live in segments; position `posted` of the queue is entry
 * posted - base of the segment that holds it. */
#define ORCU__PSEG_N 62     /* entries per segment: 512 bytes */
#define ORCU__PSEG_SPARES 8 /* drained segments kept for the producer */

struct orcu__pseg {
	/* The next segment (producer links it, release, before publishing
	 * into it); in a free list, the next free one. */
	struct orcu__pseg *_Atomic next;
	unsigned long base; /* position of e[0] */
	struct orcu_head *_Atomic e[ORCU__PSEG_N];
};

struct orcu__postq {
	/* --- the owner's line: written by the owning thread only --- */
	struct orcu__pseg *pseg ORCU__ALIGNED; /* holds position posted - 1 (or posted) */
	struct orcu__pseg *pfree;              /* spare segments taken from `spare` */
	struct orcu_head *newest;              /* the last head posted (double posts) */
	_Atomic unsigned long posted;          /* heads published (release store) */
	/* --- the consumer's line: under the slot's cb_lock --- */
	struct orcu__pseg *cseg ORCU__ALIGNED; /* holds position taken (or taken - 1) */
	_Atomic unsigned long taken;           /* heads taken into the slot's list (release) */
	unsigned long snap;                    /* posted, read at the start of a splice */
	int nspare;                            /* about how many are in `spare` */
	/* the last head a take linked into the slot's list, and its place
	 * there (the slot's inv.n_listed once it was in): posted again
	 * before the slot's invoker started it, it is left out (postq.c) */
	struct orcu_head *last;
	unsigned long last_ord;
	/* --- written rarely: ownership, the free segments --- */
	struct orcu__pseg *_Atomic spare ORCU__ALIGNED; /* consumer pushes, producer takes all */
	struct orcu__postq *next;                       /* the slot's list: set before the push, fixed */
	struct orcu__slot *slot;                        /* fixed */
	_Atomic int owned;                              /* 1 while a thread posts to it (point 4) */
};

struct orcu__postq *orcu__postq_new(struct orcu__slot *s);
/* The owner's next segment, once pseg is full; NULL when memory is short. */
struct orcu__pseg *orcu__postq_next_seg(struct orcu__postq *q);
long orcu__postq_take(struct orcu__postq *q, unsigned long upto,
		      struct orcu_head **first, struct orcu_head **last);
/* Ownership (postq.c points 4 to 7). */
struct orcu__postq *orcu__postq_switch(struct orcu__slot *s, bool *claimed);
bool orcu__postq_drained(struct orcu__postq *q);
void orcu__postq_after_fork(struct orcu__slot *s);
void orcu__postq_thread_exit(void); /* lifecycle.c: this thread ends */
void orcu__postq_unload(void);      /* lifecycle.c: the image goes */

/* Owner only: publish h (its func set by the caller).  Returns the new
 * count of heads posted, or 0, having written nothing, when its segment is
 * full (the caller gets the next one with orcu__postq_next_seg() and
 * tries again).  Plain stores to the queue only, none to h, and one release
 * store (postq.c point 1). */
static inline unsigned long orcu__postq_push(struct orcu__postq *q, struct orcu_head *h)
{
	unsigned long p = orcu__load_relaxed(&q->posted);
	struct orcu__pseg *seg = q->pseg;

	if (orcu__unlikely(p - seg->base == ORCU__PSEG_N))
		return 0;
	/* Not h->next: the consumer clears it (postq.c point 1). */
	orcu__store_relaxed(&seg->e[p - seg->base], h);
	q->newest = h;
	/* Release: h and its entry are written before a consumer that reads
	 * the count takes them.  Pairs with the acquire in
	 * orcu__postq_published(). */
	orcu__store_release(&q->posted, p + 1);
	return p + 1;
}

/* Heads published so far.  Pairs with the release in orcu__postq_push(). */
static inline unsigned long orcu__postq_published(struct orcu__postq *q)
{
	return orcu__load_acquire(&q->posted);
}

#endif
