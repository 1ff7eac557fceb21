/*
 * free.h - the interface of free.c (orcu_free, orcu_retire) to the
 * modules beside it: the flush of every thread's open batches, and its
 * fork handlers.
 */
#ifndef ORCU_FREE_H
#define ORCU_FREE_H

#include "os.h"

/* free.c: post every thread's open batches now; returns how many. */
int orcu__free_flush_all(void);
/* barrier.c, once its callbacks ran: wait until the posters that claimed
 * a batch (free.c point 6) have deleted it; 0, or -ETIMEDOUT past
 * deadline_ns (orcu__now_ns(); -1: none). */
int orcu__free_wait_deleters(int64_t deadline_ns);
void orcu__free_fork_prepare(void);
void orcu__free_fork_parent(void);
void orcu__free_fork_child(void);
void orcu__free_thread_exit(void); /* lifecycle.c: this thread ends */
void orcu__free_unload(void);      /* lifecycle.c: the image goes */

#endif
