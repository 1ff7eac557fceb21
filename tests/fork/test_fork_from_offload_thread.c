/*
 * test_fork_from_offload_thread.c - fork() from a callback that runs on
 * an offload thread.  In the child, that thread's copy finishes the
 * callbacks it had taken and ends; the child's own threads start on first
 * use and are the only ones: one follower for the slot, not the copy
 * beside a new one (the copy used to go on running its loop next to the
 * child's follower, on the same slot record, and nobody joined it).  The
 * child's work runs on a thread it creates: a barrier, exactly one
 * orcu-oc/0, then a clean shutdown with none left.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"

static struct orcu_head fork_head, child_head;
static atomic_int forked, child_status = -1, child_ran;

/* Threads of this process named exactly `name` that are still running. */
static int threads_named(const char *name)
{
	char names[16][32];
	int n = check_thread_names(name, names, 16), exact = 0;

	for (int i = 0; i < n && i < 16; i++)
		exact += strcmp(names[i], name) == 0;
	return exact;
}

static void child_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&child_ran, 1);
}

static void *child_main(void *arg)
{
	(void)arg;
	/* Not the name it inherits from the thread that created it. */
	pthread_setname_np(pthread_self(), "child-main");
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	orcu_call(&child_head, child_cb);
	orcu_barrier();
	CHILD_CHECK(2, atomic_load(&child_ran) == 1);
	/* The copy of the forking follower has ended by now or will: wait. */
	CHECK_WAIT_UNTIL(threads_named("orcu-oc/0") == 1, 20);
#ifndef __SANITIZE_THREAD__
	/* (ThreadSanitizer: the child's threads reuse the ids of the parent's,
	 * which it still counts, and joining them reports "dup thread".) */
	CHILD_CHECK(3, orcu_shutdown() == 0);
	CHECK_WAIT_UNTIL(threads_named("orcu-oc/0") == 0, 20);
#endif
	fflush(stdout);
	_exit(0);
}

static void fork_cb(struct orcu_head *h)
{
	pthread_attr_t attr;
	pthread_t t;
	pid_t pid;
	int st;

	(void)h;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* The child's work, on a thread of its own (a stack size of
		 * its own too, see test_postq_fork.c); this thread returns to
		 * orcu's loop, where its copy ends. */
		if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 1 << 20) ||
		    pthread_create(&t, &attr, child_main, NULL))
			_exit(10);
		return;
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid)
		atomic_store(&child_status, WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st));
	atomic_store(&forked, 1);
}

int main(void)
{
	test_watchdog("test_fork_from_offload_thread", 120);
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", "all", 1);
	setenv("ORCU_NOCB_STRIDE", "2", 1);      /* slot 0 has a follower */
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	orcu_call(&fork_head, fork_cb);
	CHECK_WAIT_UNTIL(atomic_load(&forked), 60);
	printf("child exited with %d\n", atomic_load(&child_status));
	CHECK_EQ(atomic_load(&child_status), 0);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_fork_from_offload_thread");
}
