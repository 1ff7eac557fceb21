/*
 * init.c - configuration (orcu_init, the ORCU_* environment), lifetime
 * (lazy start, orcu_shutdown, fork), and the small OS helpers every module
 * uses: messages, futexes, named library threads.  May call every module's
 * setup, start, stop and after-fork entry points.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "cpulist.h"

/* Degraded mode: how long after a failed thread creation to try again. */
#define RETRY_NS (1000 * 1000000ull)

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct orcu__global orcu__g = { .lock = PTHREAD_MUTEX_INITIALIZER };
struct orcu__counters orcu__cnt;
__thread struct orcu__tls orcu__tls = { .bound_cpu = -1, .library_slot = -1 };
orcu_stall_handler_t orcu__stall_handler;
void *orcu__stall_arg;

/* ------------------------------------------------------------------ */
/* Messages */

void orcu__die(const char *fmt, ...)
{
	va_list ap;

	fputs("orcu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
	int n;

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
	fprintf(stderr, "orcu: %s\n", buf);
}

void orcu__misuse(const char *call, const char *what)
{
	fprintf(stderr, "orcu: %s: %s\n", call, what);
	abort();
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

uint64_t orcu__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int futex_wait_raw(void *addr, uint32_t val, int64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;

	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tsp = &ts;
	}
	if (syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, tsp, NULL, 0) < 0)
		return -errno;
	return 0;
}

/* Blocks only while *addr == val: a wake that came first is never lost. */
int orcu__futex_wait(_Atomic uint32_t *addr, uint32_t val, int64_t timeout_ns)
{
	return futex_wait_raw((void *)addr, val, timeout_ns);
}

int orcu__futex_wait_int(_Atomic int *addr, int val, int64_t timeout_ns)
{
	return futex_wait_raw((void *)addr, (uint32_t)val, timeout_ns);
}

