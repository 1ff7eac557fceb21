/*
 * test_unload_with_pending - unloading orcu itself (lifecycle.c point 7).
 * A host dlopen()s liborcu.so (or the liburcu shim's liburcu-memb.so.8,
 * which brings liborcu.so with it), posts callbacks whose code lives in
 * the host, and dlclose()s it.  The library's image goes, so its threads
 * must be gone first: they used to stay, parked in unmapped code, and
 * crash at their next wake-up.  Each case in a forked child:
 *   pending         lazy callbacks held for 10 minutes, posted from the
 *                   main thread and from a host thread that outlives the
 *                   close: dlclose() runs them all (their code is still
 *                   mapped), leaves no orcu-* thread, and the host
 *                   thread's exit runs none of the library's code;
 *   barrier         orcu_barrier() then dlclose(): no orcu-* thread left;
 *   shim            the same two through liburcu's names (if built);
 *   shim handles    call_rcu_data handles (each owns an orcu-crdp thread:
 *                   the default one, one given to the main thread and a
 *                   CPU, one a host thread creates for itself) with
 *                   callbacks pending: dlclose() runs them all and joins
 *                   every orcu-crdp thread (they used to stay parked);
 *   fork child      a child of a process with callbacks pending unloads
 *                   it (liborcu; the shim with call_rcu_data handles,
 *                   whose threads the child does not have): the
 *                   inherited callbacks run, no thread is left
 *                   (not under ThreadSanitizer, which takes the child's
 *                   new threads for the parent's);
 *   exit            exit() with callbacks pending and a thread inside
 *                   orcu: the process ends at once (nothing is drained
 *                   at exit), status 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "check.h"

#define N 300
#ifdef ORCU_TEST_SHIM
#define SHIM_PATH ORCU_TEST_SHIM
#else
#define SHIM_PATH NULL              /* no shim built: its cases are left out */
#endif

typedef void (*call_fn)(struct orcu_head *, void (*)(struct orcu_head *));
typedef void (*void_fn)(void);

struct lib {
	void *dl;
	call_fn call, call_lazy;
	void_fn barrier, synchronize;
};

static atomic_int ran;
static struct orcu_head heads[3 * N];
static atomic_int nheads;

/* Host code: stays mapped after the library is closed. */
static void host_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran, 1);
}

static struct orcu_head *next_head(void)
{
	return &heads[atomic_fetch_add(&nheads, 1)];
}

static void open_lib(struct lib *l, bool shim)
{
	const char *path = shim ? SHIM_PATH : ORCU_TEST_LIBORCU;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_LAZY_MS", "600000", 1);       /* lazy ones wait 10 min */
	l->dl = check_dlopen(path);
	l->call = (call_fn)(uintptr_t)check_dlsym(l->dl, shim ? "urcu_memb_call_rcu" : "orcu_call");
	l->call_lazy = shim ? l->call : (call_fn)(uintptr_t)check_dlsym(l->dl, "orcu_call_lazy");
	l->barrier = (void_fn)(uintptr_t)check_dlsym(l->dl, shim ? "urcu_memb_barrier" : "orcu_barrier");
	l->synchronize = (void_fn)(uintptr_t)check_dlsym(l->dl, shim ? "urcu_memb_synchronize_rcu" :
						 "orcu_synchronize");
}

static void post(struct lib *l, int n, bool lazy)
{
	for (int i = 0; i < n; i++)
		(lazy ? l->call_lazy : l->call)(next_head(), host_cb);
}

/* Closed for good, with every library thread gone. */
static void close_lib(struct lib *l, const char *path)
{
	CHECK_EQ(dlclose(l->dl), 0);
	CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD) == NULL);
	/* A joined thread may stay listed a moment after its join. */
	CHECK_WAIT_UNTIL(check_thread_names("orcu-", NULL, 0) == 0, 10);
}

/* A host thread that posts, then waits past the close to end. */
static struct lib *poster_lib;
static atomic_int poster_posted, poster_go;

static void *poster(void *arg)
{
	(void)arg;
	post(poster_lib, N, false);
	post(poster_lib, N, true);
	atomic_store(&poster_posted, 1);
	while (!atomic_load(&poster_go))
		sched_yield();
	return NULL;                /* its exit runs no key of the library */
}

