/*
 * lifecycle.c - the end of the library's lifetime and its copies:
 * orcu_shutdown() and fork.  The top of the engine.  Calls serve.c to
 * have it running and to serve what is left, entry.c to start and to
 * bring a qsbr caller back online, then the stop and after-fork entry
 * points of gp.c, nocb.c, slot.c, registry.c, barrier.c and postcheck.c,
 * and os.c.  Nothing calls it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"
#include "postcheck.h"
#include "gp.h"
#include "registry.h"
#include "nocb.h"
#include "serve.h"
#include "slot.h"
#include "barrier.h"
#include "entry.h"

#include <errno.h>

/* ------------------------------------------------------------------ */
/* Shutdown and fork */

/*
 * Drain, then stop every library thread.  The threads are joined without
 * orcu__g.lock: a callback still running on one of them may call into the
 * library.  `stopping` keeps spawning and a second shutdown out meanwhile
 * (that one returns -EBUSY); a concurrent orcu_synchronize() runs its GP
 * itself and a concurrent barrier serves or restarts what it waits for,
 * so nothing waits on a thread that is gone.
 */
static int stop_all(void)
{
	int ret;

	orcu__ensure_started();
	ret = orcu_drain(-1);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&orcu__g.lock);
	if (orcu__load_relaxed(&orcu__g.stopping)) {
		pthread_mutex_unlock(&orcu__g.lock);
		return -EBUSY;
	}
	orcu__store_relaxed(&orcu__g.stopping, 1);
	orcu__nocb_request_stop();
	pthread_mutex_unlock(&orcu__g.lock);

	orcu__nocb_join_all();
	orcu__gp_stop_thread();

	pthread_mutex_lock(&orcu__g.lock);
	orcu__nocb_forget_all();
	/* Order: none needed; 0 publishes nothing, and whoever restarts
	 * takes orcu__g.lock. */
	orcu__store_relaxed(&orcu__g.started, 0);
	orcu__store_relaxed(&orcu__g.degraded, 0);
	orcu__store_relaxed(&orcu__g.stopping, 0);
	pthread_mutex_unlock(&orcu__g.lock);
	/* A GP asked for (orcu_start_poll()) that the GP thread missed as it
	 * stopped: nobody else will run it (gp.c point 6).  The caller runs
	 * it, offline (orcu_shutdown()), and the callbacks posted while the
	 * threads stopped (serve.c point 4). */
	orcu__gp_run_requested();
	orcu__serve_after_stop();
	return 0;
}

int orcu_shutdown(void)
{
	bool was_online;
	int ret;

	/* Not from a callback, a stall handler or a read-side section: each
	 * would wait for itself. */
	orcu__gp_check_caller("orcu_shutdown");
	/* Pairs with the store in apply_conf(). */
	if (!orcu__load_acquire(&orcu__g.initialized))
		return 0;
	/* A qsbr caller stays offline throughout: the GP thread and the
	 * leaders it joins may be finishing a GP that would wait for it. */
	was_online = orcu__qsbr_offline_for_wait();
	ret = stop_all();
	if (was_online)
		orcu_thread_online();
	return ret;
}

/*
 * fork.  First every other invoker stops between two callbacks (slot.c
 * point 5: the child holds no callback half-run, and puts back what they
 * had not run), then the locks, in order: barrier_lock, orcu__g.lock,
 * every cb_lock, registry, the double-post set, the stall handler's.  None of them is ever held
 * across user code, and none is held while the invokers are waited for,
 * so a fork from inside a callback, or against a callback that takes one
 * of them, cannot deadlock here.
 */
static void fork_prepare(void)
{
	orcu__slots_fork_quiesce();
	orcu__barrier_fork_prepare();
	pthread_mutex_lock(&orcu__g.lock);
	orcu__slots_lock_all();
	orcu__registry_lock();
	orcu__double_call_fork_prepare();
	orcu__stall_hook_fork_lock(true);
}

static void unlock_slots(void)
{
	orcu__slots_unlock_all();
}

static void fork_parent(void)
{
	orcu__stall_hook_fork_lock(false);
	orcu__double_call_fork_parent();
	orcu__registry_unlock();
	unlock_slots();
	pthread_mutex_unlock(&orcu__g.lock);
	orcu__barrier_fork_parent();
	orcu__slots_fork_resume(false);
}

static void fork_child(void)
{
	/* Only this thread survives: forget the others, keep every callback.
	 * This thread holds every lock fork_prepare took: release them in
	 * reverse order (unlocking, not re-initialising a held mutex, which
	 * is undefined and leaves ThreadSanitizer believing they are held).
	 * The library's threads start again on first use, not here: a child
	 * that only execs never pays for them. */
	orcu__stall_hook_fork_lock(false);
	orcu__registry_after_fork_child();
	if (orcu__load_relaxed(&orcu__g.initialized)) {
		orcu__slots_after_fork_child();
		orcu__nocb_forget_all();
	}
	orcu__double_call_fork_child();
	orcu__registry_unlock();
	unlock_slots();
	orcu__gp_after_fork_child();
	/* This thread, if it is a library thread (it forked from a callback
	 * or a stall handler), still runs here, and counts itself out when it
	 * ends. */
	orcu__store_relaxed(&orcu__g.threads_alive, orcu__tls.library_thread ? 1 : 0);
	/* Its records now describe the threads the child will start: it
	 * finishes what it runs and ends (leader_main(), follower_main(),
	 * gp.c point 1). */
	orcu__tls.retired = orcu__tls.library_thread;
	orcu__store_relaxed(&orcu__g.started, 0);
	orcu__store_relaxed(&orcu__g.stopping, 0);
	/* Callbacks the child inherited start its threads at its next GP,
	 * safe point or post (serve.c point 4). */
	orcu__serve_mark_pending();
	pthread_mutex_unlock(&orcu__g.lock);
	orcu__barrier_fork_child();
	orcu__slots_fork_resume(true);
}

/* Referenced by os.c so that static links keep this file (os.c). */
const int orcu__lifecycle_linked = 1;

__attribute__((constructor)) static void orcu__init_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
