/*
 * test_cblist.c - the segmented callback list (src/base/cblist.c): FIFO order,
 * advance over several GPs, the accelerate merging rules, wait_range,
 * extract_done with and without a limit, entrain, take_all, and a
 * randomized run against a reference model across the gp_seq wrap.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cblist.h"
#include "check.h"

#define NNODES 4096

struct node {
	struct orcu_head h;
	int id;
};

static struct node nodes[NNODES];

/* A fresh node with a poisoned ->next: the list must overwrite it. */
static struct orcu_head *node(int id)
{
	nodes[id].id = id;
	nodes[id].h.next = (struct orcu_head *)(uintptr_t)0xdeadbeef;
	nodes[id].h.func = NULL;
	return &nodes[id].h;
}

static int id_of(const struct orcu_head *h)
{
	return ((const struct node *)h)->id;
}

/* Append h to NEXT the way the engine posts: a chain of one. */
static void enqueue(struct orcu__cblist *cbl, struct orcu_head *h)
{
	h->next = NULL;
	orcu__cblist_enqueue_chain(cbl, h, h, 1);
}

static long seg_len(const struct orcu__cblist *cbl, int seg)
{
	return cbl->len[seg];
}

static void expect_lens(const struct orcu__cblist *cbl, long done, long wait,
			long ready, long next)
{
	orcu__cblist_check(cbl);
	CHECK_EQ(seg_len(cbl, ORCU__CBL_DONE), done);
	CHECK_EQ(seg_len(cbl, ORCU__CBL_WAIT), wait);
	CHECK_EQ(seg_len(cbl, ORCU__CBL_NEXT_READY), ready);
	CHECK_EQ(seg_len(cbl, ORCU__CBL_NEXT), next);
	CHECK_EQ(orcu__cblist_len(cbl), done + wait + ready + next);
	CHECK_EQ(orcu__cblist_empty(cbl), done + wait + ready + next == 0);
	CHECK_EQ(orcu__cblist_seg_empty(cbl, ORCU__CBL_DONE), done == 0);
	CHECK_EQ(orcu__cblist_seg_empty(cbl, ORCU__CBL_WAIT), wait == 0);
	CHECK_EQ(orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT_READY), ready == 0);
	CHECK_EQ(orcu__cblist_seg_empty(cbl, ORCU__CBL_NEXT), next == 0);
}

/* The chain must hold exactly ids[0..n-1], in order, NULL-terminated. */
static void expect_chain(const struct orcu_head *c, const int *ids, long n)
{
	for (long i = 0; i < n; i++) {
		CHECK(c != NULL);
		CHECK_EQ(id_of(c), ids[i]);
		c = c->next;
	}
	CHECK(c == NULL);
}

static void expect_range(const struct orcu_head *c, int from, int to)
{
	int ids[NNODES], n = 0;

	for (int i = from; i < to; i++)
		ids[n++] = i;
	expect_chain(c, ids, n);
}

static void expect_wait_range(const struct orcu__cblist *cbl, unsigned long first,
			      unsigned long last)
{
	unsigned long f = 1, l = 1;

	CHECK(orcu__cblist_wait_range(cbl, &f, &l));
	CHECK_EQ(f, first);
	CHECK_EQ(l, last);
}

