/*
 * test_unload_static_plugin - a plugin that links liborcu.a cleans up in
 * its own destructor, as API.md tells a plugin to before it is unloaded
 * (lifecycle.c point 7): orcu_barrier(), orcu_free(), or a C++ global's
 * destructor calling rcu_retire() and rcu_barrier().  orcu's code and its
 * unload step are then part of the plugin, and the unload step must come
 * after the plugin's own destructors: it used to come first, so the
 * plugin's cleanup started orcu's threads again in code about to be
 * unmapped (the host crashed later).  After dlclose() the plugin is
 * unmapped, no orcu thread is left, and every callback and deleter ran.
 * Each mode in a child of its own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define N 500

enum { MODE_BARRIER, MODE_FREE, MODE_RETIRE };

typedef long (*post_fn)(long, int, _Atomic long *);

static _Atomic long counter;
static int mode;

static int find_plugin(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	return strstr(info->dlpi_name, "orcu_test_plugin_static") != NULL;
}

static int unload_child(void)
{
	void *dl;
	post_fn post;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	dl = check_dlopen(ORCU_TEST_PLUGIN_STATIC);
	post = (post_fn)(uintptr_t)check_dlsym(dl, "plugin_post");
	CHECK_EQ(post(N, mode, &counter), N);
	CHECK(check_thread_names("orcu-", NULL, 0) > 0);
	CHECK_EQ(dlclose(dl), 0);
	CHECK(dl_iterate_phdr(find_plugin, NULL) == 0);
	/* A joined thread may stay listed a moment after its join. */
	CHECK_WAIT_UNTIL(check_thread_names("orcu-", NULL, 0) == 0, 10);
	CHECK_EQ(atomic_load(&counter), N + (mode == MODE_RETIRE));
	return 0;
}

int main(void)
{
	static const char *const names[] = {
		"orcu_barrier() in the plugin's destructor",
		"orcu_free() in the plugin's destructor",
		"rcu_retire() + rcu_barrier() in a C++ global's destructor",
	};
	int failed = 0, modes = ORCU_TEST_PLUGIN_CXX ? 3 : 2;

	test_watchdog("test_unload_static_plugin", 120);
	for (mode = 0; mode < modes; mode++) {
		bool ok = check_child_passed(check_fork_run(unload_child), names[mode], 30);

		printf("%-60s %s\n", names[mode], ok ? "ok" : "FAILED");
		failed += !ok;
	}
	CHECK_EQ(failed, 0);
	TEST_PASS("test_unload_static_plugin");
}
