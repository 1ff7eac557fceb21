/*
 * test_lazy_order - the callbacks one thread posts on one CPU slot run in
 * the order it posted them, lazy or not (API.md, orcu_call and
 * orcu_call_lazy: "Same").  One thread bound to slot 0 posts N callbacks,
 * each lazy or ordinary by a fixed pseudo-random pattern (runs of each
 * kind, both switches: ordinary then lazy, lazy then ordinary), with a
 * grace period now and then so that the slot's leader takes some
 * ordinary ones while lazy ones are held; then orcu_barrier().  Every
 * callback records its post index; the indexes must come out in
 * increasing order, each exactly once.  Rounds: LAZY_MAX large (lazy
 * callbacks held until a flush) and small (the leader flushes them
 * often).  Each round runs in a child with its own environment.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define N 20000

static struct orcu_head heads[N];
static int order[N];
static atomic_int ran;

static void cb(struct orcu_head *h)
{
	order[atomic_fetch_add(&ran, 1)] = (int)(h - heads);
}

static int round_child(const char *lazy_max)
{
	uint64_t x = 88172645463325252ull; /* xorshift: the same pattern each run */
	int lazy = 0, n_lazy = 0;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_LAZY_MS", "600000", 1);
	setenv("ORCU_LAZY_MAX", lazy_max, 1);
	CHECK_EQ(orcu_thread_bind_cpu(0), 0);
	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* Runs of about 8 of a kind. */
		if ((x & 7) == 0)
			lazy = !lazy;
		if (lazy) {
			orcu_call_lazy(&heads[i], cb);
			n_lazy++;
		} else {
			orcu_call(&heads[i], cb);
		}
		if ((x >> 8 & 1023) == 0)
			orcu_synchronize();
	}
	orcu_barrier();
	CHECK_EQ(atomic_load(&ran), N);
	for (int i = 1; i < N; i++) {
		if (order[i] <= order[i - 1]) {
			fprintf(stderr,
				"LAZY_MAX=%s: callback %d ran after %d (posted %s, then %s)\n",
				lazy_max, order[i], order[i - 1],
				order[i] < order[i - 1] ? "earlier" : "twice",
				order[i] < order[i - 1] ? "overtaken" : "again");
			return 1;
		}
	}
	printf("LAZY_MAX=%s: %d callbacks (%d lazy) ran in posting order\n", lazy_max, N,
	       n_lazy);
	return 0;
}

static void run_round(const char *lazy_max)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm((unsigned)check_timeout_s(60));
		_exit(round_child(lazy_max));
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	run_round("1000000"); /* held until a flush (the barrier) */
	run_round("16");      /* the leader flushes them often */
	TEST_PASS("test_lazy_order");
}