void orcu__futex_wake(void *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* Library threads: named, all signals blocked, on housekeeping CPUs. */

void *orcu__spawn_trampoline(void *p)
{
	struct orcu__spawn_arg sa = *(struct orcu__spawn_arg *)p;

	free(p);
	orcu__tls.library_thread = 1;
	pthread_setname_np(pthread_self(), sa.name);
	orcu__set_housekeeping_affinity();
	orcu__fetch_add_relaxed(&orcu__g.threads_alive, 1);
	sa.fn(sa.arg);
	orcu__fetch_sub_relaxed(&orcu__g.threads_alive, 1);
	return NULL;
}

/* One line per kind of thread (orcu-gp, orcu-og, orcu-oc), not per retry. */
static void spawn_failed(const char *name, int err)
{
	static _Atomic int warned[3];
	int kind = strncmp(name, "orcu-gp", 7) == 0 ? 0 :
		   strncmp(name, "orcu-og", 7) == 0 ? 1 : 2;

	orcu__store_relaxed(&orcu__g.degraded, 1);
	orcu__store_relaxed(&orcu__g.retry_after_ns, orcu__now_ns() + RETRY_NS);
	if (orcu__xchg_seq_cst(&warned[kind], 1))
		return;
	orcu__warn("cannot create library thread %s: %s (%s); running degraded (%s), retrying later",
		   name, strerror(err), err == EAGAIN ? "EAGAIN" : "errno",
		   kind == 0 ? "grace periods run on the threads that wait for them" :
		   kind == 1 ? "its CPUs' callbacks move to other CPUs or are run by waiters" :
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
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* The new thread inherits the mask: block everything around create. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(tid, &attr, orcu__spawn_trampoline, sa);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		free(sa);
		spawn_failed(name, err);
		return -err;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Configuration
 *
 * Rules (README "Configuration"): a value from orcu_init()'s cfg that is
 * wrong makes orcu_init() return -EINVAL and applies nothing; the same
 * value from the environment is ignored, its default used, and one line
 * says so: the variable, its text (escaped, cut to a readable length) and
 * why.  No value is silently changed into another one, and an empty
 * variable is reported like any other bad text. */

struct conf {
	int nr_possible;
	uint64_t *online;       /* [nr_possible] */
	uint64_t *nocbs;        /* [nr_possible] */
	uint64_t *housekeeping; /* [CPU_SETSIZE] real CPUs, or NULL */
	long stride, poll, qhimark, qlowmark, qmax, lazy_ms, lazy_max,
		stall_ms, takeover_ms, batch, gp_batch_us, max_threads;
};

static void conf_free(struct conf *c)
{
	free(c->online);
	free(c->nocbs);
	free(c->housekeeping);
	memset(c, 0, sizeof(*c));
}

static void env_ignored(const char *env, const char *text, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line for a rejected environment value: "ORCU_X="text" ignored: why". */
static void env_ignored(const char *env, const char *text, const char *fmt, ...)
{
	char q[ORCU__QUOTE_VALUE_BUF], why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	orcu__warn("%s=\"%s\" ignored: %s", env, orcu__quote_value(q, text), why);
}

/* True for the one caller that turns *flag from 0 to 1. */
static bool first_time(_Atomic int *flag)
{
	int zero = 0;

	return orcu__cas_relaxed(flag, &zero, 1);
}

/* Boolean variables warn once each, however often their users read them. */
static const char *const bool_vars[] = { "ORCU_NO_MEMBARRIER", "ORCU_CHECK_CALLS" };
static _Atomic int bool_warned[sizeof(bool_vars) / sizeof(bool_vars[0])];

int orcu__env_bool(const char *name, int def)
{
	const char *s = getenv(name);
	char err[160];
	int v;

	if (!s)
		return def;
	if (orcu__parse_bool(s, &v, err, sizeof(err)) == 0)
		return v;
	for (size_t i = 0; i < sizeof(bool_vars) / sizeof(bool_vars[0]); i++)
		if (strcmp(name, bool_vars[i]) == 0 && !first_time(&bool_warned[i]))
			return def;
	env_ignored(name, s, "expected 0 or 1");
	return def;
}

static char *read_small_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n ? buf : NULL;
}

/*
 * The CPUs below nbits that are really online (sysfs) and that this thread
 * may run on (affinity), into bits (nbits wide, zeroed by the caller); slot
 * 0 if that leaves none.  Both the real topology and a virtual one given
 * as possible=N alone take their online set from here.
 */
static int real_online(uint64_t *bits, int nbits)
{
	char buf[4096], err[128];
	const char *list = read_small_file("/sys/devices/system/cpu/online", buf,
					   sizeof(buf));
	int n = nbits, max = list ? orcu__cpulist_max(list, err, sizeof(err)) : -1;
	uint64_t *sys;
	cpu_set_t aff;

	if (max > n)
		n = max;
	sys = calloc(ORCU__BITMAP_WORDS(n), sizeof(uint64_t));
	if (!sys)
		return -ENOMEM;
	if (!list || orcu__cpulist_parse(list, sys, n, err, sizeof(err)) < 0)
		for (int i = 0; i < nbits; i++)
			orcu__bit_set(sys, i);
	if (sched_getaffinity(0, sizeof(aff), &aff) == 0)
		for (int i = 0; i < nbits; i++)
			if (i >= CPU_SETSIZE || !CPU_ISSET(i, &aff))
				orcu__bit_clear(sys, i);
	for (int i = 0; i < nbits; i++)
		if (orcu__bit_test(sys, i))
			orcu__bit_set(bits, i);
	free(sys);
	if (orcu__bitmap_weight(bits, nbits) == 0)
		orcu__bit_set(bits, 0);
	return 0;
}

/* The real topology: possible from sysfs, online = sysfs online & affinity. */
static int real_topology(struct conf *c)
{
	char buf[4096], err[128];
	int n = -1;

	if (read_small_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)))
		n = orcu__cpulist_max(buf, err, sizeof(err));
	if (n <= 0)
		n = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (n <= 0)
		n = 1;
	if (n > ORCU__MAX_POSSIBLE)
		n = ORCU__MAX_POSSIBLE;
	c->nr_possible = n;
	c->online = calloc(ORCU__BITMAP_WORDS(n), sizeof(uint64_t));
	if (!c->online)
		return -ENOMEM;
	return real_online(c->online, n);
}

/*
 * ORCU_CPUS / cfg->cpus.  possible=N without online= does not make N slots
 * online (N may be 65536, and every online slot gets threads): online is
 * then the real online set, as for the real topology, cut to [0, N).
 * Returns 1 if a topology was taken, 0 if none was given or the
 * environment's was ignored, -errno for a bad cfg.
 */
static int cpus_setting(const struct orcu_config *cfg, struct conf *c)
{
	const char *cpus = cfg->cpus ? cfg->cpus : getenv("ORCU_CPUS");
	char err[160], q[ORCU__QUOTE_VALUE_BUF];
	uint64_t *online;
	bool online_given;
	int possible, ret;

	if (!cpus)
		return 0;
	ret = orcu__parse_cpus_spec_given(cpus, &possible, &online, &online_given,
					  err, sizeof(err));
	if (ret < 0) {
		if (cfg->cpus) {
			orcu__warn("orcu_init: bad cpus \"%s\": %s",
				   orcu__quote_value(q, cpus), err);
			return ret;
		}
		env_ignored("ORCU_CPUS", cpus, "%s", err);
		return 0;
	}
	if (!online_given) {
		memset(online, 0, ORCU__BITMAP_WORDS(possible) * sizeof(uint64_t));
		if ((ret = real_online(online, possible)) < 0) {
			free(online);
			return ret;
		}
	}
	c->nr_possible = possible;
	c->online = online;
	return 1;
}

/*
 * One numeric knob: from the config if set there (nonzero), else from the
 * environment, else def.  *from says where the value came from, for the
 * checks that compare knobs with each other.
 */
enum knob_from { FROM_DEFAULT, FROM_CFG, FROM_ENV };

static int knob(const char *env, long cfgval, long min, long max, long def,
		long *out, enum knob_from *from)
{
	char err[160];
	const char *s = getenv(env);
	long v;

	*out = def;
	*from = FROM_DEFAULT;
	if (cfgval) {
		if (cfgval < min || cfgval > max) {
			orcu__warn("orcu_init: %s out of range %ld..%ld: %ld",
				   env + 5, min, max, cfgval);
			return -EINVAL;
		}
		*out = cfgval;
		*from = FROM_CFG;
		return 0;
	}
	if (!s)
		return 0;
	if (!*s) {
		env_ignored(env, s, "empty; unset it for the default %ld", def);
	} else if (orcu__parse_long(s, min, max, &v, err, sizeof(err)) < 0) {
		env_ignored(env, s, "%s; using %ld", err, def);
	} else {
		*out = v;
		*from = FROM_ENV;
	}
	return 0;
}

static int knob_simple(const char *env, long cfgval, long min, long max, long def,
			long *out)
{
	enum knob_from from;

	return knob(env, cfgval, min, max, def, out, &from);
}

/*
 * A knob that must stay below (or above) another: a cfg value that breaks
 * the order fails orcu_init(); an environment one is ignored for def,
 * which the caller chose to keep the order.
 */
static int knob_ordered(const char *env, enum knob_from from, long *val, bool ok,
			const char *rule, const char *other, long other_val, long def)
{
	char num[32];

	if (ok)
		return 0;
	if (from == FROM_CFG) {
		orcu__warn("orcu_init: %s %ld must %s %s %ld", env + 5, *val, rule,
			   other + 5, other_val);
		return -EINVAL;
	}
	snprintf(num, sizeof(num), "%ld", *val);
	env_ignored(env, getenv(env) ? getenv(env) : num, "must %s %s (%ld); using %ld",
		    rule, other, other_val, def);
	*val = def;
	return 0;
}

/* A cpulist-valued setting; cfg errors fail the call, env errors are ignored. */
static int cpulist_setting(const char *env, const char *cfgval, int nbits,
			   uint64_t **out, bool *given)
{
	const char *s = cfgval ? cfgval : getenv(env);
	char err[160], q[ORCU__QUOTE_VALUE_BUF];
	uint64_t *bits;

	*given = false;
	*out = NULL;
	if (!s)
		return 0;
	/* The parser reads "" as the empty set; as a setting it is far more
	 * likely an unset-by-accident than "no CPU at all". */
	if (!*s) {
		snprintf(err, sizeof(err), "empty (write \"none\" for no CPU)");
		goto bad;
	}
	bits = calloc(ORCU__BITMAP_WORDS(nbits), sizeof(uint64_t));
	if (!bits)
		return -ENOMEM;
	if (orcu__cpulist_parse(s, bits, nbits, err, sizeof(err)) < 0) {
		free(bits);
		goto bad;
	}
	*out = bits;
	*given = true;
	return 0;
bad:
	if (cfgval) {
		orcu__warn("orcu_init: bad %s \"%s\": %s", env + 5,
			   orcu__quote_value(q, s), err);
		return -EINVAL;
	}
	env_ignored(env, s, "%s", err);
	return 0;
}

/*
 * Housekeeping CPUs must include one this process may run on, or every
 * library thread would fail to move there.  Checked here, once, against
 * the configuring thread's affinity.  Returns 0 if usable, else -EINVAL
 * after the one line.
 */
static int housekeeping_check(const char *cfgval, const uint64_t *hk)
{
	char q[ORCU__QUOTE_VALUE_BUF], have[256];
	uint64_t aff_bits[ORCU__BITMAP_WORDS(CPU_SETSIZE)] = { 0 };
	cpu_set_t aff;

	if (sched_getaffinity(0, sizeof(aff), &aff) != 0)
		return 0;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &aff))
			continue;
		if (orcu__bit_test(hk, i))
			return 0;
		orcu__bit_set(aff_bits, i);
	}
	if (orcu__cpulist_format(aff_bits, CPU_SETSIZE, have, sizeof(have)) < 0)
		snprintf(have, sizeof(have), "%d CPUs", CPU_COUNT(&aff));
	if (cfgval) {
		orcu__warn("orcu_init: bad housekeeping \"%s\": no CPU this process may run on (%s)",
			   orcu__quote_value(q, cfgval), have);
		return -EINVAL;
	}
	env_ignored("ORCU_HOUSEKEEPING", getenv("ORCU_HOUSEKEEPING"),
		    "no CPU this process may run on (%s)", have);
	return -EINVAL;
}

