/*
 * scenario_child.h - deadlock regression scenarios, each in its own forked
 * child so that a hang fails the test instead of hanging CTest:
 *
 *  - scen_run(): fork, run one scenario in the child (which starts orcu
 *    from scratch: the parent never calls orcu), wait a bounded time;
 *    on timeout kill it and report "deadlock in <scenario>".  With
 *    ORCU_TEST_SCENARIO=<name> in the environment, only that one runs.
 *  - a process a scenario itself forks is waited for with
 *    check_wait_child() (check.h), the same bounded wait; it should arm
 *    alarm() too, in case its parent is the one that hangs.
 *  - counted callbacks: every head carries its own counter, so a lost or
 *    a doubled invocation are both caught; a head may run a hook first
 *    (the scenario's callback that calls back into the library).
 *
 * The including test includes <orcu.h> and common_pipe.h first.  The
 * functions are compiled once, in tests/support/scenario_child.c.
 */
#ifndef ORCU_TEST_SCENARIO_CHILD_H
#define ORCU_TEST_SCENARIO_CHILD_H

#define SCEN_MAX_CB 4096

struct counted {
	struct orcu_head head;   /* first: the callback casts back */
	int idx;
	void (*hook)(void);      /* run before the count, or NULL */
};

/* Every counted callback posted (scen_posted of them) and how often each ran. */
extern struct counted scen_cb[SCEN_MAX_CB];
extern atomic_int scen_ran[SCEN_MAX_CB];
extern atomic_int scen_posted;

/* Post one counted callback (on the caller's current slot); returns it. */
struct counted *post_counted(void (*hook)(void));

/* Post n counted callbacks from CPU slot cpu. */
void post_counted_on(int cpu, int n);

/* After orcu_barrier(): every callback posted so far ran exactly once. */
void check_all_ran_once(void);

/* Run fn in a fresh child; true if it exited 0 in time. */
bool scen_run(const char *name, int (*fn)(void), double base_s);

#endif
