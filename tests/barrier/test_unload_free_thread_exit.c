/*
 * test_unload_free_thread_exit - unloading orcu itself (lifecycle.c
 * point 7) after host threads handed objects to orcu_free() and
 * orcu_retire(): "no thread that registered or posted runs orcu's code
 * when it ends" (docs/API.md, "Unloading orcu itself").  A host
 * dlopen()s liborcu.so; two host threads, one calling orcu_free(), one
 * orcu_retire(), outlive the dlclose() and end after it.  Their per-thread
 * batch records (free.c) are hooked to thread exit by a pthread key whose
 * destructor lives in the library: it used to stay after the unload, and
 * each thread's end jumped into unmapped code (SIGSEGV in
 * __nptl_deallocate_tsd).  Each of the three rounds in a child of its own,
 * the second and third with the threads running their objects' grace
 * periods to completion first (barrier) or not at all before the close.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>

#include "check.h"

#define N 100

typedef void (*free_fn)(void *);
typedef void (*retire_fn)(void *, void (*)(void *));
typedef void (*void_fn)(void);

static free_fn lib_free;
static retire_fn lib_retire;
static atomic_int ready, go, retired_ran;

/* Host code: stays mapped after the library is closed. */
static void host_deleter(void *p)
{
	free(p);
	atomic_fetch_add(&retired_ran, 1);
}

static void *freer(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++)
		lib_free(malloc(64));
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		sched_yield();
	return NULL;                /* its exit runs no key of the library */
}

static void *retirer(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++)
		lib_retire(malloc(64), host_deleter);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		sched_yield();
	return NULL;
}

static int one_round(bool barrier_first)
{
	pthread_t t[2];
	void *dl;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	dl = check_dlopen(ORCU_TEST_LIBORCU);
	lib_free = (free_fn)(uintptr_t)check_dlsym(dl, "orcu_free");
	lib_retire = (retire_fn)(uintptr_t)check_dlsym(dl, "orcu_retire");
	CHECK_EQ(pthread_create(&t[0], NULL, freer, NULL), 0);
	CHECK_EQ(pthread_create(&t[1], NULL, retirer, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&ready) == 2, 30);
	if (barrier_first)
		((void_fn)(uintptr_t)check_dlsym(dl, "orcu_barrier"))();
	CHECK_EQ(dlclose(dl), 0);
	CHECK(dlopen(ORCU_TEST_LIBORCU, RTLD_NOW | RTLD_NOLOAD) == NULL);
	/* The unload ran every deleter (it drains, as orcu_shutdown()). */
	CHECK_EQ(atomic_load(&retired_ran), N);
	atomic_store(&go, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	return 0;
}

int main(void)
{
	test_watchdog("test_unload_free_thread_exit", 60);
	for (int r = 0; r < 3; r++) {
		pid_t pid = fork();
		int st;

		CHECK(pid >= 0);
		if (pid == 0)
			_exit(one_round(r > 0));
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fprintf(stderr, "round %d: child status 0x%x\n", r, st);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	printf("unload with orcu_free/orcu_retire threads alive: ok\n");
	return 0;
}
