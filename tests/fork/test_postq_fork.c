/*
 * test_postq_fork.c - fork() while another thread owns a posting queue
 * with callbacks pending in it (slot.c point 7).  The poster is inside a
 * read-side section, so its callbacks cannot have run when the main
 * thread forks.  In the child, where the poster does not exist:
 *  - its queue has no owner any more, and the slot's leader counts only
 *    the queues the child's own thread owns;
 *  - one barrier runs every callback posted before the fork, once;
 *  - a new thread on the poster's slot takes over the queue it left (no
 *    new queue is made), and its callbacks run too; nothing stays pending.
 * In the parent, once the poster leaves its section, the same callbacks
 * run there, once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "os.h"
#include "nocb.h"
#include "postq.h"
#include "slot.h"

#define NPOSTS 500
#define POSTER_SLOT 1
#define MAIN_SLOT 0

static struct orcu_head heads[NPOSTS], later[NPOSTS], mine;
static atomic_long ran_heads, ran_later, ran_mine;
static atomic_int posted, leave;

static void head_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran_heads, 1);
}

static void later_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran_later, 1);
}

static void mine_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&ran_mine, 1);
}

static void *poster(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_thread_bind_cpu(POSTER_SLOT), 0);
	orcu_read_lock();
	for (int i = 0; i < NPOSTS; i++)
		orcu_call(&heads[i], head_cb);
	atomic_store(&posted, 1);
	CHECK_WAIT_UNTIL(atomic_load(&leave), 60);
	orcu_read_unlock();
	return NULL;
}

static void *late_poster(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_thread_bind_cpu(POSTER_SLOT), 0);
	for (int i = 0; i < NPOSTS; i++)
		orcu_call(&later[i], later_cb);
	return NULL;
}

static long queues(int slot, long *owned)
{
	long n = 0;

	*owned = 0;
	for (struct orcu__postq *q = orcu__load_acquire(&orcu__slot_of(slot)->st.postqs); q; q = q->next) {
		n++;
		*owned += orcu__load_relaxed(&q->owned);
	}
	return n;
}

static int child(void)
{
	long before, owned, after;
	pthread_attr_t attr;
	pthread_t t;

	before = queues(POSTER_SLOT, &owned);
	CHILD_CHECK(2, before == 1);
	CHILD_CHECK(3, owned == 0);
	CHILD_CHECK(4, orcu__load_relaxed(&orcu__slot_of(POSTER_SLOT)->st.leader->postq_owners) == 0);
	CHILD_CHECK(5, orcu__load_relaxed(&orcu__slot_of(MAIN_SLOT)->st.leader->postq_owners) == 1);
	orcu_barrier();
	CHILD_CHECK(6, atomic_load(&ran_heads) == NPOSTS);
	CHILD_CHECK(7, atomic_load(&ran_mine) == 1);
	/* A stack size of its own: glibc would give the child's new thread
	 * the stack (and so the id) of the parent's poster, which
	 * ThreadSanitizer still counts as running. */
	CHILD_CHECK(8, pthread_attr_init(&attr) == 0 &&
		       pthread_attr_setstacksize(&attr, 1 << 20) == 0 &&
		       pthread_create(&t, &attr, late_poster, NULL) == 0);
	CHILD_CHECK(9, pthread_join(t, NULL) == 0);
	after = queues(POSTER_SLOT, &owned);
	CHILD_CHECK(10, after == before);
	CHILD_CHECK(11, orcu_drain(20000) == 0);
	CHILD_CHECK(12, atomic_load(&ran_later) == NPOSTS);
	CHILD_CHECK(13, atomic_load(&ran_heads) == NPOSTS);
	printf("child: %d callbacks of the vanished poster ran once, its queue was taken over\n",
	       NPOSTS);
	fflush(stdout);
	return 0;
}

int main(void)
{
	pthread_t t;

	test_watchdog("test_postq_fork", 120);
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_NOCBS", "all", 1);
	setenv("ORCU_NOCB_STRIDE", "1", 1);    /* one leader per slot */
	CHECK_EQ(orcu_init(NULL), 0);
	CHECK_EQ(orcu_thread_bind_cpu(MAIN_SLOT), 0);
	orcu_call(&mine, mine_cb);             /* the main thread owns a queue too */
	CHECK_EQ(pthread_create(&t, NULL, poster, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&posted), 30);
	check_child_ok(check_fork_run(child), "fork child", 60);
	atomic_store(&leave, 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	orcu_barrier();
	CHECK_EQ(atomic_load(&ran_heads), NPOSTS);
	CHECK_EQ(atomic_load(&ran_mine), 1);
	CHECK_EQ(orcu_shutdown(), 0);
	TEST_PASS("test_postq_fork");
}
