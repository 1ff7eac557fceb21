/*
 * lifecycle.c - the end of the library's lifetime and its copies:
 * orcu_shutdown(), fork, a thread's exit and the unload.  The top of
 * the engine.  Calls serve.c to have it running and to serve what is
 * left, entry.c to start and to bring a qsbr caller back online, then
 * the stop and after-fork entry points of gp.c, nocb.c, slot.c,
 * registry.c, barrier.c, free.c and postcheck.c, the exit steps of
 * registry.c, free.c and postq.c, the unload entry points of postq.c
 * and cpu.c, and os.c.  Nothing calls it but the liburcu shim's unload
 * (point 7) and os.c's thread-exit key (point 8).
 *
 * fork, in one place: the table fork_steps, one row per lock taken or
 * state repaired, {name, prepare, parent, child}; the atfork handlers
 * walk it, prepare top down, parent and child bottom up, and the modules
 * offer only the steps.
 *  1. Prepare order.  First every other invoker stops between two
 *     callbacks (slot.c point 5: the child holds no callback half-run,
 *     and puts back what they had not run), then the locks, in order:
 *     barrier_lock, free.c's recs_lock, orcu__g.lock, every cb_lock (in
 *     slot order), registry_lock, the double-post set's, the stall
 *     handler's.  None of them is ever held across user code, and none
 *     is held while the invokers are waited for, so a fork from inside
 *     a callback, or against a callback that takes one of them, cannot
 *     deadlock here.
 *  2. The parent releases the locks in reverse order, then lets the
 *     invokers go on.
 *  3. The child.  Only this thread survives: forget the others, keep
 *     every callback.  It holds every lock prepare took and releases
 *     them in reverse order (unlocking, not re-initialising a held mutex,
 *     which is undefined and leaves ThreadSanitizer believing they are
 *     held).  A repair is a row with a child step only, below the locks
 *     it runs under, so it runs before they are released.  Bottom up,
 *     what each module repairs:
 *     - os.c: the stall handler's lock only, released first;
 *     - registry.c: drops the records of the threads that do not exist
 *       here and resets the event the GP owner slept on for readers
 *       (under registry_lock);
 *     - slot.c, postq.c and nocb.c (slot 0 alone before a
 *       configuration): the chains other threads had claimed go back in
 *       front of DONE, each slot's pending count is recounted from what
 *       it holds (slot.c point 5), the posting queues of threads that are
 *       gone lose their owner (postq.c point 7), and, once configured,
 *       no leader or follower exists (under orcu__g.lock and every
 *       cb_lock);
 *     - postcheck.c: its lock only;
 *     - gp.c: no GP thread, and no GP owner but this thread if it
 *       forked from its stall handler (gp.c point 1);
 *     - lifecycle.c: the thread counts, and this thread's retirement
 *       (point 5);
 *     - serve.c: callbacks the child inherited start its threads at its
 *       next GP, safe point or post (serve.c point 4); it reads the
 *       slots, so it comes after the cb_locks, under orcu__g.lock;
 *     - barrier.c: its lock only; markers already entrained are
 *       inherited with the lists and still end their barrier;
 *     - free.c: the records of threads that are gone are left idle
 *       (busy, flush cleared) under recs_lock; their open batches are
 *       posted by the child's next barrier (free.c point 5);
 *     - slot.c: no fork pending, nobody parked.
 *     The library's threads start again on first use, not here: a child
 *     that only execs never pays for them.
 *  4. The bounds.  The wait for the invokers is bounded (one second,
 *     slot.c point 5): a callback may wait for something the forking
 *     thread holds, such as a lock its own atfork handler took before
 *     ours ran; the child then resumes after that callback, neither
 *     finished nor run again there (one warning per process).  No lock
 *     is held across user code (point 1), so every other step waits at
 *     most for the library's own sections.  Several threads may fork at
 *     once: slot.c counts the forks in progress, and the forks take the
 *     locks in turn.
 *  5. Retired threads.  This thread, if it is a library thread (it
 *     forked from a callback or a stall handler), still runs in the
 *     child, and counts itself out when it ends.  Its records now
 *     describe the threads the child will start: it finishes what it
 *     runs and ends, detached (orcu__tls.retired: leader_main(),
 *     follower_main(), gp.c point 1).
 *  6. The handlers are registered once, by a constructor, before any
 *     rculfhash table can register its own (urcu_flavor.c counts on that
 *     order).  A static link keeps this file only if something refers
 *     to it, and nothing calls it: entry.c and stats.c refer to
 *     orcu__lifecycle_linked (lifecycle.h).  A program that can hold a
 *     library lock at fork links one of them: entry.c has orcu_init(),
 *     registration, orcu_read_lock()'s slow path, synchronize and the
 *     CPU calls, and call.c, barrier.c and compat.c call it; stats.c
 *     has orcu_set_stall_handler(), the one other public call that
 *     takes a lock.  What a program can link without both takes no
 *     lock and starts no thread, so it has nothing to hand over at fork:
 *     gp.c's orcu_get_state() and orcu_poll_state(), a qsbr read side,
 *     orcu_unregister_thread() of a thread that never registered (only
 *     entry.c registers), the hooks of <orcu/debug.h>.
 *  7. Unload.  When dlclose() unmaps the library's image (liborcu.so,
 *     an object that links liborcu.a, or the liburcu shim with it), no
 *     thread may still run its code: its destructor shuts orcu down as
 *     orcu_shutdown() does (every pending callback runs, its code still
 *     mapped, then every library thread is joined), deletes the keys
 *     whose destructors would run the library's code when a thread that
 *     registered or posted ends, and frees what orcu allocated (free.c's
 *     records and their pages, the posting queues, the slots): nothing
 *     else can reach it once the image is gone, and a host that loads
 *     and unloads orcu many times would keep it each time.  Not at exit(): there the image
 *     stays mapped until the process ends, callbacks may need what the
 *     program has already torn down, and a thread still inside orcu
 *     could hold the drain for ever.  The atexit handler registered with
 *     the fork handlers tells the two apart, and keeps the promise that
 *     the image stays: exit() runs it before any ELF destructor, and it
 *     makes the image RTLD_NODELETE, so a dlclose() made by a later
 *     atexit handler (a host's "unload the plugins", registered before
 *     it dlopen()ed orcu, runs after ours) neither unmaps it nor runs its
 *     destructors, which run at the end of exit() and find
 *     process_exiting set.  dlclose() runs an image's destructors before
 *     its atexit handlers: the destructor marks the unload first, and
 *     the handler, run then, does nothing.  An atexit handler registered
 *     after ours (so run before it) that closes the image unloads it
 *     fully, drain included.  The drain runs last of the image's
 *     destructors (priority 101, the first a program may use: the
 *     linker puts prioritised destructors before the plain ones and
 *     the one that runs __cxa_finalize(), and they run backwards): a
 *     plugin that links liborcu.a cleans up in its own destructors or a
 *     C++ global's (orcu_barrier(), orcu_free(), rcu_retire()), and orcu
 *     must still run, not start threads again after it stopped them.
 *     Only a destructor of the same priority 101 may come after it (in
 *     link order).  With liborcu.so the order is the loader's: a
 *     plugin's destructors run before those of the libraries it needs.
 *     The shim's libraries
 *     need liborcu, so their destructors run first: theirs asks
 *     orcu__compat_unload_drain() for the same drain, at the same times,
 *     before it joins the shim's own threads.  A thread running
 *     inside orcu while its image is unloaded is the program's error,
 *     as for any library.
 *  8. Thread exit, in one place: the table exit_steps, one row per
 *     module that keeps state for a thread, run top down by the
 *     destructor of os.c's one key, which a module arms before it keeps
 *     such state (os.c says what each does without a key).  Each step
 *     finds its work in the thread's own records and does nothing when
 *     there is none.  Order: the reader leaves first (a thread that
 *     ends inside a read-side section is caught before anything runs
 *     for it); then free.c posts the open batches and lets go of its
 *     ring (a deleter run there may post, or read-lock and so register
 *     again); then postq.c gives back the queues those posts used.  A
 *     step that arms the key again has the table run again.  The
 *     table reaches os.c through a hook the constructor of point 6
 *     sets (os.c is below every module that arms the key); each of
 *     those is reached only through entry.c or call.c, which keep this
 *     file in a static link.
 */