/*
 * Default cap on library threads: never reached by the real topology
 * (at most one GP thread, one leader and one follower per online CPU),
 * and far below what hurts a machine (PIDs, kernel stacks); 1024 at
 * least, so a virtual topology of a few hundred online slots runs as is.
 */
static long default_max_threads(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > ORCU__MAX_POSSIBLE)
		ncpu = ORCU__MAX_POSSIBLE;
	return 4 * ncpu + 64 > 1024 ? 4 * ncpu + 64 : 1024;
}

static int marks_setting(const struct orcu_config *cfg, struct conf *c)
{
	enum knob_from from;
	long def;
	int ret;

	/* qlowmark < qhimark < qmax.  The defaults follow a given qhimark;
	 * a given value that breaks the order is never moved silently. */
	if ((ret = knob("ORCU_QHIMARK", cfg->qhimark, 2, LONG_MAX / 4, 10000,
			&c->qhimark, &from)) < 0)
		return ret;
	def = c->qhimark > 100 ? 100 : c->qhimark / 2;
	if ((ret = knob("ORCU_QLOWMARK", cfg->qlowmark, 1, LONG_MAX / 4, def,
			&c->qlowmark, &from)) < 0 ||
	    (ret = knob_ordered("ORCU_QLOWMARK", from, &c->qlowmark,
				c->qlowmark < c->qhimark, "be below", "ORCU_QHIMARK",
				c->qhimark, def)) < 0)
		return ret;
	def = c->qhimark < 40000 ? 40000 : 2 * c->qhimark;
	if ((ret = knob("ORCU_QMAX", cfg->qmax, 2, LONG_MAX / 2, def, &c->qmax,
			&from)) < 0 ||
	    (ret = knob_ordered("ORCU_QMAX", from, &c->qmax, c->qmax > c->qhimark,
				"exceed", "ORCU_QHIMARK", c->qhimark, def)) < 0)
		return ret;
	return 0;
}

