/*
 * test_unload_cycles_no_leak - unloading orcu itself leaves nothing
 * behind (lifecycle.c point 7).  A host dlopen()s liborcu.so, hands
 * objects to orcu_free() and orcu_retire() and posts orcu_call()s from
 * its main thread (which outlives every close) and from a thread that
 * ends before the close, then dlclose()s it, many times over.  Each
 * cycle used to keep about 121 kB: the main thread's free.c record and
 * its batch pages, the slot and leader arrays, the posting queues.  The
 * heap in use after the cycles must not grow by more than a few hundred
 * bytes a cycle (glibc's own dlopen bookkeeping).
 *
 *   test_unload_cycles_no_leak [CYCLES]   (default 200, 50 under a
 *   sanitizer; prints the growth per cycle of the heap in use and of
 *   the RSS)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <dlfcn.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* The sanitizer runtime's (<sanitizer/allocator_interface.h>, which gcc
 * does not install): the heap its allocator has handed out. */
size_t __sanitizer_get_current_allocated_bytes(void);
#define ORCU_TEST_SANITIZER 1
#endif

#ifdef ORCU_TEST_SANITIZER
#define DEFAULT_CYCLES 50 /* each costs the sanitizer 0.3 s */
#else
#define DEFAULT_CYCLES 200
#endif
#define OBJS 15000
#define CALLS 100
#define WARMUP 20
/* Bytes a cycle may keep: the old code kept about 121,000. */
#define BOUND 1024

typedef void (*free_fn)(void *);
typedef void (*retire_fn)(void *, void (*)(void *));
typedef void (*call_fn)(struct orcu_head *, void (*)(struct orcu_head *));

struct lib {
	free_fn free;
	retire_fn retire;
	call_fn call;
};

static atomic_long ran;

/* Host code: stays mapped after the library is closed. */
static void host_cb(struct orcu_head *h)
{
	free(h);
	atomic_fetch_add(&ran, 1);
}

static void host_deleter(void *p)
{
	free(p);
	atomic_fetch_add(&ran, 1);
}

static void use(const struct lib *l)
{
	for (int i = 0; i < OBJS; i++)
		l->free(malloc(48));
	for (int i = 0; i < OBJS / 10; i++)
		l->retire(malloc(48), host_deleter);
	for (int i = 0; i < CALLS; i++)
		l->call(malloc(sizeof(struct orcu_head)), host_cb);
}

static void *user_thread(void *arg)
{
	use(arg);
	return NULL;
}

static void cycle(void)
{
	void *dl = check_dlopen(ORCU_TEST_LIBORCU);
	struct lib l = {
		(free_fn)(uintptr_t)check_dlsym(dl, "orcu_free"),
		(retire_fn)(uintptr_t)check_dlsym(dl, "orcu_retire"),
		(call_fn)(uintptr_t)check_dlsym(dl, "orcu_call"),
	};
	long before = atomic_load(&ran);
	pthread_t t;

	use(&l);
	CHECK_EQ(pthread_create(&t, NULL, user_thread, &l), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(dlclose(dl), 0);
	CHECK(dlopen(ORCU_TEST_LIBORCU, RTLD_NOW | RTLD_NOLOAD) == NULL);
	/* The unload ran every deleter and callback (it drains). */
	CHECK_EQ(atomic_load(&ran) - before, 2 * (OBJS / 10 + CALLS));
}

static size_t heap_in_use(void)
{
#ifdef ORCU_TEST_SANITIZER
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
#endif
}

static long rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	CHECK(f != NULL);
	CHECK_EQ(fscanf(f, "%ld %ld", &pages, &rss), 2);
	fclose(f);
	return rss * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : DEFAULT_CYCLES;
	size_t heap0;
	long rss0;
	double heap_per, rss_per;

	CHECK(cycles > 0);
	test_watchdog("test_unload_cycles_no_leak", 60 + cycles / 5);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	for (int i = 0; i < WARMUP; i++)
		cycle();
	heap0 = heap_in_use();
	rss0 = rss_bytes();
	for (int i = 0; i < cycles; i++)
		cycle();
	heap_per = ((double)heap_in_use() - (double)heap0) / cycles;
	rss_per = (double)(rss_bytes() - rss0) / cycles;
	printf("%d dlopen/dlclose cycles: heap in use %+.0f bytes/cycle, RSS %+.0f bytes/cycle\n",
	       cycles, heap_per, rss_per);
	CHECK_LE((long)heap_per, BOUND);
	TEST_PASS("test_unload_cycles_no_leak");
}