#include "os.h"
#include "postcheck.h"
#include "gp.h"
#include "registry.h"
#include "sanitize.h"
#include "nocb.h"
#include "cpu.h"
#include "postq.h"
#include "serve.h"
#include "slot.h"
#include "barrier.h"
#include "entry.h"
#include "free.h"
#include "lifecycle.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>

/* The shim's unload (urcu_abi/common.c) shares point 7's. */
ORCU_API bool orcu__compat_unload_drain(void);

/* ------------------------------------------------------------------ */
/* Shutdown */

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
	ret = orcu__load_relaxed(&orcu__g.stopping) ? -EBUSY : 0;
	/* Never configured (short of memory): no thread to stop, and the
	 * drain ran what slot 0 held. */
	if (ret < 0 || !orcu__load_relaxed(&orcu__g.initialized)) {
		pthread_mutex_unlock(&orcu__g.lock);
		return ret;
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
	/* Pairs with the store in apply_conf().  Nothing to stop, unless
	 * a start short of memory left callbacks on slot 0 (slot.h): the
	 * drain waits for them. */
	if (!orcu__load_acquire(&orcu__g.initialized) && !orcu__slot_has_work(&orcu__slot0))
		return 0;
	/* A qsbr caller stays offline throughout: the GP thread and the
	 * leaders it joins may be finishing a GP that would wait for it. */
	was_online = orcu__qsbr_offline_for_wait();
	ret = stop_all();
	orcu__tsan_acquire(&orcu__san_cb_done); /* as in orcu_barrier() */
	if (was_online)
		orcu_thread_online();
	return ret;
}

