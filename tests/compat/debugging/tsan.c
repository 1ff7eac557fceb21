/*
 * tsan.c - a correct user program built with -fsanitize=thread against
 * the ordinary (uninstrumented) installed liborcu
 * (tests/compat/debugging.sh): memb readers (qsbr readers when built with
 * -DORCU_QSBR) read a published object's fields with plain loads while
 * the main thread replaces it and frees the old one, in turn after
 * orcu_call(), orcu_synchronize() and a polled grace period; callbacks
 * write plain flags that the main thread reads after orcu_barrier().
 * ThreadSanitizer must report nothing; it prints "tsan: ok" when every
 * check holds.
 */
#include <orcu.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define READERS 2
#define UPDATES 600

struct cfg {
	struct orcu_head rcu;
	int a, b;                   /* b == -a, written before publication */
	int *done;                  /* the callback's flag */
};

static struct cfg *live;
static int stop;
static int done[UPDATES];       /* plain: written by callbacks, read after orcu_barrier() */

static void *reader(void *arg)
{
	long bad = 0;

	(void)arg;
#ifdef ORCU_QSBR
	if (orcu_register_thread_qsbr())
		return (void *)1;
#else
	if (orcu_register_thread())
		return (void *)1;
#endif
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		orcu_read_lock();
		struct cfg *c = orcu_dereference(live);

		if (c && c->a != -c->b)
			bad++;
		orcu_read_unlock();
#ifdef ORCU_QSBR
		orcu_quiescent_state();
#endif
	}
	orcu_unregister_thread();
	return (void *)bad;
}

static void free_cfg(struct orcu_head *h)
{
	struct cfg *c = (struct cfg *)h;

	*c->done = 1;
	c->a = c->b = -1;           /* what a destructor would write */
	free(c);
}

int main(void)
{
	pthread_t t[READERS];
	int ok = 1;

	for (int i = 0; i < READERS; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < UPDATES; i++) {
		struct cfg *n = malloc(sizeof(*n)), *old;

		n->a = i;
		n->b = -i;
		n->done = &done[i];
		old = orcu_xchg_pointer(&live, n);
		if (!old)
			continue;
		switch (i % 3) {
		case 0:
			orcu_call(&old->rcu, free_cfg);
			break;
		case 1:
			orcu_synchronize();
			free_cfg(&old->rcu);
			break;
		default: {
			unsigned long cookie = orcu_start_poll();

			while (!orcu_poll_state(cookie))
				sched_yield();
			free_cfg(&old->rcu);
		}
		}
	}
	orcu_barrier();
	for (int i = 0; i < UPDATES - 1; i++)
		ok &= done[i];
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < READERS; i++) {
		void *bad;

		pthread_join(t[i], &bad);
		ok &= bad == NULL;
	}
	free(orcu_xchg_pointer(&live, NULL));
	orcu_shutdown();
	printf("tsan: %s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
