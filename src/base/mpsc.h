/*
 * mpsc.h - the interface of mpsc.c: the lock-free multi-producer,
 * single-consumer callback FIFO of a slot's shared queues.
 */
#ifndef ORCU_MPSC_H
#define ORCU_MPSC_H

#include "os.h"

/* A lock-free multi-producer, single-consumer FIFO of callbacks.
 * Producers exchange the tail and then link; the consumer (holding the
 * slot's cb_lock) takes everything at once, waiting out a producer caught
 * between its exchange and its link. */
struct orcu__mpsc {
	struct orcu_head *head;          /* first node; __atomic accesses */
	struct orcu_head **_Atomic tail; /* producers: the next field to link */
};

void orcu__mpsc_init(struct orcu__mpsc *q);
/* Returns true if the queue was empty before this push. */
bool orcu__mpsc_push(struct orcu__mpsc *q, struct orcu_head *h);
bool orcu__mpsc_empty(struct orcu__mpsc *q);
long orcu__mpsc_after_fork(struct orcu__mpsc *q); /* fork child: repair, count */
/* Takes everything; returns count and the chain [*first..*last]. */
long orcu__mpsc_take(struct orcu__mpsc *q, struct orcu_head **first,
		     struct orcu_head **last);

#endif
