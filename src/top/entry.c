/*
 * entry.c - first use and quiescent points: the public calls of the
 * modules below (registry.c, gp.c, cpu.c) where they need what is above
 * them, so that no module calls up.  orcu_init() and the lazy
 * configuration; registration, which starts the library first; the
 * quiescent-point calls, which run a batch of what an in-place slot
 * offers and the server rule's safe points; synchronize, after which a
 * waiter serves what no thread can; and the CPU calls.  Calls config.c,
 * registry.c, gp.c, slot.c, cpu.c, serve.c (start, retry, the GP serve
 * hook it installs, a server for a de-offloaded slot), nocb.c (the GP end
 * hook) and os.c.  Called by
 * call.c, barrier.c and lifecycle.c for the configuration and in-place
 * polls.
 *
 * A configuration that cannot be applied for want of memory is not
 * replaced by another: orcu__ensure_init() returns -ENOMEM, and the next
 * call that needs the library tries the same configuration again.
 */
#include "os.h"
#include "config.h"
#include "gp.h"
#include "registry.h"
#include "cpu.h"
#include "nocb.h"
#include "serve.h"
#include "slot.h"
#include "entry.h"
#include "lifecycle.h"

#include <errno.h>

/* Every path that configures the library, registers a reader, starts a
 * thread, posts or waits comes through this file: it keeps the fork
 * handlers in a static link (lifecycle.h). */
__attribute__((used)) static const int *const keep_fork_handlers = &orcu__lifecycle_linked;

/* ------------------------------------------------------------------ */
/* Init and lazy start */

/* The configuration into orcu__g, the GP hooks, then the slots. */
static int apply_conf(struct orcu__conf *c)
{
	int ret;

	orcu__conf_apply(c);
	/* Before any leader can wait for a GP end (gp.c reads it relaxed,
	 * after acquiring `initialized`). */
	orcu__store_relaxed(&orcu__gp_end_hook, orcu__nocb_gp_done);
	orcu__store_relaxed(&orcu__gp_serve_hook, orcu__serve_gp_turn);
	ret = orcu__cpu_setup(c->nr_possible, c->online, c->nocbs);
	if (ret < 0)
		return ret;
	/* Publishes the configuration and the slots: pairs with every
	 * acquire of `initialized` (orcu__ensure_init(), orcu__nr_slots()).
	 * seq_cst for orcu__slots_fork_quiesce(): it raises fork_pending,
	 * then reads this; a fork that reads 0 is seen by every chain on
	 * these slots. */
	orcu__store_seq_cst(&orcu__g.initialized, 1);
	/* Callbacks posted to slot 0 before: the next GP end, safe point or
	 * post starts the threads that run them. */
	if (orcu__slot_has_work(&orcu__slot0))
		orcu__serve_mark_pending();
	return 0;
}

/* Build and apply cfg (NULL: the environment) unless configured already:
 * -EBUSY then (no configuration error is -EBUSY). */
static int init_once(const struct orcu_config *cfg)
{
	struct orcu__conf c;
	int ret = -EBUSY;

	pthread_mutex_lock(&orcu__g.lock);
	/* Order: orcu__g.lock, held by apply_conf(). */
	if (!orcu__load_relaxed(&orcu__g.initialized)) {
		ret = orcu__conf_build(cfg, &c);
		if (ret == 0) {
			ret = apply_conf(&c);
			orcu__conf_free(&c);
		}
	}
	pthread_mutex_unlock(&orcu__g.lock);
	return ret;
}

int orcu_init(const struct orcu_config *cfg)
{
	int ret = init_once(cfg);

	if (ret == -EBUSY)
		orcu__warn("orcu_init: already initialised; call it before any other orcu call");
	return ret == 0 ? orcu__ensure_started() : ret;
}

int orcu__ensure_init(void)
{
	int ret;

	/* Pairs with the store in apply_conf(). */
	if (orcu__likely(orcu__load_acquire(&orcu__g.initialized)))
		return 0;
	ret = init_once(NULL);
	return ret == -EBUSY ? 0 : ret;
}

