/*
 * rculfhash_orcu.c - liburcu's lock-free resizable hash table on orcu:
 * cds_lfht_new_flavor(..., &orcu_rcu_flavor, NULL).  A reader thread looks
 * up sessions while the main thread adds, replaces and removes them;
 * removed sessions are freed with call_rcu() (orcu's callbacks) and the
 * table resizes itself with orcu's grace periods.  Build: pkg-config
 * orcu-urcu (liborcu-urcu, liburcu-cds).
 */
#include <orcu/urcu-flavor.h>   /* also liburcu's names: call_rcu, ... */
#include <urcu/rculfhash.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct session {
	struct cds_lfht_node node;
	unsigned long id;
	unsigned long bytes;
	struct rcu_head rcu;
};

static struct cds_lfht *sessions;
static int stop;
static long freed;

static unsigned long hash_id(unsigned long id) { return id * 0x9E3779B97F4A7C15UL; }

static int match_id(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct session, node)->id == *(const unsigned long *)key;
}

static void free_session(struct rcu_head *h)
{
	free(caa_container_of(h, struct session, rcu));
	__atomic_add_fetch(&freed, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	struct cds_lfht_iter it;
	unsigned long id = 0, found = 0, wrong = 0;

	(void)arg;
	rcu_register_thread();
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		id = (id + 7) % 1000;
		rcu_read_lock();
		cds_lfht_lookup(sessions, hash_id(id), match_id, &id, &it);
		struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
		if (n) {
			found++;
			wrong += caa_container_of(n, struct session, node)->id != id;
		}
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	printf("reader: %lu sessions found\n", found);
	return (void *)wrong;
}

int main(void)
{
	pthread_t r;
	void *wrong;
	long added = 0;

	sessions = cds_lfht_new_flavor(1, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				       &orcu_rcu_flavor, NULL);
	if (!sessions)
		return 1;
	rcu_register_thread();
	pthread_create(&r, NULL, reader, NULL);
	for (unsigned long i = 0; i < 200000; i++) {
		unsigned long id = (i * 31) % 1000;
		struct session *s = calloc(1, sizeof(*s));
		struct cds_lfht_node *old;

		if (!s)
			abort();
		s->id = id;
		s->bytes = i;
		cds_lfht_node_init(&s->node);
		rcu_read_lock();
		if (i % 3 == 2) {                    /* session closed */
			struct cds_lfht_iter it;

			free(s);
			cds_lfht_lookup(sessions, hash_id(id), match_id, &id, &it);
			old = cds_lfht_iter_get_node(&it);
			if (old && cds_lfht_del(sessions, old) != 0)
				old = NULL;
		} else {                             /* opened or refreshed */
			added++;
			old = cds_lfht_add_replace(sessions, hash_id(id), match_id, &id, &s->node);
		}
		rcu_read_unlock();
		if (old)
			call_rcu(&caa_container_of(old, struct session, node)->rcu, free_session);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(r, &wrong);

	/* Empty the table, wait for the callbacks, destroy it. */
	struct cds_lfht_iter it;
	struct session *s;
	rcu_read_lock();
	cds_lfht_for_each_entry(sessions, &it, s, node)
		if (cds_lfht_del(sessions, &s->node) == 0)
			call_rcu(&s->rcu, free_session);
	rcu_read_unlock();
	rcu_barrier();
	if (cds_lfht_destroy(sessions, NULL) != 0)
		return 1;
	rcu_unregister_thread();
	printf("rculfhash_orcu: %ld sessions added, %ld freed after grace periods, %ld wrong lookups\n",
	       added, __atomic_load_n(&freed, __ATOMIC_RELAXED), (long)wrong);
	return (long)wrong == 0 && __atomic_load_n(&freed, __ATOMIC_RELAXED) == added ? 0 : 1;
}
