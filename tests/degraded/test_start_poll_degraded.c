/*
 * test_start_poll_degraded - orcu_start_poll() starts its grace period
 * when the GP thread (orcu-gp) could not be created (DESIGN 6: degraded,
 * never stuck; liburcu's and the kernel's start_poll start a GP).  The
 * caller only polls: nobody calls a synchronize, a barrier or posts.
 * pthread_create is interposed as in test_thread_creation_failure.c; each
 * mode runs in a child process of its own:
 *   gp_back   orcu-gp fails at orcu_init() (-EAGAIN), creation works
 *             again at once: the cookie completes, and later
 *             orcu_start_poll() calls have orcu-gp created again (the
 *             retry, rate-limited);
 *   gp_gone   orcu-gp fails for good, the leaders exist: each cookie
 *             completes (a leader runs the GP);
 *   all_gone  no library thread can be created, ever: a qsbr thread's
 *             cookie completes at its next safe points
 *             (orcu_quiescent_state(), orcu_thread_offline()/online()).
 * A registered memb reader thread enters and leaves sections meanwhile,
 * so the grace periods wait for a reader and are not the one-swap GP of
 * a process without readers.  An argument runs that mode alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"
#include "orcu/debug.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

/* Library threads whose name starts with this fail with EAGAIN (NULL:
 * none), as under RLIMIT_NPROC or a cgroup pids limit. */
static const char *_Atomic fail_prefix;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	const char *p = atomic_load(&fail_prefix), *name = check_library_thread(fn, arg);

	if (p && name && strncmp(name, p, strlen(p)) == 0)
		return EAGAIN;
	return check_real_pthread_create(t, attr, fn, arg);
}

static atomic_int reader_stop;

/* A memb reader in and out of short sections: every GP waits for it. */
static void *reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load(&reader_stop)) {
		struct timespec ts = { 0, 100000 };

		orcu_read_lock();
		nanosleep(&ts, NULL);
		orcu_read_unlock();
		nanosleep(&ts, NULL);
	}
	orcu_unregister_thread();
	return NULL;
}

/* Poll only: true if the cookie completed within base_s (scaled). */
static bool completes_alone(unsigned long cookie, double base_s)
{
	double end = check_now_s() + check_timeout_s(base_s);

	while (!orcu_poll_state(cookie)) {
		struct timespec ts = { 0, 1000000 };

		if (check_now_s() > end)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

static int orcu_gp_threads(void)
{
	char names[4][32];

	return check_thread_names("orcu-gp", names, 4);
}

static pthread_t start(const char *fail)
{
	pthread_t r;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	unsetenv("ORCU_NOCBS");
	atomic_store(&fail_prefix, fail);
	CHILD_CHECK(1, orcu_init(NULL) == -EAGAIN);
	CHILD_CHECK(2, orcu_gp_threads() == 0);
	CHILD_CHECK(3, pthread_create(&r, NULL, reader, NULL) == 0);
	return r;
}

static void stop(pthread_t r)
{
	atomic_store(&reader_stop, 1);
	pthread_join(r, NULL);
	atomic_store(&fail_prefix, NULL);
	CHILD_CHECK(90, orcu_drain(-1) == 0);
	CHILD_CHECK(91, orcu_shutdown() == 0);
}

/* orcu-gp failed once; creation works again from now on. */
static int gp_back(void)
{
	pthread_t r = start("orcu-gp");
	double end;

	atomic_store(&fail_prefix, NULL);
	CHILD_CHECK(10, completes_alone(orcu_start_poll(), 30));
	/* Retried: a later orcu_start_poll() has the thread created (at most
	 * once per ORCU__RETRY_NS, about 1 s). */
	end = check_now_s() + check_timeout_s(30);
	while (orcu_gp_threads() == 0) {
		struct timespec ts = { 0, 10 * 1000000 };

		CHILD_CHECK(11, check_now_s() < end);
		CHILD_CHECK(12, completes_alone(orcu_start_poll(), 30));
		nanosleep(&ts, NULL);
	}
	CHILD_CHECK(13, completes_alone(orcu_start_poll(), 30));
	stop(r);
	return 0;
}

/* orcu-gp cannot be created, ever; the leaders can. */
static int gp_gone(void)
{
	pthread_t r = start("orcu-gp");

	for (int i = 0; i < 20; i++)
		CHILD_CHECK(20, completes_alone(orcu_start_poll(), 30));
	CHILD_CHECK(21, orcu_gp_threads() == 0);
	stop(r);
	return 0;
}

/* No library thread, ever: a qsbr thread's safe points run the GP. */
static int all_gone(void)
{
	pthread_t r = start("orcu-");
	double end;

	CHILD_CHECK(30, orcu_debug_thread_count() == 0);
	CHILD_CHECK(31, orcu_register_thread_qsbr() == 0);
	for (int i = 0; i < 20; i++) {
		unsigned long c = orcu_start_poll();

		end = check_now_s() + check_timeout_s(30);
		while (!orcu_poll_state(c)) {
			struct timespec ts = { 0, 1000000 };

			CHILD_CHECK(32, check_now_s() < end);
			if (i & 1) {
				orcu_thread_offline();
				nanosleep(&ts, NULL);
				orcu_thread_online();
			} else {
				orcu_quiescent_state();
				nanosleep(&ts, NULL);
			}
		}
	}
	CHILD_CHECK(33, orcu_debug_thread_count() == 0);
	orcu_unregister_thread();
	stop(r);
	return 0;
}

int main(int argc, char **argv)
{
	struct { const char *name; int (*run)(void); } modes[] = {
		{ "gp_back", gp_back }, { "gp_gone", gp_gone }, { "all_gone", all_gone },
	};

	for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (argc > 1 && strcmp(argv[1], modes[i].name) != 0)
			continue;
		check_child_ok(check_fork_run(modes[i].run), modes[i].name, 120);
		printf("mode %s: ok\n", modes[i].name);
	}
	TEST_PASS("start_poll_degraded");
}
