/*
 * test_fork_child_sync_only_runs_inherited - a fork child that only reads,
 * passes quiescent states and synchronizes runs the callbacks it inherited,
 * with no barrier (DESIGN 5.8: "a fork child restarts on any call that can
 * need its threads"; every pending callback has a server).
 *
 * The parent (itself a child of main, so each case picks its environment
 * before the library starts) registers its main thread, holds grace
 * periods back with a reader thread parked in a read-side section, posts
 * NCB callbacks, which therefore cannot run before the fork, and forks.
 * The reader does not exist in the grandchild.  There the registered
 * thread, in a loop, only enters and leaves a read-side section, passes a
 * quiescent state (orcu_quiescent_state(), for memb too) and ends a grace
 * period with the case's wait: orcu_synchronize(), or the siblings
 * orcu_synchronize_expedited() and orcu_cond_synchronize(orcu_get_state()),
 * or none ("nowait": only sections and safe points, which DESIGN 5.8 also
 * lists as servers).  In the "reclaim" case the callbacks are lazy and the
 * child calls only orcu_reclaim_lazy(): no section, safe point or wait.
 * Every inherited callback must run, once, within 10 s (scaled).  Cases: offloaded (default) and inline (ORCU_NOCBS=none)
 * slots, memb and qsbr readers.  An argument ("inline qsbr sync") runs
 * that case alone.
 *
 * On 9552413 every case fails: 0 of 100 run, since fork_child() clears
 * `started` and only a post, a registration, a barrier or orcu_start_poll()
 * starts the library again, and a safe point serves only work raised as
 * unserved, which the inherited callbacks never are.  The reclaim case
 * failed the same way up to a5740a6 (0 of 100: orcu_reclaim_lazy() did
 * nothing while the library was stopped; found by an outside program).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"

#define NCB 100

enum wait_kind { WAIT_SYNC, WAIT_EXPEDITED, WAIT_COND, WAIT_NONE, WAIT_RECLAIM };

static struct orcu_head heads[NCB];
static atomic_int ran[NCB];
static atomic_int invoked;
static atomic_int holder_state;
static bool qsbr;
static enum wait_kind wait_kind;

static void cb(struct orcu_head *h)
{
	atomic_fetch_add(&ran[h - heads], 1);
	atomic_fetch_add(&invoked, 1);
}

/* Holds every grace period back until told to leave (state 2). */
static void *holder(void *arg)
{
	struct timespec ts = { 0, 1000000 };

	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&holder_state, 1);
	while (atomic_load(&holder_state) != 2)
		nanosleep(&ts, NULL);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

/* One round of what the child does: read, quiescent state, a GP. */
static int child_round(void)
{
	if (wait_kind == WAIT_RECLAIM) {
		orcu_reclaim_lazy();
		return atomic_load(&invoked);
	}
	orcu_read_lock();
	orcu_read_unlock();
	orcu_quiescent_state();
	switch (wait_kind) {
	case WAIT_SYNC:
		orcu_synchronize();
		break;
	case WAIT_EXPEDITED:
		orcu_synchronize_expedited();
		break;
	case WAIT_COND:
		orcu_cond_synchronize(orcu_get_state());
		break;
	case WAIT_NONE:
	case WAIT_RECLAIM:
		break;
	}
	return atomic_load(&invoked);
}

/* Said on the way out of a failed wait (CHECK_WAIT_UNTIL exits). */
static void report_invoked(void)
{
	if (atomic_load(&invoked) != NCB)
		fprintf(stderr, "fork child: %d of %d inherited callbacks invoked\n",
			atomic_load(&invoked), NCB);
}

static int grandchild(void)
{
	alarm((unsigned)check_timeout_s(60));
	atexit(report_invoked);
	/* Nothing ran before the fork: the holder was in its section. */
	CHILD_CHECK(20, atomic_load(&invoked) == 0);
	CHECK_WAIT_UNTIL(child_round() == NCB, 10);
	for (int i = 0; i < NCB; i++)
		CHILD_CHECK(21, atomic_load(&ran[i]) == 1);
	return 0;
}

static int parent(void)
{
	pthread_t h;
	struct timespec ts = { 0, 1000000 };

	alarm((unsigned)check_timeout_s(90));
	CHILD_CHECK(1, (qsbr ? orcu_register_thread_qsbr() : orcu_register_thread()) == 0);
	CHILD_CHECK(2, pthread_create(&h, NULL, holder, NULL) == 0);
	while (atomic_load(&holder_state) != 1)
		nanosleep(&ts, NULL);
	for (int i = 0; i < NCB; i++)
		(wait_kind == WAIT_RECLAIM ? orcu_call_lazy : orcu_call)(&heads[i], cb);
	/* The parent's own copies run once the holder leaves: its result
	 * is the grandchild's, not theirs. */
	check_child_ok(check_fork_run(grandchild), "fork child", 60);
	atomic_store(&holder_state, 2);
	pthread_join(h, NULL);
	if (qsbr)
		orcu_thread_offline();
	orcu_barrier();
	CHILD_CHECK(3, atomic_load(&invoked) == NCB);
	return 0;
}

static int run(const char *nocbs, bool qsbr_reader, enum wait_kind w)
{
	setenv("ORCU_CPUS", "possible=2,online=0-1", 1);
	if (nocbs)
		setenv("ORCU_NOCBS", nocbs, 1);
	else
		unsetenv("ORCU_NOCBS");
	qsbr = qsbr_reader;
	wait_kind = w;
	return parent();
}

static int offloaded_memb_sync(void) { return run(NULL, false, WAIT_SYNC); }
static int offloaded_qsbr_sync(void) { return run(NULL, true, WAIT_SYNC); }
static int inline_memb_sync(void) { return run("none", false, WAIT_SYNC); }
static int inline_qsbr_sync(void) { return run("none", true, WAIT_SYNC); }
static int offloaded_memb_expedited(void) { return run(NULL, false, WAIT_EXPEDITED); }
static int offloaded_memb_cond(void) { return run(NULL, false, WAIT_COND); }
static int offloaded_memb_nowait(void) { return run(NULL, false, WAIT_NONE); }
static int offloaded_qsbr_nowait(void) { return run(NULL, true, WAIT_NONE); }
static int offloaded_memb_reclaim(void) { return run(NULL, false, WAIT_RECLAIM); }

int main(int argc, char **argv)
{
	struct { const char *name; int (*run)(void); } cases[] = {
		{ "offloaded memb sync", offloaded_memb_sync },
		{ "offloaded qsbr sync", offloaded_qsbr_sync },
		{ "inline memb sync", inline_memb_sync },
		{ "inline qsbr sync", inline_qsbr_sync },
		{ "offloaded memb expedited", offloaded_memb_expedited },
		{ "offloaded memb cond", offloaded_memb_cond },
		{ "offloaded memb nowait", offloaded_memb_nowait },
		{ "offloaded qsbr nowait", offloaded_qsbr_nowait },
		{ "offloaded memb reclaim", offloaded_memb_reclaim },
	};
	int failed = 0;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		if (check_child_passed(check_fork_run(cases[i].run), cases[i].name, 120))
			printf("%s: ok\n", cases[i].name);
		else
			failed = 1;
	}
	CHECK_EQ(failed, 0);
	TEST_PASS("fork_child_sync_only_runs_inherited");
}
