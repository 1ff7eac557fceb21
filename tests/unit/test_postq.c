/*
 * test_postq.c - a thread's posting queue (src/callbacks/postq.c) on its own: one
 * producer with plain stores, one consumer taking what was published.
 *  - one thread: heads pushed across many segments, taken in chunks of
 *    every size, come out once each, in order; drained segments go back
 *    to the producer, at most ORCU__PSEG_SPARES of them kept;
 *  - two threads: a producer pushing 300000 heads while a consumer takes
 *    whatever is published: every head once, in order;
 *  - a producer that stops between two of its steps (as a thread of a
 *    forking process does, postq.c point 3) leaves a queue the next owner
 *    continues: an entry written but not published is overwritten, a
 *    segment linked but not yet moved to is used, not linked twice;
 *  - the producer writes no head (postq.c point 1): heads whose links
 *    still hold a stale pointer keep it until the take, which links
 *    them in order all the same;
 *  - a head posted twice while pending is reported at the take, in one
 *    line naming orcu_call.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include "common_pipe.h"
#include "postq.h"
#include "slot.h"

#define NHEADS 300000

struct node {
	struct orcu_head h;
	long id;
};

static struct node *nodes;
static struct orcu__slot dummy_slot;   /* not one of the library's slots */

static void nop(struct orcu_head *h)
{
	(void)h;
}

static long id_of(struct orcu_head *h)
{
	return ((struct node *)h)->id;
}

/* Owner side, as post_own() does it: a full segment gets the next one. */
static void push(struct orcu__postq *q, long id)
{
	struct orcu_head *h = &nodes[id].h;

	nodes[id].id = id;
	h->func = nop;
	if (!orcu__postq_push(q, h)) {
		CHECK(orcu__postq_next_seg(q) != NULL);
		CHECK(orcu__postq_push(q, h) != 0);
	}
}

/* Consumer side: take what is published; check the ids follow *next. */
static long take(struct orcu__postq *q, long *next)
{
	struct orcu_head *first = NULL, *last = NULL;
	long n = orcu__postq_take(q, orcu__postq_published(q), &first, &last);

	for (struct orcu_head *h = first; n && h; h = h->next) {
		CHECK_EQ(id_of(h), *next);
		(*next)++;
		if (h == last) {
			CHECK(h->next == NULL);
			break;
		}
	}
	return n;
}

static long spares(struct orcu__postq *q)
{
	long n = 0;

	for (struct orcu__pseg *s = orcu__load_relaxed(&q->spare); s; s = orcu__load_relaxed(&s->next))
		n++;
	for (struct orcu__pseg *s = q->pfree; s; s = orcu__load_relaxed(&s->next))
		n++;
	return n;
}

/* The library keeps its queues for the process's life; the test frees its
 * own: the chain from the consumer's segment on, and both free lists. */
static void free_seglist(struct orcu__pseg *s)
{
	while (s) {
		struct orcu__pseg *next = orcu__load_relaxed(&s->next);

		free(s);
		s = next;
	}
}

static void postq_free(struct orcu__postq *q)
{
	free_seglist(q->cseg);
	free_seglist(orcu__load_relaxed(&q->spare));
	free_seglist(q->pfree);
	free(q);
}

static void one_thread(void)
{
	struct orcu__postq *q = orcu__postq_new(&dummy_slot);
	long next = 0, id = 0;

	CHECK(q != NULL);
	for (long chunk = 1; chunk <= 300; chunk++) {
		for (long i = 0; i < chunk; i++)
			push(q, id++);
		CHECK_EQ(take(q, &next), chunk);
		CHECK_EQ(take(q, &next), 0);
		CHECK(spares(q) <= ORCU__PSEG_SPARES + 1);
	}
	CHECK_EQ(next, id);
	/* A burst of many segments, then one take: most are freed. */
	for (long i = 0; i < 50 * ORCU__PSEG_N; i++)
		push(q, id++);
	CHECK_EQ(take(q, &next), 50 * ORCU__PSEG_N);
	CHECK(spares(q) <= ORCU__PSEG_SPARES + 1);
	printf("one thread: %ld heads in order, %ld spare segment(s) kept\n", next, spares(q));
	postq_free(q);
}

