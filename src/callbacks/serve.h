/*
 * serve.h - the interface of serve.c, the server rule: who serves a slot
 * without threads, the start and retry of the threads, and the safe
 * point of an application thread.
 */
#ifndef ORCU_SERVE_H
#define ORCU_SERVE_H

#include "os.h"
#include "gp.h"

struct orcu__slot;

/* serve.c: the in-place engine (who serves a slot no leader scans), the
 * start and retry of the threads; above cpu.c and nocb.c. */
int orcu__serve_start_locked(void);                 /* under orcu__g.lock: 0 or -EAGAIN */
void orcu__retry(bool wait);                        /* stopped: start; degraded: retry if due */
void orcu__serve_posted(struct orcu__slot *s);      /* work on s, which no leader scans */
void orcu__serve_kick(struct orcu__slot *s);        /* s has work for its server */
void orcu__serve_after_batch(struct orcu__slot *s); /* a batch at a quiescent point left work */
void orcu__serve_waited(void);                      /* after an application thread's GP wait */
void orcu__serve_gp_asked(void);                    /* orcu_start_poll() and no GP thread */
void orcu__serve_after_stop(void);                  /* orcu_shutdown(), threads joined */
void orcu__serve_mark_pending(void);                /* fork child, late configuration */
void orcu__serve_gp_turn(bool serve);               /* orcu__gp_serve_hook */
void orcu__safe_point_slow(void);                   /* entry.h orcu__quiescent_point() */

/* Threads are missing, or work waits for a waiter (serve.c): two relaxed
 * loads of words nobody writes while the threads run. */
static inline bool orcu__serve_wanted(void)
{
	return orcu__unlikely(orcu__load_relaxed(&orcu__g.unserved) |
			      orcu__load_relaxed(&orcu__g.degraded));
}

#endif