static void test_fifo(void)
{
	struct orcu__cblist cbl;
	struct orcu_head *out = (struct orcu_head *)1;
	unsigned long f, l;

	orcu__cblist_init(&cbl);
	expect_lens(&cbl, 0, 0, 0, 0);
	CHECK(!orcu__cblist_wait_range(&cbl, &f, &l));
	CHECK(!orcu__cblist_advance(&cbl, 100));
	CHECK(!orcu__cblist_accelerate(&cbl, 2));
	expect_lens(&cbl, 0, 0, 0, 0);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 0);
	CHECK(out == NULL);

	for (int i = 0; i < 5; i++) {
		enqueue(&cbl, node(i));
		expect_lens(&cbl, 0, 0, 0, i + 1);
	}
	CHECK(!orcu__cblist_wait_range(&cbl, &f, &l)); /* NEXT has no tag */
	CHECK(orcu__cblist_accelerate(&cbl, 2));
	expect_lens(&cbl, 0, 5, 0, 0);
	expect_wait_range(&cbl, 2, 2);
	CHECK(!orcu__cblist_advance(&cbl, 1));
	expect_lens(&cbl, 0, 5, 0, 0);
	CHECK(orcu__cblist_advance(&cbl, 2));
	expect_lens(&cbl, 5, 0, 0, 0);
	CHECK(!orcu__cblist_wait_range(&cbl, &f, &l));
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 5);
	expect_range(out, 0, 5);
	expect_lens(&cbl, 0, 0, 0, 0);

	/* Chains, mixed with single enqueues; n == 0 is a no-op. */
	struct orcu_head *a = node(10), *b = node(11), *c = node(12);
	a->next = b;
	b->next = c;
	c->next = NULL;
	enqueue(&cbl, node(9));
	orcu__cblist_enqueue_chain(&cbl, a, c, 3);
	orcu__cblist_enqueue_chain(&cbl, NULL, NULL, 0);
	enqueue(&cbl, node(13));
	expect_lens(&cbl, 0, 0, 0, 5);
	CHECK_EQ(orcu__cblist_take_all(&cbl, &out), 5);
	expect_range(out, 9, 14);
	expect_lens(&cbl, 0, 0, 0, 0);
	CHECK_EQ(orcu__cblist_take_all(&cbl, &out), 0);
	CHECK(out == NULL);
}

static void test_advance_several(void)
{
	struct orcu__cblist cbl;
	struct orcu_head *out;

	orcu__cblist_init(&cbl);
	enqueue(&cbl, node(0));
	enqueue(&cbl, node(1));
	CHECK(orcu__cblist_accelerate(&cbl, 2));
	enqueue(&cbl, node(2));
	enqueue(&cbl, node(3));
	CHECK(orcu__cblist_accelerate(&cbl, 4));
	enqueue(&cbl, node(4));
	expect_lens(&cbl, 0, 2, 2, 1);
	expect_wait_range(&cbl, 2, 4);

	CHECK(!orcu__cblist_advance(&cbl, 1));
	expect_lens(&cbl, 0, 2, 2, 1);
	/* At 2, WAIT is done; NEXT_READY moves up into WAIT with its tag. */
	CHECK(orcu__cblist_advance(&cbl, 2));
	expect_lens(&cbl, 2, 2, 0, 1);
	expect_wait_range(&cbl, 4, 4);
	CHECK(orcu__cblist_accelerate(&cbl, 6));
	expect_lens(&cbl, 2, 2, 1, 0);
	expect_wait_range(&cbl, 4, 6);
	/* Both waiting segments done at once. */
	CHECK(orcu__cblist_advance(&cbl, 7));
	expect_lens(&cbl, 5, 0, 0, 0);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, -1), 5);
	expect_range(out, 0, 5);
	expect_lens(&cbl, 0, 0, 0, 0);
}

