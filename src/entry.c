/*
 * entry.c - first use and quiescent points: the public calls of the
 * modules below (registry.c, gp.c, cpu.c) where they need what is above
 * them, so that no module calls up.  orcu_init() and the lazy start
 * (configure on first use, start the threads, retry them when degraded);
 * registration, which starts the library first; the quiescent-point calls,
 * which run an inline slot's ready callbacks and, with no library thread,
 * serve what none can (the safe points); synchronize, which
 * configures it; and the CPU calls.  Calls config.c, registry.c, gp.c,
 * slot.c, cpu.c, nocb.c (the GP hook it installs) and os.c.  Called by
 * call.c, barrier.c and lifecycle.c for the lazy start and inline polls.
 *
 * Why work that no library thread can do still gets done (DESIGN 6).
 *  1. With no leader and no GP thread, callbacks on slots nobody scans
 *     (nocb.c point 6 raises unserved) and GPs asked for (point 2) wait
 *     for an application thread at a safe point: orcu_quiescent_state(),
 *     orcu_thread_online(), orcu_thread_offline() (so also where a qsbr
 *     caller of orcu_synchronize() comes back online), never orcu_call(),
 *     whose caller may hold a lock its callbacks take, nor a memb
 *     caller's orcu_synchronize() (likewise: liburcu's and the kernel's
 *     never run callbacks).  A safe point is a registered thread outside
 *     its sections and callbacks, not a library thread, not the GP owner
 *     (a stall handler): there callbacks may run and GPs may be waited
 *     for, offline if qsbr, as the degraded mode in docs/API.md warns.
 *     It exchanges unserved to 0, fences, then retries the threads, runs
 *     the GPs asked for and serves the slots nobody scans (slot.c); a
 *     requester publishes its work (a callback, a target), fences, then
 *     reads unserved, and raises it if it reads 0.  One of the two sees
 *     the other, so the work is served now or by a later safe point.  At
 *     most once per SAFE_POINT_GAP_NS in the process; with nothing raised
 *     a safe point pays one load, and nothing wakes by itself.
 *  2. orcu_start_poll() asks for a GP and does not wait for it.  When no
 *     GP thread runs (gp.c point 6) it has the threads retried (started
 *     again after orcu_shutdown(), or recreated at most once per
 *     ORCU__RETRY_NS when degraded); a new GP thread serves every target
 *     raised before it.  Still none: it forces a wake of the adopter (a
 *     running leader), which runs the GPs asked for itself (nocb.c point
 *     6).  No leader either: it raises orcu__g.unserved for point 1.
 *  3. A GP asked for while orcu_shutdown() stops the GP thread, and missed
 *     by it, is run by the shutdown (gp.c point 6); after the shutdown,
 *     orcu_start_poll() starts the library again (point 2).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <errno.h>

/* ------------------------------------------------------------------ */
/* Init and lazy start */

