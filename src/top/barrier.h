/*
 * barrier.h - the interface of barrier.c: the timed barrier and the
 * barrier's fork handlers.
 */
#ifndef ORCU_BARRIER_H
#define ORCU_BARRIER_H

#include "os.h"

/* barrier.c */
int orcu__barrier_timed(int64_t deadline_ns);
void orcu__barrier_fork_lock(void);
void orcu__barrier_fork_unlock(void); /* the parent's and the child's */

#endif