static int conf_build(const struct orcu_config *cfg, struct conf *c)
{
	static const struct orcu_config none;
	bool given;
	int ret;

	if (!cfg)
		cfg = &none;
	memset(c, 0, sizeof(*c));
	ret = cpus_setting(cfg, c);
	if (ret == 0)
		ret = real_topology(c);
	if (ret < 0)
		goto fail;

	ret = cpulist_setting("ORCU_NOCBS", cfg->nocbs, c->nr_possible,
			      &c->nocbs, &given);
	if (ret < 0)
		goto fail;
	if (!given) {
		/* Default: every slot offloaded; see README "Choosing inline". */
		c->nocbs = calloc(ORCU__BITMAP_WORDS(c->nr_possible), sizeof(uint64_t));
		if (!c->nocbs) {
			ret = -ENOMEM;
			goto fail;
		}
		for (int i = 0; i < c->nr_possible; i++)
			orcu__bit_set(c->nocbs, i);
	}
	ret = cpulist_setting("ORCU_HOUSEKEEPING", cfg->housekeeping, CPU_SETSIZE,
			      &c->housekeeping, &given);
	if (ret < 0)
		goto fail;
	if (given && housekeeping_check(cfg->housekeeping, c->housekeeping) < 0) {
		free(c->housekeeping);
		c->housekeeping = NULL;
		if (cfg->housekeeping) {
			ret = -EINVAL;
			goto fail;
		}
	}

	long def_stride = (long)sqrt((double)c->nr_possible);
	if (def_stride < 1)
		def_stride = 1;
	if ((ret = knob_simple("ORCU_NOCB_STRIDE", cfg->nocb_stride, 1, c->nr_possible,
			       def_stride, &c->stride)) < 0 ||
	    (ret = knob_simple("ORCU_NOCB_POLL", cfg->nocb_poll, -1, 1, 0, &c->poll)) < 0 ||
	    (ret = marks_setting(cfg, c)) < 0 ||
	    (ret = knob_simple("ORCU_LAZY_MS", cfg->lazy_ms, 1, 3600000, 1000,
			       &c->lazy_ms)) < 0 ||
	    (ret = knob_simple("ORCU_LAZY_MAX", cfg->lazy_max, 1, LONG_MAX / 4, 10000,
			       &c->lazy_max)) < 0 ||
	    (ret = knob_simple("ORCU_STALL_MS", cfg->stall_ms, -1, 86400000, 10000,
			       &c->stall_ms)) < 0 ||
	    (ret = knob_simple("ORCU_INLINE_TAKEOVER_MS", cfg->inline_takeover_ms, 1,
			       60000, 5, &c->takeover_ms)) < 0 ||
	    (ret = knob_simple("ORCU_INLINE_BATCH", cfg->inline_batch, 1, 1000000, 16,
			       &c->batch)) < 0 ||
	    (ret = knob_simple("ORCU_GP_BATCH_US", 0, 0, 1000000, 200,
			       &c->gp_batch_us)) < 0 ||
	    (ret = knob_simple("ORCU_MAX_THREADS", 0, 3, 4194304, default_max_threads(),
			       &c->max_threads)) < 0)
		goto fail;
	if (c->stall_ms == 0)
		c->stall_ms = -1;
	/* Read here so a bad boolean is reported at configuration time, once. */
	orcu__env_bool("ORCU_NO_MEMBARRIER", 0);
	orcu__env_bool("ORCU_CHECK_CALLS", 0);
	return 0;
fail:
	conf_free(c);
	return ret;
}

