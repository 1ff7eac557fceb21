/*
 * test_offline_without_threads.c - orcu_cpu_offline() refuses only the
 * last online CPU.  The leader of the group {0, 1} cannot be created
 * (pthread_create interposed), so CPUs 0 and 1 are online without
 * threads; CPUs 2 and 3 have them.  All slots are offloaded (ORCU_NOCBS=none
 * would start no thread to fail).  Taking 2 and
 * then 3 offline must succeed (3 used to get -EBUSY and "CPU 3 is the
 * last online CPU" with 0 and 1 online, since only a slot with threads
 * counted): 3's callbacks move to a slot without threads and are served
 * from there (in place, serve.c), none lost.  Then 0 goes offline,
 * and 1, the last, is refused with one line saying so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"

#define N 200

static atomic_int refuse;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	const char *name = check_library_thread(fn, arg);

	if (atomic_load(&refuse) && name && strcmp(name, "orcu-og/0") == 0)
		return EAGAIN;
	return check_real_pthread_create(t, attr, fn, arg);
}

static struct orcu_head heads[N];
static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

static int child(void *arg)
{
	(void)arg;
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_NOCB_STRIDE", "2", 1);      /* groups {0,1} and {2,3} */
	setenv("ORCU_NOCBS", "all", 1);
	atomic_store(&refuse, 1);
	CHILD_CHECK(2, orcu_init(NULL) == -EAGAIN);
	CHILD_CHECK(3, orcu_thread_bind_cpu(3) == 0);
	orcu_read_lock();                        /* they cannot run before the move */
	for (int i = 0; i < N; i++)
		orcu_call(&heads[i], cb);
	orcu_read_unlock();
	CHILD_CHECK(4, orcu_thread_bind_cpu(-1) == 0);
	CHILD_CHECK(5, orcu_cpu_offline(2) == 0);
	CHILD_CHECK(6, orcu_cpu_offline(3) == 0);
	orcu_barrier();
	CHILD_CHECK(7, atomic_load(&invoked) == N);
	CHILD_CHECK(8, orcu_cpu_offline(0) == 0);
	CHILD_CHECK(9, orcu_cpu_offline(1) == -EBUSY);
	fprintf(stderr, "ok\n");
	return 0;
}

int main(void)
{
	struct child_result r;

	test_watchdog("test_offline_without_threads", 120);
	run_child(child, NULL, 60, &r);
	printf("child: exit %d; said:\n%s", WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.err);
	CHECK(WIFEXITED(r.status));
	CHECK_EQ(WEXITSTATUS(r.status), 0);
	CHECK(strstr(r.err, "orcu_cpu_offline: CPU 1 is the last online CPU") != NULL);
	CHECK(strstr(r.err, "CPU 3 is the last") == NULL);
	CHECK(strstr(r.err, "\nok\n") != NULL);
	TEST_PASS("test_offline_without_threads");
}
