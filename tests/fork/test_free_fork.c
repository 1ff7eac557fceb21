/*
 * test_free_fork.c - fork() with orcu_retire() batches pending: open
 * (partial) batches on two threads that are alive but idle in the parent
 * and do not exist in the child, the forking thread's own partial batch,
 * and full batches already posted.  In the child one orcu_barrier()
 * deletes every object retired before the fork, and the child's own
 * retires work; in the parent, the same barrier deletes them there too
 * (each process its own copy), and nothing is deleted twice.
 */
#include <orcu.h>

#include "check.h"

#include <stdatomic.h>
#include <sys/wait.h>

#define PER_THREAD 700   /* one full batch of pairs and a partial one */

static atomic_long retired, deleted;
static atomic_int ready, release_them;

static void del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
}

static void retire_n(int n)
{
	for (int i = 0; i < n; i++) {
		atomic_fetch_add(&retired, 1);
		orcu_retire(malloc(32), del);
	}
}

static void *idle_poster(void *a)
{
	(void)a;
	retire_n(PER_THREAD);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&release_them))
		sched_yield();
	return NULL;
}

static int child(void)
{
	long r = atomic_load(&retired);

	orcu_barrier();
	if (atomic_load(&deleted) != r) {
		fprintf(stderr, "child: %ld retired before the fork, %ld deleted after a barrier\n",
			r, atomic_load(&deleted));
		return 1;
	}
	retire_n(10);
	orcu_barrier();
	if (atomic_load(&deleted) != r + 10) {
		fprintf(stderr, "child: its own 10 retires: %ld deleted of %ld\n",
			atomic_load(&deleted), r + 10);
		return 2;
	}
	printf("child: %ld deleted\n", atomic_load(&deleted));
	fflush(stdout);
	return 0;
}

int main(void)
{
	pthread_t t[2];
	pid_t pid;
	int st;

	test_watchdog("test_free_fork", 120);
	CHECK(orcu_register_thread() == 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, idle_poster, NULL);
	CHECK_WAIT_UNTIL(atomic_load(&ready) == 2, 60);
	retire_n(5);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child());
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	orcu_barrier();
	printf("parent: %ld retired, %ld deleted\n", atomic_load(&retired), atomic_load(&deleted));
	CHECK_EQ(atomic_load(&deleted), atomic_load(&retired));
	atomic_store(&release_them, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	orcu_barrier();
	CHECK_EQ(atomic_load(&deleted), atomic_load(&retired));
	TEST_PASS("test_free_fork");
}
