/*
 * os.c - the bottom of the library: the shared records (orcu__g, the
 * counters, the per-thread record), messages (die, warn, misuse), the
 * monotonic clock, futexes and named library threads on the housekeeping
 * CPUs.  Calls no other orcu module; used by all of them.
 */
#include "os.h"
#include "cpulist.h"
#include "sanitize.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* No flood control on slot 0 before a configuration sets the marks. */
struct orcu__global orcu__g = { .lock = PTHREAD_MUTEX_INITIALIZER, .qhimark = LONG_MAX };
struct orcu__counters orcu__cnt;
__thread struct orcu__tls orcu__tls __attribute__((tls_model("initial-exec"))) = {
	.bound_cpu = -1, .library_slot = -1
};
/* ThreadSanitizer's synchronisation objects for a GP's end and for
 * callbacks done (sanitize.h): only their addresses are used. */
char orcu__san_gp_end, orcu__san_cb_done;
_Atomic unsigned char orcu__san_state = ORCU__SAN_UNKNOWN;
/* The stall handler and its argument, set together (orcu_set_stall_handler)
 * and read together by the GP that reports a stall, under one small lock
 * held only to copy them (never while the handler runs), so a report
 * never pairs one setter's handler with another's argument.  fork takes
 * it (lifecycle.c), so no child inherits it held. */
static pthread_mutex_t stall_hook_lock = PTHREAD_MUTEX_INITIALIZER;
static orcu_stall_handler_t stall_handler;
static void *stall_arg;

void orcu__stall_handler_set(orcu_stall_handler_t handler, void *arg)
{
	pthread_mutex_lock(&stall_hook_lock);
	stall_handler = handler;
	stall_arg = arg;
	pthread_mutex_unlock(&stall_hook_lock);
}

orcu_stall_handler_t orcu__stall_handler_get(void **arg)
{
	orcu_stall_handler_t h;

	pthread_mutex_lock(&stall_hook_lock);
	h = stall_handler;
	*arg = stall_arg;
	pthread_mutex_unlock(&stall_hook_lock);
	return h;
}

void orcu__stall_hook_fork_lock(bool lock)
{
	if (lock)
		pthread_mutex_lock(&stall_hook_lock);
	else
		pthread_mutex_unlock(&stall_hook_lock);
}

/* ------------------------------------------------------------------ */
/* Cancellation (docs/API.md, "Cancellation"): a pthread_cancel() never
 * takes effect inside an orcu call.  The library's own waits are futex
 * system calls, which are no cancellation points; the few that are (the
 * writes of a message, the sysfs reads of a start, a sleep, a join) are
 * made only here and in config.c's reads, with cancellation disabled, so
 * no thread leaves a call with a library lock held or a change half made.
 * A pending cancel takes effect at the caller's next cancellation point
 * after the call. */

int orcu__nocancel_begin(void)
{
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

void orcu__nocancel_end(int old)
{
	/* Not a cancellation point: re-enabling a deferred cancel does not
	 * act on one that is pending. */
	if (old != PTHREAD_CANCEL_DISABLE)
		pthread_setcancelstate(old, NULL);
}

void orcu__sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	int old = orcu__nocancel_begin();

	nanosleep(&ts, NULL);
	orcu__nocancel_end(old);
}

void orcu__join(pthread_t thread)
{
	int old = orcu__nocancel_begin();

	pthread_join(thread, NULL);
	orcu__nocancel_end(old);
}

/* ------------------------------------------------------------------ */
/* Messages: written with cancellation disabled (a die or a misuse must
 * abort with its line, not unwind the thread half way). */

void orcu__die(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	orcu__nocancel_begin();
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One call: stderr is unbuffered, and glibc then writes the line
	 * whole, so another thread's line cannot land inside it. */
	fprintf(stderr, "orcu: %s\n", buf);
	abort();
}

/*
 * One line, always: callers quote user text with orcu__quote_value(), and
 * this is the backstop for anything that slipped through: a control byte
 * becomes '?', and a message too long for the buffer ends in "...".
 */
void orcu__warn(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];
	int n, old;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		memcpy(buf + sizeof(buf) - 4, "...", 4);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	old = orcu__nocancel_begin();
	fprintf(stderr, "orcu: %s\n", buf);
	orcu__nocancel_end(old);
}

void orcu__assert_held(pthread_mutex_t *m, const char *file, int line,
		       const char *what)
{
	/* An error-checking probe: trylock succeeds only if nobody holds it. */
	if (pthread_mutex_trylock(m) == 0) {
		pthread_mutex_unlock(m);
		orcu__die("%s:%d: expected %s to be held", file, line, what);
	}
}

/* ------------------------------------------------------------------ */
/* Time and futexes */

