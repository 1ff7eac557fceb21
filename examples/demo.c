/*
 * demo.c - orcu doing its job in a few seconds: reader threads traverse a
 * published configuration while an updater replaces it and frees the old
 * one with orcu_call(); orcu_barrier() then proves every callback ran.
 * Prints what happened and the library's own counters.
 */
#include <orcu.h>
#include <orcu/debug.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct config {
	struct orcu_head rcu;
	long version;
	long checksum;       /* == version * 7 while the object is live */
};

static struct config *current;
static atomic_int stop;
static atomic_long reads, bad_reads, freed;

static void free_config(struct orcu_head *h)
{
	struct config *c = (struct config *)((char *)h - offsetof(struct config, rcu));

	c->checksum = -1;    /* poison: a reader that still saw it would notice */
	free(c);
	atomic_fetch_add(&freed, 1);
}

static void *reader(void *arg)
{
	long n = 0, bad = 0;

	(void)arg;
	orcu_register_thread();
	while (!atomic_load(&stop)) {
		orcu_read_lock();
		struct config *c = orcu_dereference(current);
		if (c->checksum != c->version * 7)
			bad++;
		orcu_read_unlock();
		n++;
	}
	orcu_unregister_thread();
	atomic_fetch_add(&reads, n);
	atomic_fetch_add(&bad_reads, bad);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, t0, t1;
	enum { NREADERS = 2 };
	pthread_t th[NREADERS];
	struct orcu_stats st;
	long updates = 0;

	struct config *c = calloc(1, sizeof(*c));
	c->version = 0;
	c->checksum = 0;
	current = c;
	for (int i = 0; i < NREADERS; i++)
		pthread_create(&th[i], NULL, reader, NULL);
	t0 = now();
	while (now() - t0 < secs) {
		struct config *n = malloc(sizeof(*n)), *old;

		n->version = ++updates;
		n->checksum = n->version * 7;
		old = orcu_xchg_pointer(&current, n);
		orcu_call(&old->rcu, free_config);
		if (updates % 1000 == 0)
			orcu_synchronize();  /* an updater may also simply wait */
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(th[i], NULL);
	t1 = now();
	orcu_barrier();
	orcu_get_stats(&st);
	printf("orcu demo: %d readers, 1 updater, %.1f s\n", NREADERS, t1 - t0);
	printf("  reads                 %ld (%.1f M/s), inconsistent reads: %ld\n",
	       atomic_load(&reads), atomic_load(&reads) / (t1 - t0) / 1e6,
	       atomic_load(&bad_reads));
	printf("  updates (orcu_call)   %ld, freed by callbacks after orcu_barrier: %ld\n",
	       updates, atomic_load(&freed));
	printf("  grace periods         %llu (%.0f callbacks per GP)\n",
	       (unsigned long long)st.gp_completed,
	       st.gp_completed ? (double)updates / st.gp_completed : 0.0);
	printf("  library threads       %llu (GP thread, %llu leader(s), %llu follower(s)) on %llu online of %llu possible CPUs\n",
	       (unsigned long long)st.threads_alive, (unsigned long long)st.leaders_alive,
	       (unsigned long long)st.followers_alive, (unsigned long long)st.slots_online,
	       (unsigned long long)st.slots_possible);
	printf("  GP-thread wake-ups    %llu (leaders %llu), leader->follower %llu, enqueue->leader %llu\n",
	       (unsigned long long)st.gp_wakeups, (unsigned long long)st.gp_leader_wakeups,
	       (unsigned long long)st.leader_wakeups, (unsigned long long)st.enqueue_wakeups);
	int ok = atomic_load(&bad_reads) == 0 && atomic_load(&freed) == updates;
	free(current);
	orcu_shutdown();
	printf("%s\n", ok ? "demo: OK (no reader saw a freed object; every callback ran)" : "demo: FAILED");
	return ok ? 0 : 1;
}
