/*
 * seq.h - grace-period sequence arithmetic.  A sequence counts by two per
 * grace period: even = idle, odd = a GP in progress.  All comparisons are
 * wrap-safe (signed difference), so the counter may wrap freely.
 * Owns nothing; used by gp.c, slot.c, nocb.c, barrier.c and cblist.c.
 */
#ifndef ORCU_SEQ_H
#define ORCU_SEQ_H

#include <stdbool.h>

#define ORCU__SEQ_STATE_MASK 1UL

/* a >= b, wrap-safe */
static inline bool orcu__seq_ge(unsigned long a, unsigned long b)
{
	return (long)(a - b) >= 0;
}

/* a < b, wrap-safe */
static inline bool orcu__seq_lt(unsigned long a, unsigned long b)
{
	return (long)(a - b) < 0;
}

static inline bool orcu__seq_in_progress(unsigned long s)
{
	return (s & ORCU__SEQ_STATE_MASK) != 0;
}

/*
 * The value the counter must reach for one full GP to have elapsed after
 * the moment s was read: the end of the next GP to start.
 */
static inline unsigned long orcu__seq_snap(unsigned long s)
{
	return (s + 2 * ORCU__SEQ_STATE_MASK + 1) & ~ORCU__SEQ_STATE_MASK;
}

/* Has the counter cur reached the snapshot target? */
static inline bool orcu__seq_done(unsigned long cur, unsigned long target)
{
	return orcu__seq_ge(cur, target);
}

/* Start and end of a GP: the counter moves to odd, then to even. */
static inline unsigned long orcu__seq_start(unsigned long s)
{
	return s + 1;
}

static inline unsigned long orcu__seq_end(unsigned long s)
{
	return (s | ORCU__SEQ_STATE_MASK) + 1;
}

#endif
