/*
 * peer_ck.c - Concurrency Kit's ck_epoch (Debian libck-dev): a record per
 * thread, ck_epoch_begin/end around each read, ck_epoch_call to defer,
 * ck_epoch_barrier/synchronize to wait.  Deferred callbacks run on the
 * posting thread when it polls or barriers (ck has no helper threads).
 */
#include <ck_epoch.h>

#include "bench.h"

#include <stdlib.h>

static ck_epoch_t epoch;
static __thread ck_epoch_record_t *my_rec;

void ck_init_global(void)
{
	ck_epoch_init(&epoch);
}

void *ck_rec_new(void)
{
	ck_epoch_record_t *r = ck_epoch_recycle(&epoch, NULL);

	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			abort();
		ck_epoch_register(&epoch, r, NULL);
	}
	my_rec = r;
	return r;
}

void ck_rec_free(void *rec)
{
	ck_epoch_barrier(rec);
	ck_epoch_unregister(rec);
	my_rec = NULL;
}

void *ck_thread_rec(void)
{
	return my_rec ? my_rec : ck_rec_new();
}

uint64_t read_ck(const _Atomic int *stop, long *sink)
{
	ck_epoch_record_t *r = ck_rec_new();
	uint64_t n = 0;
	long sum = 0;

	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_INNER; i++) {
			struct bobj *p;

			ck_epoch_begin(r, NULL);
			p = ck_pr_load_ptr(&bench_gp);
			sum += p->val;
			ck_epoch_end(r, NULL);
		}
		n += BENCH_INNER;
	}
	ck_rec_free(r);
	*sink = sum;
	return n;
}

struct ckcb {
	ck_epoch_entry_t entry;
	void (*fn)(void *mem);
};

static void ckcb_invoke(ck_epoch_entry_t *e)
{
	struct ckcb *c = (struct ckcb *)e;

	c->fn(c);
}

void ck_post(void *rec, void *mem, void (*fn)(void *mem))
{
	struct ckcb *c = mem;

	c->fn = fn;
	ck_epoch_call(rec, &c->entry, ckcb_invoke);
}

size_t ck_entry_size(void)
{
	return sizeof(struct ckcb);
}

void ck_barrier_rec(void *rec)
{
	ck_epoch_barrier(rec);
}

void ck_synchronize_rec(void *rec)
{
	ck_epoch_synchronize(rec);
}
