/*
 * test_fork_child_barrier_offline_offloaded.c - a fork child finishes the
 * work of slots that went offline in its parent, and starts its library
 * threads only when first used.  Slots 0-3 are online and offloaded; slot
 * 1 holds callbacks and a barrier marker when it is taken offline (an
 * offloaded slot keeps its follower, which goes on draining it), then the
 * process forks.  In the child, before any orcu call, no library thread
 * exists; its orcu_barrier() returns and every callback posted before the
 * fork has run there.  Each scenario runs in its own child, reported as
 * "deadlock in <name>" if it hangs.
 *  1. offline_slot_held_by_gp: slot 1's callbacks wait for a GP that a
 *     reader thread holds (the reader does not exist in the child);
 *  2. offline_slot_inflight_chain: slot 1's follower is inside the first
 *     of its callbacks when the fork starts, and that callback is let go
 *     only once fork() has begun: the fork waits until the follower is
 *     between two callbacks, so the child holds that one completed, puts
 *     back the rest of the chain the follower had claimed and runs it;
 *  3. fork_storm: two readers and an updater (synchronize, call) run while
 *     the main thread forks 200 times (not under the sanitizers: see
 *     STORM_FORKS); each child posts, barriers and synchronizes, and must
 *     exit 0 in time (liburcu's fork test).
 * In the parent, once released, the barrier thread returns and every
 * callback ran exactly once.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "scenario_child.h"

#define NCB 100

static atomic_int reader_state, release_blocker, blocker_started, barrier_done;

static void topology(void)
{
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_NOCBS", "all", 1);
}

/* Holds every GP that starts while it is inside its section. */
static void *holding_reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&reader_state, 1);
	while (atomic_load(&reader_state) != 2)
		sleep_ms(1);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static void *barrier_thread(void *arg)
{
	(void)arg;
	orcu_barrier();
	atomic_store(&barrier_done, 1);
	return NULL;
}

static uint64_t barriers_run(void)
{
	struct orcu_stats st;

	orcu_get_stats(&st);
	return st.barriers_run;
}

/* Start a barrier on another thread and wait until its markers are in:
 * fork_prepare takes the barrier lock, so a barrier that has started is
 * entrained before the fork. */
static void start_blocked_barrier(pthread_t *t)
{
	uint64_t before = barriers_run();

	CHECK_EQ(pthread_create(t, NULL, barrier_thread, NULL), 0);
	CHECK_WAIT_UNTIL(barriers_run() > before, 20);
	CHECK_EQ(atomic_load(&barrier_done), 0);
}

/* In the child: a failed check exits with a distinct code. */
/* The child's view: no threads yet; the barrier returns; every callback
 * posted before the fork ran exactly once. */
static int child_after_fork(void)
{
	int n = atomic_load(&scen_posted);

	alarm((unsigned)check_timeout_s(30));
	CHILD_CHECK(10, orcu_debug_thread_count() == 0);
	orcu_barrier();
	for (int i = 0; i < n; i++)
		CHILD_CHECK(11, atomic_load(&scen_ran[i]) == 1);
	/* And it goes on working. */
	post_counted_on(1, 10);
	post_counted_on(2, 10);
	orcu_barrier();
	for (int i = n; i < n + 20; i++)
		CHILD_CHECK(12, atomic_load(&scen_ran[i]) == 1);
	orcu_synchronize();
	CHILD_CHECK(13, orcu_debug_thread_count() > 0);
	return 0;
}

static void fork_and_check_child(const char *what)
{
	check_child_ok(check_fork_run(child_after_fork), what, 20);
}

/* ------------------------------------------------------------------ */

static int offline_slot_held_by_gp(void)
{
	pthread_t r, b;

	topology();
	CHECK_EQ(pthread_create(&r, NULL, holding_reader, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_state) == 1, 20);
	post_counted_on(1, NCB);
	post_counted_on(3, 10);
	start_blocked_barrier(&b);
	CHECK_EQ(orcu_cpu_offline(1), 0);

	fork_and_check_child("offline_slot_held_by_gp (forked child)");

	/* The parent: still held by its reader. */
	CHECK_EQ(atomic_load(&barrier_done), 0);
	for (int i = 0; i < NCB; i++)
		CHECK_EQ(atomic_load(&scen_ran[i]), 0);
	atomic_store(&reader_state, 2);
	CHECK_EQ(pthread_join(r, NULL), 0);
	CHECK_EQ(pthread_join(b, NULL), 0);
	check_all_ran_once();
	return 0;
}

static void blocker(void)
{
	atomic_store(&blocker_started, 1);
	while (!atomic_load(&release_blocker))
		sleep_ms(1);
}

static atomic_int forking;

/* Runs before orcu's own prepare handler (prepare handlers run in the
 * reverse order of registration; orcu registers in a constructor). */
static void note_forking(void)
{
	atomic_store(&forking, 1);
}