/* 0 if the clock cannot be read (a thread's CPU clock, the thread gone). */
uint64_t orcu__clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The futex call that reads our struct timespec: on a 32-bit build with a
 * 64-bit time_t (-D_TIME_BITS=64, as Debian's armhf packages are built)
 * SYS_futex reads the first half of tv_sec as tv_nsec, so every timeout
 * under a second became 0 (a wait spun); futex_time64 reads it whole. */
#if defined(SYS_futex_time64)
#define FUTEX_WAIT_NR (sizeof(time_t) > sizeof(long) ? SYS_futex_time64 : SYS_futex)
#else
#define FUTEX_WAIT_NR SYS_futex
#endif

/* Blocks only while *addr == val: a wake that came first is never lost. */
int orcu__futex_wait(_Atomic uint32_t *addr, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tsp = &ts;
	}
	if (syscall(FUTEX_WAIT_NR, (void *)addr, FUTEX_WAIT_PRIVATE, val, tsp, NULL, 0) < 0)
		return -errno;
	return 0;
}

void orcu__futex_wake(void *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* The process's futex hash.
 *
 * Since Linux 6.17 a process's private futexes hash into a table of its
 * own, sized by the kernel from min(threads, online CPUs): 16 buckets on a
 * 2-CPU machine, however many threads sleep.  A virtual topology of 4096
 * slots sleeps ~4100 library threads on their own futex words, ~260 to a
 * bucket, and every wake walks its bucket: futex_wake was 40% of the GP
 * thread's samples at 4096 slots (perf), and a GP there cost 2.7x its cost
 * at 16 slots.  So while library threads are many, the table is kept at
 * 8 buckets per thread (never shrunk, never below what the kernel chose),
 * as the application could do itself with prctl(PR_FUTEX_HASH).  Older
 * kernels reject the prctl: nothing changes.  ORCU_FUTEX_HASH=0 leaves the
 * table alone (orcu__g.futex_hash, config.c). */
#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH 78
#define PR_FUTEX_HASH_SET_SLOTS 1
#define PR_FUTEX_HASH_GET_SLOTS 2
#endif
#define FUTEX_HASH_FROM_THREADS 32 /* fewer library threads: kernel's choice */
#define FUTEX_HASH_PER_THREAD 8

/* Under orcu__g.lock (every spawn is): the slots set so far, 0 for none,
 * -1 once the kernel or ORCU_FUTEX_HASH said no; for the process that set
 * it (a fork child starts with a table of its own). */
static long futex_hash_set;
static pid_t futex_hash_pid;

static void futex_hash_fit(long threads)
{
	long want, have;

	if (futex_hash_pid != getpid()) {
		futex_hash_pid = getpid();
		futex_hash_set = 0;
	}
	if (futex_hash_set < 0 || threads < FUTEX_HASH_FROM_THREADS ||
	    threads * FUTEX_HASH_PER_THREAD / 2 <= futex_hash_set)
		return;
	for (want = 16; want < threads * FUTEX_HASH_PER_THREAD; want *= 2)
		;
	/* <= 0: no private hash (older kernel), or the global one in use;
	 * 0 too when ORCU_FUTEX_HASH=0 leaves the table alone. */
	have = orcu__g.futex_hash ? prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0) : 0;
	if (have <= 0)
		futex_hash_set = -1;
	else if (have >= want)
		futex_hash_set = have;
	else
		futex_hash_set = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, want, 0, 0) == 0 ? want : -1;
}

/* ------------------------------------------------------------------ */
/* Library threads: named, all signals blocked, on housekeeping CPUs. */

/* Bumped by every new thread once it no longer touches its spawn record;
 * spawners sleep on it.  It outlives every record, so the new thread's
 * wake never lands on freed memory (a wake meant for another spawner is
 * a spurious one there: it re-checks its own record). */
static _Atomic uint32_t spawn_gen;

static void set_housekeeping_affinity(void)
{
	cpu_set_t set;
	int n = 0;

	if (!orcu__g.housekeeping)
		return;
	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (orcu__bit_test(orcu__g.housekeeping, i)) {
			CPU_SET(i, &set);
			n++;
		}
	if (n && sched_setaffinity(0, sizeof(set), &set) < 0)
		orcu__warn("cannot move a library thread to the housekeeping CPUs: %s",
			   strerror(errno));
}

void *orcu__spawn_trampoline(void *p)
{
	struct orcu__spawn_arg sa = *(struct orcu__spawn_arg *)p;

	/* Named and moved to the housekeeping CPUs before orcu__spawn()
	 * returns: a thread it started is never seen unnamed or elsewhere. */
	pthread_setname_np(pthread_self(), sa.name);
	set_housekeeping_affinity();
	/* The last touch of the record: the spawner may free it at once.
	 * Pairs with the acquire in orcu__spawn(). */
	orcu__store_release(&((struct orcu__spawn_arg *)p)->running, 1);
	/* Pairs with the acquire load of spawn_gen in orcu__spawn(). */
	orcu__fetch_add_release(&spawn_gen, 1);
	orcu__futex_wake(&spawn_gen, INT_MAX);
	orcu__tls.library_thread = 1;
	orcu__fetch_add_relaxed(&orcu__g.threads_alive, 1);
	sa.fn(sa.arg);
	orcu__fetch_sub_relaxed(&orcu__g.threads_alive, 1);
	/* Nobody joins a fork child's retired copy. */
	if (orcu__tls.retired)
		pthread_detach(pthread_self());
	return NULL;
}

