/*
 * test_lying_topology - DESIGN 5.5 (the "hundreds of threads on a few CPUs"
 * report): with firmware claiming 4096 possible CPUs and 4 online, orcu runs
 * at most 1 GP thread + the leaders of groups with an online slot + one
 * follower per online slot: with the default stride 64, 1 + 1 + 4.  The
 * names are exactly orcu-gp, orcu-og/0, orcu-oc/0..3.  Binding a thread to
 * a far-away possible slot does not online it or grow threads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include <orcu/debug.h>

#include <dirent.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define MAX_LIB 16

static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

/* Collect the comm names of orcu-* threads; returns how many. */
static int lib_threads(char names[][32], int max)
{
	return check_thread_names("orcu-", names, max);
}

static bool allowed(const char *name)
{
	static const char *const ok[] = { "orcu-gp", "orcu-og/0", "orcu-oc/0",
		"orcu-oc/1", "orcu-oc/2", "orcu-oc/3" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(name, ok[i]) == 0)
			return true;
	return false;
}

static int count_named(void)
{
	char names[MAX_LIB][32];
	int n = lib_threads(names, MAX_LIB);

	return n;
}

int main(void)
{
	static struct orcu_head heads[4][50], far_heads[10];
	struct orcu_stats st;
	char names[MAX_LIB][32];
	int n;

	setenv("ORCU_CPUS", "possible=4096,online=0-3", 1);
	unsetenv("ORCU_NOCBS");
	unsetenv("ORCU_NOCB_STRIDE");
	CHECK_EQ(orcu_register_thread(), 0);

	/* Work on every online slot. */
	for (int c = 0; c < 4; c++) {
		CHECK_EQ(orcu_thread_bind_cpu(c), 0);
		for (int i = 0; i < 50; i++)
			orcu_call(&heads[c][i], cb);
	}
	/* A thread bound to a far slot that never comes online. */
	CHECK_EQ(orcu_thread_bind_cpu(4000), 0);
	CHECK_EQ(orcu_current_cpu(), 4000);
	orcu_thread_bind_cpu(-1);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 200);

	/* Wait until all six have started and named themselves. */
	CHECK_WAIT_UNTIL(count_named() == 6, 10);
	n = lib_threads(names, MAX_LIB);
	CHECK_EQ(n, 6);
	for (int i = 0; i < n; i++) {
		if (!allowed(names[i])) {
			fprintf(stderr, "unexpected library thread \"%s\"\n", names[i]);
			CHECK(allowed(names[i]));
		}
	}
	CHECK_LE(orcu_debug_thread_count(), 1 + 1 + 4);
	orcu_get_stats(&st);
	CHECK_EQ(st.slots_possible, 4096);
	CHECK_EQ(st.slots_online, 4);
	CHECK_LE(st.threads_alive, 1 + 1 + 4);
	CHECK_LE(st.leaders_alive, 1);
	CHECK_LE(st.followers_alive, 4);

	/* Callbacks on a far never-onlined slot are served in place
	 * (DESIGN 5.3): still no new thread. */
	CHECK_EQ(orcu_thread_bind_cpu(4000), 0);
	for (int i = 0; i < 10; i++)
		orcu_call(&far_heads[i], cb);
	orcu_thread_bind_cpu(-1);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 210);
	CHECK_EQ(lib_threads(names, MAX_LIB), 6);
	orcu_get_stats(&st);
	CHECK_EQ(st.slots_online, 4);
	CHECK_LE(st.threads_alive, 6);

	orcu_unregister_thread();
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
	TEST_PASS("lying_topology");
}