static atomic_int producer_done;
static pthread_mutex_t cb_lock = PTHREAD_MUTEX_INITIALIZER;

static void *producer(void *arg)
{
	struct orcu__postq *q = arg;

	for (long i = 0; i < NHEADS; i++)
		push(q, i);
	atomic_store(&producer_done, 1);
	return NULL;
}

static void two_threads(void)
{
	struct orcu__postq *q = orcu__postq_new(&dummy_slot);
	long next = 0, takes = 0;
	pthread_t t;

	CHECK(q != NULL);
	CHECK_EQ(pthread_create(&t, NULL, producer, q), 0);
	for (;;) {
		bool done = atomic_load(&producer_done);

		pthread_mutex_lock(&cb_lock);
		takes += take(q, &next) > 0;
		pthread_mutex_unlock(&cb_lock);
		if (done && orcu__postq_published(q) == orcu__load_relaxed(&q->taken))
			break;
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(next, NHEADS);
	printf("two threads: %d heads in order, in %ld takes\n", NHEADS, takes);
	postq_free(q);
}

static void dead_owner(void)
{
	struct orcu__postq *q = orcu__postq_new(&dummy_slot);
	struct orcu__pseg *seg, *linked;
	long next = 0, id = 0;

	CHECK(q != NULL);
	push(q, id++);
	/* Stopped after writing an entry, before publishing it. */
	nodes[NHEADS - 1].id = -1;
	seg = q->pseg;
	orcu__store_relaxed(&seg->e[orcu__postq_published(q) - seg->base], &nodes[NHEADS - 1].h);
	push(q, id++);
	CHECK_EQ(take(q, &next), 2);
	/* Fill the segment; stopped after linking the next one, before
	 * moving to it. */
	while (orcu__postq_published(q) - q->pseg->base < ORCU__PSEG_N)
		push(q, id++);
	seg = q->pseg;
	CHECK(orcu__postq_next_seg(q) != NULL);
	linked = q->pseg;
	q->pseg = seg;
	push(q, id++);
	CHECK(q->pseg == linked);
	CHECK(orcu__load_relaxed(&seg->next) == linked);
	CHECK(orcu__load_relaxed(&linked->next) == NULL);
	for (int i = 0; i < 3 * ORCU__PSEG_N; i++)
		push(q, id++);
	CHECK_EQ(take(q, &next), id - 2);
	CHECK_EQ(next, id);
	printf("dead owner: the next owner continued, %ld heads in order\n", next);
	postq_free(q);
}

static void no_head_write(void)
{
	struct orcu__postq *q = orcu__postq_new(&dummy_slot);
	struct orcu_head *stale = &nodes[NHEADS - 1].h;
	long next = 0;

	for (long id = 0; id < 2 * ORCU__PSEG_N; id++) {
		orcu__link_store_relaxed(&nodes[id].h.next, stale);
		push(q, id);
		CHECK(orcu__link_load_relaxed(&nodes[id].h.next) == stale);
	}
	CHECK_EQ(take(q, &next), 2 * ORCU__PSEG_N);
	CHECK_EQ(next, 2 * ORCU__PSEG_N);
	printf("no head written: %d stale links kept by the posts, cleared by the take\n",
	       2 * ORCU__PSEG_N);
	postq_free(q);
}

static int double_post(void *arg)
{
	struct orcu__postq *q = orcu__postq_new(&dummy_slot);
	long next = 0;

	(void)arg;
	push(q, 0);
	push(q, 1);
	push(q, 0);             /* again, with 1 after it: only a take sees it */
	take(q, &next);
	return 0;
}

int main(void)
{
	struct child_result r;

	test_watchdog("test_postq", 120);
	nodes = calloc(NHEADS, sizeof(*nodes));
	CHECK(nodes != NULL);
	one_thread();
	two_threads();
	dead_owner();
	no_head_write();
	run_child(double_post, NULL, 30, &r);
	printf("double post -> %s", r.lines ? r.err : "(nothing)\n");
	CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT);
	CHECK_EQ(r.lines, 1);
	CHECK(strncmp(r.err, "orcu: orcu_call: callback head 0x", 33) == 0);
	CHECK(strstr(r.err, "posted twice while still pending") != NULL);
	free(nodes);
	TEST_PASS("test_postq");
}
