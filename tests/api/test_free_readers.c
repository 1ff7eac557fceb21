/*
 * test_free_readers.c - readers never see an object freed or retired under
 * them.  Memb and qsbr readers dereference three published pointers and
 * check, twice per section with a pause between, that every word of the
 * object still holds its magic; writers replace them at full speed and
 * hand the old object to orcu_free() (glibc's free writes into the first
 * words), orcu_retire() (the deleter poisons every word, then frees) and
 * orcu_free_rcu() (head at offset 64).  Any reader that sees a word
 * changed fails the test; under AddressSanitizer and ThreadSanitizer the
 * read of freed memory is reported too.  At the end one orcu_barrier()
 * must have run every retire deleter: none is left in a partial batch.
 */
#include <orcu.h>

#include "check.h"

#include <stdatomic.h>
#include <stdint.h>

#define WORDS 8
#define MAGIC 0x6f7263756f626a31ull
#define POISON 0xdeaddeaddeaddeadull

struct obj {
	_Atomic uint64_t w[WORDS];
	struct orcu_head head;   /* offset 64: orcu_free_rcu */
};

enum { VIA_FREE, VIA_RETIRE, VIA_FREE_RCU, NR_VIA };

static struct obj *_Atomic published[NR_VIA];
static atomic_int stop;
static atomic_long retired, deleted, reads;

static struct obj *obj_new(void)
{
	struct obj *o = malloc(sizeof(*o));

	CHECK(o != NULL);
	for (int i = 0; i < WORDS; i++)
		atomic_store_explicit(&o->w[i], MAGIC, memory_order_relaxed);
	return o;
}

static void poison_delete(void *p)
{
	struct obj *o = p;

	for (int i = 0; i < WORDS; i++)
		atomic_store_explicit(&o->w[i], POISON, memory_order_relaxed);
	atomic_fetch_add(&deleted, 1);
	free(o);
}

static void check_obj(struct obj *o, int via)
{
	for (int i = 0; i < WORDS; i++) {
		uint64_t v = atomic_load_explicit(&o->w[i], memory_order_relaxed);

		if (v != MAGIC) {
			fprintf(stderr, "reader saw word %d of an object handed to %s = %#llx: "
				"reclaimed under a reader\n", i,
				via == VIA_FREE ? "orcu_free" : via == VIA_RETIRE ? "orcu_retire" :
				"orcu_free_rcu", (unsigned long long)v);
			exit(1);
		}
	}
}

static void read_once(void)
{
	orcu_read_lock();
	for (int via = 0; via < NR_VIA; via++) {
		struct obj *o = atomic_load_explicit(&published[via], memory_order_acquire);

		check_obj(o, via);
		for (int spin = 0; spin < 50; spin++)
			__asm__ __volatile__("" ::: "memory");
		check_obj(o, via);
	}
	orcu_read_unlock();
	atomic_fetch_add_explicit(&reads, 1, memory_order_relaxed);
}

static void *memb_reader(void *a)
{
	(void)a;
	CHECK(orcu_register_thread() == 0);
	while (!atomic_load(&stop))
		read_once();
	orcu_unregister_thread();
	return NULL;
}

static void *qsbr_reader(void *a)
{
	(void)a;
	CHECK(orcu_register_thread_qsbr() == 0);
	for (long n = 0; !atomic_load(&stop); n++) {
		read_once();
		if (n % 16 == 0)
			orcu_quiescent_state();
	}
	orcu_unregister_thread();
	return NULL;
}

static void *writer(void *a)
{
	long id = (long)a;

	for (long n = 0; !atomic_load(&stop); n++) {
		int via = (int)((n + id) % NR_VIA);
		struct obj *old = atomic_exchange(&published[via], obj_new());

		if (via == VIA_FREE) {
			orcu_free(old);
		} else if (via == VIA_RETIRE) {
			atomic_fetch_add(&retired, 1);
			orcu_retire(old, poison_delete);
		} else {
			orcu_free_rcu(old, head);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t r[3], w[2];
	double end;

	test_watchdog("test_free_readers", 120);
	for (int via = 0; via < NR_VIA; via++)
		atomic_store(&published[via], obj_new());
	pthread_create(&r[0], NULL, memb_reader, NULL);
	pthread_create(&r[1], NULL, memb_reader, NULL);
	pthread_create(&r[2], NULL, qsbr_reader, NULL);
	for (long i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, writer, (void *)i);
	end = check_now_s() + 2.0;
	CHECK_WAIT_UNTIL(check_now_s() >= end && atomic_load(&retired) >= 2000, 60);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	/* The writers posted their partial batches as they exited; the
	 * barrier runs every batch. */
	orcu_barrier();
	printf("reads %ld, retired %ld, deleted %ld\n", atomic_load(&reads),
	       atomic_load(&retired), atomic_load(&deleted));
	CHECK(atomic_load(&reads) > 0);
	CHECK_EQ(atomic_load(&deleted), atomic_load(&retired));
	for (int via = 0; via < NR_VIA; via++)
		free(atomic_load(&published[via]));
	TEST_PASS("test_free_readers");
}
