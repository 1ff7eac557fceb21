/*
 * urcu_flavor.c - liborcu-urcu: orcu_rcu_flavor, a liburcu
 * struct rcu_flavor_struct whose calls are orcu's, and the fork hooks
 * liburcu's rculfhash registers through it.  Calls only orcu's public API
 * (entry.c, registry.c, call.c, barrier.c) and compat.c's helpers; may call
 * gp.c too (the polled grace periods of liburcu 0.14 and later); nothing in
 * the engine knows about it.
 *
 * Fork: rculfhash registers hooks that pause its resize worker before fork
 * and restart it after.  They are kept here and run from this library's
 * own pthread_atfork handlers, registered the first time a hook is.  orcu
 * registers its handlers in a constructor, before any table can exist, so
 * POSIX ordering (prepare in reverse, parent/child in registration order)
 * runs before_fork while orcu still works (a paused worker may be finishing
 * a synchronize) and after_fork_* once orcu is usable again.
 */
#include <orcu/urcu-flavor.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

ORCU_API void orcu__compat_register(int qsbr, const char *call);
ORCU_API void orcu__compat_defer(void (*fct)(void *p), void *p);
ORCU_API void orcu__compat_synchronize(void);

static void fl_read_lock(void) { orcu_read_lock(); }
static void fl_read_unlock(void) { orcu_read_unlock(); }

/* liburcu's data structures ask "may I read without taking the lock?":
 * yes inside a section, and on a qsbr thread that is online. */
static int fl_read_ongoing(void)
{
	return orcu_read_ongoing() ||
	       (orcu__reader.kind == ORCU__KIND_QSBR && orcu_thread_is_online());
}

static void fl_quiescent_state(void)
{
	if (orcu__reader.kind == ORCU__KIND_QSBR)
		orcu_quiescent_state();
}

static void fl_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	/* struct rcu_head is { next pointer, func }: orcu_head's layout. */
	orcu_call((struct orcu_head *)(void *)head,
		  (void (*)(struct orcu_head *))(void (*)(void))func);
}

static void fl_synchronize(void) { orcu__compat_synchronize(); }
static void fl_defer(void (*fct)(void *p), void *p) { orcu__compat_defer(fct, p); }
static void fl_offline(void) { orcu_thread_offline(); }
static void fl_online(void) { orcu_thread_online(); }
static void fl_register(void) { orcu__compat_register(0, "orcu_rcu_flavor.register_thread"); }
static void fl_unregister(void) { orcu_unregister_thread(); }
static void fl_barrier(void) { orcu_barrier(); }

#ifdef ORCU_URCU_POLL
/* liburcu 0.14 flavors also offer polled grace periods. */
static struct urcu_gp_poll_state fl_start_poll(void) { return start_poll_synchronize_rcu(); }
static bool fl_poll_state(struct urcu_gp_poll_state s) { return poll_state_synchronize_rcu(s); }
#endif

/* ------------------------------------------------------------------ */
/* Fork hooks */

#define MAX_HOOKS 8

static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urcu_atfork *hooks[MAX_HOOKS]; /* under hooks_lock */
static int nr_hooks;                         /* under hooks_lock */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* hooks_lock is held from prepare to parent/child, so the set cannot
 * change across the fork. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&hooks_lock);
	for (int i = nr_hooks - 1; i >= 0; i--)
		hooks[i]->before_fork(hooks[i]->priv);
}

static void fork_parent(void)
{
	for (int i = 0; i < nr_hooks; i++)
		hooks[i]->after_fork_parent(hooks[i]->priv);
	pthread_mutex_unlock(&hooks_lock);
}

static void fork_child(void)
{
	for (int i = 0; i < nr_hooks; i++)
		hooks[i]->after_fork_child(hooks[i]->priv);
	pthread_mutex_unlock(&hooks_lock);
}

static void install_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void fl_register_atfork(struct urcu_atfork *atfork)
{
	pthread_once(&atfork_once, install_atfork);
	pthread_mutex_lock(&hooks_lock);
	for (int i = 0; i < nr_hooks; i++) {
		if (hooks[i] == atfork) {
			/* rculfhash registers once per table: keep one. */
			pthread_mutex_unlock(&hooks_lock);
			return;
		}
	}
	if (nr_hooks == MAX_HOOKS) {
		pthread_mutex_unlock(&hooks_lock);
		/* A fixed, generous table (rculfhash registers one hook per
		 * process): more than this is a bug worth stopping for. */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		fprintf(stderr, "orcu: orcu_rcu_flavor.register_rculfhash_atfork: more than %d hooks\n",
			MAX_HOOKS);
		abort();
	}
	hooks[nr_hooks++] = atfork;
	pthread_mutex_unlock(&hooks_lock);
}

static void fl_unregister_atfork(struct urcu_atfork *atfork)
{
	pthread_mutex_lock(&hooks_lock);
	for (int i = 0; i < nr_hooks; i++) {
		if (hooks[i] == atfork) {
			hooks[i] = hooks[--nr_hooks];
			break;
		}
	}
	pthread_mutex_unlock(&hooks_lock);
}

const struct rcu_flavor_struct orcu_rcu_flavor = {
	.read_lock = fl_read_lock,
	.read_unlock = fl_read_unlock,
	.read_ongoing = fl_read_ongoing,
	.read_quiescent_state = fl_quiescent_state,
	.update_call_rcu = fl_call_rcu,
	.update_synchronize_rcu = fl_synchronize,
	.update_defer_rcu = fl_defer,
	.thread_offline = fl_offline,
	.thread_online = fl_online,
	.register_thread = fl_register,
	.unregister_thread = fl_unregister,
	.barrier = fl_barrier,
	.register_rculfhash_atfork = fl_register_atfork,
	.unregister_rculfhash_atfork = fl_unregister_atfork,
#ifdef ORCU_URCU_POLL
	.update_start_poll_synchronize_rcu = fl_start_poll,
	.update_poll_state_synchronize_rcu = fl_poll_state,
#endif
};
