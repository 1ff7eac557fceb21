/*
 * test_free_enomem_blocks.c - with no batch memory (every allocation of
 * the calling thread fails, tests/support/fail_alloc.c), orcu_free() and
 * orcu_retire() fall back to waiting for a grace period: they return only
 * after a reader that held the object has left its section, with the
 * object already deleted; nothing is lost.  orcu_free_rcu() under the
 * same failure never blocks, even called inside a read-side section: it
 * posts the object's own head, which the next barrier runs.
 */
#include <orcu.h>

#include "check.h"
#include "fail_alloc.h"

#include <stdatomic.h>

struct obj {
	long pad[3];
	struct orcu_head head;   /* offset 24 */
};

static atomic_int in_section, left_section, deleted_after_reader, deleted;

/* Holds a section long enough that a retire which does not wait for it
 * deletes the object first, which the deleter then reports. */
static void *reader(void *a)
{
	(void)a;
	CHECK(orcu_register_thread() == 0);
	orcu_read_lock();
	atomic_store(&in_section, 1);
	struct timespec ts = { 0, 200 * 1000000 };
	nanosleep(&ts, NULL);
	atomic_store(&left_section, 1);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static void del(void *p)
{
	atomic_store(&deleted_after_reader, atomic_load(&left_section));
	atomic_fetch_add(&deleted, 1);
	free(p);
}

static void retire_case(bool use_free)
{
	struct obj *o = malloc(sizeof(*o));
	int failed, made;
	pthread_t t;

	CHECK(o != NULL);
	atomic_store(&in_section, 0);
	atomic_store(&left_section, 0);
	atomic_store(&deleted, 0);
	pthread_create(&t, NULL, reader, NULL);
	CHECK_WAIT_UNTIL(atomic_load(&in_section), 60);
	fail_alloc_arm(FAIL_FROM, 1);
	if (use_free)
		orcu_free(o);
	else
		orcu_retire(o, del);
	made = fail_alloc_disarm(&failed);
	/* Returned only after the reader's section ended. */
	CHECK(atomic_load(&left_section));
	printf("%s: %d allocation(s) tried, %d failed; returned after the reader left\n",
	       use_free ? "orcu_free" : "orcu_retire", made, failed);
	CHECK(failed >= 1);
	if (!use_free) {
		CHECK_EQ(atomic_load(&deleted), 1);   /* deleted before return */
		CHECK(atomic_load(&deleted_after_reader));
	}
	pthread_join(t, NULL);
}

int main(void)
{
	struct orcu_stats a, b;
	struct obj *o;

	test_watchdog("test_free_enomem_blocks", 120);
	if (!fail_alloc_supported()) {
		printf("allocation failure cannot be injected in this build (sanitizer)\n");
		TEST_PASS("test_free_enomem_blocks");
	}
	CHECK(orcu_register_thread() == 0);
	orcu_barrier();   /* started: the library's own allocations are done */
	/* No record yet on this thread: the record's allocation fails. */
	retire_case(false);
	retire_case(true);
	/* A record now exists (made unarmed), no open batch: the batch's
	 * allocation fails. */
	orcu_free(malloc(16));
	orcu_barrier();
	retire_case(false);

	/* orcu_free_rcu: never blocks, allowed in a section. */
	o = malloc(sizeof(*o));
	CHECK(o != NULL);
	orcu_barrier();
	orcu_get_stats(&a);
	orcu_read_lock();
	fail_alloc_arm(FAIL_FROM, 1);
	orcu_free_rcu(o, head);
	fail_alloc_disarm(NULL);
	orcu_read_unlock();
	orcu_barrier();
	orcu_get_stats(&b);
	printf("orcu_free_rcu in a section: %llu callback(s) posted, %llu invoked\n",
	       (unsigned long long)(b.callbacks_queued - a.callbacks_queued),
	       (unsigned long long)(b.callbacks_invoked - a.callbacks_invoked));
	CHECK(b.callbacks_queued - a.callbacks_queued >= 1);
	CHECK(b.callbacks_invoked - a.callbacks_invoked >= 1);
	TEST_PASS("test_free_enomem_blocks");
}