/* One line per kind of thread (orcu-gp, orcu-og, orcu-oc), not per retry. */
static void spawn_failed(const char *name, int err)
{
	static _Atomic int warned[3];
	int kind = strncmp(name, "orcu-gp", 7) == 0 ? 0 :
		   strncmp(name, "orcu-og", 7) == 0 ? 1 :
						      2;
	const char *err_name = strerrorname_np(err); /* "EAGAIN"; NULL if unknown */
	char num[24];

	/* serve.c retries (its point 3). */
	orcu__store_relaxed(&orcu__g.degraded, 1);
	/* Order: none needed; only keeps the message to one per kind. */
	if (orcu__xchg_relaxed(&warned[kind], 1))
		return;
	if (!err_name) {
		snprintf(num, sizeof(num), "errno %d", err);
		err_name = num;
	}
	orcu__warn("cannot create library thread %s: %s (%s); running degraded (%s), retrying later",
		   name, strerror(err), err_name,
		   kind == 0 ? "grace periods run on the threads that wait for them" :
		   kind == 1 ? "its CPUs' callbacks are served by other threads in place" :
			       "its leader invokes its callbacks");
}

int orcu__spawn(pthread_t *tid, const char *name, void *(*fn)(void *), void *arg)
{
	struct orcu__spawn_arg *sa = malloc(sizeof(*sa));
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	if (!sa) {
		spawn_failed(name, ENOMEM);
		return -ENOMEM;
	}
	sa->fn = fn;
	sa->arg = arg;
	snprintf(sa->name, sizeof(sa->name), "%s", name);
	pthread_attr_init(&attr);
	/* Thousands of offload threads must fit: they need little stack. */
	pthread_attr_setstacksize(&attr, (size_t)256 * 1024);
	/* The new thread inherits the mask: block everything around create. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sa->running = 0;
	err = pthread_create(tid, &attr, orcu__spawn_trampoline, sa);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	/* Wait until the thread runs our code: its start-up allocations (the
	 * C library's, a sanitizer's) are over before our caller releases
	 * orcu__g.lock, which fork_prepare() takes, so no fork copies an
	 * allocator lock that a starting thread holds.  Pairs with the
	 * release in orcu__spawn_trampoline(). */
	for (uint32_t gen; !err;) {
		/* Read before `running`: a bump after it fails the wait.
		 * Pairs with the release bump in orcu__spawn_trampoline(). */
		gen = orcu__load_acquire(&spawn_gen);
		if (orcu__load_acquire(&sa->running))
			break;
		orcu__futex_wait(&spawn_gen, gen, -1);
	}
	free(sa);
	if (err) {
		spawn_failed(name, err);
		return -err;
	}
	futex_hash_fit(orcu__load_relaxed(&orcu__g.leaders_alive) +
		       orcu__load_relaxed(&orcu__g.followers_alive) + 2);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Thread exit */

/*
 * One key says "this thread has orcu state to put back when it ends":
 * its reader record (registry.c), its posting queues (postq.c), its
 * orcu_free() batches (free.c).  Each module arms it before it keeps
 * such state; the destructor runs lifecycle.c's table of exit steps,
 * which finds what each module has to do from the thread's own records.
 * Made on first use, not at load: a process that used up its keys
 * before it needed orcu's is told so by the module that could not
 * arm it, and each answers the same way: it keeps no per-thread state
 * (registration fails with -EAGAIN, a post goes to the slot's shared
 * queue, an object takes orcu_free()'s no-memory path).  A step that
 * arms it again (an exit step that posts) has the table run again: the
 * C library calls a destructor again while its key's value is set.
 */
void (*_Atomic orcu__thread_exit_hook)(void);
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static bool exit_key_made;

static void thread_exit(void *arg)
{
	void (*hook)(void) = orcu__load_relaxed(&orcu__thread_exit_hook);

	(void)arg;
	if (hook)
		hook();
}

static void make_exit_key(void)
{
	exit_key_made = pthread_key_create(&exit_key, thread_exit) == 0;
}

int orcu__thread_exit_arm(void)
{
	pthread_once(&exit_key_once, make_exit_key);
	/* Any non-NULL value. */
	if (!exit_key_made || pthread_setspecific(exit_key, &orcu__tls) != 0)
		return -EAGAIN;
	return 0;
}

/* The library's image is unloaded (lifecycle.c point 7): a thread that
 * armed the key must not run thread_exit(), gone with it, when it ends. */
void orcu__thread_exit_unload(void)
{
	if (exit_key_made)
		pthread_key_delete(exit_key);
}
