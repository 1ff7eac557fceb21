/*
 * routing_table.c - the README's example, complete: reader threads look
 * the route up while an updater replaces it; each old route is freed by
 * orcu_call() after a grace period.  Readers check that every route they
 * see is whole (via == dst + 1) and never freed (freed routes are poisoned
 * first); exits 1 if not.
 */
#include <orcu.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct route { struct orcu_head rcu; int dst, via; };
static struct route *table;                     /* read-mostly, published */
static int done;
static long freed;

static void free_route(struct orcu_head *h)
{
	struct route *r = (struct route *)h;

	r->via = -2;                                 /* poison: readers would notice */
	free(r);
	__atomic_add_fetch(&freed, 1, __ATOMIC_RELAXED);
}

static int lookup(void)                         /* any number of readers */
{
	orcu_read_lock();                            /* memb thread auto-registers */
	struct route *r = orcu_dereference(table);
	int via = r ? r->via : -1;
	int ok = !r || via == r->dst + 1;
	orcu_read_unlock();
	return ok ? via : -3;
}

static void update(int dst, int via)            /* updaters serialise among themselves */
{
	struct route *n = malloc(sizeof(*n));

	if (!n)
		abort();
	n->dst = dst;
	n->via = via;
	struct route *old = orcu_xchg_pointer(&table, n);
	if (old)
		orcu_call(&old->rcu, free_route);        /* freed after a grace period */
}

static void *reader(void *arg)
{
	long bad = 0;

	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		bad += lookup() == -3;
	orcu_unregister_thread();
	return (void *)bad;
}

int main(void)
{
	pthread_t r[2];
	void *bad;
	long total_bad = 0;

	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	for (int i = 0; i < 100000; i++)
		update(i, i + 1);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		pthread_join(r[i], &bad);
		total_bad += (long)bad;
	}
	free(orcu_xchg_pointer(&table, NULL));       /* no reader left */
	orcu_barrier();                              /* before dlclose() or exit */
	printf("routing_table: 100000 updates, %ld routes freed after grace periods, "
	       "%ld torn or freed routes seen\n", __atomic_load_n(&freed, __ATOMIC_RELAXED),
	       total_bad);
	return total_bad == 0 && freed == 99999 ? 0 : 1;
}