static void test_accelerate_rules(void)
{
	struct orcu__cblist cbl;
	struct orcu_head *out;

	orcu__cblist_init(&cbl);
	enqueue(&cbl, node(0));
	CHECK(orcu__cblist_accelerate(&cbl, 2));
	/* Same tag: merge into WAIT. */
	enqueue(&cbl, node(1));
	CHECK(orcu__cblist_accelerate(&cbl, 2));
	expect_lens(&cbl, 0, 2, 0, 0);
	expect_wait_range(&cbl, 2, 2);
	/* Second tag: NEXT_READY. */
	enqueue(&cbl, node(2));
	CHECK(orcu__cblist_accelerate(&cbl, 4));
	expect_lens(&cbl, 0, 2, 1, 0);
	expect_wait_range(&cbl, 2, 4);
	/* Same tag as NEXT_READY: merge into it. */
	enqueue(&cbl, node(3));
	CHECK(orcu__cblist_accelerate(&cbl, 4));
	expect_lens(&cbl, 0, 2, 2, 0);
	/* Nothing in NEXT: accelerate changes nothing, still reports waiting. */
	CHECK(orcu__cblist_accelerate(&cbl, 8));
	expect_lens(&cbl, 0, 2, 2, 0);
	expect_wait_range(&cbl, 2, 4);
	/* Third tag: forced into NEXT_READY, whose tag rises to 6. */
	enqueue(&cbl, node(4));
	CHECK(orcu__cblist_accelerate(&cbl, 6));
	expect_lens(&cbl, 0, 2, 3, 0);
	expect_wait_range(&cbl, 2, 6);
	/* 2 and 3 needed only GP 4 but now wait for 6: conservative. */
	CHECK(orcu__cblist_advance(&cbl, 4));
	expect_lens(&cbl, 2, 3, 0, 0);
	expect_wait_range(&cbl, 6, 6);
	CHECK(orcu__cblist_advance(&cbl, 6));
	expect_lens(&cbl, 5, 0, 0, 0);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 5);
	expect_range(out, 0, 5);

	/* A stale snap (earlier than the last tag) joins the last segment
	 * rather than break tag order. */
	enqueue(&cbl, node(5));
	CHECK(orcu__cblist_accelerate(&cbl, 10));
	enqueue(&cbl, node(6));
	CHECK(orcu__cblist_accelerate(&cbl, 8));
	expect_lens(&cbl, 0, 2, 0, 0);
	expect_wait_range(&cbl, 10, 10);
	enqueue(&cbl, node(7));
	CHECK(orcu__cblist_accelerate(&cbl, 12));
	enqueue(&cbl, node(8));
	CHECK(orcu__cblist_accelerate(&cbl, 10));
	expect_lens(&cbl, 0, 2, 2, 0);
	expect_wait_range(&cbl, 10, 12);
	CHECK(!orcu__cblist_advance(&cbl, 9));
	CHECK(orcu__cblist_advance(&cbl, 12));
	CHECK_EQ(orcu__cblist_take_all(&cbl, &out), 4);
	expect_range(out, 5, 9);

	/* Tags on both sides of the wrap. */
	enqueue(&cbl, node(0));
	CHECK(orcu__cblist_accelerate(&cbl, ULONG_MAX - 1));
	enqueue(&cbl, node(1));
	CHECK(orcu__cblist_accelerate(&cbl, 0));
	expect_lens(&cbl, 0, 1, 1, 0);
	expect_wait_range(&cbl, ULONG_MAX - 1, 0);
	CHECK(!orcu__cblist_advance(&cbl, ULONG_MAX - 2));
	CHECK(orcu__cblist_advance(&cbl, ULONG_MAX));
	expect_lens(&cbl, 1, 1, 0, 0);
	expect_wait_range(&cbl, 0, 0);
	CHECK(orcu__cblist_advance(&cbl, 1));
	expect_lens(&cbl, 2, 0, 0, 0);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 2);
	expect_range(out, 0, 2);
}

static void test_extract_limit(void)
{
	struct orcu__cblist cbl;
	struct orcu_head *out;

	orcu__cblist_init(&cbl);
	for (int i = 0; i < 10; i++)
		enqueue(&cbl, node(i));
	orcu__cblist_accelerate(&cbl, 2);
	orcu__cblist_advance(&cbl, 2);
	enqueue(&cbl, node(10));
	enqueue(&cbl, node(11));
	orcu__cblist_accelerate(&cbl, 4);
	enqueue(&cbl, node(12));
	expect_lens(&cbl, 10, 2, 0, 1);

	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 3), 3);
	expect_range(out, 0, 3);
	expect_lens(&cbl, 7, 2, 0, 1);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 1), 1);
	expect_range(out, 3, 4);
	/* A limit above what DONE holds takes DONE only. */
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 100), 6);
	expect_range(out, 4, 10);
	expect_lens(&cbl, 0, 2, 0, 1);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 0);
	CHECK(out == NULL);
	expect_lens(&cbl, 0, 2, 0, 1);

	/* The other segments' tails survived DONE emptying. */
	enqueue(&cbl, node(13));
	expect_lens(&cbl, 0, 2, 0, 2);
	CHECK(orcu__cblist_advance(&cbl, 4));
	expect_lens(&cbl, 2, 0, 0, 2);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 2);
	expect_range(out, 10, 12);
	expect_lens(&cbl, 0, 0, 0, 2);

	/* Extract everything with nothing behind DONE, then reuse the list. */
	orcu__cblist_accelerate(&cbl, 6);
	orcu__cblist_advance(&cbl, 6);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 2), 2);
	expect_range(out, 12, 14);
	expect_lens(&cbl, 0, 0, 0, 0);
	enqueue(&cbl, node(20));
	enqueue(&cbl, node(21));
	expect_lens(&cbl, 0, 0, 0, 2);
	orcu__cblist_accelerate(&cbl, 8);
	orcu__cblist_advance(&cbl, 8);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 2);
	expect_range(out, 20, 22);
}

