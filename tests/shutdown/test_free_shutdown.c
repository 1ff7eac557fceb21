/*
 * test_free_shutdown.c - orcu_shutdown() with batches of orcu_retire() and
 * orcu_free() pending (posted full batches, partial ones on an idle
 * thread and on the caller, a deleter that retires more): it returns
 * with every one deleted and no library thread left; then the library
 * starts again on the next retire, and a barrier deletes those too.
 */
#include <orcu.h>

#include "check.h"

#include <stdatomic.h>

static atomic_long retired, deleted;
static atomic_int ready, release_it, chain_left;

static void del(void *p)
{
	atomic_fetch_add(&deleted, 1);
	free(p);
}

/* A deleter that retires the next link without blocking. */
static void chain_del(void *p)
{
	del(p);
	if (atomic_fetch_sub(&chain_left, 1) > 1) {
		atomic_fetch_add(&retired, 1);
		CHECK(orcu__retire_nb(malloc(16), chain_del) == 0);
	}
}

static void retire_n(int n)
{
	for (int i = 0; i < n; i++) {
		atomic_fetch_add(&retired, 1);
		orcu_retire(malloc(32), del);
		orcu_free(malloc(32));
	}
}

static void *idle_poster(void *a)
{
	(void)a;
	retire_n(1000);
	atomic_store(&ready, 1);
	while (!atomic_load(&release_it))
		sched_yield();
	return NULL;
}

int main(void)
{
	char names[8][32];
	pthread_t t;

	test_watchdog("test_free_shutdown", 120);
	pthread_create(&t, NULL, idle_poster, NULL);
	CHECK_WAIT_UNTIL(atomic_load(&ready), 60);
	retire_n(3);
	atomic_store(&chain_left, 20);
	atomic_fetch_add(&retired, 1);
	orcu_retire(malloc(16), chain_del);
	CHECK_EQ(orcu_shutdown(), 0);
	printf("shutdown: %ld retired, %ld deleted, %d library threads\n",
	       atomic_load(&retired), atomic_load(&deleted),
	       check_thread_names("orcu-", names, 8));
	CHECK_EQ(atomic_load(&deleted), atomic_load(&retired));
	CHECK_EQ(check_thread_names("orcu-", names, 8), 0);
	/* Reuse. */
	retire_n(10);
	orcu_barrier();
	CHECK_EQ(atomic_load(&deleted), atomic_load(&retired));
	atomic_store(&release_it, 1);
	pthread_join(t, NULL);
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(atomic_load(&deleted), atomic_load(&retired));
	TEST_PASS("test_free_shutdown");
}
