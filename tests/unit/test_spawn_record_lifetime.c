/*
 * test_spawn_record_lifetime.c - a library thread's start never touches
 * its spawn record (os.c, orcu__spawn()) once the record is freed.  The
 * new thread used to mark itself running, then futex-wake the spawner on
 * the record: a spawner that saw the mark without sleeping freed the
 * record first, and the wake went to freed memory (a stray wake for
 * whatever reuses it).
 *
 * The window is held open, deterministically: syscall() and free() are
 * interposed.  The spawner's futex wait does not sleep before the new
 * thread has marked itself (so the spawner always sees the mark and goes
 * on), and the new thread's wake waits until the spawner has returned
 * from orcu__spawn() or freed the record.  A wake whose address lies in
 * a record freed meanwhile fails the test.  Under AddressSanitizer
 * or ThreadSanitizer, whose runtimes own free(), nothing is interposed and
 * the test only checks that the spawns work.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"

#include <dlfcn.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "check.h"

#define ROUNDS 3
#define RING 64

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INTERPOSED 0
#else
#define INTERPOSED 1
#endif

static atomic_int spawning, spawn_returned, wakes_checked, wakes_on_freed;
/* A hold that ran out: the other side's futex call went unseen. */
static atomic_int holds_expired;
static atomic_int spawner_tid;
#if INTERPOSED
#define RESET_FREED() atomic_store(&nfreed, 0)
/* Blocks freed while a spawn is in progress. */
static void *_Atomic freed[RING];
static atomic_int nfreed;

static double deadline(void)
{
	return check_now_s() + check_timeout_s(20);
}

/* addr lies in a spawn record freed during this spawn. */
static bool was_freed(void *addr)
{
	int n = atomic_load(&nfreed);

	for (int i = 0; i < n && i < RING; i++) {
		char *p = atomic_load(&freed[i]);

		if (p && (char *)addr >= p && (char *)addr < p + sizeof(struct orcu__spawn_arg))
			return true;
	}
	return false;
}

extern void __libc_free(void *p);
static long (*real_syscall)(long n, ...);

__attribute__((constructor)) static void find_syscall(void)
{
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
}

void free(void *p)
{
	if (p && atomic_load(&spawning)) {
		int i = atomic_fetch_add(&nfreed, 1);

		if (i < RING)
			atomic_store(&freed[i], p);
	}
	__libc_free(p);
}

/* The spawner's wait: not before the thread marked itself running. */
static void hold_wait(_Atomic uint32_t *addr, uint32_t val)
{
	double end = deadline();

	while (atomic_load(addr) == val && check_now_s() < end)
		sched_yield();
	if (atomic_load(addr) == val)
		atomic_fetch_add(&holds_expired, 1);
}

/* The thread's wake: not before the spawner is done with the record.
 * Then it must not land in a record freed meanwhile. */
static void hold_wake(void *addr)
{
	double end = deadline();

	while (!atomic_load(&spawn_returned) && !was_freed(addr) && check_now_s() < end)
		sched_yield();
	if (!atomic_load(&spawn_returned) && !was_freed(addr))
		atomic_fetch_add(&holds_expired, 1);
	atomic_fetch_add(&wakes_checked, 1);
	if (was_freed(addr))
		atomic_fetch_add(&wakes_on_freed, 1);
}

/* A 32-bit build with a 64-bit time_t waits with futex_time64 (os.c). */
#ifdef SYS_futex_time64
#define IS_FUTEX(n) ((n) == SYS_futex || (n) == SYS_futex_time64)
#else
#define IS_FUTEX(n) ((n) == SYS_futex)
#endif

long syscall(long n, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (IS_FUTEX(n) && atomic_load(&spawning)) {
		if (a[1] == FUTEX_WAIT_PRIVATE && gettid() == atomic_load(&spawner_tid))
			hold_wait((_Atomic uint32_t *)a[0], (uint32_t)a[2]);
		else if (a[1] == FUTEX_WAKE_PRIVATE && gettid() != atomic_load(&spawner_tid))
			hold_wake((void *)a[0]);
	}
	return real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
#else
#define RESET_FREED() ((void)0)
#endif

static atomic_int ran;

static void *thread_fn(void *arg)
{
	(void)arg;
	atomic_fetch_add(&ran, 1);
	return NULL;
}

int main(void)
{
	test_watchdog("test_spawn_record_lifetime", 120);
#if INTERPOSED
	CHECK(real_syscall != NULL);
#endif
	atomic_store(&spawner_tid, gettid());
	for (int i = 0; i < ROUNDS; i++) {
		pthread_t tid;

		RESET_FREED();
		atomic_store(&spawn_returned, 0);
		atomic_store(&spawning, 1);
		CHECK_EQ(orcu__spawn(&tid, "orcu-test", thread_fn, NULL), 0);
		atomic_store(&spawn_returned, 1);
		CHECK_EQ(pthread_join(tid, NULL), 0);
		atomic_store(&spawning, 0);
	}
	CHECK_EQ(atomic_load(&ran), ROUNDS);
	printf("%d spawns: %d wakes of the spawner checked, %d on a freed record%s\n",
	       ROUNDS, atomic_load(&wakes_checked), atomic_load(&wakes_on_freed),
	       INTERPOSED ? "" : " (not interposed under this sanitizer)");
	CHECK_EQ(atomic_load(&wakes_on_freed), 0);
	if (INTERPOSED) {
		CHECK_EQ(atomic_load(&wakes_checked), ROUNDS);
		CHECK_EQ(atomic_load(&holds_expired), 0);
	}
	TEST_PASS("test_spawn_record_lifetime");
}