/* The configuration into orcu__g, the GP-end hook, then the slots. */
static int apply_conf(struct orcu__conf *c)
{
	int ret;

	orcu__conf_apply(c);
	/* Before any leader can wait for a GP end (gp.c reads it relaxed,
	 * after acquiring `initialized`). */
	orcu__store_relaxed(&orcu__gp_hook, orcu__nocb_gp_event);
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

int orcu__ensure_started_slow(void)
{
	int ret = 0;

	orcu__ensure_init();
	pthread_mutex_lock(&orcu__g.lock);
	if (!orcu__load_relaxed(&orcu__g.started))
		ret = start_locked();
	pthread_mutex_unlock(&orcu__g.lock);
	return ret;
}

/* A caller that needs threads (a poster on a slot without any, a waiting
 * barrier, orcu_start_poll(), a safe point): start what orcu_shutdown()
 * stopped, or, degraded, retry what could not be created, at most once
 * per ORCU__RETRY_NS. */
void orcu__retry_threads(void)
{
	/* Order: none needed; orcu__ensure_started() decides again.  (For
	 * orcu_start_poll() this load comes after a fence: point 2.) */
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
/* Safe points without library threads (point 1) */

#define SAFE_POINT_GAP_NS (1000 * 1000ull)

/* The next serve, not before: the thread that moves it serves. */
static _Atomic uint64_t safe_point_next_ns;

static void serve_unserved(void)
{
	bool was_online;

	/* Not after orcu_shutdown() (or in a fork child): a stopped library
	 * starts again when a call needs it, not at a quiescent point. */
	if (orcu__load_relaxed(&orcu__g.started))
		orcu__retry_threads();
	was_online = orcu__qsbr_offline_for_wait();
	if (!orcu__gp_thread_running()) {
		orcu__gp_run_requested();
		/* Pairs with the release of adopter in orcu__nocb_spawn_slot()
		 * (a leader now adopts them). */
		if (!orcu__load_acquire(&orcu__g.adopter))
			orcu__slots_serve_unattached(true);
	}
	/* Back online as orcu_thread_online() is, without its inline poll:
	 * the callbacks above ran online (slot.c orcu__slot_serve()). */
	if (was_online)
		orcu__qsbr_online();
}

void orcu__safe_point_slow(void)
{
	struct orcu__reader *r = &orcu__reader;
	uint64_t now, next;

	if (r->kind == ORCU__KIND_NONE || r->in_callback || orcu__tls.gp_owning ||
	    orcu__tls.library_thread || (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK))
		return;
	/* Relaxed: a rate limit that publishes nothing (serving is safe
	 * concurrently: a barrier serves too). */
	now = orcu__now_ns();
	next = orcu__load_relaxed(&safe_point_next_ns);
	if (now < next || !orcu__cas_relaxed(&safe_point_next_ns, &next, now + SAFE_POINT_GAP_NS))
		return;
	/* The fence pairs with the requester's fence between its work and
	 * its read of unserved (orcu__nocb_orphan_posted(), orcu__gp_request()
	 * via orcu_start_poll()): work it left to us is visible below. */
	if (orcu__xchg_relaxed(&orcu__g.unserved, 0)) {
		orcu__fence_seq_cst();
		serve_unserved();
	}
}

/* Point 2: the GP just asked for has no GP thread to run it. */
static void gp_request_unserved(void)
{
	struct orcu__leader *l;

	/* A GP thread started here serves every target raised before it.
	 * Its first load, of `started`, follows orcu__gp_request()'s fence:
	 * an orcu_shutdown() that has not cleared it yet runs our target
	 * (gp.c point 6). */
	orcu__retry_threads();
	if (orcu__gp_thread_running())
		return;
	/* Pairs with the release of adopter in orcu__nocb_spawn_slot(): its
	 * record is set up.  The forced wake's fence orders our target
	 * before `force` (the leader reads it after taking `force`). */
	l = orcu__load_acquire(&orcu__g.adopter);
	if (l)
		orcu__nocb_wake_leader(l, true);
	else
		orcu__unserved_raise();
}

/* ------------------------------------------------------------------ */
/* Inline slots: an application thread at a quiescent point runs a batch
 * (orcu__inline_poll() in internal.h checks nr_inline first). */

void orcu__inline_poll_slow(void)
{
	struct orcu__slot *s;

	/* Pairs with the store of `started` in start_locked(). */
	if (!orcu__load_acquire(&orcu__g.started))
		return;
	s = orcu__current_slot();
	if (orcu__likely(!orcu__load_relaxed(&s->inline_ready)))
		return;
	if (!orcu__slot_safe_to_invoke_here())
		return;
	orcu__slot_invoke_done(s, orcu__g.inline_batch, true);
}

/* ------------------------------------------------------------------ */
/* Readers (registry.c) */

int orcu_register_thread(void)
{
	orcu__ensure_started();
	return orcu__register(ORCU__KIND_MEMB, "orcu_register_thread");
}

int orcu_register_thread_qsbr(void)
{
	orcu__ensure_started();
	return orcu__register(ORCU__KIND_QSBR, "orcu_register_thread_qsbr");
}

void orcu__read_lock_slow(void)
{
	if (orcu__reader.kind == ORCU__KIND_NONE) {
		/* Documented: a memb read lock registers the thread. */
		if (orcu_register_thread() < 0)
			orcu__misuse("orcu_read_lock", "thread could not be registered");
		orcu_read_lock();
		return;
	}
	orcu__registry_read_lock_slow();
}

void orcu_quiescent_state(void)
{
	orcu__qsbr_quiescent_state();
	orcu__quiescent_point();
}

void orcu_thread_offline(void)
{
	/* Ready inline callbacks run first, while a GP still waits for us:
	 * once offline, a callback's own read-side section would not be. */
	orcu__quiescent_point();
	orcu__qsbr_offline();
}

void orcu_thread_online(void)
{
	orcu__qsbr_online();
	orcu__quiescent_point();
}

/* ------------------------------------------------------------------ */
/* Grace periods (gp.c) */

static void wait_for(unsigned long target, bool hurry)
{
	bool was_online;

	orcu__ensure_init();
	was_online = orcu__qsbr_offline_for_wait();
	orcu__gp_drive(target, hurry);
	if (was_online)
		orcu_thread_online();
}

void orcu_synchronize(void)
{
	orcu__gp_check_caller("orcu_synchronize");
	wait_for(orcu__gp_snap(), false);
}

void orcu_synchronize_expedited(void)
{
	orcu__gp_check_caller("orcu_synchronize_expedited");
	wait_for(orcu__gp_snap(), true);
}

unsigned long orcu_start_poll(void)
{
	unsigned long cookie = orcu__gp_snap();

	orcu__ensure_started();
	if (!orcu__gp_request(cookie, ORCU__GP_NOW))
		gp_request_unserved();
	return cookie;
}

void orcu_cond_synchronize(unsigned long cookie)
{
	if (orcu_poll_state(cookie))
		return;
	orcu__gp_check_caller("orcu_cond_synchronize");
	wait_for(cookie, false);
}

/* ------------------------------------------------------------------ */
/* CPUs (cpu.c) */

int orcu_current_cpu(void)
{
	orcu__ensure_init();
	return orcu__current_slot()->cpu;
}

int orcu_thread_bind_cpu(int cpu)
{
	if (cpu == -1) {
		orcu__tls.bound_cpu = -1;
		return 0;
	}
	orcu__ensure_init();
	if (orcu__cpu_check("orcu_thread_bind_cpu", cpu) < 0)
		return -EINVAL;
	orcu__tls.bound_cpu = cpu;
	return 0;
}

/* Threads are started only once cpu is known to be possible. */
static int hotplug(const char *call, int cpu, int (*op)(int cpu))
{
	orcu__ensure_init();
	if (orcu__cpu_check(call, cpu) < 0)
		return -EINVAL;
	orcu__ensure_started();
	return op(cpu);
}

int orcu_cpu_online(int cpu)
{
	return hotplug("orcu_cpu_online", cpu, orcu__cpu_online);
}

int orcu_cpu_offline(int cpu)
{
	return hotplug("orcu_cpu_offline", cpu, orcu__cpu_offline);
}

static int set_offload(const char *call, int cpu, bool on)
{
	orcu__ensure_init();
	if (orcu__cpu_check(call, cpu) < 0)
		return -EINVAL;
	orcu__cpu_set_offload(cpu, on);
	return 0;
}

int orcu_cpu_offload(int cpu)
{
	return set_offload("orcu_cpu_offload", cpu, true);
}

int orcu_cpu_deoffload(int cpu)
{
	return set_offload("orcu_cpu_deoffload", cpu, false);
}
