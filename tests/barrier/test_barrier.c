/*
 * test_barrier.c - orcu_barrier():
 *  - with no callbacks anywhere it returns promptly (many in a row);
 *  - every callback posted before it, from several threads on several CPU
 *    slots (a virtual topology of 8 slots, 4 online), has run when it
 *    returns - lazy callbacks included, although their hold time (60 s)
 *    is far longer than this test;
 *  - concurrent barriers from several threads, each posting callbacks and
 *    then barriering, each see all of their own callbacks done, while a
 *    flood poster keeps every slot busy;
 *  - a qsbr caller that is online does not hold up its own barrier.
 */
#include <orcu.h>

#include "common_pipe.h"

#define NPOST 4
#define PER_THREAD 5000

struct counted {
	struct orcu_head head;
	atomic_long *counter;
};

static void count_cb(struct orcu_head *h)
{
	struct counted *c = (struct counted *)h;

	atomic_fetch_add(c->counter, 1);
}

static atomic_long posted_done;

struct poster_arg {
	int cpu;
	bool lazy;
	struct counted *objs;
	long n;
};

static void *poster(void *p)
{
	struct poster_arg *a = p;

	CHECK_EQ(orcu_thread_bind_cpu(a->cpu), 0);
	CHECK_EQ(orcu_current_cpu(), a->cpu);
	for (long i = 0; i < a->n; i++) {
		a->objs[i].counter = &posted_done;
		if (a->lazy && i % 2)
			orcu_call_lazy(&a->objs[i].head, count_cb);
		else
			orcu_call(&a->objs[i].head, count_cb);
	}
	return NULL;
}

/* Concurrent barriers. */
static atomic_int stop;

static void *barrierer(void *p)
{
	int cpu = (int)(uintptr_t)p;
	atomic_long mine = 0;
	struct counted *objs = calloc(64, sizeof(*objs));
	long rounds = 0;

	CHECK(objs);
	if (cpu % 2)
		CHECK_EQ(orcu_register_thread_qsbr(), 0);   /* online qsbr caller */
	CHECK_EQ(orcu_thread_bind_cpu(cpu % 4), 0);
	while (!atomic_load(&stop)) {
		int n = 1 + (int)(rounds % 64);

		for (int i = 0; i < n; i++) {
			objs[i].counter = &mine;
			if (i % 4 == 3)
				orcu_call_lazy(&objs[i].head, count_cb);
			else
				orcu_call(&objs[i].head, count_cb);
		}
		orcu_barrier();
		/* Every one of ours ran: the heads can be reused. */
		CHECK_EQ(atomic_load(&mine), n);
		atomic_store(&mine, 0);
		rounds++;
		if (cpu % 2)
			orcu_quiescent_state();
	}
	if (cpu % 2)
		orcu_unregister_thread();
	free(objs);
	CHECK(rounds > 0);
	return (void *)(uintptr_t)rounds;
}

static atomic_long flood_count;

static void *flooder(void *p)
{
	struct counted *objs = calloc(1024, sizeof(*objs));
	long k = 0;

	(void)p;
	CHECK(objs);
	CHECK_EQ(orcu_thread_bind_cpu(1), 0);
	while (!atomic_load(&stop)) {
		/* Reuse a head only once its callback ran. */
		for (int i = 0; i < 1024; i++) {
			objs[i].counter = &flood_count;
			orcu_call(&objs[i].head, count_cb);
			k++;
		}
		orcu_barrier();
		CHECK_EQ(atomic_load(&flood_count), k);
	}
	free(objs);
	return NULL;
}

int main(void)
{
	struct orcu_config cfg = {
		.cpus = "possible=8,online=0-3",
		.lazy_ms = 60000,
		.lazy_max = 1000000,
	};
	pthread_t t[NPOST], b[6], fl;
	struct poster_arg pa[NPOST];
	double t0;

	test_watchdog("test_barrier", 90);
	CHECK_EQ(orcu_init(&cfg), 0);

	/* Nothing pending: prompt. */
	t0 = check_now_s();
	for (int i = 0; i < 200; i++)
		orcu_barrier();
	CHECK_LE((long)(check_now_s() - t0), (long)check_timeout_s(5));

	/* Posted from four slots by four threads, half of them lazy. */
	for (int i = 0; i < NPOST; i++) {
		pa[i].cpu = i;
		pa[i].lazy = true;
		pa[i].n = PER_THREAD;
		pa[i].objs = calloc(PER_THREAD, sizeof(struct counted));
		CHECK(pa[i].objs);
		CHECK_EQ(pthread_create(&t[i], NULL, poster, &pa[i]), 0);
	}
	for (int i = 0; i < NPOST; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	orcu_barrier();
	CHECK_EQ(atomic_load(&posted_done), NPOST * PER_THREAD);
	for (int i = 0; i < NPOST; i++)
		free(pa[i].objs);

	/* A lazy callback alone: only the barrier gets it invoked in time. */
	{
		struct counted one = { .counter = &posted_done };

		atomic_store(&posted_done, 0);
		orcu_call_lazy(&one.head, count_cb);
		orcu_barrier();
		CHECK_EQ(atomic_load(&posted_done), 1);
	}

	/* Concurrent barriers from six threads, under a flood. */
	CHECK_EQ(pthread_create(&fl, NULL, flooder, NULL), 0);
	for (int i = 0; i < 6; i++)
		CHECK_EQ(pthread_create(&b[i], NULL, barrierer, (void *)(uintptr_t)i), 0);
	sleep_ms(2000);
	atomic_store(&stop, 1);
	long total = 0;
	for (int i = 0; i < 6; i++) {
		void *r;

		CHECK_EQ(pthread_join(b[i], &r), 0);
		total += (long)(uintptr_t)r;
	}
	CHECK_EQ(pthread_join(fl, NULL), 0);
	printf("concurrent barriers: %ld rounds\n", total);

	/* And prompt again once everything is idle. */
	t0 = check_now_s();
	for (int i = 0; i < 200; i++)
		orcu_barrier();
	CHECK_LE((long)(check_now_s() - t0), (long)check_timeout_s(5));
	TEST_PASS("test_barrier");
}
