/*
 * config_reload.c - the configuration-reload pattern: worker threads read
 * the current configuration on every request without a lock; a reload
 * (here: SIGHUP-like, from the main thread) builds a new configuration,
 * publishes it with orcu_xchg_pointer() and hands the old one to
 * orcu_call(), which frees it once no worker can still be using it.
 * Workers check every configuration they see is complete and alive.
 */
#include <orcu.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct config {
	struct orcu_head rcu;       /* first: the callback gets the object */
	unsigned generation;
	char name[32];
	int nr_backends;
	int *backends;              /* owned; freed with the config */
};

static struct config *live;     /* published with orcu_xchg_pointer */
static int stop;

static void config_free(struct orcu_head *h)
{
	struct config *c = (struct config *)h;

	c->nr_backends = -1;        /* poison */
	free(c->backends);
	free(c);
}

static struct config *config_build(unsigned gen)
{
	struct config *c = calloc(1, sizeof(*c));

	if (!c)
		abort();
	c->generation = gen;
	snprintf(c->name, sizeof(c->name), "gen-%u", gen);
	c->nr_backends = 1 + gen % 8;
	c->backends = calloc((size_t)c->nr_backends, sizeof(int));
	if (!c->backends)
		abort();
	for (int i = 0; i < c->nr_backends; i++)
		c->backends[i] = (int)gen;
	return c;
}

static void config_reload(unsigned gen)
{
	struct config *old = orcu_xchg_pointer(&live, config_build(gen));

	if (old)
		orcu_call(&old->rcu, config_free);
}

/* One request: everything it uses comes from one configuration. */
static int handle_request(void)
{
	int ok = 1;

	orcu_read_lock();
	struct config *c = orcu_dereference(live);
	if (c->nr_backends < 1)
		ok = 0;
	for (int i = 0; i < c->nr_backends; i++)
		ok &= c->backends[i] == (int)c->generation;
	orcu_read_unlock();
	return ok;
}

static void *worker(void *arg)
{
	long bad = 0;

	(void)arg;
	if (orcu_register_thread() < 0)
		abort();
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		bad += !handle_request();
	orcu_unregister_thread();
	return (void *)bad;
}

int main(void)
{
	pthread_t w[2];
	long bad = 0;
	void *ret;

	config_reload(0);
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	for (unsigned gen = 1; gen <= 20000; gen++)
		config_reload(gen);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		pthread_join(w[i], &ret);
		bad += (long)ret;
	}
	config_free(&orcu_xchg_pointer(&live, NULL)->rcu);
	if (orcu_shutdown() != 0)   /* drains every callback, stops orcu's threads */
		return 1;
	printf("config_reload: 20000 reloads, %ld inconsistent reads\n", bad);
	return bad ? 1 : 0;
}