static void test_entrain(void)
{
	struct orcu__cblist cbl;
	struct orcu_head *out;

	/* Empty list: straight into DONE, ready at once. */
	orcu__cblist_init(&cbl);
	orcu__cblist_entrain(&cbl, node(0));
	expect_lens(&cbl, 1, 0, 0, 0);
	CHECK(orcu__cblist_advance(&cbl, 0));
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 1);
	expect_range(out, 0, 1);

	/* Only DONE populated: behind it. */
	enqueue(&cbl, node(1));
	enqueue(&cbl, node(2));
	orcu__cblist_accelerate(&cbl, 2);
	orcu__cblist_advance(&cbl, 2);
	orcu__cblist_entrain(&cbl, node(3));
	expect_lens(&cbl, 3, 0, 0, 0);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 3);
	expect_range(out, 1, 4);

	/* Only WAIT populated. */
	enqueue(&cbl, node(4));
	orcu__cblist_accelerate(&cbl, 4);
	orcu__cblist_entrain(&cbl, node(5));
	expect_lens(&cbl, 0, 2, 0, 0);
	expect_wait_range(&cbl, 4, 4);

	/* DONE, WAIT and NEXT_READY populated: into NEXT_READY, tag kept. */
	orcu__cblist_advance(&cbl, 4);
	enqueue(&cbl, node(6));
	orcu__cblist_accelerate(&cbl, 6);
	enqueue(&cbl, node(7));
	orcu__cblist_accelerate(&cbl, 8);
	expect_lens(&cbl, 2, 1, 1, 0);
	orcu__cblist_entrain(&cbl, node(8));
	expect_lens(&cbl, 2, 1, 2, 0);
	expect_wait_range(&cbl, 6, 8);
	orcu__cblist_advance(&cbl, 6);
	expect_lens(&cbl, 3, 2, 0, 0);   /* the marker still waits for 8 */
	orcu__cblist_advance(&cbl, 8);
	expect_lens(&cbl, 5, 0, 0, 0);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 5);
	expect_range(out, 4, 9);

	/* NEXT populated: into NEXT, tagged with it by the next accelerate. */
	enqueue(&cbl, node(9));
	orcu__cblist_accelerate(&cbl, 10);
	enqueue(&cbl, node(10));
	orcu__cblist_entrain(&cbl, node(11));
	expect_lens(&cbl, 0, 1, 0, 2);
	orcu__cblist_accelerate(&cbl, 12);
	expect_lens(&cbl, 0, 1, 2, 0);
	orcu__cblist_advance(&cbl, 12);
	CHECK_EQ(orcu__cblist_extract_done(&cbl, &out, 0), 3);
	expect_range(out, 9, 12);
}

/* ------------------------------------------------------------------ */
/* Randomized run against a reference model.                            */

struct model_cb {
	bool live;        /* queued on some list */
	bool barrier;     /* entrained marker: no GP of its own to wait for */
	bool need_set;    /* has been tagged at least once */
	unsigned long need; /* the first snap it was tagged with: its minimum */
};

