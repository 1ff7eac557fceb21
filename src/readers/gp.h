/*
 * gp.h - the interface of gp.c, the grace-period engine: gp_seq, the
 * request and drive calls, the GP thread and the hooks up to the
 * callback layer.
 */
#ifndef ORCU_GP_H
#define ORCU_GP_H

#include "os.h"

/* gp.c */
extern _Atomic unsigned long orcu__gp_seq;
/* The calls from gp.c up to the callback layer, set by entry.c: the
 * end hook, orcu__nocb_gp_done(), with gp_seq at the end of every GP, on
 * the thread that ended it; the serve hook, orcu__serve_gp_turn(), on the
 * GP thread (serve true) when callbacks wait on slots without threads or
 * a retry is due, and after a GP end while the library runs degraded
 * (serve false: a retry only). */
ORCU__HIDDEN extern void (*_Atomic orcu__gp_end_hook)(unsigned long seq);
ORCU__HIDDEN extern void (*_Atomic orcu__gp_serve_hook)(bool serve);
/* Defined only by validation programs (orcu-torture, tests): nonzero makes
 * grace periods end without waiting for readers, the "busted" flavor the
 * torture oracle must catch.  Not defined by, nor exported from, the
 * library. */
int orcu_test_gp_busted(void) __attribute__((weak));
/* How soon a requested GP must start: BATCH lets callback-only demand
 * wait up to ORCU_GP_BATCH_US after the previous GP so one GP serves more
 * callbacks; NOW is for waiters; HURRY also expedites the reader wait. */
enum orcu__gp_how {
	ORCU__GP_BATCH,
	ORCU__GP_NOW,
	ORCU__GP_HURRY
};
/* False if no GP thread runs to serve it (gp.c point 6). */
bool orcu__gp_request(unsigned long target, enum orcu__gp_how how);
/* Drive GPs up to every target asked for, on this thread (gp.c point 6);
 * true if there was one.  The caller may block. */
bool orcu__gp_run_requested(void);
/* Run GPs on the calling thread (or wait for the thread running one)
 * until gp_seq reaches target.  The caller may block. */
void orcu__gp_drive(unsigned long target, bool hurry);
bool orcu__gp_thread_running(void);
void orcu__gp_thread_serving(bool on); /* the GP thread runs callbacks (serve.c) */
void orcu__gp_kick(void);              /* wake the GP thread (serve.c has work) */
void orcu__gp_set_unbatched(bool on);  /* a barrier waits: no batch window */
unsigned long orcu__gp_snap(void);     /* fence, then the end of the next GP */
uint64_t orcu__gp_thread_cpu_ns(void);
int orcu__gp_start_thread(void);
void orcu__gp_stop_thread(void);
void orcu__gp_after_fork_child(void);

#endif
