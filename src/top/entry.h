/*
 * entry.h - the interface of entry.c: first use (configure, start) and an
 * application thread's quiescent point.
 */
#ifndef ORCU_ENTRY_H
#define ORCU_ENTRY_H

#include "os.h"
#include "serve.h"

/* entry.c: first use (configure) and the quiescent-point in-place polls. */
int orcu__ensure_init(void); /* slots exist (no threads): 0 or -ENOMEM */
int orcu__ensure_started_slow(void);
void orcu__inplace_poll_slow(void);

/* The GP thread and the slots' threads exist (or were tried): 0, or
 * -EAGAIN.  Pairs with the release store of `started` in
 * orcu__serve_start_locked() (serve.c). */
static inline int orcu__ensure_started(void)
{
	if (orcu__likely(orcu__load_acquire(&orcu__g.started)))
		return 0;
	return orcu__ensure_started_slow();
}

/* What an application thread does for orcu at each of its quiescent
 * points (orcu_quiescent_state(), orcu_thread_online/offline()): a batch
 * of what its in-place slot offers (nothing to do while every slot is
 * attached), then the safe point's work: when no GP thread runs, it
 * serves the in-place slots and the GPs asked for, and retries missing
 * threads (serve.c). */
static inline void orcu__quiescent_point(void)
{
	if (orcu__unlikely(orcu__load_relaxed(&orcu__g.nr_inplace)))
		orcu__inplace_poll_slow();
	if (orcu__serve_wanted())
		orcu__safe_point_slow();
}

#endif