struct model_list {
	struct orcu__cblist cbl;
	int ids[NNODES];  /* the exact order the list must hold */
	long n;
	unsigned long max_snap; /* latest snap passed to accelerate */
};

static struct model_cb mcb[NNODES];
static int free_ids[NNODES];
static int nfree;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int alloc_id(void)
{
	int id = free_ids[--nfree];

	CHECK(!mcb[id].live);
	mcb[id] = (struct model_cb){ .live = true };
	node(id);
	return id;
}

/* The callbacks in a detached chain must be the front of the model, each
 * queued exactly once; they are returned to the pool. */
static void consume(struct model_list *m, struct orcu_head *c, long n)
{
	CHECK_LE(n, m->n);
	expect_chain(c, m->ids, n);
	for (long i = 0; i < n; i++) {
		CHECK(mcb[m->ids[i]].live);
		mcb[m->ids[i]].live = false;
		free_ids[nfree++] = m->ids[i];
	}
	memmove(m->ids, m->ids + n, (m->n - n) * sizeof(m->ids[0]));
	m->n -= n;
}

/*
 * The whole-list oracle, after every step: same callbacks in the same
 * order as the model; nothing in DONE before its GP ended at cur; nothing
 * waiting with a tag earlier than it needs; nothing untagged outside NEXT;
 * no tag later than any snap the caller handed in.
 */
static void verify(const struct model_list *m, unsigned long cur)
{
	const struct orcu_head *c = m->cbl.head;
	long i = 0;

	orcu__cblist_check(&m->cbl);
	CHECK_EQ(orcu__cblist_len(&m->cbl), m->n);
	for (int s = 0; s < ORCU__CBL_NSEGS; s++) {
		for (long k = 0; k < seg_len(&m->cbl, s); k++, i++) {
			const struct model_cb *cb = &mcb[m->ids[i]];

			CHECK_EQ(id_of(c), m->ids[i]);
			CHECK(cb->live);
			if (!cb->barrier && s != ORCU__CBL_NEXT)
				CHECK(cb->need_set);
			if (!cb->barrier && s == ORCU__CBL_DONE)
				CHECK(orcu__seq_done(cur, cb->need));
			if (s == ORCU__CBL_WAIT || s == ORCU__CBL_NEXT_READY) {
				if (!cb->barrier)
					CHECK(orcu__seq_ge(m->cbl.gp_seq[s], cb->need));
				CHECK(orcu__seq_ge(m->max_snap, m->cbl.gp_seq[s]));
			}
			c = c->next;
		}
	}
	CHECK(c == NULL);
}