/* ------------------------------------------------------------------ */
/* fork: the steps (points 1 to 5) */

static void global_lock(void)
{
	pthread_mutex_lock(&orcu__g.lock);
}

static void global_unlock(void)
{
	pthread_mutex_unlock(&orcu__g.lock);
}

/* Point 5: this thread counts itself out when it ends, if it is a
 * library thread; its records now describe the threads the child will
 * start. */
static void retire_threads(void)
{
	orcu__store_relaxed(&orcu__g.threads_alive, orcu__tls.library_thread ? 1 : 0);
	orcu__tls.retired = orcu__tls.library_thread;
	orcu__store_relaxed(&orcu__g.started, 0);
	orcu__store_relaxed(&orcu__g.stopping, 0);
}

static void slots_repair(void)
{
	orcu__slots_after_fork_child();
	if (orcu__load_relaxed(&orcu__g.initialized))
		orcu__nocb_forget_all();
}

static void stall_hook_lock(void)
{
	orcu__stall_hook_fork_lock(true);
}

static void stall_hook_unlock(void)
{
	orcu__stall_hook_fork_lock(false);
}

struct fork_step {
	const char *name;
	void (*prepare)(void); /* NULL: a repair (child only) */
	void (*parent)(void);
	void (*child)(void);
};

/* In prepare order; parent and child run it bottom up. */
static const struct fork_step fork_steps[] = {
	{ "invokers", orcu__slots_fork_quiesce,
	  orcu__slots_fork_resume_parent, orcu__slots_fork_resume_child },
	{ "barrier_lock", orcu__barrier_fork_lock,
	  orcu__barrier_fork_unlock, orcu__barrier_fork_unlock },
	{ "free.c recs_lock", orcu__free_fork_prepare,
	  orcu__free_fork_parent, orcu__free_fork_child },
	{ "orcu__g.lock", global_lock, global_unlock, global_unlock },
	{ "serve", NULL, NULL, orcu__serve_mark_pending },
	{ "retire", NULL, NULL, retire_threads },
	{ "gp", NULL, NULL, orcu__gp_after_fork_child },
	{ "cb_locks", orcu__slots_lock_all,
	  orcu__slots_unlock_all, orcu__slots_unlock_all },
	{ "registry_lock", orcu__registry_lock,
	  orcu__registry_unlock, orcu__registry_unlock },
	{ "double-post set", orcu__double_call_fork_prepare,
	  orcu__double_call_fork_parent, orcu__double_call_fork_child },
	{ "slots", NULL, NULL, slots_repair },
	{ "registry", NULL, NULL, orcu__registry_after_fork_child },
	{ "stall handler", stall_hook_lock, stall_hook_unlock, stall_hook_unlock },
};

