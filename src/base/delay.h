/*
 * delay.h - the interface of delay.c: the debug delay points and the
 * thread census of the validation hooks.
 */
#ifndef ORCU_DELAY_H
#define ORCU_DELAY_H

#include "os.h"

/* debug delay hooks (delay.c): widen race windows under torture */
enum orcu__delay_point {
	ORCU__DELAY_GP_START,
	ORCU__DELAY_GP_END,
	ORCU__DELAY_LEADER_SLEEP,
	ORCU__DELAY_BARRIER,
	ORCU__DELAY_ENQUEUE,
	ORCU__DELAY_SHARED_POST, /* counted in post.n_posted, not yet pushed (call.c) */
	ORCU__DELAY_GP_SKIP,     /* read no reader, not yet swapped gp_seq (gp.c) */
	ORCU__DELAY_MEMB_UNPARK, /* a memb reader unparking, before its fence (registry.c) */
	ORCU__DELAY_NPOINTS
};
extern _Atomic int orcu__delay_enabled;
void orcu__delay_slow(enum orcu__delay_point p);
/* Tests: call hook at every delay point instead of the random delays, to
 * hold one thread at one point (NULL: back to orcu_debug_set_delays()). */
void orcu__delay_set_hook(void (*hook)(enum orcu__delay_point p));
/* This process's threads still running (delay.c) whose name starts with
 * one of prefixes (NULL-terminated); the first max names go to names.
 * -1 without /proc.  orcu_debug_thread_count() and the tests use it. */
int orcu__thread_names(const char *const *prefixes, char names[][32], int max);
static inline void orcu__delay(enum orcu__delay_point p)
{
	if (orcu__unlikely(orcu__load_relaxed(&orcu__delay_enabled)))
		orcu__delay_slow(p);
}

#endif
