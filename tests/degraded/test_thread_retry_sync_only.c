/*
 * test_thread_retry_sync_only - after library threads could not be
 * created, a program that only reads and synchronizes gets its
 * threads back and its callbacks run, with no barrier (DESIGN 5.8:
 * "whoever drives grace periods also retries missing threads
 * (rate-limited), so a program that only reads and synchronizes recovers
 * too"; the first second is no blind spot).
 *
 * pthread_create is interposed as in test_thread_creation_failure.c: the
 * library's threads fail with EAGAIN while `failing` is set, as under a
 * pids limit.  In a child per case: orcu_init() returns -EAGAIN, the
 * registered main thread posts NCB callbacks, creation works again, and
 * from then on the thread only enters and leaves read-side sections
 * (a qsbr thread also passes orcu_quiescent_state()) and waits for a GP.
 * Cases:
 *   late             memb, orcu_synchronize(); creation works again 1.5 s
 *                    after the failure, past the first retry the rate
 *                    limit allows;
 *   early            the same, creation works again at once, within the
 *                    first second;
 *   early expedited  the same with orcu_synchronize_expedited();
 *   early qsbr       a qsbr thread, orcu_synchronize();
 *   never            memb, creation never works again: the synchronizing
 *                    thread serves the callbacks itself, no thread appears.
 * Each must invoke every callback, once, and have a library thread again
 * within 10 s of creation working again (scaled by ORCU_TEST_TIMEOUT_MULT):
 * room for a retry rate limit of a few seconds.  An argument runs that
 * case alone.
 *
 * On 9552413 every case fails.  The memb ones: 0 of 100 callbacks and 0
 * library threads, since retries come only from posts, barriers,
 * orcu_start_poll() and safe points, and none in the first second after
 * a failure.  early qsbr: its safe points run the 100 callbacks, but
 * nothing retries the threads (a safe point retries only while work is
 * left unserved): 0 library threads after 10 s.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include "orcu/debug.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"

#define NCB 100

static atomic_int failing = 1;
static bool qsbr, expedited;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	if (check_library_thread(fn, arg) && atomic_load(&failing))
		return EAGAIN;
	return check_real_pthread_create(t, attr, fn, arg);
}

static struct orcu_head heads[NCB];
static atomic_int ran[NCB];
static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran[h - heads], 1);
	atomic_fetch_add(&invoked, 1);
}

/* The whole program from now on: a read-side section, a quiescent state
 * if qsbr, and a GP. */
static void read_and_sync(void)
{
	orcu_read_lock();
	orcu_read_unlock();
	if (qsbr)
		orcu_quiescent_state();
	if (expedited)
		orcu_synchronize_expedited();
	else
		orcu_synchronize();
}

static int callbacks_invoked(void)
{
	read_and_sync();
	return atomic_load(&invoked);
}

static int library_threads(void)
{
	read_and_sync();
	return orcu_debug_thread_count();
}

static void report(void)
{
	fprintf(stderr, "child: %d of %d callbacks invoked, %d library threads\n",
		atomic_load(&invoked), NCB, orcu_debug_thread_count());
}

static int run(double fail_for_s, bool qsbr_reader, bool hurry)
{
	struct timespec ts = { 0, 10 * 1000000 };
	double until;

	alarm((unsigned)check_timeout_s(60));
	atexit(report);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	unsetenv("ORCU_NOCBS");
	CHILD_CHECK(1, orcu_init(NULL) == -EAGAIN);
	CHILD_CHECK(2, orcu_debug_thread_count() == 0);
	qsbr = qsbr_reader;
	expedited = hurry;
	CHILD_CHECK(3, (qsbr ? orcu_register_thread_qsbr() : orcu_register_thread()) == 0);
	for (int i = 0; i < NCB; i++)
		orcu_call(&heads[i], cb);
	/* Still failing: the program goes on reading and synchronizing. */
	until = check_now_s() + fail_for_s;
	while (check_now_s() < until) {
		read_and_sync();
		nanosleep(&ts, NULL);
	}
	/* never: creation keeps failing; the synchronizing thread itself
	 * serves the callbacks (DESIGN 5.8, serve.c rule b). */
	if (fail_for_s >= 0)
		atomic_store(&failing, 0);
	CHECK_WAIT_UNTIL(callbacks_invoked() == NCB, 10);
	if (fail_for_s >= 0)
		CHECK_WAIT_UNTIL(library_threads() > 0, 10);
	else
		CHILD_CHECK(5, orcu_debug_thread_count() == 0);
	for (int i = 0; i < NCB; i++)
		CHILD_CHECK(4, atomic_load(&ran[i]) == 1);
	return 0;
}

static int late(void) { return run(1.5, false, false); }
static int early(void) { return run(0, false, false); }
static int early_expedited(void) { return run(0, false, true); }
static int early_qsbr(void) { return run(0, true, false); }
static int never(void) { return run(-1, false, false); }

int main(int argc, char **argv)
{
	struct { const char *name; int (*run)(void); } cases[] = {
		{ "late", late }, { "early", early },
		{ "early expedited", early_expedited }, { "early qsbr", early_qsbr },
		{ "never", never },
	};
	int failed = 0;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		if (check_child_passed(check_fork_run(cases[i].run), cases[i].name, 90))
			printf("%s: ok\n", cases[i].name);
		else
			failed = 1;
	}
	CHECK_EQ(failed, 0);
	TEST_PASS("thread_retry_sync_only");
}
