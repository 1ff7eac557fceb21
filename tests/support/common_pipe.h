/*
 * common_pipe.h - shared helpers of orcu's core tests:
 *
 *  - test_watchdog(): an in-test alarm, so a hung grace period fails the
 *    test with a clear message instead of waiting for the CTest timeout.
 *  - the age ("pipe count") oracle of the GP guarantee, after rcutorture:
 *    writers replace one published element at full speed and retire the
 *    old one through a pipeline of grace periods (orcu_call re-posting
 *    itself, orcu_synchronize, orcu_synchronize_expedited or the polled
 *    API).  Each stage ages the element by one; age 1 means "removed, no GP
 *    has ended since".  A reader that still holds an element of age >= 2,
 *    or one that was recycled (generation changed) or poisoned, has seen a
 *    grace period end while it was inside its critical section: the GP was
 *    too short.  Elements live in a fixed pool and are never returned to
 *    malloc, so even a broken engine makes the oracle report, not crash.
 *  - run_child(): run a function in a forked child with stderr captured,
 *    returning its wait status and its stderr text (misuse and config
 *    tests).
 *
 * The including test must include <orcu.h> (with or without ORCU_QSBR)
 * before this header.  The helpers are compiled once, in tests/support/pipe.c
 * (the orcu_test_support library every test links).
 */
#ifndef ORCU_TEST_COMMON_PIPE_H
#define ORCU_TEST_COMMON_PIPE_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <orcu/debug.h>

#include "check.h"

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* The age oracle */

#define PIPE_LEN 3                 /* GPs an element goes through before reuse */

struct pipe_cfg {
	int memb_readers;
	int qsbr_readers;
	int switch_readers;    /* alternate memb / qsbr registration */
	int call_writers;      /* retire through orcu_call (re-posting) */
	int sync_writers;      /* retire through orcu_synchronize */
	int exp_writers;       /* retire through orcu_synchronize_expedited */
	int memb_sync_writers; /* orcu_synchronize from a memb reader that reads */
	int poll_writers;      /* retire through start_poll/poll_state/cond_synchronize */
	unsigned long_hold_us; /* occasional long hold inside a section (0: 200) */
	unsigned long_every;   /* one read in long_every holds long (0: 64) */
};

struct pipe_result {
	unsigned long reads, errors, updates;
	unsigned long hist[PIPE_LEN + 1];  /* ages seen; last bucket: poisoned */
	unsigned long gen_changed;
	unsigned long gps;                 /* gp_completed during the run */
};

/* Readers that saw a grace period end inside their section, this run. */
extern atomic_ulong pipe_errors;

/* Grace periods completed so far (orcu_get_stats). */
uint64_t pipe_gps_now(void);

/* Start readers and writers.  The pool is (re)filled on the first call. */
void pipe_start(const struct pipe_cfg *cfg);

/* Stop, join, drain every retiring element, and check none was lost. */
void pipe_stop_run(struct pipe_result *res);

void pipe_print(const char *name, const struct pipe_result *r);

/* Run for seconds, then check the guarantee held and work was done. */
void pipe_run_checked(const char *name, const struct pipe_cfg *cfg, double seconds);

/* ------------------------------------------------------------------ */
/* Child processes with captured stderr */

struct child_result {
	int status;          /* waitpid status */
	char err[4096];      /* its stderr */
	int lines;           /* newline count in err */
};

/* Run fn in a forked child whose stderr goes to a pipe; the child exits
 * with fn's return value.  Bounded: the child is killed after timeout_s. */
void run_child(int (*fn)(void *), void *arg, double timeout_s, struct child_result *res);

/* run_child(fn, arg), which must die of SIGABRT having written exactly one
 * line starting "orcu: <call>: " (a caught misuse); else the test fails,
 * naming the case.  Prints the case and the line. */
void expect_child_abort(const char *name, int (*fn)(void *), void *arg, const char *call);

#endif