static int apply_conf(struct conf *c)
{
	int ret;

	orcu__g.nr_possible = c->nr_possible;
	orcu__g.stride = (int)c->stride;
	orcu__g.nr_groups = (c->nr_possible + orcu__g.stride - 1) / orcu__g.stride;
	orcu__g.nocb_poll = c->poll > 0;
	orcu__g.qhimark = c->qhimark;
	orcu__g.qlowmark = c->qlowmark;
	orcu__g.qmax = c->qmax;
	orcu__g.lazy_ms = c->lazy_ms;
	orcu__g.lazy_max = c->lazy_max;
	orcu__g.stall_ms = c->stall_ms;
	orcu__g.inline_takeover_ms = c->takeover_ms;
	orcu__g.inline_batch = (int)c->batch;
	orcu__g.gp_batch_us = c->gp_batch_us;
	orcu__g.max_threads = c->max_threads;
	free(orcu__g.housekeeping);
	orcu__g.housekeeping = c->housekeeping;
	c->housekeeping = NULL;
	ret = orcu__cpu_setup(c->nr_possible, c->online, c->nocbs);
	if (ret == 0)
		orcu__store_release(&orcu__g.initialized, 1);
	return ret;
}

/* Said once per process: the cap is a configuration fact, not an event. */
static _Atomic int thread_cap_reported;

