/*
 * test_callback_may_take_library_locks.c - user code run by the library (a
 * callback, a stall handler) may call back into the library: no library
 * lock is held while it runs (DESIGN: "User code runs with no library lock
 * held").  Each scenario below deadlocked when one was (a per-slot invoke
 * lock held across callbacks, the registry lock across the stall handler);
 * each runs in its own child, killed and reported as "deadlock in <name>"
 * if it hangs, and ends by checking that every callback it posted ran
 * exactly once.
 *  a. fork() while a follower's callback calls orcu_cpu_online();
 *  b. orcu_cpu_offline() of an inline slot while that slot's callback,
 *     run by an application thread, calls orcu_cpu_online();
 *  c. fork() from inside a callback;
 *  d. an inline callback that takes its own slot offline;
 *  e. a stall handler that starts a thread which registers as a reader.
 * The 100 ms sleeps only widen the window in which the two sides meet;
 * no check depends on them.
 */
#include <orcu.h>

#include "common_pipe.h"
#include "scenario_child.h"

static atomic_int hook_started, hook_done, main_going, thread_stop;

static void topology(const char *nocbs)
{
	setenv("ORCU_CPUS", "possible=4,online=0-3", 1);
	setenv("ORCU_NOCBS", nocbs, 1);
	/* Inline callbacks stay with the application thread that polls
	 * for them; a follower takes over only after this long. */
	setenv("ORCU_INPLACE_TAKEOVER_MS", "2000", 1);
}

/* Announce the hook runs, wait until main is about to act, let main get
 * into the library call, then call into the library ourselves. */
static void hook_meet_main(void)
{
	atomic_store(&hook_started, 1);
	while (!atomic_load(&main_going))
		sleep_ms(1);
	sleep_ms(100);
}

/* ------------------------------------------------------------------ */
/* a. fork() against a follower's callback calling orcu_cpu_online(). */

static void a_hook(void)
{
	hook_meet_main();
	CHECK_EQ(orcu_cpu_online(2), 0);
	atomic_store(&hook_done, 1);
}

static int fork_vs_online(void)
{
	pid_t pid;
	int st;

	topology("all");
	CHECK_EQ(orcu_thread_bind_cpu(1), 0);
	post_counted(a_hook);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	post_counted_on(1, 50);
	post_counted_on(0, 50);
	CHECK_WAIT_UNTIL(atomic_load(&hook_started), 20);
	atomic_store(&main_going, 1);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm((unsigned)check_timeout_s(30));
		orcu_synchronize();
		_exit(0);
	}
	st = check_wait_child(pid, "fork_vs_online (forked child)", 30);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_WAIT_UNTIL(atomic_load(&hook_done), 30);
	check_all_ran_once();
	return 0;
}

/* ------------------------------------------------------------------ */
/* An application thread bound to inline slot 1 that posts `hook` and
 * then 30 more, and keeps announcing quiescent states (where it invokes
 * its slot's ready callbacks) until told to stop. */

static void *inline_poster(void *arg)
{
	void (*hook)(void) = (void (*)(void))(uintptr_t)arg;

	CHECK_EQ(orcu_thread_bind_cpu(1), 0);
	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	post_counted(hook);
	for (int i = 0; i < 30; i++)
		post_counted(NULL);
	while (!atomic_load(&thread_stop)) {
		orcu_quiescent_state();
		sleep_ms(1);
	}
	orcu_thread_offline();
	orcu_unregister_thread();
	return NULL;
}

/* b. orcu_cpu_offline() of an inline slot against its callback calling
 *    orcu_cpu_online(). */

static void b_hook(void)
{
	hook_meet_main();
	CHECK_EQ(orcu_cpu_online(3), 0);
	atomic_store(&hook_done, 1);
}

