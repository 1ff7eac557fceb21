/*
 * test_init_eagain_then_posts_run - orcu_init() returned -EAGAIN because
 * no library thread could be created; creation works again; callbacks
 * posted from then on run with no barrier and nothing else called
 * (DESIGN 5.8: after orcu_init() returned -EAGAIN a posted callback is
 * invoked within a bounded time, without anyone calling a barrier; 6:
 * "creation is retried later").
 *
 * Each case runs in a child.  Every library pthread_create fails at
 * orcu_init(), which must return -EAGAIN; then creation works again; the
 * (unregistered) main thread posts N callbacks, half on slot 0, half on
 * slot 1, and afterwards only waits: every callback must run, once,
 * within 10 s (scaled).  How creation fails:
 *   interposed  pthread_create is interposed as in
 *               test_thread_creation_failure.c (EAGAIN for library
 *               threads);
 *   rlimit      a real RLIMIT_NPROC: the child sets a soft limit of 1 and
 *               drops to uid/gid 65534 (root, or CAP_SYS_RESOURCE or
 *               CAP_SYS_ADMIN, ignores the limit), then raises the soft
 *               limit back to the hard one.  Skipped, with the reason,
 *               where the test cannot make the limit bite (not root, so
 *               it cannot change uid, and the limit is not enforced on
 *               its own uid either: it checks whether a thread can still
 *               be created).
 * An argument runs that case alone.
 *
 * On 9552413 both fail: the callbacks stay pending, with 0 library
 * threads, until someone calls a barrier (posts in the first second after
 * the failure do not retry, and nothing retries after them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include "orcu/debug.h"

#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "check.h"

#define N 1000
#define SKIPPED 77

static atomic_int failing;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	if (check_library_thread(fn, arg) && atomic_load(&failing))
		return EAGAIN;
	return check_real_pthread_create(t, attr, fn, arg);
}

static struct orcu_head heads[N];
static atomic_int ran[N];
static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran[h - heads], 1);
	atomic_fetch_add(&invoked, 1);
}

static void report(void)
{
	if (atomic_load(&invoked) != N)
		fprintf(stderr, "child: %d of %d callbacks invoked, %d library threads\n",
			atomic_load(&invoked), N, orcu_debug_thread_count());
}

/* orcu_init() has returned -EAGAIN and creation works again. */
static int post_and_wait(void)
{
	CHILD_CHECK(2, orcu_debug_thread_count() == 0);
	for (int i = 0; i < N; i++) {
		if (i % (N / 2) == 0)
			CHILD_CHECK(3, orcu_thread_bind_cpu(i / (N / 2)) == 0);
		orcu_call(&heads[i], cb);
	}
	CHECK_WAIT_UNTIL(atomic_load(&invoked) == N, 10);
	for (int i = 0; i < N; i++)
		CHILD_CHECK(4, atomic_load(&ran[i]) == 1);
	return 0;
}

static void setup(void)
{
	alarm((unsigned)check_timeout_s(60));
	atexit(report);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	unsetenv("ORCU_NOCBS");
}

static int interposed(void)
{
	setup();
	atomic_store(&failing, 1);
	CHILD_CHECK(1, orcu_init(NULL) == -EAGAIN);
	atomic_store(&failing, 0);
	return post_and_wait();
}

static void *nothing(void *arg)
{
	return arg;
}

static int rlimit(void)
{
	struct rlimit one, all;
	pthread_t t;

	setup();
	CHILD_CHECK(6, getrlimit(RLIMIT_NPROC, &all) == 0);
	all.rlim_cur = all.rlim_max;
	one = (struct rlimit){ 1, all.rlim_max };
	if (getuid() == 0 &&
	    (setgroups(0, NULL) || setgid(65534) || setrlimit(RLIMIT_NPROC, &one) ||
	     setuid(65534))) {
		printf("rlimit: skipped: cannot drop to uid 65534: %s\n", strerror(errno));
		return SKIPPED;
	}
	if (getuid() != 0 && setrlimit(RLIMIT_NPROC, &one)) {
		printf("rlimit: skipped: setrlimit: %s\n", strerror(errno));
		return SKIPPED;
	}
	/* Does the limit bite?  (CAP_SYS_RESOURCE or CAP_SYS_ADMIN ignore it.) */
	if (check_real_pthread_create(&t, NULL, nothing, NULL) == 0) {
		pthread_join(t, NULL);
		printf("rlimit: skipped: RLIMIT_NPROC is not enforced for this process\n");
		return SKIPPED;
	}
	CHILD_CHECK(1, orcu_init(NULL) == -EAGAIN);
	CHILD_CHECK(5, setrlimit(RLIMIT_NPROC, &all) == 0);
	return post_and_wait();
}

int main(int argc, char **argv)
{
	struct { const char *name; int (*run)(void); } cases[] = {
		{ "interposed", interposed }, { "rlimit", rlimit },
	};
	int failed = 0;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st;

		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		st = check_wait_child(check_fork_run(cases[i].run), cases[i].name, 90);
		if (WIFEXITED(st) && WEXITSTATUS(st) == SKIPPED)
			continue;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "%s: child failed: status 0x%x\n", cases[i].name, st);
			failed = 1;
			continue;
		}
		printf("%s: ok\n", cases[i].name);
	}
	CHECK_EQ(failed, 0);
	TEST_PASS("init_eagain_then_posts_run");
}
