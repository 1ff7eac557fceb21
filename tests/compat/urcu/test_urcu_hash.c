/*
 * test_urcu_hash.c - liburcu's rculfhash on orcu_rcu_flavor: memb and qsbr
 * readers look keys up and walk the table while writers add, add_unique,
 * add_replace and delete, and a resizer grows and shrinks the table (and
 * the table resizes itself: CDS_LFHT_AUTO_RESIZE).  Removed nodes are freed
 * by the flavor's call_rcu.  Checked: a reader never sees a freed node
 * (poisoned before free; AddressSanitizer also watches), every node is
 * freed exactly once (magic checked at free, counts at the end), and the
 * table's fork hooks run around fork() with a working table in the child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu/urcu-flavor.h>
#include <urcu/rculfhash.h>
#include <urcu/compiler.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define KEYS 512
#define WRITER_OPS 20000
#define NR_MEMB_READERS 2
#define NR_WRITERS 2
#define ALIVE 0x600dUL
#define DEAD 0xdeadUL

struct node {
	struct cds_lfht_node lfht;
	unsigned long key;
	_Atomic unsigned long magic;
	struct rcu_head rcu;
};

static struct cds_lfht *ht;
static _Atomic int stop_readers, stop_resizer;
static _Atomic long n_alloc, n_freed;
static _Atomic long n_lookups, n_found;
static _Atomic long n_resizes;

static unsigned long hash_key(unsigned long key)
{
	return key * 0x9E3779B97F4A7C15UL;
}

static int match(struct cds_lfht_node *n, const void *key)
{
	struct node *nd = caa_container_of(n, struct node, lfht);

	/* Runs on reader and writer threads inside their sections. */
	CHECK_EQ(atomic_load_explicit(&nd->magic, memory_order_relaxed), ALIVE);
	return nd->key == *(const unsigned long *)key;
}

static struct node *new_node(unsigned long key)
{
	struct node *n = calloc(1, sizeof(*n));

	CHECK(n != NULL);
	cds_lfht_node_init(&n->lfht);
	n->key = key;
	atomic_store_explicit(&n->magic, ALIVE, memory_order_relaxed);
	atomic_fetch_add(&n_alloc, 1);
	return n;
}

static void free_node_now(struct node *n)
{
	/* Exactly once: a second free finds DEAD (or ASan finds the free). */
	CHECK_EQ(atomic_exchange(&n->magic, DEAD), ALIVE);
	free(n);
	atomic_fetch_add(&n_freed, 1);
}

static void free_node_cb(struct rcu_head *head)
{
	free_node_now(caa_container_of(head, struct node, rcu));
}

static unsigned long next_rand(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void read_pass(unsigned long *seed)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;

	for (int i = 0; i < 64; i++) {
		unsigned long key = next_rand(seed) % KEYS;

		orcu_rcu_flavor.read_lock();
		cds_lfht_lookup(ht, hash_key(key), match, &key, &iter);
		n = cds_lfht_iter_get_node(&iter);
		if (n) {
			struct node *nd = caa_container_of(n, struct node, lfht);

			CHECK_EQ(atomic_load_explicit(&nd->magic, memory_order_relaxed), ALIVE);
			CHECK_EQ(nd->key, key);
			atomic_fetch_add_explicit(&n_found, 1, memory_order_relaxed);
		}
		orcu_rcu_flavor.read_unlock();
	}
	atomic_fetch_add_explicit(&n_lookups, 64, memory_order_relaxed);
	/* Now and then a whole-table walk. */
	if ((next_rand(seed) & 15) == 0) {
		struct node *nd;

		orcu_rcu_flavor.read_lock();
		cds_lfht_for_each_entry(ht, &iter, nd, lfht)
			CHECK_EQ(atomic_load_explicit(&nd->magic, memory_order_relaxed), ALIVE);
		orcu_rcu_flavor.read_unlock();
	}
}

static void *memb_reader(void *arg)
{
	unsigned long seed = (unsigned long)(uintptr_t)arg * 7919 + 1;

	orcu_rcu_flavor.register_thread();
	while (!atomic_load(&stop_readers))
		read_pass(&seed);
	orcu_rcu_flavor.unregister_thread();
	return NULL;
}