bool orcu__thread_budget_ok(void)
{
	long alive = orcu__load_relaxed(&orcu__g.threads_alive);
	/* Spawners count leaders and followers as soon as pthread_create
	 * returns; threads_alive only once the thread runs.  The larger one
	 * (plus the GP thread) is what exists or is about to. */
	long spawned = orcu__load_relaxed(&orcu__g.leaders_alive) +
		       orcu__load_relaxed(&orcu__g.followers_alive) + 1;
	long max = orcu__g.max_threads;

	if (max <= 0)
		return true;   /* not configured yet: nothing to compare with */
	if ((alive > spawned ? alive : spawned) < max)
		return true;
	if (first_time(&thread_cap_reported))
		orcu__warn("library thread cap reached (ORCU_MAX_THREADS=%ld): no more "
			   "threads are created; slots without their own are served by others",
			   max);
	return false;
}

int orcu_init(const struct orcu_config *cfg)
{
	struct conf c;
	int ret;

	pthread_mutex_lock(&orcu__g.lock);
	if (orcu__load_acquire(&orcu__g.initialized)) {
		pthread_mutex_unlock(&orcu__g.lock);
		orcu__warn("orcu_init: already initialised; call it before any other orcu call");
		return -EBUSY;
	}
	ret = conf_build(cfg, &c);
	if (ret == 0) {
		ret = apply_conf(&c);
		conf_free(&c);
	}
	pthread_mutex_unlock(&orcu__g.lock);
	if (ret == 0)
		ret = orcu__ensure_started();
	return ret;
}

void orcu__ensure_init(void)
{
	struct conf c;

	if (orcu__likely(orcu__load_acquire(&orcu__g.initialized)))
		return;
	pthread_mutex_lock(&orcu__g.lock);
	if (!orcu__load_relaxed(&orcu__g.initialized)) {
		if (conf_build(NULL, &c) < 0 || apply_conf(&c) < 0)
			orcu__die("cannot initialise (out of memory)");
		conf_free(&c);
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
 * could not be created, at most once per RETRY_NS. */
void orcu__retry_threads(void)
{
	if (!orcu__load_acquire(&orcu__g.started)) {
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
	orcu__store_release(&orcu__g.started, 0);
	orcu__store_relaxed(&orcu__g.degraded, 0);
	orcu__store_relaxed(&orcu__g.stopping, 0);
	pthread_mutex_unlock(&orcu__g.lock);
	return 0;
}

/*
 * fork.  Lock order: barrier_lock, orcu__g.lock, every cb_lock, registry,
 * the double-post set.  None of them is ever held across user code, so a
 * fork from inside a callback, or against a callback that takes one of
 * them, cannot deadlock here.  Invocations in flight are not waited for:
 * the child puts back what they had not run (slot.c).
 */
static void fork_prepare(void)
{
	orcu__barrier_fork_prepare();
	pthread_mutex_lock(&orcu__g.lock);
	orcu__slots_lock_all();
	orcu__registry_lock();
	orcu__call_fork_prepare();
}

static void unlock_slots(void)
{
	orcu__slots_unlock_all();
}

static void fork_parent(void)
{
	orcu__call_fork_parent();
	orcu__registry_unlock();
	unlock_slots();
	pthread_mutex_unlock(&orcu__g.lock);
	orcu__barrier_fork_parent();
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
	orcu__call_fork_child();
	orcu__registry_unlock();
	unlock_slots();
	orcu__gp_after_fork_child();
	orcu__store_relaxed(&orcu__g.threads_alive, 0);
	orcu__store_relaxed(&orcu__g.started, 0);
	orcu__store_relaxed(&orcu__g.stopping, 0);
	orcu__store_relaxed(&orcu__g.degraded, 0);
	pthread_mutex_unlock(&orcu__g.lock);
	orcu__barrier_fork_child();
}

__attribute__((constructor)) static void orcu__init_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
