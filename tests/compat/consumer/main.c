/*
 * consumer/main.c - a small program using an installed orcu: publish,
 * read, replace, free after a grace period; with WITH_URCU also rculfhash
 * on orcu_rcu_flavor.  Exits 0 and prints "consumer OK" when every check
 * holds.
 */
#include <orcu.h>
#ifdef WITH_URCU
#include <orcu/urcu-flavor.h>
#include <urcu/rculfhash.h>
#endif

#include <stdio.h>
#include <stdlib.h>

struct cfg {
	struct orcu_head rcu;
	int version;
};

static struct cfg *current;
static int freed;

static void free_cfg(struct orcu_head *h)
{
	free(h);
	__atomic_add_fetch(&freed, 1, __ATOMIC_RELAXED);
}

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "consumer: %s failed\n", #c); return 1; } } while (0)

#ifdef WITH_URCU
struct item {
	struct cds_lfht_node node;
	unsigned long key;
	struct rcu_head rcu;
};

static int match(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct item, node)->key == *(const unsigned long *)key;
}

static void free_item(struct rcu_head *h)
{
	free(caa_container_of(h, struct item, rcu));
	__atomic_add_fetch(&freed, 1, __ATOMIC_RELAXED);
}

static int use_hash(void)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(8, 8, 0, 0, &orcu_rcu_flavor, NULL);
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	unsigned long k;

	CHECK(ht != NULL);
	for (k = 0; k < 100; k++) {
		struct item *i = calloc(1, sizeof(*i));

		CHECK(i != NULL);
		i->key = k;
		cds_lfht_node_init(&i->node);
		orcu_read_lock();
		cds_lfht_add(ht, k * 2654435761UL, &i->node);
		orcu_read_unlock();
	}
	for (k = 0; k < 100; k++) {
		orcu_read_lock();
		cds_lfht_lookup(ht, k * 2654435761UL, match, &k, &it);
		n = cds_lfht_iter_get_node(&it);
		CHECK(n != NULL);
		CHECK(cds_lfht_del(ht, n) == 0);
		orcu_read_unlock();
		call_rcu(&caa_container_of(n, struct item, node)->rcu, free_item);
	}
	rcu_barrier();
	CHECK(cds_lfht_destroy(ht, NULL) == 0);
	return 0;
}
#endif

int main(void)
{
	CHECK(orcu_register_thread() == 0);
	for (int v = 1; v <= 100; v++) {
		struct cfg *c = malloc(sizeof(*c)), *old;

		CHECK(c != NULL);
		c->version = v;
		old = orcu_xchg_pointer(&current, c);
		if (old)
			orcu_call(&old->rcu, free_cfg);
		orcu_read_lock();
		CHECK(orcu_dereference(current)->version == v);
		orcu_read_unlock();
	}
	orcu_barrier();
	CHECK(__atomic_load_n(&freed, __ATOMIC_RELAXED) == 99);
	free(orcu_xchg_pointer(&current, NULL));
#ifdef WITH_URCU
	if (use_hash())
		return 1;
	CHECK(__atomic_load_n(&freed, __ATOMIC_RELAXED) == 199);
#endif
	orcu_unregister_thread();
	CHECK(orcu_shutdown() == 0);
	printf("consumer OK\n");
	return 0;
}