static int pending_case(bool shim)
{
	struct lib l;
	pthread_t t;

	open_lib(&l, shim);
	poster_lib = &l;
	CHECK_EQ(pthread_create(&t, NULL, poster, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&poster_posted), 30);
	post(&l, N, true);
	CHECK(check_thread_names("orcu-", NULL, 0) > 0);
	close_lib(&l, shim ? SHIM_PATH : ORCU_TEST_LIBORCU);
	CHECK_EQ(atomic_load(&ran), 3 * N);
	atomic_store(&poster_go, 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(atomic_load(&ran), 3 * N);
	return 0;
}

static int barrier_case(bool shim)
{
	struct lib l;

	open_lib(&l, shim);
	post(&l, N, false);
	l.barrier();
	CHECK_EQ(atomic_load(&ran), N);
	close_lib(&l, shim ? SHIM_PATH : ORCU_TEST_LIBORCU);
	CHECK_EQ(atomic_load(&ran), N);
	return 0;
}

static int lib_pending(void) { return pending_case(false); }
static int lib_barrier(void) { return barrier_case(false); }
#ifdef ORCU_TEST_SHIM
static int shim_pending(void) { return pending_case(true); }
static int shim_barrier(void) { return barrier_case(true); }
#endif

#ifdef ORCU_TEST_SHIM
typedef void *(*crdp_create_fn)(unsigned long, int);
typedef void (*crdp_set_fn)(void *);
typedef void *(*crdp_get_fn)(void);
typedef int (*crdp_set_cpu_fn)(int, void *);

static crdp_create_fn create_crdp;
static crdp_set_fn set_thread_crdp;

/* A host thread with a handle of its own, as a program gives a worker. */
static void *crdp_poster(void *arg)
{
	void *crdp = create_crdp(0, -1);

	CHECK(crdp != NULL);
	set_thread_crdp(crdp);
	post(arg, N, false);
	atomic_store(&poster_posted, 1);
	while (!atomic_load(&poster_go))
		sched_yield();
	return NULL;
}

static int shim_handles(void)
{
	crdp_get_fn get_default;
	crdp_set_cpu_fn set_cpu;
	struct lib l;
	pthread_t t;
	void *mine;

	open_lib(&l, true);
	create_crdp = (crdp_create_fn)(uintptr_t)check_dlsym(l.dl, "urcu_memb_create_call_rcu_data");
	set_thread_crdp = (crdp_set_fn)(uintptr_t)check_dlsym(l.dl, "urcu_memb_set_thread_call_rcu_data");
	get_default = (crdp_get_fn)(uintptr_t)check_dlsym(l.dl, "urcu_memb_get_default_call_rcu_data");
	set_cpu = (crdp_set_cpu_fn)(uintptr_t)check_dlsym(l.dl, "urcu_memb_set_cpu_call_rcu_data");
	CHECK(get_default() != NULL);
	mine = create_crdp(0, 0);
	CHECK(mine != NULL);
	set_thread_crdp(mine);
	CHECK_EQ(set_cpu(1, mine), 0);
	CHECK_EQ(pthread_create(&t, NULL, crdp_poster, &l), 0);
	CHECK_WAIT_UNTIL(atomic_load(&poster_posted), 30);
	post(&l, N, false);
	CHECK_EQ(check_thread_names("orcu-crdp", NULL, 0), 3);
	close_lib(&l, ORCU_TEST_SHIM);
	CHECK_EQ(atomic_load(&ran), 2 * N);
	atomic_store(&poster_go, 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	return 0;
}
#endif

#ifndef __SANITIZE_THREAD__
static struct lib fork_lib;

static int fork_child(void)
{
	close_lib(&fork_lib, ORCU_TEST_LIBORCU);
	CHECK_EQ(atomic_load(&ran), N);
	return 0;
}

static int in_fork_child(void)
{
	open_lib(&fork_lib, false);
	post(&fork_lib, N, true);
	check_child_ok(check_fork_run(fork_child), "the fork child's unload", 60);
	CHECK_EQ(atomic_load(&ran), 0);            /* held in the parent */
	close_lib(&fork_lib, ORCU_TEST_LIBORCU);
	CHECK_EQ(atomic_load(&ran), N);
	return 0;
}

#ifdef ORCU_TEST_SHIM
static int shim_fork_child(void)
{
	close_lib(&fork_lib, ORCU_TEST_SHIM);
	CHECK_EQ(atomic_load(&ran), N);
	return 0;
}

static int shim_handles_in_fork_child(void)
{
	crdp_get_fn get_default;

	open_lib(&fork_lib, true);
	create_crdp = (crdp_create_fn)(uintptr_t)check_dlsym(fork_lib.dl, "urcu_memb_create_call_rcu_data");
	get_default = (crdp_get_fn)(uintptr_t)check_dlsym(fork_lib.dl, "urcu_memb_get_default_call_rcu_data");
	CHECK(get_default() != NULL);
	CHECK(create_crdp(0, -1) != NULL);
	post(&fork_lib, N, false);
	check_child_ok(check_fork_run(shim_fork_child), "the fork child's unload of the shim", 60);
	close_lib(&fork_lib, ORCU_TEST_SHIM);
	CHECK_EQ(atomic_load(&ran), N);
	return 0;
}
#endif
#endif

static struct lib exit_lib;

static void *synchronizer(void *arg)
{
	(void)arg;
	for (;;)
		exit_lib.synchronize();
	return NULL;
}

static int at_exit(void)
{
	pthread_t t;

	open_lib(&exit_lib, false);
	post(&exit_lib, N, true);
	CHECK_EQ(pthread_create(&t, NULL, synchronizer, NULL), 0);
	exit(0);
}

int main(void)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = {
		{ "liborcu: close with callbacks pending", lib_pending },
		{ "liborcu: barrier, then close", lib_barrier },
#ifdef ORCU_TEST_SHIM
		{ "liburcu-memb shim: close with callbacks pending", shim_pending },
		{ "liburcu-memb shim: barrier, then close", shim_barrier },
		{ "liburcu-memb shim: close with call_rcu_data", shim_handles },
#endif
#ifndef __SANITIZE_THREAD__
		/* (ThreadSanitizer: the child's threads reuse the ids of the
		 * parent's, which it still counts: "dup thread".) */
		{ "liborcu: close in a fork child", in_fork_child },
#ifdef ORCU_TEST_SHIM
		{ "liburcu-memb shim: call_rcu_data, close in a fork child",
		  shim_handles_in_fork_child },
#endif
#endif
		{ "liborcu: exit with callbacks pending", at_exit },
	};
	int failed = 0;

	test_watchdog("test_unload_with_pending", 300);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool ok = check_child_passed(check_fork_run(cases[i].fn), cases[i].name, 60);

		printf("%-50s %s\n", cases[i].name, ok ? "ok" : "FAILED");
		failed += !ok;
	}
	CHECK_EQ(failed, 0);
	TEST_PASS("test_unload_with_pending");
}
