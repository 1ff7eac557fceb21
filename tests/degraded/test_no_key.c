/*
 * test_no_key.c - orcu in a process that used up its thread-specific data
 * keys (PTHREAD_KEYS_MAX) before orcu made its own.  orcu needs a key to
 * learn that a thread exits; without one it never aborts for want of it:
 *  - orcu_free() and orcu_retire() aborted ("free.c: pthread_key_create
 *    failed"); each object now takes the no-memory path (free.c point 4),
 *    deleted once before the call returns;
 *  - registration went on without the key, so the reader's record, in
 *    its thread-local storage, stayed linked after the thread ended: now
 *    orcu_register_thread*() return -EAGAIN (one line), and an implicit
 *    registration by orcu_read_lock() aborts with that line (API.md);
 *  - orcu_free_rcu(), orcu_call() and a barrier work as before.
 */
#include <orcu.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "check.h"

#define N 50

struct obj {
	long v;
	struct orcu_head head;
};

static atomic_int deleted;

static void del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
}

static void cb(struct orcu_head *h)
{
	del(h);
}

static int implicit_reader(void)
{
	orcu_read_lock(); /* registers: cannot, so one line and abort */
	orcu_read_unlock();
	return 0;
}

int main(void)
{
	struct orcu_head *h = malloc(sizeof(*h));
	pthread_key_t key;
	int keys = 0, status;

	test_watchdog("test_no_key", 120);
	while (pthread_key_create(&key, NULL) == 0)
		keys++;
	printf("took the %d keys left\n", keys);
	/* Forked while this process has one thread (ThreadSanitizer). */
	status = check_wait_child(check_fork_run(implicit_reader), "implicit reader", 60);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);

	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_register_thread(), -EAGAIN);
	CHECK_EQ(orcu_register_thread_qsbr(), -EAGAIN);

	for (int i = 0; i < N; i++) {
		orcu_retire(malloc(64), del);
		CHECK_EQ(atomic_load(&deleted), i + 1); /* deleted on return */
		orcu_free(malloc(64));
	}
	orcu_free_rcu((struct obj *)malloc(sizeof(struct obj)), head);
	orcu_call(h, cb);
	orcu_barrier();
	CHECK_EQ(atomic_load(&deleted), N + 1);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("no_key");
}
