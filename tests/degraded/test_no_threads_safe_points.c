/*
 * test_no_threads_safe_points - with no library thread creatable at all
 * (a pids limit that stays), callbacks still run without a barrier: at the
 * posting threads' safe points (DESIGN 6: "a slot's callbacks are served
 * ... inline at safe points").  pthread_create is interposed as in
 * test_thread_creation_failure.c; each case runs in a child process:
 *   offloaded, inline        the slots' mode (ORCU_NOCBS all / none);
 *   memb, qsbr               the posting threads' kind; memb threads reach
 *                            safe points with orcu_quiescent_state(), qsbr
 *                            threads also go offline and online.
 * Two posting threads (one per slot) post in rounds and pass a safe point
 * after each round, and nobody calls orcu_barrier() or orcu_drain() until
 * every callback ran.  Checked too: orcu_call() itself never runs a
 * callback (its caller may hold a lock the callback takes), nor does a
 * read-side section; every callback runs once; orcu_barrier() is exact
 * afterwards.  An argument ("inline qsbr") runs that case alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"
#include "orcu/debug.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

#define NPOSTERS 2
#define ROUNDS 40
#define PER_ROUND 25
#define N (NPOSTERS * ROUNDS * PER_ROUND)

/* Every library thread fails with EAGAIN, as under a cgroup pids limit. */
static atomic_int fail_all = 1;

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	if (check_library_thread(fn, arg) && atomic_load(&fail_all))
		return EAGAIN;
	return check_real_pthread_create(t, attr, fn, arg);
}

static struct orcu_head heads[N];
static unsigned char seen[N];
static atomic_int invoked, twice, in_wrong_place;
static __thread int in_call, in_section;
static bool qsbr;

static void cb(struct orcu_head *h)
{
	if (seen[h - heads]++)
		atomic_fetch_add(&twice, 1);
	if (in_call || in_section)
		atomic_fetch_add(&in_wrong_place, 1);
	atomic_fetch_add(&invoked, 1);
}

static void safe_point(int round)
{
	if (qsbr && (round & 1)) {
		orcu_thread_offline();
		orcu_thread_online();
	} else {
		orcu_quiescent_state();
	}
}

static void *poster(void *arg)
{
	long p = (long)arg;
	struct timespec ts = { 0, 2 * 1000000 };

	CHECK_EQ(orcu_thread_bind_cpu((int)p), 0);
	CHECK_EQ(qsbr ? orcu_register_thread_qsbr() : orcu_register_thread(), 0);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < PER_ROUND; i++) {
			in_call = 1;
			orcu_call(&heads[(p * ROUNDS + r) * PER_ROUND + i], cb);
			in_call = 0;
		}
		/* A section is no safe point (a qsbr thread's orcu_read_lock
		 * only counts nesting here). */
		orcu_read_lock();
		in_section = 1;
		nanosleep(&ts, NULL);
		in_section = 0;
		orcu_read_unlock();
		safe_point(r);
	}
	/* Callbacks posted in the last rounds need more safe points: keep
	 * passing them until every callback ran (bounded). */
	for (double end = check_now_s() + check_timeout_s(30); atomic_load(&invoked) < N;) {
		CHILD_CHECK(10, check_now_s() < end);
		safe_point(0);
		nanosleep(&ts, NULL);
	}
	orcu_unregister_thread();
	return NULL;
}

static int run(bool inline_slots, bool qsbr_posters)
{
	pthread_t t[NPOSTERS];
	struct orcu_stats st;

	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	setenv("ORCU_NOCBS", inline_slots ? "none" : "all", 1);
	qsbr = qsbr_posters;
	CHILD_CHECK(1, orcu_init(NULL) == -EAGAIN);
	CHILD_CHECK(2, orcu_debug_thread_count() == 0);
	for (long p = 0; p < NPOSTERS; p++)
		CHILD_CHECK(3, pthread_create(&t[p], NULL, poster, (void *)p) == 0);
	for (int p = 0; p < NPOSTERS; p++)
		pthread_join(t[p], NULL);
	CHILD_CHECK(4, atomic_load(&invoked) == N);
	CHILD_CHECK(5, atomic_load(&twice) == 0);
	CHILD_CHECK(6, atomic_load(&in_wrong_place) == 0);
	CHILD_CHECK(7, orcu_debug_thread_count() == 0);
	orcu_barrier();
	CHILD_CHECK(8, atomic_load(&invoked) == N);
	orcu_get_stats(&st);
	CHILD_CHECK(9, st.callbacks_pending == 0);
	atomic_store(&fail_all, 0);
	CHILD_CHECK(11, orcu_shutdown() == 0);
	return 0;
}

static int offloaded_memb(void) { return run(false, false); }
static int offloaded_qsbr(void) { return run(false, true); }
static int inline_memb(void) { return run(true, false); }
static int inline_qsbr(void) { return run(true, true); }

int main(int argc, char **argv)
{
	struct { const char *name; int (*run)(void); } cases[] = {
		{ "offloaded memb", offloaded_memb }, { "offloaded qsbr", offloaded_qsbr },
		{ "inline memb", inline_memb }, { "inline qsbr", inline_qsbr },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		check_child_ok(check_fork_run(cases[i].run), cases[i].name, 90);
		printf("%s: ok\n", cases[i].name);
	}
	TEST_PASS("no_threads_safe_points");
}
