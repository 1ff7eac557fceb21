/*
 * test_signal_in_unpark_fenced - a memb thread waiting in
 * orcu_synchronize() is parked (registry.c point 4): GPs read its ctr,
 * find it parked and skip the membarrier().  Leaving, it stores its ctr,
 * then fences.  A signal handler that runs between the two and opens a
 * read-side section must not take the read lock's fast path (a plain
 * store, no fence): no membarrier() and no fence would then order the
 * handler's reads after a GP that read the thread parked, and the
 * section could overlap it.
 *
 * A delay hook at the point between the store and the fence
 * (ORCU__DELAY_MEMB_UNPARK) raises SIGUSR1 there, on the unparking
 * thread.  The handler checks that its orcu_read_lock() finds ctr other
 * than ORCU__MEMB_IDLE (so it takes the slow path) and that the lock
 * goes through an unpark, with its fence, of its own (the hook is
 * reached again, from inside the handler, before the section opens).
 * After the handler returns, the thread's ctr is ORCU__MEMB_IDLE again
 * and later sections and GPs work as usual.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "os.h"
#include "delay.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "check.h"

static pthread_t waiter;
static atomic_int armed;          /* raise the signal at the next unpark */
static volatile sig_atomic_t in_handler, handler_runs, nested_unparks;
static volatile sig_atomic_t lock_on_fast_path, section_seen;
static unsigned long ctr_at_lock;

static void on_signal(int sig)
{
	(void)sig;
	in_handler = 1;
	/* What orcu_read_lock() decides on: ORCU__MEMB_IDLE is its fast
	 * path, which stores and does not fence. */
	ctr_at_lock = __atomic_load_n(&orcu__reader.ctr, __ATOMIC_RELAXED);
	lock_on_fast_path = ctr_at_lock == ORCU__MEMB_IDLE;
	orcu_read_lock();
	section_seen = orcu_read_ongoing();
	orcu_read_unlock();
	handler_runs++;
	in_handler = 0;
}

static void hook(enum orcu__delay_point p)
{
	if (p != ORCU__DELAY_MEMB_UNPARK || !pthread_equal(pthread_self(), waiter))
		return;
	if (in_handler) {
		/* The handler's read lock unparks, fence included. */
		nested_unparks++;
		return;
	}
	if (atomic_exchange(&armed, 0))
		raise(SIGUSR1);
}

int main(void)
{
	struct sigaction sa;

	test_watchdog("test_signal_in_unpark_fenced", 60);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	waiter = pthread_self();
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_synchronize();
	orcu__delay_set_hook(hook);

	/* Parks, drives a GP, unparks: the signal lands in the window. */
	atomic_store(&armed, 1);
	orcu_synchronize();
	orcu__delay_set_hook(NULL);

	printf("handler: ctr %#lx at its read lock (%s path), unparks in handler %d\n",
	       ctr_at_lock, lock_on_fast_path ? "fast, unfenced" : "slow",
	       (int)nested_unparks);
	CHECK_EQ(handler_runs, 1);
	CHECK_EQ(section_seen, 1);
	CHECK_EQ(lock_on_fast_path, 0);
	CHECK_EQ(nested_unparks, 1);
	/* Out of the window: outside any section, the fast path again. */
	CHECK_EQ(__atomic_load_n(&orcu__reader.ctr, __ATOMIC_RELAXED), ORCU__MEMB_IDLE);
	orcu_read_lock();
	CHECK(orcu_read_ongoing());
	orcu_read_unlock();
	orcu_synchronize();
	CHECK_EQ(__atomic_load_n(&orcu__reader.ctr, __ATOMIC_RELAXED), ORCU__MEMB_IDLE);
	orcu_unregister_thread();
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_signal_in_unpark_fenced");
}
