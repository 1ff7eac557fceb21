/*
 * tsan_flood.c - a correct program built with -fsanitize=thread that posts
 * 100,000 callbacks at a rate (tests/compat/debugging.sh), against the
 * ordinary (uninstrumented) library: through orcu_call(), or with
 * -DURCU_ABI through liburcu's names as its own headers compile them
 * without _LGPL_SOURCE (calls of urcu_memb_*(), or urcu_qsbr_*() with
 * -DTEST_QSBR, and rcu_*_sym(), run on orcu's liburcu ABI libraries).
 * Two readers (memb; qsbr ones announce a quiescent state per section) read a published
 * object's fields with plain loads while the main thread replaces it and
 * hands the old one to a callback that writes and frees it; one update
 * in 100 waits for a grace period instead (synchronize) and frees the
 * old one itself.  Callbacks write plain flags that the main thread reads
 * after the barrier.  At this rate the poster's queue runs through many
 * segments, which the library allocates on the poster and frees on a
 * leader.  ThreadSanitizer must report nothing; prints "tsan_flood: ok".
 */
#if defined(URCU_ABI) && defined(TEST_QSBR)
#include <urcu-qsbr.h>
#define QUIESCENT() rcu_quiescent_state()
#else
#define QUIESCENT() ((void)0)
#endif
#ifdef URCU_ABI
#ifndef TEST_QSBR
#include <urcu.h>
#endif
#define REGISTER() (rcu_register_thread(), 0)
#define UNREGISTER() rcu_unregister_thread()
#define READ_LOCK() rcu_read_lock()
#define READ_UNLOCK() rcu_read_unlock()
#define DEREF(p) rcu_dereference(p)
#define XCHG(p, v) rcu_xchg_pointer(&(p), (v))
#define CALL(h, f) call_rcu((h), (f))
#define SYNC() synchronize_rcu()
#define BARRIER() rcu_barrier()
#define HEAD rcu_head
#else
#include <orcu.h>
#define REGISTER() orcu_register_thread()
#define UNREGISTER() orcu_unregister_thread()
#define READ_LOCK() orcu_read_lock()
#define READ_UNLOCK() orcu_read_unlock()
#define DEREF(p) orcu_dereference(p)
#define XCHG(p, v) orcu_xchg_pointer(&(p), (v))
#define CALL(h, f) orcu_call((h), (f))
#define SYNC() orcu_synchronize()
#define BARRIER() orcu_barrier()
#define HEAD orcu_head
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define READERS 2
#define POSTS 100000
#define SYNC_EVERY 100

struct cfg {
	struct HEAD rcu;
	int a, b;    /* b == -a, written before publication */
	char *done;  /* the callback's flag */
};

static struct cfg *live;
static int stop;
static char done[POSTS + POSTS / 50]; /* plain: read after the barrier */

static void *reader(void *arg)
{
	long bad = 0;

	(void)arg;
	if (REGISTER())
		return (void *)1;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		READ_LOCK();
		struct cfg *c = DEREF(live);

		if (c && c->a != -c->b)
			bad++;
		READ_UNLOCK();
		QUIESCENT();
	}
	UNREGISTER();
	return (void *)bad;
}

static void free_cfg(struct HEAD *h)
{
	struct cfg *c = (struct cfg *)h;

	*c->done = 1;
	c->a = c->b = -1; /* what a destructor would write */
	free(c);
}

int main(void)
{
	pthread_t t[READERS];
	int ok = 1, posts = 0, i;

	for (i = 0; i < READERS; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (i = 0; posts < POSTS; i++) {
		struct cfg *n = malloc(sizeof(*n)), *old;

		if (!n)
			return 2;
		n->a = i;
		n->b = -i;
		n->done = &done[i];
		old = XCHG(live, n);
		if (!old)
			continue;
		if (i % SYNC_EVERY == 0) {
			SYNC();
			free_cfg(&old->rcu);
		} else {
			CALL(&old->rcu, free_cfg);
			posts++;
		}
	}
	BARRIER();
	for (int j = 0; j < i - 1; j++)
		ok &= done[j];
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int j = 0; j < READERS; j++) {
		void *bad;

		pthread_join(t[j], &bad);
		ok &= bad == NULL;
	}
	free(XCHG(live, NULL));
	printf("tsan_flood: %d callbacks, %s\n", posts, ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
