/*
 * test_nocbs_none_no_threads - ORCU_NOCBS=none starts no leader and no
 * follower, as a kernel booted without rcu_nocbs= starts no rcuo thread:
 * with ORCU_CPUS=possible=4,online=0-3 four threads bound to the four
 * slots post, orcu_barrier() runs every callback, and the library's
 * threads (comm starting with "orcu-") are at most the GP thread.  With
 * ORCU_NOCBS=all the same program runs the four slots' followers and
 * their leaders, as before.  Each case runs in a child of its own (the
 * configuration is per process).
 */
#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NSLOTS 4
#define PER_SLOT 100

static struct orcu_head heads[NSLOTS][PER_SLOT];
static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

static void *poster(void *arg)
{
	int cpu = (int)(long)arg;

	CHECK_EQ(orcu_register_thread(), 0);
	CHECK_EQ(orcu_thread_bind_cpu(cpu), 0);
	CHECK_EQ(orcu_current_cpu(), cpu);
	for (int i = 0; i < PER_SLOT; i++)
		orcu_call(&heads[cpu][i], cb);
	orcu_unregister_thread();
	return NULL;
}

static void print_threads(const char *nocbs, char names[][32], int n)
{
	printf("ORCU_NOCBS=%s: %d library thread(s):", nocbs, n);
	for (int i = 0; i < n && i < 16; i++)
		printf(" %s", names[i]);
	printf("\n");
	fflush(stdout);
}

static int run(const char *nocbs, bool none)
{
	pthread_t t[NSLOTS];
	char names[16][32];
	int n;

	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_NOCBS", nocbs, 1);
	for (long i = 0; i < NSLOTS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, poster, (void *)i), 0);
	for (int i = 0; i < NSLOTS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), NSLOTS * PER_SLOT);
	n = check_thread_names("orcu-", names, 16);
	print_threads(nocbs, names, n);
	if (none) {
		CHECK_LE(n, 1);
		for (int i = 0; i < n; i++)
			CHECK_EQ(strcmp(names[i], "orcu-gp"), 0);
	} else {
		int oc = 0, og = 0;

		for (int i = 0; i < n && i < 16; i++) {
			oc += strncmp(names[i], "orcu-oc/", 8) == 0;
			og += strncmp(names[i], "orcu-og/", 8) == 0;
		}
		CHECK_EQ(oc, NSLOTS);
		CHECK(og >= 1);
	}
	return 0;
}

static int run_none(void) { return run("none", true); }
static int run_all(void) { return run("all", false); }

int main(void)
{
	test_watchdog("test_nocbs_none_no_threads", 120);
	check_child_ok(check_fork_run(run_none), "ORCU_NOCBS=none", 60);
	check_child_ok(check_fork_run(run_all), "ORCU_NOCBS=all", 60);
	TEST_PASS("test_nocbs_none_no_threads");
}
