/*
 * test_free_no_key.c - orcu_free() and orcu_retire() in a process that
 * used up its thread-specific data keys (PTHREAD_KEYS_MAX) before their
 * first call.  They aborted ("free.c: pthread_key_create failed"), which
 * breaks "never abort for want of a resource".  With no key no thread
 * gets a batch record, and each object takes the no-memory path (free.c
 * point 4): a grace period, then deleted before the call returns, once.
 * orcu_free_rcu() posts its object's head as before, and orcu_call() and
 * a barrier still work without their keys.
 */
#include <orcu.h>

#include <pthread.h>
#include <stdatomic.h>

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

int main(void)
{
	struct orcu_head *h = malloc(sizeof(*h));
	pthread_key_t key;
	int keys = 0;

	test_watchdog("test_free_no_key", 120);
	CHECK_EQ(orcu_init(NULL), 0);
	while (pthread_key_create(&key, NULL) == 0)
		keys++;
	printf("took the %d keys left\n", keys);
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
	TEST_PASS("free_no_key");
}
