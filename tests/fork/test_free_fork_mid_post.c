/*
 * test_free_fork_mid_post.c - fork() while another thread is posting the
 * batch its orcu_retire() just filled: the batch has left the thread's
 * record (free.c point 3) but is not a callback yet (held by a test hook
 * at orcu_call()'s enqueue).  Every object whose orcu_retire() returned
 * before the fork is in that batch; in the child, orcu_barrier() must
 * delete each of them (API.md: "fork ... count like any callback"; the
 * child inherits what was pending), and the parent, as always, all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "delay.h"

#include <sys/wait.h>

static atomic_long retired, deleted;
static atomic_int hook_armed, poster_held, forking, forked;
static pthread_t poster_tid;

static void del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
}

/* The poster stops inside the orcu_call() that posts its full batch
 * until the fork is done, or a while after it began (a fork that waits
 * for the post to finish, as it may, then goes on). */
static void hold_poster(enum orcu__delay_point p)
{
	double until;

	if (p != ORCU__DELAY_ENQUEUE || !pthread_equal(pthread_self(), poster_tid) ||
	    !atomic_exchange(&hook_armed, 0))
		return;
	atomic_store(&poster_held, 1);
	until = check_now_s() + check_timeout_s(60);
	while (!atomic_load(&forking) && check_now_s() < until)
		sleep_ms(1);
	until = check_now_s() + 0.5;
	while (!atomic_load(&forked) && check_now_s() < until)
		sleep_ms(1);
}

static void *poster(void *arg)
{
	(void)arg;
	/* One object first: the batch and its tick exist (the tick's lazy
	 * post takes the hook's point too). */
	orcu_retire(malloc(32), del);
	atomic_fetch_add(&retired, 1);
	atomic_store(&hook_armed, 1);
	/* Until a retire fills the batch (a tick may have posted the first
	 * one meanwhile: then the next fills). */
	for (int i = 0; i < 2000 && !atomic_load(&poster_held); i++) {
		orcu_retire(malloc(32), del);
		atomic_fetch_add(&retired, 1);
	}
	CHECK(atomic_load(&poster_held));
	return NULL;
}

int main(void)
{
	long before;
	pid_t pid;
	int st;

	test_watchdog("test_free_fork_mid_post", 120);
	CHECK_EQ(orcu_init(NULL), 0);
	orcu__delay_set_hook(hold_poster);
	CHECK_EQ(pthread_create(&poster_tid, NULL, poster, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&poster_held), 30);
	/* Every retire counted here returned before the fork. */
	before = atomic_load(&retired);
	fflush(stdout);
	fflush(stderr);
	atomic_store(&forking, 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		orcu__delay_set_hook(NULL);
		orcu_barrier();
		printf("child: %ld retired before the fork, %ld deleted after a barrier\n",
		       before, atomic_load(&deleted));
		fflush(stdout);
		_exit(atomic_load(&deleted) >= before ? 0 : 1);
	}
	atomic_store(&forked, 1);
	st = check_wait_child(pid, "fork child", 60);
	CHECK_EQ(pthread_join(poster_tid, NULL), 0);
	orcu__delay_set_hook(NULL);
	orcu_barrier();
	CHECK_EQ(atomic_load(&deleted), atomic_load(&retired));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	TEST_PASS("test_free_fork_mid_post");
}
