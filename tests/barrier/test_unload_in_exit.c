/*
 * test_unload_in_exit - a dlclose() made inside exit() (lifecycle.c
 * point 7).  A host registers its "unload the plugins" atexit handler,
 * then dlopen()s a plugin that links liborcu.so, the usual order: orcu's
 * own atexit handler, registered when liborcu was loaded, runs first.
 * The plugin posts callbacks into its own code; the host's handler calls
 * the plugin's exit path (orcu_barrier()) and dlclose()s it, which drops
 * liborcu too.  No orcu thread may then run in an unmapped image: either
 * liborcu stays mapped until the process ends, or its threads are gone.
 * It used to be unmapped under them (the unload took the exit for its
 * own and skipped the joins): an orcu-og thread returned into unmapped
 * code, SIGSEGV at exit.  Several rounds, each in a child of its own,
 * which must end with status 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define N 2000
#define ROUNDS 5

typedef long (*post_fn)(long, int, _Atomic long *);
typedef long (*invoked_fn)(void);
typedef void (*fini_fn)(void);

static void *plugin;
static long posted;
static _Atomic long counter;

/* Inside exit(): a failed check leaves at once (exit() again would be
 * undefined). */
#define EXIT_CHECK(n, cond) do { if (!(cond)) { \
	fprintf(stderr, "at exit: check failed: %s\n", #cond); _exit(n); } } while (0)

static int find_liborcu(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	return strstr(info->dlpi_name, "liborcu.so") != NULL;
}

static bool liborcu_mapped(void)
{
	return dl_iterate_phdr(find_liborcu, NULL) != 0;
}

/* The host's handler, registered before liborcu was loaded. */
static void unload_plugins(void)
{
	fini_fn fini = (fini_fn)(uintptr_t)dlsym(plugin, "plugin_fini");
	invoked_fn invoked = (invoked_fn)(uintptr_t)dlsym(plugin, "plugin_invoked");
	double deadline;

	EXIT_CHECK(2, fini && invoked);
	fini();
	EXIT_CHECK(3, invoked() == posted);
	EXIT_CHECK(4, check_thread_names("orcu-", NULL, 0) > 0);
	EXIT_CHECK(5, dlclose(plugin) == 0);
	if (liborcu_mapped())
		return;
	/* Unmapped: its threads must be gone (a joined thread may stay
	 * listed a moment). */
	deadline = check_now_s() + check_timeout_s(10);
	while (check_thread_names("orcu-", NULL, 0) > 0) {
		if (check_now_s() > deadline) {
			fprintf(stderr, "at exit: liborcu unmapped under %d orcu thread(s)\n",
				check_thread_names("orcu-", NULL, 0));
			_exit(6);
		}
		sched_yield();
	}
	EXIT_CHECK(7, atomic_load(&counter) == posted);
}

static int round_child(void)
{
	post_fn post;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	CHECK_EQ(atexit(unload_plugins), 0);
	CHECK(!liborcu_mapped());
	plugin = check_dlopen(ORCU_TEST_PLUGIN_LINKED);
	CHECK(liborcu_mapped());
	post = (post_fn)(uintptr_t)check_dlsym(plugin, "plugin_post");
	posted = post(N, 5, &counter);
	CHECK_EQ(posted, N);
	exit(0);
}

int main(void)
{
	int failed = 0;

	test_watchdog("test_unload_in_exit", 120);
	for (int r = 0; r < ROUNDS; r++) {
		char what[32];

		snprintf(what, sizeof(what), "round %d", r);
		failed += !check_child_passed(check_fork_run(round_child), what, 30);
	}
	printf("dlclose() of a liborcu plugin inside exit(): %d of %d rounds failed\n",
	       failed, ROUNDS);
	CHECK_EQ(failed, 0);
	TEST_PASS("test_unload_in_exit");
}
