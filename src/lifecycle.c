/*
 * lifecycle.c - the library's lifetime: orcu_init(), the lazy start of
 * the slots and threads on first use (and their retry when degraded),
 * orcu_shutdown() and fork.  The top of the library: calls config.c, os.c,
 * then the setup, start, stop and after-fork entry points of cpu.c, gp.c,
 * nocb.c, slot.c, registry.c, barrier.c and postcheck.c, and installs
 * gp.c's GP-end hook.  Lower modules call it only to have the library up
 * (orcu__ensure_init/_started from registry.c, gp.c, cpu.c, call.c and
 * barrier.c; orcu__retry_threads from barrier.c and nocb.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <errno.h>

/* The configuration into orcu__g, the GP-end hook, then the slots. */
static int apply_conf(struct orcu__conf *c)
{
	int ret;

	orcu__conf_apply(c);
	/* Before any leader can wait for a GP end (gp.c reads it relaxed,
	 * after acquiring `initialized`). */
	orcu__store_relaxed(&orcu__gp_ended_hook, orcu__nocb_gp_done);
	ret = orcu__cpu_setup(c->nr_possible, c->online, c->nocbs);
	/* Publishes the configuration and the slots: pairs with every
	 * acquire of `initialized` (orcu__ensure_init(), stats.c).  seq_cst
	 * for orcu__slots_fork_quiesce(): it raises fork_pending, then reads
	 * this; a fork that reads 0 is seen by every chain on these slots. */
	if (ret == 0)
		orcu__store_seq_cst(&orcu__g.initialized, 1);
	return ret;
}

int orcu_init(const struct orcu_config *cfg)
{
	struct orcu__conf c;
	int ret;

	pthread_mutex_lock(&orcu__g.lock);
	/* Order: orcu__g.lock, held by apply_conf(). */
	if (orcu__load_relaxed(&orcu__g.initialized)) {
		pthread_mutex_unlock(&orcu__g.lock);
		orcu__warn("orcu_init: already initialised; call it before any other orcu call");
		return -EBUSY;
	}
	ret = orcu__conf_build(cfg, &c);
	if (ret == 0) {
		ret = apply_conf(&c);
		orcu__conf_free(&c);
	}
	pthread_mutex_unlock(&orcu__g.lock);
	if (ret == 0)
		ret = orcu__ensure_started();
	return ret;
}

void orcu__ensure_init(void)
{
	struct orcu__conf c;

	/* Pairs with the store in apply_conf(). */
	if (orcu__likely(orcu__load_acquire(&orcu__g.initialized)))
		return;
	pthread_mutex_lock(&orcu__g.lock);
	if (!orcu__load_relaxed(&orcu__g.initialized)) {
		if (orcu__conf_build(NULL, &c) < 0 || apply_conf(&c) < 0)
			orcu__die("cannot initialise (out of memory)");
		orcu__conf_free(&c);
	}
	pthread_mutex_unlock(&orcu__g.lock);
}

/* Under orcu__g.lock: start the GP thread and the threads of every slot
 * that needs them.  0, or -EAGAIN (the library runs degraded). */
static int start_locked(void)
{
	int gp, slots;

	ORCU__ASSERT_HELD(&orcu__g.lock);
	if (orcu__load_relaxed(&orcu__g.stopping))
		return 0;
	if (!orcu__load_relaxed(&orcu__g.started))
		orcu__membarrier_init();
	gp = orcu__gp_start_thread();
	slots = orcu__cpu_start_slots();
	/* Pairs with the acquire loads of `started` (orcu__ensure_started(),
	 * orcu__inline_poll(), orcu_reclaim_lazy()): the threads' records
	 * are set up. */
	orcu__store_release(&orcu__g.started, 1);
	if (gp == 0 && slots == 0) {
		orcu__store_relaxed(&orcu__g.degraded, 0);
		return 0;
	}
	return -EAGAIN;
}

int orcu__ensure_started(void)
{
	int ret = 0;

	/* Pairs with the store in start_locked(). */
	if (orcu__likely(orcu__load_acquire(&orcu__g.started)))
		return 0;
	orcu__ensure_init();
	pthread_mutex_lock(&orcu__g.lock);
	if (!orcu__load_relaxed(&orcu__g.started))
		ret = start_locked();
	pthread_mutex_unlock(&orcu__g.lock);
	return ret;
}

/* A caller that needs threads (a poster on a slot without any, a waiting
 * barrier): start what orcu_shutdown() stopped, or, degraded, retry what
 * could not be created, at most once per ORCU__RETRY_NS. */
void orcu__retry_threads(void)
{
	/* Order: none needed; orcu__ensure_started() decides again. */
	if (!orcu__load_relaxed(&orcu__g.started)) {
		orcu__ensure_started();
		return;
	}
	if (!orcu__load_relaxed(&orcu__g.degraded) ||
	    orcu__now_ns() < orcu__load_relaxed(&orcu__g.retry_after_ns))
		return;
	if (pthread_mutex_trylock(&orcu__g.lock))
		return;
	if (orcu__now_ns() >= orcu__load_relaxed(&orcu__g.retry_after_ns))
		start_locked();
	pthread_mutex_unlock(&orcu__g.lock);
}

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
int orcu_shutdown(void)
{
	int ret;

	if (orcu__reader.in_callback)
		orcu__misuse("orcu_shutdown", "called from inside a callback (would wait for itself)");
	if (orcu_read_ongoing() && orcu__reader.kind == ORCU__KIND_MEMB)
		orcu__misuse("orcu_shutdown", "called inside a read-side critical section (would deadlock)");
	/* Pairs with the store in apply_conf(). */
	if (!orcu__load_acquire(&orcu__g.initialized))
		return 0;
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
	return 0;
}

/*
 * fork.  First every other invoker stops between two callbacks (slot.c
 * point 5: the child holds no callback half-run, and puts back what they
 * had not run), then the locks, in order: barrier_lock, orcu__g.lock,
 * every cb_lock, registry, the double-post set.  None of them is ever held
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
}

static void unlock_slots(void)
{
	orcu__slots_unlock_all();
}

static void fork_parent(void)
{
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
	orcu__registry_after_fork_child();
	if (orcu__load_relaxed(&orcu__g.initialized)) {
		orcu__slots_after_fork_child();
		orcu__nocb_after_fork_child();
	}
	orcu__double_call_fork_child();
	orcu__registry_unlock();
	unlock_slots();
	orcu__gp_after_fork_child();
	orcu__store_relaxed(&orcu__g.threads_alive, 0);
	orcu__store_relaxed(&orcu__g.started, 0);
	orcu__store_relaxed(&orcu__g.stopping, 0);
	orcu__store_relaxed(&orcu__g.degraded, 0);
	pthread_mutex_unlock(&orcu__g.lock);
	orcu__barrier_fork_child();
	orcu__slots_fork_resume(true);
}

__attribute__((constructor)) static void orcu__init_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
