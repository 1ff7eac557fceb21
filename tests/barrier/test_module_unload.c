/*
 * test_module_unload - DESIGN 5.6: unloading code is safe.  A real plugin
 * (liborcu_test_plugin.so, dlopen'ed) posts callbacks that point into its
 * own code, from several slots, some lazy, while a GP is held open by a
 * reader so none can have run yet.  Its exit path calls orcu_barrier();
 * then the test dlclose()s it and checks the object is really unmapped.
 * Every callback must have run before the close (count complete at once)
 * and none after (count stable; a late one would jump into unmapped code
 * and crash the test).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include <orcu/debug.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define PER_SLOT 2500
#define NSLOTS 4

typedef long (*post_fn)(long, int, _Atomic long *);
typedef long (*invoked_fn)(void);
typedef void (*fini_fn)(void);

static _Atomic long counter;
static atomic_int reader_go, reader_release, reader_done;

/* Keep every orcu symbol the plugin needs in the executable's export table. */
void *volatile orcu_test_keep[] = {
	(void *)orcu_call, (void *)orcu_call_lazy, (void *)orcu_barrier,
};

static void *reader(void *arg)
{
	(void)arg;
	orcu_register_thread();
	orcu_read_lock();
	atomic_store(&reader_go, 1);
	while (!atomic_load(&reader_release)) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	orcu_read_unlock();
	orcu_unregister_thread();
	atomic_store(&reader_done, 1);
	return NULL;
}

static void plugin_path(char *buf, size_t len)
{
	const char *dir = getenv("ORCU_TEST_BIN_DIR");
	char exe[PATH_MAX];

	if (!dir) {
		/* Run by hand: the plugin sits next to the test binary. */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		CHECK(n > 0);
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		dir = exe;
	}
	snprintf(buf, len, "%s/liborcu_test_plugin.so", dir);
}

int main(void)
{
	char path[PATH_MAX + 64];
	void *dl;
	post_fn post;
	invoked_fn invoked;
	fini_fn fini;
	pthread_t rt;
	long posted = 0, before_close;

	setenv("ORCU_CPUS", "possible=8,online=0-3", 1);
	setenv("ORCU_LAZY_MS", "600000", 1);  /* lazy ones would wait 10 min */
	unsetenv("ORCU_NOCBS");

	plugin_path(path, sizeof(path));
	dl = check_dlopen(path);
	post = (post_fn)(uintptr_t)check_dlsym(dl, "plugin_post");
	invoked = (invoked_fn)(uintptr_t)check_dlsym(dl, "plugin_invoked");
	fini = (fini_fn)(uintptr_t)check_dlsym(dl, "plugin_fini");

	/* Hold grace periods open so the posts are all outstanding. */
	CHECK_EQ(pthread_create(&rt, NULL, reader, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_go), 10);
	for (int s = 0; s < NSLOTS; s++) {
		CHECK_EQ(orcu_thread_bind_cpu(s), 0);
		posted += post(PER_SLOT, s == 1 ? 10 : 0, &counter);
	}
	/* Plus some from the real CPU's slot (possibly not one of 0..3). */
	orcu_thread_bind_cpu(-1);
	posted += post(100, 0, &counter);
	CHECK_EQ(posted, NSLOTS * PER_SLOT + 100);
	CHECK(atomic_load(&counter) < posted);     /* GP held: not all ran */
	atomic_store(&reader_release, 1);

	fini();                                    /* orcu_barrier() */
	before_close = atomic_load(&counter);
	CHECK_EQ(before_close, posted);
	CHECK_EQ(invoked(), posted);
	CHECK_EQ(dlclose(dl), 0);
	/* Really unmapped: a late callback would now crash. */
	CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD) == NULL);

	pthread_join(rt, NULL);
	orcu_synchronize();
	orcu_synchronize();
	orcu_barrier();
	CHECK_EQ(atomic_load(&counter), before_close);
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(atomic_load(&counter), before_close);
	TEST_PASS("module_unload");
}