static void *qsbr_reader(void *arg)
{
	unsigned long seed = 104729;

	(void)arg;
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	CHECK(orcu_rcu_flavor.read_ongoing());   /* online qsbr thread */
	while (!atomic_load(&stop_readers)) {
		read_pass(&seed);
		orcu_rcu_flavor.read_quiescent_state();
	}
	orcu_rcu_flavor.thread_offline();
	CHECK(!orcu_rcu_flavor.read_ongoing());
	orcu_rcu_flavor.thread_online();
	orcu_unregister_thread();
	return NULL;
}

static void write_op(unsigned long *seed)
{
	unsigned long key = next_rand(seed) % KEYS;
	unsigned long op = next_rand(seed) % 4;
	struct cds_lfht_iter iter;
	struct cds_lfht_node *ret;
	struct node *n;

	orcu_rcu_flavor.read_lock();
	switch (op) {
	case 0: /* add_unique: a loser was never published, free it now */
		n = new_node(key);
		ret = cds_lfht_add_unique(ht, hash_key(key), match, &key, &n->lfht);
		if (ret != &n->lfht)
			free_node_now(n);
		break;
	case 1: /* add_replace: the replaced node goes after a grace period */
		n = new_node(key);
		ret = cds_lfht_add_replace(ht, hash_key(key), match, &key, &n->lfht);
		if (ret)
			orcu_rcu_flavor.update_call_rcu(
				&caa_container_of(ret, struct node, lfht)->rcu, free_node_cb);
		break;
	default: /* delete */
		cds_lfht_lookup(ht, hash_key(key), match, &key, &iter);
		ret = cds_lfht_iter_get_node(&iter);
		if (ret && cds_lfht_del(ht, ret) == 0)
			orcu_rcu_flavor.update_call_rcu(
				&caa_container_of(ret, struct node, lfht)->rcu, free_node_cb);
		break;
	}
	orcu_rcu_flavor.read_unlock();
}

static void *writer(void *arg)
{
	unsigned long seed = (unsigned long)(uintptr_t)arg * 15485863 + 3;

	orcu_rcu_flavor.register_thread();
	/* The ops, and at least two resize cycles under way meanwhile. */
	for (int i = 0; i < WRITER_OPS || atomic_load(&n_resizes) < 16; i++)
		write_op(&seed);
	orcu_rcu_flavor.unregister_thread();
	return NULL;
}

static void *resizer(void *arg)
{
	/* 16384 buckets: rculfhash splits that resize over helper threads,
	 * which register with the flavor themselves. */
	static const unsigned long sizes[] = { 1, 4096, 16, 16384, 2, 256, 8192, 4 };
	int i = 0;

	(void)arg;
	orcu_rcu_flavor.register_thread();
	while (!atomic_load(&stop_resizer)) {
		cds_lfht_resize(ht, sizes[i++ % 8]);
		atomic_fetch_add(&n_resizes, 1);
	}
	orcu_rcu_flavor.unregister_thread();
	return NULL;
}

/* Remove and reclaim every node left; returns how many. */
static long empty_table(void)
{
	struct cds_lfht_iter iter;
	struct node *nd;
	long n = 0;

	orcu_rcu_flavor.read_lock();
	cds_lfht_for_each_entry(ht, &iter, nd, lfht) {
		if (cds_lfht_del(ht, &nd->lfht) == 0) {
			orcu_rcu_flavor.update_call_rcu(&nd->rcu, free_node_cb);
			n++;
		}
	}
	orcu_rcu_flavor.read_unlock();
	return n;
}

/* ------------------------------------------------------------------ */
/* Fork: our hook beside rculfhash's, the table working in the child. */

static _Atomic int hook_before, hook_parent, hook_child;

static void before_fork(void *p) { (void)p; atomic_fetch_add(&hook_before, 1); }
static void after_parent(void *p) { (void)p; atomic_fetch_add(&hook_parent, 1); }
static void after_child(void *p) { (void)p; atomic_fetch_add(&hook_child, 1); }