static void test_random(void)
{
	enum { OPS = 100000 };
	struct model_list *lists = calloc(2, sizeof(*lists));
	/* Start idle, about 10k counter steps below the wrap. */
	unsigned long cur = ULONG_MAX - 10001;
	bool wrapped = false;
	long queued = 0, extracted = 0;

	CHECK(lists != NULL);
	for (int i = 0; i < NNODES; i++)
		free_ids[nfree++] = NNODES - 1 - i;
	for (int l = 0; l < 2; l++) {
		orcu__cblist_init(&lists[l].cbl);
		lists[l].max_snap = cur;
	}

	for (long op = 0; op < OPS; op++) {
		struct model_list *m = &lists[rnd() & 1];
		unsigned r = rnd() % 100;
		struct orcu_head *out;

		if (r < 25 && nfree > 0) {
			int id = alloc_id();

			enqueue(&m->cbl, &nodes[id].h);
			m->ids[m->n++] = id;
			queued++;
		} else if (r < 30 && nfree >= 5) {
			long k = 1 + rnd() % 5;
			int first = -1, prev = -1;

			for (long i = 0; i < k; i++) {
				int id = alloc_id();

				if (prev >= 0)
					nodes[prev].h.next = &nodes[id].h;
				else
					first = id;
				prev = id;
				m->ids[m->n++] = id;
			}
			nodes[prev].h.next = NULL;
			orcu__cblist_enqueue_chain(&m->cbl, &nodes[first].h, &nodes[prev].h, k);
			queued += k;
		} else if (r < 45) {
			unsigned long snap = orcu__seq_snap(cur);
			bool had_next = !orcu__cblist_seg_empty(&m->cbl, ORCU__CBL_NEXT);
			bool ret = orcu__cblist_accelerate(&m->cbl, snap);

			CHECK_EQ(ret, !orcu__cblist_seg_empty(&m->cbl, ORCU__CBL_WAIT));
			CHECK(!had_next || ret);
			CHECK(orcu__cblist_seg_empty(&m->cbl, ORCU__CBL_NEXT));
			for (long i = 0; i < m->n; i++) {
				struct model_cb *cb = &mcb[m->ids[i]];

				if (!cb->need_set) {
					cb->need_set = true;
					cb->need = snap;
				}
			}
			m->max_snap = snap;
		} else if (r < 60) {
			cur++;  /* a GP starts or ends */
			if (cur == 0)
				wrapped = true;
		} else if (r < 72) {
			unsigned long first, last;
			bool ret = orcu__cblist_advance(&m->cbl, cur);

			CHECK_EQ(ret, !orcu__cblist_seg_empty(&m->cbl, ORCU__CBL_DONE));
			/* Nothing left waiting for a GP that has ended. */
			if (orcu__cblist_wait_range(&m->cbl, &first, &last))
				CHECK(!orcu__seq_done(cur, first));
		} else if (r < 84) {
			long limit = rnd() % 5, before = seg_len(&m->cbl, ORCU__CBL_DONE);
			long n = orcu__cblist_extract_done(&m->cbl, &out, limit);

			CHECK_EQ(n, limit > 0 && limit < before ? limit : before);
			consume(m, out, n);
			extracted += n;
		} else if (r < 90 && nfree > 0) {
			long before[ORCU__CBL_NSEGS];
			int seg = ORCU__CBL_NEXT, id = alloc_id();

			for (int s = 0; s < ORCU__CBL_NSEGS; s++)
				before[s] = seg_len(&m->cbl, s);
			while (seg > ORCU__CBL_DONE && before[seg] == 0)
				seg--;
			mcb[id].barrier = true;
			orcu__cblist_entrain(&m->cbl, &nodes[id].h);
			m->ids[m->n++] = id;
			queued++;
			for (int s = 0; s < ORCU__CBL_NSEGS; s++)
				CHECK_EQ(seg_len(&m->cbl, s), before[s] + (s == seg));
		} else if (r >= 96 && r < 97) {
			long n = orcu__cblist_take_all(&m->cbl, &out);

			CHECK_EQ(n, m->n);
			consume(m, out, n);
			extracted += n;
		}
		verify(&lists[0], cur);
		verify(&lists[1], cur);
	}
	CHECK(wrapped);

	/* Liveness: one more GP after tagging everything releases everything. */
	for (int l = 0; l < 2; l++) {
		struct model_list *m = &lists[l];
		unsigned long snap = orcu__seq_snap(cur);
		struct orcu_head *out;

		orcu__cblist_accelerate(&m->cbl, snap);
		for (long i = 0; i < m->n; i++)
			if (!mcb[m->ids[i]].need_set) {
				mcb[m->ids[i]].need_set = true;
				mcb[m->ids[i]].need = snap;
			}
		m->max_snap = snap;
		while (!orcu__seq_done(cur, snap))
			cur++;
		orcu__cblist_advance(&m->cbl, cur);
		verify(m, cur);
		CHECK_EQ(seg_len(&m->cbl, ORCU__CBL_DONE), m->n);
		long n = orcu__cblist_extract_done(&m->cbl, &out, 0);
		consume(m, out, n);
		extracted += n;
		expect_lens(&m->cbl, 0, 0, 0, 0);
	}
	CHECK_EQ(extracted, queued);
	CHECK_EQ(nfree, NNODES);
	CHECK(queued > OPS / 4);
	free(lists);
}

int main(void)
{
	test_fifo();
	test_advance_several();
	test_accelerate_rules();
	test_extract_limit();
	test_entrain();
	test_random();
	TEST_PASS("cblist");
}
