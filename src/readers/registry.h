/*
 * registry.h - the interface of registry.c: reader records, the reader
 * wait of a grace period, and the checks of a caller about to wait.
 */
#ifndef ORCU_REGISTRY_H
#define ORCU_REGISTRY_H

#include "os.h"

/* registry.c */
void orcu__registry_lock(void);
void orcu__registry_unlock(void);
/* Wait until no reader holds the GP that gp.c is running (called by gp.c). */
void orcu__registry_wait_readers(bool expedited, uint64_t gp_start_ns);
void orcu__registry_after_fork_child(void);
void orcu__registry_thread_exit(void); /* lifecycle.c: this thread ends */
bool orcu__registry_has_readers(void);
bool orcu__registry_swap_if_none(_Atomic unsigned long *seq, unsigned long cur,
				 unsigned long next);
bool orcu__qsbr_enter_for_callbacks(void);
/* Misuse checks of a caller about to wait for a GP or for callbacks. */
void orcu__gp_check_caller(const char *call);
bool orcu__qsbr_offline_for_wait(void);
/* A memb thread that waits for a GP (orcu__gp_drive()) is in no section:
 * parked, it costs a GP no membarrier() and no wait.  park returns true
 * if it parked the caller; unpark undoes it (also safe if not parked). */
bool orcu__memb_park(void);
void orcu__memb_unpark(void);
void orcu__qsbr_leave_for_callbacks(bool entered);
void orcu__membarrier_init(void);
/* The halves of the public calls that entry.c completes. */
int orcu__register(int kind, const char *call);
void orcu__registry_read_lock_slow(void);
void orcu__qsbr_quiescent_state(void);
void orcu__qsbr_offline(void);
void orcu__qsbr_online(void);
void orcu__membarrier_master(void);
ORCU__HIDDEN extern void (*orcu__reader_barrier_hook)(int cpu);

#endif