#define NR_FORK_STEPS (sizeof(fork_steps) / sizeof(fork_steps[0]))

static void fork_prepare(void)
{
	for (size_t i = 0; i < NR_FORK_STEPS; i++)
		if (fork_steps[i].prepare)
			fork_steps[i].prepare();
}

static void fork_parent(void)
{
	for (size_t i = NR_FORK_STEPS; i-- > 0;)
		if (fork_steps[i].parent)
			fork_steps[i].parent();
}

static void fork_child(void)
{
	for (size_t i = NR_FORK_STEPS; i-- > 0;)
		if (fork_steps[i].child)
			fork_steps[i].child();
}

/* Referenced by entry.c and stats.c so that static links keep this file
 * (point 6). */
const int orcu__lifecycle_linked = 1;

/* ------------------------------------------------------------------ */
/* Thread exit (point 8) */

struct exit_step {
	const char *name;
	void (*exit)(void);
};

static const struct exit_step exit_steps[] = {
	{ "reader record", orcu__registry_thread_exit },
	{ "orcu_free() batches", orcu__free_thread_exit },
	{ "posting queues", orcu__postq_thread_exit },
};

#define NR_EXIT_STEPS (sizeof(exit_steps) / sizeof(exit_steps[0]))

static void thread_exit(void)
{
	for (size_t i = 0; i < NR_EXIT_STEPS; i++)
		exit_steps[i].exit();
}

/* ------------------------------------------------------------------ */
/* Unload (point 7) */

static _Atomic int process_exiting, unloading;

/* What atexit() does, said outright: the handler belongs to this image
 * (__dso_handle), so a dlclose() runs it and drops it.  atexit() itself
 * may be a sanitizer's, which registers it for the process: it then
 * outlived the unload, and exit() called into the unmapped image. */
/* The toolchain's names (crtbegin's, the C++ ABI's), not ours: */
extern void *__dso_handle;                                  /* NOLINT(bugprone-reserved-identifier) */
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso); /* NOLINT(bugprone-reserved-identifier) */

/* The image this code is in (liborcu.so, or the object that links
 * liborcu.a) is made RTLD_NODELETE: a later dlclose() leaves it mapped. */
static void pin_image(void)
{
	Dl_info self;

	if (dladdr((void *)(uintptr_t)pin_image, &self) && self.dli_fname)
		(void)dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* exit(), or a dlclose() (its __cxa_finalize() runs this after
 * unload_begins()). */
static void at_exit(void *unused)
{
	(void)unused;
	/* Order: none needed; both are the same thread's, in order. */
	if (orcu__load_relaxed(&unloading))
		return;
	orcu__store_relaxed(&process_exiting, 1);
	pin_image();
}

__attribute__((constructor)) static void orcu__init_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	orcu__store_relaxed(&orcu__thread_exit_hook, thread_exit);
	/* Without the handler an exit could not be told from an unload:
	 * never drain then (a crash at unload rather than a hung exit). */
	if (__cxa_atexit(at_exit, NULL, &__dso_handle) != 0)
		orcu__store_relaxed(&process_exiting, 1);
}

/* At an unload, not at exit: every pending callback has run and every
 * library thread is gone when it returns true.  The liburcu shim's
 * destructor (urcu_abi/common.c) calls it too, before it joins its own
 * threads: it runs first (a library's destructors run before those of
 * the libraries it needs), and a callback may still use the shim. */
bool orcu__compat_unload_drain(void)
{
	if (orcu__load_relaxed(&process_exiting))
		return false;
	/* Another shutdown in progress joins the threads; ours then finds
	 * them gone. */
	while (orcu_shutdown() == -EBUSY)
		orcu__sleep_ns(1000000);
	return true;
}

/* A plain destructor: it runs before the image's atexit handlers
 * (point 7). */
__attribute__((destructor)) static void unload_begins(void)
{
	orcu__store_relaxed(&unloading, 1);
}

/* Its last: after every other destructor of the image, a C++ global's
 * included, any of which may still use orcu (point 7). */
__attribute__((destructor(101))) static void orcu__unload(void)
{
	if (!orcu__compat_unload_drain())
		return;
	orcu__thread_exit_unload();
	orcu__free_unload();
	orcu__postq_unload();
	orcu__cpu_unload();
}
