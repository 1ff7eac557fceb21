/*
 * test_shutdown_vs_posts - callbacks another thread posts while
 * orcu_shutdown() runs are never lost, never run twice, and never left
 * without a server (DESIGN 5.8): those it did not drain are run by the
 * shutdown itself once its threads are joined, or by the threads a later
 * post starts again, with no barrier, within 10 s.  Each round a poster
 * posts flat out from a memb thread and, in odd rounds, from a qsbr thread
 * that announces quiescent states between posts, while this thread shuts
 * orcu down; then the posters stop.  Before the server rule, 27-31 of 150
 * rounds left callbacks queued with no thread until a barrier came.
 * After the last round: a shutdown with nothing posted leaves no thread.
 */
#include <orcu.h>

#include "common_pipe.h"

#define ROUNDS 150
#define MAX_POSTS (1 << 16)   /* per round; the heads are reused */

struct obj {
	struct orcu_head h;
	atomic_int runs;
};

static struct obj objs[MAX_POSTS];
static atomic_int poster_stop, posted, invoked, twice;

static void cb(struct orcu_head *h)
{
	struct obj *o = (struct obj *)h;

	if (atomic_fetch_add(&o->runs, 1) != 0)
		atomic_fetch_add(&twice, 1);
	atomic_fetch_add(&invoked, 1);
}

static void *poster(void *arg)
{
	bool qsbr = arg != NULL;

	CHECK_EQ(qsbr ? orcu_register_thread_qsbr() : orcu_register_thread(), 0);
	while (!atomic_load(&poster_stop)) {
		int i = atomic_load(&posted);

		if (i == MAX_POSTS)
			break;
		orcu_call(&objs[i].h, cb);
		atomic_store(&posted, i + 1);
		if (qsbr)
			orcu_quiescent_state();
	}
	orcu_unregister_thread();
	return NULL;
}

int main(void)
{
	int later = 0;

	test_watchdog("test_shutdown_vs_posts", 110);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t;
		int n;

		for (int i = 0; i < MAX_POSTS; i++)
			atomic_store(&objs[i].runs, 0);
		atomic_store(&posted, 0);
		atomic_store(&invoked, 0);
		atomic_store(&poster_stop, 0);
		orcu_synchronize();                 /* (re)started */
		CHECK_EQ(pthread_create(&t, NULL, poster, (r & 1) ? (void *)1 : NULL), 0);
		CHECK_WAIT_UNTIL(atomic_load(&posted) > 100, 10);
		CHECK_EQ(orcu_shutdown(), 0);
		atomic_store(&poster_stop, 1);
		CHECK_EQ(pthread_join(t, NULL), 0);
		n = atomic_load(&posted);
		/* Run once the shutdown returned: by it, or restarted threads. */
		if (atomic_load(&invoked) < n)
			later++;
		CHECK_WAIT_UNTIL(atomic_load(&invoked) == n, 10);
		CHECK_EQ(atomic_load(&twice), 0);
	}
	printf("%d of %d rounds ran callbacks after the shutdown returned, no barrier\n",
	       later, ROUNDS);
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
	TEST_PASS("shutdown_vs_posts");
}