/* Lets the blocker go once fork() has begun: a fork that did not wait
 * for the follower would snapshot the blocker unfinished. */
static void *unblock_during_fork(void *arg)
{
	(void)arg;
	CHECK_WAIT_UNTIL(atomic_load(&forking), 30);
	sleep_ms(50);   /* let fork() get as far as it will; nothing depends on it */
	atomic_store(&release_blocker, 1);
	return NULL;
}

static int offline_slot_inflight_chain(void)
{
	pthread_t b, u;

	topology();
	CHECK_EQ(pthread_atfork(note_forking, NULL, NULL), 0);
	CHECK_EQ(orcu_thread_bind_cpu(1), 0);
	post_counted(blocker);                 /* index 0 */
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	post_counted_on(1, NCB);
	post_counted_on(3, 10);
	CHECK_WAIT_UNTIL(atomic_load(&blocker_started), 20);
	start_blocked_barrier(&b);
	CHECK_EQ(orcu_cpu_offline(1), 0);

	CHECK_EQ(pthread_create(&u, NULL, unblock_during_fork, NULL), 0);

	/* The child ran every callback once, the blocker before the fork. */
	fork_and_check_child("offline_slot_inflight_chain (forked child)");

	CHECK_EQ(pthread_join(u, NULL), 0);
	CHECK_EQ(pthread_join(b, NULL), 0);
	check_all_ran_once();
	return 0;
}

/* ------------------------------------------------------------------ */
/* fork_storm */

static atomic_int storm_stop;
static atomic_long storm_posted, storm_ran;

/* The updater's heads: a fixed ring, no allocation across the forks. */
#define STORM_RING 64
static struct storm_head {
	struct orcu_head head;
	atomic_int busy;
} storm_ring[STORM_RING];

/* Under AddressSanitizer and ThreadSanitizer the storm does not run: their
 * runtimes (as shipped with gcc 12) do not lock their allocators around
 * fork(), so a child forked while another thread is inside the runtime's
 * allocator inherits a lock nobody will release, and every thread it
 * starts then hangs inside the runtime (seen: all of a child's new orcu
 * threads blocked in AsanThread::Init -> calloc), not in orcu.  The two
 * scenarios above fork from a quiet parent and do run there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(ORCU__TSAN)
#define STORM_FORKS 0
#else
#define STORM_FORKS 200
#endif

static void storm_cb(struct orcu_head *h)
{
	atomic_store(&((struct storm_head *)h)->busy, 0);
	atomic_fetch_add(&storm_ran, 1);
}

static void *storm_reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load(&storm_stop)) {
		orcu_read_lock();
		orcu_read_lock();
		orcu_read_unlock();
		orcu_read_unlock();
	}
	orcu_unregister_thread();
	return NULL;
}

static void *storm_updater(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load(&storm_stop); i++) {
		struct storm_head *sh = &storm_ring[i % STORM_RING];

		if (!atomic_load(&sh->busy)) {
			atomic_store(&sh->busy, 1);
			atomic_fetch_add(&storm_posted, 1);
			orcu_call(&sh->head, storm_cb);
		}
		orcu_synchronize();
	}
	return NULL;
}

static int storm_child(void)
{
	struct counted *c;

	alarm((unsigned)check_timeout_s(30));
	c = post_counted(NULL);
	orcu_barrier();
	CHILD_CHECK(20, atomic_load(&scen_ran[c->idx]) == 1);
	orcu_synchronize();
	return 0;
}

static int fork_storm(void)
{
	pthread_t t[3];

	topology();
	CHECK_EQ(pthread_create(&t[0], NULL, storm_reader, NULL), 0);
	CHECK_EQ(pthread_create(&t[1], NULL, storm_reader, NULL), 0);
	CHECK_EQ(pthread_create(&t[2], NULL, storm_updater, NULL), 0);
	for (int i = 0; i < STORM_FORKS; i++) {
		char what[48];

		snprintf(what, sizeof(what), "fork_storm: child %d", i);
		check_child_ok(check_fork_run(storm_child), what, 30);
	}
	atomic_store(&storm_stop, 1);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	orcu_barrier();
	CHECK(atomic_load(&storm_posted) > 0);
	CHECK_EQ(atomic_load(&storm_ran), atomic_load(&storm_posted));
	return 0;
}

int main(void)
{
	bool ok = true;

	test_watchdog("test_fork_child_barrier_offline_offloaded", 115);
	ok &= scen_run("offline_slot_held_by_gp", offline_slot_held_by_gp, 30);
	ok &= scen_run("offline_slot_inflight_chain", offline_slot_inflight_chain, 30);
	if (STORM_FORKS)
		ok &= scen_run("fork_storm", fork_storm, 50);
	else
		printf("skip fork_storm: the sanitizer runtime is not fork-safe under load\n");
	CHECK(ok);
	TEST_PASS("test_fork_child_barrier_offline_offloaded");
}
