/*
 * urcu_abi/common.c - the flavour-independent half of the liburcu ABI 8
 * shim: the rcu_*_sym pointer helpers liburcu exports from every flavour
 * library, and call_rcu_data handles mapped onto orcu's offloading.
 * Calls orcu's public API (entry.c) and lifecycle.c's unload drain.
 *
 * call_rcu_data: liburcu runs callbacks on worker threads a program may
 * create, name, pin and join.  orcu runs every CPU slot's callbacks on its
 * own offload threads, so a handle carries no callbacks; it keeps what a
 * program can observe: a CPU given to create_call_rcu_data() or
 * set_cpu_call_rcu_data() is offloaded (orcu_cpu_offload()), and each
 * handle owns a parked thread, so get_call_rcu_thread() names a real
 * thread that ends when the handle is freed (multipathd joins it then).
 * When the shim is unloaded (not at exit), its destructor has lifecycle.c
 * run every pending callback (orcu__compat_unload_drain(), point 7 there),
 * then ends and joins the threads of the handles still live: none may
 * stay parked in the shim's unmapped code.
 */
#include "abi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#pragma GCC visibility push(default)
#include <urcu/pointer.h>
/* Referenced by every unit the shim's headers of orcu 0.1 compiled with
 * _LGPL_SOURCE (used or not, which broke links: issue 29); the headers no
 * longer emit it, and it stays defined so such binaries still load. */
const char orcu_urcu_shim_lgpl = 1;
#pragma GCC visibility pop

/*
 * For ThreadSanitizer (abi.h): what the updater wrote to an object before
 * it published it happens before a reader's rcu_dereference() of it.  The
 * pointer's own load is the program's and its store ours, which TSan does
 * not see, so the edge is named on the object: released by the publisher,
 * acquired by the reader (the release and the dependent load of liburcu's
 * inline macros).
 */
void *rcu_dereference_sym(void *p)
{
	orcu__abi_tsan_acquire(p);
	return p;
}

void *rcu_set_pointer_sym(void **p, void *v)
{
	orcu__abi_tsan_release(v);
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	return v;
}

void *rcu_xchg_pointer_sym(void **p, void *v)
{
	orcu__abi_tsan_release(v);
	return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}

void *rcu_cmpxchg_pointer_sym(void **p, void *old, void *_new)
{
	orcu__abi_tsan_release(_new);
	__atomic_compare_exchange_n(p, &old, _new, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

/* ------------------------------------------------------------------ */
/* call_rcu_data */

struct call_rcu_data {
	pthread_t thread; /* parked in read() until wake_fd is closed */
	int wake_fd;
	pid_t pid;                         /* the process the thread runs in */
	struct call_rcu_data *prev, *next; /* in live, under live_lock */
};

/* The handles not freed, for the unload to end their threads. */
static struct call_rcu_data live = { .prev = &live, .next = &live };
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static struct call_rcu_data *default_crdp; /* set once, under pthread_once */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static __thread struct call_rcu_data *thread_crdp;

static void *parked(void *fd)
{
	char c;

	/* Ends when its handle is freed, never half way (orcu's rule: no
	 * cancellation point with cancellation enabled). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (read((int)(intptr_t)fd, &c, 1) < 0 && errno == EINTR)
		;
	close((int)(intptr_t)fd);
	return NULL;
}

struct call_rcu_data *orcu__abi_crdp_create(int cpu_affinity)
{
	struct call_rcu_data *crdp = malloc(sizeof(*crdp));
	sigset_t all, old;
	int fds[2], err, cancel;

	if (!crdp || pipe2(fds, O_CLOEXEC) < 0) {
		free(crdp);
		return NULL;
	}
	/* Like orcu's own threads, it never takes a signal. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&crdp->thread, NULL, parked, (void *)(intptr_t)fds[0]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
		close(fds[0]);
		close(fds[1]);
		pthread_setcancelstate(cancel, NULL);
		free(crdp);
		return NULL;
	}
	pthread_setname_np(crdp->thread, "orcu-crdp");
	crdp->wake_fd = fds[1];
	crdp->pid = getpid();
	pthread_mutex_lock(&live_lock);
	crdp->prev = live.prev;
	crdp->next = &live;
	live.prev->next = crdp;
	live.prev = crdp;
	pthread_mutex_unlock(&live_lock);
	if (cpu_affinity >= 0)
		(void)orcu_cpu_offload(cpu_affinity); /* an impossible CPU: as liburcu, run anyway */
	return crdp;
}

/* The thread ends; as liburcu's worker, it is the program's to join. */
void orcu__abi_crdp_free(struct call_rcu_data *crdp)
{
	int cancel;

	if (!crdp || crdp == default_crdp)
		return;
	if (thread_crdp == crdp)
		thread_crdp = NULL;
	pthread_mutex_lock(&live_lock);
	crdp->prev->next = crdp->next;
	crdp->next->prev = crdp->prev;
	pthread_mutex_unlock(&live_lock);
	/* Not cancelled between the close and the free. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	close(crdp->wake_fd);
	pthread_setcancelstate(cancel, NULL);
	free(crdp);
}

/* A fork child's list is whole: no thread was inside it at fork. */
static void live_lock_take(void) { pthread_mutex_lock(&live_lock); }
static void live_lock_release(void) { pthread_mutex_unlock(&live_lock); }

__attribute__((constructor)) static void crdp_init_atfork(void)
{
	pthread_atfork(live_lock_take, live_lock_release, live_lock_release);
}

/* dlclose() only: at exit the image stays mapped (lifecycle.c point 7). */
__attribute__((destructor)) static void crdp_unload(void)
{
	int cancel;

	if (!orcu__compat_unload_drain())
		return;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&live_lock);
	while (live.next != &live) {
		struct call_rcu_data *crdp = live.next;

		live.next = crdp->next;
		close(crdp->wake_fd);
		/* A fork child has the handle, not the thread. */
		if (crdp->pid == getpid())
			pthread_join(crdp->thread, NULL);
		free(crdp);
	}
	live.prev = &live;
	pthread_mutex_unlock(&live_lock);
	pthread_setcancelstate(cancel, NULL);
}

static void make_default(void) { default_crdp = orcu__abi_crdp_create(-1); }

struct call_rcu_data *orcu__abi_crdp_default(void)
{
	pthread_once(&default_once, make_default);
	return default_crdp;
}

struct call_rcu_data *orcu__abi_crdp_thread(void) { return thread_crdp; }
void orcu__abi_crdp_set_thread(struct call_rcu_data *crdp) { thread_crdp = crdp; }

int orcu__abi_crdp_set_cpu(int cpu, struct call_rcu_data *crdp)
{
	int ret = crdp ? orcu_cpu_offload(cpu) : 0;

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}

int orcu__abi_crdp_offload_all(void)
{
	for (int cpu = 0; cpu < get_nprocs_conf(); cpu++)
		(void)orcu_cpu_offload(cpu);
	return 0;
}

pthread_t orcu__abi_crdp_pthread(struct call_rcu_data *crdp) { return crdp->thread; }

/* liburcu parks its call_rcu workers here, so that no thread but the
 * forking one is inside the allocator at fork.  orcu's own fork handlers
 * do that already: they park its callback invokers between callbacks, and
 * its threads allocate only under locks they take (a starting thread
 * under orcu__g.lock, os.c; a posting segment freed under cb_lock). */
void orcu__abi_before_fork(void) {}