int orcu__ensure_started_slow(void)
{
	int ret = orcu__ensure_init();

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&orcu__g.lock);
	if (!orcu__load_relaxed(&orcu__g.started))
		ret = orcu__serve_start_locked();
	pthread_mutex_unlock(&orcu__g.lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* In-place slots: an application thread at a quiescent point runs a
 * batch of what its slot offers (orcu__quiescent_point() in entry.h
 * checks nr_inplace first; serve.c makes the offer, and takes what is
 * left when it ends). */

void orcu__inplace_poll_slow(void)
{
	struct orcu__slot *s;

	/* Pairs with the store of `started` in orcu__serve_start_locked()
	 * (serve.c). */
	if (!orcu__load_acquire(&orcu__g.started))
		return;
	s = orcu__current_slot();
	if (orcu__likely(!orcu__load_relaxed(&s->inv.offered_ns)) ||
	    !orcu__slot_safe_to_invoke_here())
		return;
	if (orcu__slot_invoke_done(s, orcu__g.inline_batch))
		orcu__serve_after_batch(s);
}

/* ------------------------------------------------------------------ */
/* Readers (registry.c) */

/* A start that fails for want of memory fails the registration: nothing
 * changed, and the caller may try again. */
static int register_started(int kind, const char *call)
{
	if (orcu__ensure_started() == -ENOMEM) {
		orcu__warn("%s: cannot start orcu (out of memory); not registered", call);
		return -ENOMEM;
	}
	return orcu__register(kind, call);
}

int orcu_register_thread(void)
{
	return register_started(ORCU__KIND_MEMB, "orcu_register_thread");
}

int orcu_register_thread_qsbr(void)
{
	return register_started(ORCU__KIND_QSBR, "orcu_register_thread_qsbr");
}

void orcu__read_lock_slow(void)
{
	if (orcu__reader.kind == ORCU__KIND_NONE) {
		/* Documented: a memb read lock registers the thread.  A
		 * reader needs no slot: if the library cannot start, it is
		 * registered all the same, and the start is retried by the
		 * next call that needs it. */
		if (orcu__ensure_started() == -ENOMEM) {
			orcu__warn("orcu_read_lock: cannot start orcu (out of memory); "
				   "reading registered, callbacks wait for memory");
			/* membarrier is decided before a reader exists
			 * (registry.c); the start decides it again alike. */
			pthread_mutex_lock(&orcu__g.lock);
			if (!orcu__load_relaxed(&orcu__g.started))
				orcu__membarrier_init();
			pthread_mutex_unlock(&orcu__g.lock);
		}
		if (orcu__register(ORCU__KIND_MEMB, "orcu_read_lock") < 0)
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

/* Both bracket blocking calls whose errno the caller reads after them
 * (docs/API.md, "Blocking without holding grace periods"): what a
 * callback or a safe point run here leaves in errno is undone. */
void orcu_thread_offline(void)
{
	int saved = errno;

	/* Offered callbacks run first, while a GP still waits for us:
	 * once offline, a callback's own read-side section would not be. */
	orcu__quiescent_point();
	orcu__qsbr_offline();
	errno = saved;
}

void orcu_thread_online(void)
{
	int saved = errno;

	orcu__qsbr_online();
	orcu__quiescent_point();
	errno = saved;
}

/* ------------------------------------------------------------------ */
/* Grace periods (gp.c) */

/* A GP needs no slot: without memory for them it still runs.  After it,
 * the caller serves what no thread can (serve.c, in place). */
static void wait_for(unsigned long target, bool hurry)
{
	bool was_online;

	orcu__ensure_init();
	was_online = orcu__qsbr_offline_for_wait();
	orcu__gp_drive(target, hurry);
	if (orcu__serve_wanted())
		orcu__serve_waited();
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
		orcu__serve_gp_asked();
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
	int ret = orcu__ensure_init();

	return ret < 0 ? ret : orcu__current_slot()->st.cpu;
}

/* The library is configured (or -ENOMEM), and cpu names a possible slot
 * (or -EINVAL and one line naming call). */
static int check_cpu(const char *call, int cpu)
{
	int ret = orcu__ensure_init();

	if (ret == 0 && (cpu < 0 || cpu >= orcu__g.nr_possible)) {
		orcu__warn("%s: CPU %d is not a possible CPU (0..%d)", call, cpu,
			   orcu__g.nr_possible - 1);
		ret = -EINVAL;
	}
	return ret;
}

int orcu_thread_bind_cpu(int cpu)
{
	int ret;

	if (cpu != -1 && (ret = check_cpu("orcu_thread_bind_cpu", cpu)) < 0)
		return ret;
	orcu__tls.bound_cpu = cpu;
	return 0;
}

/* Threads are started only once cpu is known to be possible. */
static int hotplug(const char *call, int cpu, int (*op)(int cpu))
{
	int ret = check_cpu(call, cpu);

	if (ret < 0)
		return ret;
	orcu__ensure_started();
	ret = op(cpu);
	/* A slot gone offline keeps its callbacks: its server re-decides
	 * who invokes them (serve.c, in place: at once). */
	if (ret == 0)
		orcu__serve_kick(orcu__slot_of(cpu));
	return ret;
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
	int ret = check_cpu(call, cpu);

	if (ret < 0)
		return ret;
	orcu__ensure_started();
	ret = orcu__cpu_set_offload(cpu, on);
	/* Attached: its leader rescans it; detached: what it holds finds a
	 * server in place (serve.c point 2). */
	orcu__serve_kick(orcu__slot_of(cpu));
	return ret;
}

int orcu_cpu_offload(int cpu)
{
	return set_offload("orcu_cpu_offload", cpu, true);
}

int orcu_cpu_deoffload(int cpu)
{
	return set_offload("orcu_cpu_deoffload", cpu, false);
}