static struct urcu_atfork test_hooks = {
	.before_fork = before_fork,
	.after_fork_parent = after_parent,
	.after_fork_child = after_child,
};

static int child_main(void)
{
	unsigned long seed = 99;

	if (atomic_load(&hook_child) != 1 || atomic_load(&hook_before) != 1) {
		fprintf(stderr, "child: fork hooks not run (before %d, child %d)\n",
			atomic_load(&hook_before), atomic_load(&hook_child));
		return 1;
	}
	orcu_rcu_flavor.register_thread();
	for (int i = 0; i < 2000; i++)
		write_op(&seed);
	cds_lfht_resize(ht, 2048);
	cds_lfht_resize(ht, 8);
	empty_table();
	orcu_rcu_flavor.barrier();
	if (atomic_load(&n_alloc) != atomic_load(&n_freed)) {
		fprintf(stderr, "child: %ld allocated, %ld freed\n",
			atomic_load(&n_alloc), atomic_load(&n_freed));
		return 1;
	}
	orcu_rcu_flavor.unregister_thread();
	return 0;
}

static void check_fork(void)
{
	int status = 0;
	pid_t pid, r;
	double deadline;

	orcu_rcu_flavor.register_rculfhash_atfork(&test_hooks);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child_main());
	CHECK_EQ(atomic_load(&hook_before), 1);
	CHECK_EQ(atomic_load(&hook_parent), 1);
	CHECK_EQ(atomic_load(&hook_child), 0);
	deadline = check_now_s() + check_timeout_s(60);
	while ((r = waitpid(pid, &status, WNOHANG)) == 0) {
		CHECK(check_now_s() < deadline);
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(r, pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	orcu_rcu_flavor.unregister_rculfhash_atfork(&test_hooks);
}

int main(void)
{
	pthread_t mr[NR_MEMB_READERS], qr, w[NR_WRITERS], rs;
	unsigned long seed = 5;

	ht = cds_lfht_new_flavor(1, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				 &orcu_rcu_flavor, NULL);
	CHECK(ht != NULL);
	orcu_rcu_flavor.register_thread();

	for (int i = 0; i < NR_MEMB_READERS; i++)
		CHECK_EQ(pthread_create(&mr[i], NULL, memb_reader, (void *)(uintptr_t)(i + 1)), 0);
	CHECK_EQ(pthread_create(&qr, NULL, qsbr_reader, NULL), 0);
	CHECK_EQ(pthread_create(&rs, NULL, resizer, NULL), 0);
	for (int i = 0; i < NR_WRITERS; i++)
		CHECK_EQ(pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)(i + 1)), 0);
	for (int i = 0; i < NR_WRITERS; i++)
		CHECK_EQ(pthread_join(w[i], NULL), 0);
	atomic_store(&stop_resizer, 1);
	CHECK_EQ(pthread_join(rs, NULL), 0);
	atomic_store(&stop_readers, 1);
	for (int i = 0; i < NR_MEMB_READERS; i++)
		CHECK_EQ(pthread_join(mr[i], NULL), 0);
	CHECK_EQ(pthread_join(qr, NULL), 0);
	CHECK(atomic_load(&n_lookups) > 0);
	CHECK(atomic_load(&n_resizes) >= 16);

	/* Fork with a populated table and a live resize worker. */
	for (int i = 0; i < 1000; i++)
		write_op(&seed);
	check_fork();

	empty_table();
	orcu_rcu_flavor.barrier();
	CHECK_EQ(atomic_load(&n_alloc), atomic_load(&n_freed));
	CHECK_EQ(cds_lfht_destroy(ht, NULL), 0);
	orcu_rcu_flavor.unregister_thread();
	printf("PASS rculfhash on orcu_rcu_flavor: %ld lookups (%ld hits), %ld nodes "
	       "allocated and freed once each, %ld resizes, fork hooks run\n",
	       atomic_load(&n_lookups), atomic_load(&n_found), atomic_load(&n_alloc),
	       atomic_load(&n_resizes));
	return 0;
}