static int offline_vs_inline_callback(void)
{
	pthread_t t;

	topology("none");
	post_counted_on(0, 20);
	CHECK_EQ(pthread_create(&t, NULL, inline_poster, (void *)(uintptr_t)b_hook), 0);
	CHECK_WAIT_UNTIL(atomic_load(&hook_started), 20);
	atomic_store(&main_going, 1);
	CHECK_EQ(orcu_cpu_offline(1), 0);
	CHECK_WAIT_UNTIL(atomic_load(&hook_done), 30);
	atomic_store(&thread_stop, 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	check_all_ran_once();
	return 0;
}

/* ------------------------------------------------------------------ */
/* c. fork() from inside a callback (on a follower). */

static void c_hook(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	st = check_wait_child(pid, "fork_in_callback (forked child)", 30);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	atomic_store(&hook_done, 1);
}

static int fork_in_callback(void)
{
	topology("all");
	post_counted_on(3, 10);
	CHECK_EQ(orcu_thread_bind_cpu(2), 0);
	post_counted(c_hook);
	CHECK_EQ(orcu_thread_bind_cpu(-1), 0);
	post_counted_on(2, 50);
	CHECK_WAIT_UNTIL(atomic_load(&hook_done), 30);
	check_all_ran_once();
	return 0;
}

/* ------------------------------------------------------------------ */
/* d. An inline callback takes its own slot offline. */

static void d_hook(void)
{
	atomic_store(&hook_started, 1);
	CHECK_EQ(orcu_cpu_offline(1), 0);
	atomic_store(&hook_done, 1);
}

static int inline_callback_offlines_own_slot(void)
{
	pthread_t t;

	topology("none");
	CHECK_EQ(pthread_create(&t, NULL, inline_poster, (void *)(uintptr_t)d_hook), 0);
	CHECK_WAIT_UNTIL(atomic_load(&hook_done), 30);
	atomic_store(&thread_stop, 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	check_all_ran_once();
	return 0;
}

/* ------------------------------------------------------------------ */
/* e. The stall handler starts (and joins) a thread that registers. */

static atomic_int handler_calls, handler_ok, reader_in;

static void *registers(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static void stall_handler(const struct orcu_stall_info *info, void *arg)
{
	pthread_t t;

	CHECK(arg == &handler_calls);
	CHECK(info->nr_readers >= 1);
	atomic_fetch_add(&handler_calls, 1);
	CHECK_EQ(pthread_create(&t, NULL, registers, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	atomic_store(&handler_ok, 1);
}

static void *stuck_reader(void *arg)
{
	(void)arg;
	CHECK_EQ(orcu_register_thread(), 0);
	orcu_read_lock();
	atomic_store(&reader_in, 1);
	/* Held until the handler has seen the stall through. */
	while (!atomic_load(&handler_ok))
		sleep_ms(1);
	orcu_read_unlock();
	orcu_unregister_thread();
	return NULL;
}

static int stall_handler_registers_thread(void)
{
	pthread_t r;

	topology("all");
	setenv("ORCU_STALL_MS", "200", 1);
	orcu_set_stall_handler(stall_handler, &handler_calls);
	CHECK_EQ(pthread_create(&r, NULL, stuck_reader, NULL), 0);
	CHECK_WAIT_UNTIL(atomic_load(&reader_in), 20);
	post_counted_on(1, 20);
	orcu_synchronize();   /* held by the reader until the handler ran */
	CHECK(atomic_load(&handler_ok));
	CHECK(atomic_load(&handler_calls) >= 1);
	CHECK_EQ(pthread_join(r, NULL), 0);
	post_counted_on(2, 20);
	check_all_ran_once();
	return 0;
}

int main(void)
{
	bool ok = true;

	test_watchdog("test_callback_may_take_library_locks", 115);
	ok &= scen_run("fork_vs_online", fork_vs_online, 20);
	ok &= scen_run("offline_vs_inline_callback", offline_vs_inline_callback, 20);
	ok &= scen_run("fork_in_callback", fork_in_callback, 20);
	ok &= scen_run("inline_callback_offlines_own_slot",
		       inline_callback_offlines_own_slot, 20);
	ok &= scen_run("stall_handler_registers_thread",
		       stall_handler_registers_thread, 20);
	CHECK(ok);
	TEST_PASS("test_callback_may_take_library_locks");
}
