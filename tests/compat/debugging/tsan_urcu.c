/*
 * tsan_urcu.c - a correct liburcu program, built with -fsanitize=thread
 * (tests/compat/debugging.sh): on orcu (-DON_ORCU: <orcu/urcu-compat.h>
 * and, for rculfhash, orcu_rcu_flavor from liborcu-urcu) or on liburcu
 * itself, for comparison.  -DTEST_QSBR: qsbr readers.  Readers look keys
 * up in an rculfhash and read a published object's fields with plain
 * loads while the main thread replaces the object (freed by call_rcu(),
 * or after synchronize_rcu()) and deletes the table's nodes (freed by
 * call_rcu()); callbacks write plain flags read after rcu_barrier().
 * The table is filled before the readers start: rculfhash (liburcu-cds)
 * is not instrumented, so TSan cannot see it publish a node added while
 * readers run (docs/DEBUGGING.md).  Prints "tsan_urcu: ok".
 */
#ifdef ON_ORCU
#ifdef TEST_QSBR
#define ORCU_QSBR
#endif
#include <orcu/urcu-compat.h>
#include <orcu/urcu-flavor.h>
#define TABLE_NEW() cds_lfht_new_flavor(64, 64, 0, 0, &orcu_rcu_flavor, NULL)
#else
#ifdef TEST_QSBR
#include <urcu-qsbr.h>
#else
#include <urcu.h>
#endif
#define TABLE_NEW() cds_lfht_new(64, 64, 0, 0, NULL)
#endif
#include <urcu/rculfhash.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define READERS 2
#define UPDATES 300
#define KEYS 200

struct cfg {
	struct rcu_head rcu;
	int a, b;
	int *done;
};

struct item {
	struct cds_lfht_node node;
	unsigned long key;
	int value;                  /* key * 2 */
	struct rcu_head rcu;
	int *done;
};

static struct cfg *live;
static struct cds_lfht *table;
static int stop;
static int done[UPDATES], item_done[KEYS];

static int match(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct item, node)->key == *(const unsigned long *)key;
}

static void *reader(void *arg)
{
	long bad = 0;
	unsigned long k = 0;

	(void)arg;
	rcu_register_thread();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct cds_lfht_iter it;
		struct cds_lfht_node *n;

		rcu_read_lock();
		struct cfg *c = rcu_dereference(live);

		if (c && c->a != -c->b)
			bad++;
		k = (k + 1) % KEYS;
		cds_lfht_lookup(table, k, match, &k, &it);
		n = cds_lfht_iter_get_node(&it);
		if (n && caa_container_of(n, struct item, node)->value != (int)k * 2)
			bad++;
		rcu_read_unlock();
#ifdef TEST_QSBR
		rcu_quiescent_state();
#endif
	}
	rcu_unregister_thread();
	return (void *)bad;
}

static void free_cfg(struct rcu_head *h)
{
	struct cfg *c = caa_container_of(h, struct cfg, rcu);

	*c->done = 1;
	free(c);
}

static void free_item(struct rcu_head *h)
{
	struct item *i = caa_container_of(h, struct item, rcu);

	*i->done = 1;
	i->value = -1;
	free(i);
}

int main(void)
{
	pthread_t t[READERS];
	int ok = 1;

	rcu_register_thread();
	table = TABLE_NEW();
	if (!table)
		return 1;
	for (unsigned long k = 0; k < KEYS; k++) {
		struct item *i = calloc(1, sizeof(*i));

		i->key = k;
		i->value = (int)k * 2;
		i->done = &item_done[k];
		cds_lfht_node_init(&i->node);
		rcu_read_lock();
		cds_lfht_add(table, k, &i->node);
		rcu_read_unlock();
	}
	for (int i = 0; i < READERS; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < UPDATES; i++) {
		struct cfg *n = malloc(sizeof(*n)), *old;

		n->a = i;
		n->b = -i;
		n->done = &done[i];
		old = rcu_xchg_pointer(&live, n);
		if (old && i % 2) {
			call_rcu(&old->rcu, free_cfg);
		} else if (old) {
			synchronize_rcu();
			free_cfg(&old->rcu);
		}
		if (i < KEYS) {
			unsigned long k = (unsigned long)i;
			struct cds_lfht_iter it;
			struct cds_lfht_node *nd;

			rcu_read_lock();
			cds_lfht_lookup(table, k, match, &k, &it);
			nd = cds_lfht_iter_get_node(&it);
			if (nd && cds_lfht_del(table, nd) == 0)
				call_rcu(&caa_container_of(nd, struct item, node)->rcu, free_item);
			rcu_read_unlock();
		}
#ifdef TEST_QSBR
		rcu_quiescent_state();
#endif
	}
	rcu_barrier();
	for (int i = 1; i < UPDATES - 1; i += 2)
		ok &= done[i];
	for (int k = 0; k < KEYS; k++)
		ok &= item_done[k];
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < READERS; i++) {
		void *bad;

		pthread_join(t[i], &bad);
		ok &= bad == NULL;
	}
	free(rcu_xchg_pointer(&live, NULL));
	ok &= cds_lfht_destroy(table, NULL) == 0;
	rcu_unregister_thread();
	printf("tsan_urcu: %s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
