/*
 * bp_prog.c - a liburcu-bp program: reader threads that never register
 * (bp's promise: a thread registers on its first read-side section),
 * call_rcu, synchronize_rcu, defer_rcu, rcu_barrier and bp's fork calls.
 * A synchronize_rcu() must wait for a section an unregistered thread
 * opened.  Built on liburcu-bp itself (CMake: the binary swapped under
 * LD_LIBRARY_PATH) and through orcu's shim, with and without
 * _LGPL_SOURCE (shim.sh bp).  Exit 0 when it ran correctly on orcu, 3 when
 * it ran correctly on liburcu, 1 on a wrong result.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <urcu-bp.h>

struct node {
	int value;		/* 1 while published, 0 once freed */
	struct rcu_head rcu;
};

static struct node *shared;
static int freed, bad, in_section, may_leave, deferred;

#define FAIL(...) do { fprintf(stderr, "bp_prog: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static void free_node(struct rcu_head *h)
{
	struct node *n = caa_container_of(h, struct node, rcu);

	n->value = 0;
	__atomic_fetch_add(&freed, 1, __ATOMIC_RELAXED);
	free(n);
}

static void *reader(void *arg)
{
	(void)arg;	/* never registers */
	for (int i = 0; i < 20000; i++) {
		rcu_read_lock();
		struct node *n = rcu_dereference(shared);
		if (n && n->value != 1)
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		rcu_read_unlock();
	}
	return NULL;
}

/* Opens a section on a thread that never registered, and holds it. */
static void *holder(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&in_section, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&may_leave, __ATOMIC_ACQUIRE))
		sched_yield();
	rcu_read_unlock();
	return NULL;
}

static void *sync_thread(void *done)
{
	synchronize_rcu();
	__atomic_store_n((int *)done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void count_deferred(void *p)
{
	(void)p;
	__atomic_fetch_add(&deferred, 1, __ATOMIC_RELAXED);
}

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
	pthread_t t[2], h, s;
	int synced = 0;

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < N; i++) {
		struct node *n = malloc(sizeof(*n)), *old;

		n->value = 1;
		old = rcu_xchg_pointer(&shared, n);
		if (old) {
			if (i % 100 == 0) {
				synchronize_rcu();
				free_node(&old->rcu);
			} else {
				call_rcu(&old->rcu, free_node);
			}
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	/* A grace period waits for an unregistered thread's section. */
	pthread_create(&h, NULL, holder, NULL);
	while (!__atomic_load_n(&in_section, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_create(&s, NULL, sync_thread, &synced);
	for (int i = 0; i < 50; i++) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
		if (__atomic_load_n(&synced, __ATOMIC_ACQUIRE))
			FAIL("synchronize_rcu() returned inside an unregistered thread's section");
	}
	__atomic_store_n(&may_leave, 1, __ATOMIC_RELEASE);
	pthread_join(h, NULL);
	pthread_join(s, NULL);

	rcu_defer_register_thread();	/* liburcu's defer_rcu needs it */
	defer_rcu(count_deferred, NULL);
	rcu_defer_barrier();
	rcu_defer_unregister_thread();
	rcu_barrier();

	/* bp's own fork calls, around a fork whose child reads and waits. */
	rcu_bp_before_fork();
	pid_t pid = fork();
	if (pid == 0) {
		rcu_bp_after_fork_child();
		rcu_read_lock();
		int ok = rcu_dereference(shared)->value == 1;
		rcu_read_unlock();
		synchronize_rcu();
		_exit(ok ? 0 : 1);
	}
	rcu_bp_after_fork_parent();
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("fork child failed (status %d)", st);

	int on_orcu = dlsym(RTLD_DEFAULT, "orcu_get_stats") && orcu_threads() > 0;

	free(shared);
	if (__atomic_load_n(&bad, __ATOMIC_RELAXED))
		FAIL("a reader saw a freed node");
	if (__atomic_load_n(&freed, __ATOMIC_RELAXED) != N - 1 || deferred != 1)
		FAIL("%d of %d nodes freed, %d of 1 deferred", freed, N - 1, deferred);
	printf("bp_prog: %d freed, unregistered readers waited for, on %s\n",
	       freed, on_orcu ? "orcu" : "liburcu");
	return on_orcu ? 0 : 3;
}
