/*
 * test_early_slot - DESIGN 5.1, kernel commit 11ed7f934cb8: early callbacks are never lost.
 * Callbacks are posted from a constructor (before main, before any
 * orcu_init) on a slot that is possible but not online, so neither its
 * follower nor its group's leader exists.  They must be kept, and invoked
 * exactly once within a bounded time without anyone calling orcu_barrier()
 * (the GP thread serves them in place: one report line), and no thread may be
 * created for that slot.  When the slot later comes up, its new leader
 * and follower serve it from their first scan.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include <orcu/debug.h>

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define EARLY_SLOT 5
#define N_EARLY 100
#define N_ONLINE 20

static struct orcu_head early[N_EARLY], online_heads[N_ONLINE];
static atomic_int early_invoked, online_invoked;
static atomic_int early_twice;
static int early_seen[N_EARLY];

static void early_cb(struct orcu_head *h)
{
	int i = (int)(h - early);

	if (early_seen[i]++)
		atomic_fetch_add(&early_twice, 1);
	atomic_fetch_add(&early_invoked, 1);
}

static void online_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&online_invoked, 1);
}

__attribute__((constructor)) static void post_early(void)
{
	/* Before main: the first orcu call of the process happens here. */
	setenv("ORCU_CPUS", "possible=8,online=0-1", 1);
	unsetenv("ORCU_NOCBS");            /* default: all offloaded */
	unsetenv("ORCU_NOCB_STRIDE");      /* default sqrt(8) = 2: groups of 2 */
	if (orcu_thread_bind_cpu(EARLY_SLOT) != 0)
		abort();
	for (int i = 0; i < N_EARLY; i++)
		orcu_call(&early[i], early_cb);
	orcu_thread_bind_cpu(-1);
}

/* Does a library thread with exactly this name exist? */
static int has_thread(const char *name)
{
	char names[64][32];
	int n = check_thread_names(name, names, 64);

	for (int i = 0; i < n && i < 64; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

int main(void)
{
	struct orcu_stats st;

	/* The machinery for the online slots runs; slot 5 has no thread (its
	 * callbacks are being served in place meanwhile). */
	CHECK_EQ(orcu_current_cpu() >= 0, 1);
	CHECK_WAIT_UNTIL(has_thread("orcu-oc/0") && has_thread("orcu-oc/1"), 10);
	CHECK(!has_thread("orcu-oc/5"));
	CHECK(!has_thread("orcu-og/4"));    /* slot 5's group leader */
	orcu_get_stats(&st);
	CHECK_EQ(st.slots_online, 2);
	/* gp + og/0 + oc/0 + oc/1: nothing for the offline groups. */
	CHECK_LE(orcu_debug_thread_count(), 4);

	/* Kept and invoked once, with no barrier and no thread for slot 5. */
	CHECK_WAIT_UNTIL(atomic_load(&early_invoked) == N_EARLY, 20);
	CHECK_EQ(atomic_load(&early_twice), 0);
	/* An invoker counts a chain once its last callback returned: the
	 * count reaches 0 just after the callbacks ran. */
	CHECK_WAIT_UNTIL(orcu_slot_pending(EARLY_SLOT) == 0, 20);
	orcu_get_stats(&st);
	CHECK_EQ(st.adopted_callbacks, N_EARLY);
	CHECK(!has_thread("orcu-oc/5"));
	CHECK(!has_thread("orcu-og/4"));

	/* Online slots work normally meanwhile. */
	orcu_thread_bind_cpu(0);
	for (int i = 0; i < N_ONLINE; i++)
		orcu_call(&online_heads[i], online_cb);
	orcu_thread_bind_cpu(-1);
	CHECK_WAIT_UNTIL(atomic_load(&online_invoked) == N_ONLINE, 10);

	/* The slot comes up: its own threads now serve what is posted there. */
	CHECK_EQ(orcu_cpu_online(EARLY_SLOT), 0);
	CHECK_WAIT_UNTIL(has_thread("orcu-oc/5") && has_thread("orcu-og/4"), 10);
	orcu_thread_bind_cpu(EARLY_SLOT);
	for (int i = 0; i < N_ONLINE; i++)
		orcu_call(&online_heads[i], online_cb);
	orcu_thread_bind_cpu(-1);
	CHECK_WAIT_UNTIL(atomic_load(&online_invoked) == 2 * N_ONLINE, 10);
	/* The invoker counts them once the last has returned: a barrier
	 * makes sure it did. */
	orcu_barrier();
	orcu_get_stats(&st);
	CHECK_EQ(st.adopted_callbacks, N_EARLY);   /* nothing more adopted */
	CHECK_EQ(st.callbacks_invoked, N_EARLY + 2 * N_ONLINE);
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
	TEST_PASS("early_slot");
}
