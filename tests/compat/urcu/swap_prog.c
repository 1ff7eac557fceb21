/*
 * swap_prog.c - a liburcu program built against liburcu itself (CMake
 * links Debian's liburcu-memb or liburcu-qsbr, no _LGPL_SOURCE): readers,
 * call_rcu, rcu_barrier, defer_rcu, a call_rcu_data handle, a callback
 * that calls synchronize_rcu() (legal on liburcu).  Also built through
 * the shim with -lurcu (shim.sh plain_link).  Exit 0 when it ran correctly
 * on orcu (the liburcu ABI shim under LD_LIBRARY_PATH), 3
 * when it ran correctly but on liburcu, 1 on a wrong result.  With
 * _LGPL_SOURCE it is the binary that must not load on orcu.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SWAP_QSBR
#include <urcu-qsbr.h>
#else
#include <urcu.h>
#endif

struct node {
	int value;
	struct rcu_head rcu;
};

static struct node *shared;
static int freed;

static void free_node(struct rcu_head *h)
{
	struct node *n = caa_container_of(h, struct node, rcu);

	__atomic_fetch_add(&freed, 1, __ATOMIC_RELAXED);
	free(n);
}

/* liburcu's call_rcu worker is a registered thread outside any section:
 * a callback may wait for a grace period there. */
static int synced_in_cb;

static void sync_in_cb(struct rcu_head *h)
{
	synchronize_rcu();
	__atomic_store_n(&synced_in_cb, 1, __ATOMIC_RELAXED);
	free(caa_container_of(h, struct node, rcu));
}

static void *swap_reader(void *arg)
{
	long sum = 0;

	rcu_register_thread();
	for (int i = 0; i < 20000; i++) {
		rcu_read_lock();
		struct node *n = rcu_dereference(shared);
		if (n)
			sum += n->value;
		rcu_read_unlock();
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	*(long *)arg = sum;
	return NULL;
}

/* orcu's threads are named orcu-* (orcu-gp, orcu-og/N, ...). */
static int orcu_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "orcu-", 5) &&
			    strncmp(comm, "orcu-crdp", 9))
				n++;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	enum { N = 1000 };
	pthread_t t[2];
	long sums[2];
	struct call_rcu_data *crdp;

	rcu_register_thread();
	crdp = create_call_rcu_data(0, -1);
	set_thread_call_rcu_data(crdp);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, swap_reader, &sums[i]);
	for (int i = 0; i < N; i++) {
		struct node *n = malloc(sizeof(*n)), *old;

		n->value = 1;
		old = rcu_xchg_pointer(&shared, n);
		if (old)
			call_rcu(&old->rcu, free_node);
		rcu_quiescent_state();
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	synchronize_rcu();
	struct node *cbn = malloc(sizeof(*cbn));
	call_rcu(&cbn->rcu, sync_in_cb);
	rcu_barrier();
	if (!__atomic_load_n(&synced_in_cb, __ATOMIC_RELAXED)) {
		fprintf(stderr, "swap_prog: the callback that synchronizes did not run\n");
		return 1;
	}
	int on_orcu = dlsym(RTLD_DEFAULT, "orcu_get_stats") && orcu_threads() > 0;

	/* multipathd's shutdown: the worker ends with its handle. */
	pthread_t worker = get_call_rcu_thread(crdp);

	set_thread_call_rcu_data(NULL);
	call_rcu_data_free(crdp);
	pthread_join(worker, NULL);
	free(shared);
	rcu_unregister_thread();
	if (__atomic_load_n(&freed, __ATOMIC_RELAXED) != N - 1) {
		fprintf(stderr, "swap_prog: %d of %d callbacks ran\n", freed, N - 1);
		return 1;
	}
	printf("swap_prog: %d callbacks, readers summed %ld and %ld, on %s\n",
	       freed, sums[0], sums[1], on_orcu ? "orcu" : "liburcu");
	return on_orcu ? 0 : 3;
}
