/*
 * test_wake_economy - DESIGN 5.7 (the "rcu_sched at 40% of a CPU" report):
 * with N offloaded CPUs the GP thread wakes at most one leader per group
 * with work, per grace period, not one thread per CPU.
 *
 * possible=4096, all online, all offloaded.  Each round, a memb reader
 * holds grace periods open while one thread binds itself to every slot in
 * turn and posts a callback there; once every leader with work waits for
 * its GP, the reader leaves and the round's callbacks complete in a couple
 * of GPs.  Measured: leader wake-ups issued by the GP thread per GP.
 *  grouped (default stride 64, 64 groups): <= 64 per GP;
 *  flat (ORCU_NOCB_STRIDE=1: every slot its own leader): every slot's
 *  leader waits for the same few GPs, so far more than 64 per GP.
 * Each configuration runs in its own child process.  The round's "every
 * leader waits" point is read from the engine's leader records (internal
 * header): it orders the test, it is not what is measured.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"
#include <orcu/debug.h>

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define NCPUS 4096
#define ROUNDS 4

static struct orcu_head heads[NCPUS];
static atomic_long invoked;
static atomic_int hold, held, released;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add_explicit(&invoked, 1, memory_order_release);
}

static void *holder(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	for (int r = 0; r < ROUNDS; r++) {
		CHECK_WAIT_UNTIL(atomic_load(&hold) == r + 1, 60);
		orcu_read_lock();
		atomic_store(&held, r + 1);
		CHECK_WAIT_UNTIL(atomic_load(&released) == r + 1, 60);
		orcu_read_unlock();
	}
	orcu_unregister_thread();
	return NULL;
}

/* Every leader whose group has callbacks is waiting for a grace period. */
static bool leaders_with_work_wait(void)
{
	for (int g = 0; g < orcu__g.nr_groups; g++) {
		uint64_t bits = atomic_load(&orcu__g.leader_gp_wait[g / 64]);

		if (!(bits & (1ull << (g % 64))))
			return false;
	}
	return true;
}

struct result {
	double wakes_per_gp;
	long groups;
	long gps;
	long wakes;
};

static void run(struct result *res)
{
	struct orcu_stats a, b;
	pthread_t ht;

	setenv("ORCU_CPUS", "possible=4096,online=0-4095", 1);
	/* 4096 followers + 64 leaders + the GP thread, on purpose: above the
	 * default cap on library threads. */
	setenv("ORCU_MAX_THREADS", "5000", 1);
	setenv("ORCU_NOCBS", "all", 1);
	CHECK_EQ(orcu_init(NULL), 0);
	orcu_get_stats(&a);
	CHECK_EQ(a.slots_online, NCPUS);
	CHECK_EQ(a.slots_offloaded, NCPUS);
	CHECK_EQ(pthread_create(&ht, NULL, holder, NULL), 0);

	orcu_get_stats(&a);
	for (int r = 0; r < ROUNDS; r++) {
		atomic_store(&hold, r + 1);
		CHECK_WAIT_UNTIL(atomic_load(&held) == r + 1, 60);
		for (int c = 0; c < NCPUS; c++) {
			CHECK_EQ(orcu_thread_bind_cpu(c), 0);
			orcu_call(&heads[c], cb);
		}
		orcu_thread_bind_cpu(-1);
		CHECK_WAIT_UNTIL(leaders_with_work_wait(), 60);
		atomic_store(&released, r + 1);
		CHECK_WAIT_UNTIL(atomic_load(&invoked) == (long)(r + 1) * NCPUS, 60);
	}
	orcu_get_stats(&b);
	pthread_join(ht, NULL);

	res->groups = orcu__g.nr_groups;
	res->gps = (long)(b.gp_completed - a.gp_completed);
	res->wakes = (long)(b.gp_leader_wakeups - a.gp_leader_wakeups);
	res->wakes_per_gp = res->gps ? (double)res->wakes / (double)res->gps : 0;
	CHECK_EQ(orcu_shutdown(), 0);
	CHECK_EQ(orcu_debug_thread_count(), 0);
}

static struct result run_child(const char *stride)
{
	struct result res;
	double deadline;
	int fds[2], status = 0;
	pid_t pid, w;

	CHECK_EQ(pipe(fds), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		if (stride)
			setenv("ORCU_NOCB_STRIDE", stride, 1);
		else
			unsetenv("ORCU_NOCB_STRIDE");
		run(&res);
		if (write(fds[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	deadline = check_now_s() + check_timeout_s(100);
	while ((w = waitpid(pid, &status, WNOHANG)) == 0) {
		struct timespec ts = { 0, 10000000 };

		if (check_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "child (stride %s) timed out\n", stride ? stride : "default");
			exit(1);
		}
		nanosleep(&ts, NULL);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(read(fds[0], &res, sizeof(res)), (long)sizeof(res));
	close(fds[0]);
	return res;
}

int main(void)
{
	struct result grouped, flat;
	double t0 = check_now_s();

	grouped = run_child(NULL);
	printf("grouped: %ld groups, %ld GPs, %ld leader wake-ups, %.1f per GP (%.1fs)\n",
	       grouped.groups, grouped.gps, grouped.wakes, grouped.wakes_per_gp,
	       check_now_s() - t0);
	t0 = check_now_s();
	flat = run_child("1");
	printf("flat:    %ld groups, %ld GPs, %ld leader wake-ups, %.1f per GP (%.1fs)\n",
	       flat.groups, flat.gps, flat.wakes, flat.wakes_per_gp,
	       check_now_s() - t0);

	CHECK_EQ(grouped.groups, 64);
	CHECK_EQ(flat.groups, NCPUS);
	CHECK(grouped.gps >= ROUNDS);
	/* One wake per group with work per GP, at most. */
	CHECK(grouped.wakes_per_gp <= 64.0);
	/* Every round all 64 groups had work and waited: they were woken. */
	CHECK(grouped.wakes >= ROUNDS * 64);
	/* Flat: thousands of leaders per GP. */
	CHECK(flat.wakes_per_gp > 64.0);
	CHECK(flat.wakes_per_gp > 4 * grouped.wakes_per_gp);
	TEST_PASS("wake_economy");
}
