/*
 * config.c - configuration: orcu_init()'s cfg and the ORCU_* environment
 * read into one record (struct orcu__conf), the topology read from sysfs,
 * boolean variables, and the cap on library threads.  One table describes
 * every numeric knob.  Calls os.c and cpulist.c; used by entry.c, and
 * by registry.c, postcheck.c and nocb.c for a boolean variable or the cap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os.h"
#include "config.h"
#include "cpulist.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Configuration
 *
 * Rules (README "Configuration"): a value from orcu_init()'s cfg that is
 * wrong makes orcu_init() return -EINVAL and applies nothing; the same
 * value from the environment is ignored, its default used, and one line
 * says so: the variable, its text (escaped, cut to a readable length) and
 * why.  No value is silently changed into another one, and an empty
 * variable is reported like any other bad text. */

void orcu__conf_free(struct orcu__conf *c)
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
static const char *const bool_vars[] = { "ORCU_NO_MEMBARRIER", "ORCU_CHECK_CALLS",
					 "ORCU_FUTEX_HASH" };
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

/* With cancellation disabled: fopen() and fread() are cancellation
 * points, and a start reads under orcu__g.lock (os.c "Cancellation"). */
static char *read_small_file(const char *path, char *buf, size_t len)
{
	int old = orcu__nocancel_begin();
	FILE *f = fopen(path, "re");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	orcu__nocancel_end(old);
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
static int real_topology(struct orcu__conf *c)
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
static int cpus_setting(const struct orcu_config *cfg, struct orcu__conf *c)
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
	/* Out of memory says nothing of the text: the start fails and is
	 * retried with the same configuration, never run on another. */
	if (ret == -ENOMEM)
		return ret;
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
enum knob_from {
	FROM_DEFAULT,
	FROM_CFG,
	FROM_ENV
};

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
static long default_max_threads(const struct orcu__conf *c)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	(void)c;
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > ORCU__MAX_POSSIBLE)
		ncpu = ORCU__MAX_POSSIBLE;
	return 4 * ncpu + 64 > 1024 ? 4 * ncpu + 64 : 1024;
}

/* One slot per possible CPU, at least one, for the leader groups. */
static long default_stride(const struct orcu__conf *c)
{
	long def_stride = (long)sqrt((double)c->nr_possible);

	return def_stride < 1 ? 1 : def_stride;
}

/* qlowmark < qhimark < qmax.  The defaults follow a given qhimark; a given
 * value that breaks the order is never moved silently (knob_ordered()). */
static long default_qlowmark(const struct orcu__conf *c)
{
	return c->knob[ORCU__KNOB_QHIMARK] > 100 ? 100 : c->knob[ORCU__KNOB_QHIMARK] / 2;
}

static long default_qmax(const struct orcu__conf *c)
{
	return c->knob[ORCU__KNOB_QHIMARK] < 40000 ? 40000 : 2 * c->knob[ORCU__KNOB_QHIMARK];
}

/*
 * The numeric knobs, one row each, read in this order (a knob's default or
 * order may depend on a row above it) by conf_build() and written to
 * orcu__g by orcu__conf_apply().
 */
enum knob_order {
	ANY_ORDER,
	BELOW_OTHER,
	ABOVE_OTHER
};
enum knob_store {
	STORE_LONG,
	STORE_INT,
	STORE_POSITIVE
}; /* POSITIVE: value > 0 */

struct knob_row {
	const char *env; /* ORCU_X; the cfg field's name is env + 5 */
	int cfg_off;     /* field of struct orcu_config */
	enum {
		NO_FIELD,
		INT_FIELD,
		LONG_FIELD
	} cfg_type;
	long min, max; /* max 0: the number of possible slots */
	long def;      /* the default, unless default_of is set */
	long (*default_of)(const struct orcu__conf *c);
	enum knob_order order; /* must be below / above knob `other` */
	int other;
	size_t g_off; /* field of orcu__g that takes the value */
	enum knob_store store;
};

/* clang-format off */
#define CFG(f) (int)offsetof(struct orcu_config, f), \
	_Generic(((struct orcu_config *)0)->f, int: INT_FIELD, long: LONG_FIELD)
#define NO_CFG 0, NO_FIELD
#define G(f) offsetof(struct orcu__global, f)

static const struct knob_row knobs[ORCU__NR_KNOBS] = {
	[ORCU__KNOB_STRIDE] = { "ORCU_NOCB_STRIDE", CFG(nocb_stride), 1, 0, 0,
		default_stride, ANY_ORDER, 0, G(stride), STORE_INT },
	[ORCU__KNOB_POLL] = { "ORCU_NOCB_POLL", CFG(nocb_poll), -1, 1, 0,
		NULL, ANY_ORDER, 0, G(nocb_poll), STORE_POSITIVE },
	[ORCU__KNOB_QHIMARK] = { "ORCU_QHIMARK", CFG(qhimark), 2, LONG_MAX / 4, 10000,
		NULL, ANY_ORDER, 0, G(qhimark), STORE_LONG },
	[ORCU__KNOB_QLOWMARK] = { "ORCU_QLOWMARK", CFG(qlowmark), 1, LONG_MAX / 4, 0,
		default_qlowmark, BELOW_OTHER, ORCU__KNOB_QHIMARK, G(qlowmark), STORE_LONG },
	[ORCU__KNOB_QMAX] = { "ORCU_QMAX", CFG(qmax), 2, LONG_MAX / 2, 0,
		default_qmax, ABOVE_OTHER, ORCU__KNOB_QHIMARK, G(qmax), STORE_LONG },
	[ORCU__KNOB_LAZY_MS] = { "ORCU_LAZY_MS", CFG(lazy_ms), 1, 3600000, 1000,
		NULL, ANY_ORDER, 0, G(lazy_ms), STORE_LONG },
	[ORCU__KNOB_LAZY_MAX] = { "ORCU_LAZY_MAX", CFG(lazy_max), 1, LONG_MAX / 4, 10000,
		NULL, ANY_ORDER, 0, G(lazy_max), STORE_LONG },
	/* 0 from the environment disables, like -1 (conf_build()). */
	[ORCU__KNOB_STALL_MS] = { "ORCU_STALL_MS", CFG(stall_ms), -1, 86400000, 10000,
		NULL, ANY_ORDER, 0, G(stall_ms), STORE_LONG },
	[ORCU__KNOB_TAKEOVER_MS] = { "ORCU_INLINE_TAKEOVER_MS", CFG(inline_takeover_ms),
		1, 60000, 5, NULL, ANY_ORDER, 0, G(inline_takeover_ms), STORE_LONG },
	[ORCU__KNOB_BATCH] = { "ORCU_INLINE_BATCH", CFG(inline_batch), 1, 1000000, 16,
		NULL, ANY_ORDER, 0, G(inline_batch), STORE_INT },
	[ORCU__KNOB_GP_BATCH_US] = { "ORCU_GP_BATCH_US", NO_CFG, 0, 1000000, 200,
		NULL, ANY_ORDER, 0, G(gp_batch_us), STORE_LONG },
	[ORCU__KNOB_MAX_THREADS] = { "ORCU_MAX_THREADS", NO_CFG, 3, 4194304, 0,
		default_max_threads, ANY_ORDER, 0, G(max_threads), STORE_LONG },
};

/* clang-format on */
#undef CFG
#undef NO_CFG
#undef G

static long cfg_value(const struct orcu_config *cfg, const struct knob_row *k)
{
	const char *p = (const char *)cfg + k->cfg_off;

	switch (k->cfg_type) {
	case INT_FIELD:
		return *(const int *)p;
	case LONG_FIELD:
		return *(const long *)p;
	default:
		return 0;
	}
}

/* Every row of knobs[], in order; stops at the first bad cfg value. */
static int knobs_setting(const struct orcu_config *cfg, struct orcu__conf *c)
{
	for (int i = 0; i < ORCU__NR_KNOBS; i++) {
		const struct knob_row *k = &knobs[i];
		long def = k->default_of ? k->default_of(c) : k->def;
		long max = k->max ? k->max : c->nr_possible;
		long *val = &c->knob[i], other;
		enum knob_from from;
		int ret;

		if ((ret = knob(k->env, cfg_value(cfg, k), k->min, max, def, val,
				&from)) < 0)
			return ret;
		if (k->order == ANY_ORDER)
			continue;
		other = c->knob[k->other];
		if ((ret = knob_ordered(k->env, from, val,
					k->order == BELOW_OTHER ? *val < other : *val > other,
					k->order == BELOW_OTHER ? "be below" : "exceed",
					knobs[k->other].env, other, def)) < 0)
			return ret;
	}
	return 0;
}

int orcu__conf_build(const struct orcu_config *cfg, struct orcu__conf *c)
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

	if ((ret = knobs_setting(cfg, c)) < 0)
		goto fail;
	if (c->knob[ORCU__KNOB_STALL_MS] == 0)
		c->knob[ORCU__KNOB_STALL_MS] = -1;
	/* Read here so a bad boolean is reported at configuration time, once. */
	orcu__env_bool("ORCU_NO_MEMBARRIER", 0);
	orcu__env_bool("ORCU_CHECK_CALLS", 0);
	c->futex_hash = orcu__env_bool("ORCU_FUTEX_HASH", 1);
	return 0;
fail:
	orcu__conf_free(c);
	return ret;
}

/* Under orcu__g.lock, before the slots exist: the knobs and the
 * housekeeping set into orcu__g (the set is handed over, not copied). */
void orcu__conf_apply(struct orcu__conf *c)
{
	orcu__g.nr_possible = c->nr_possible;
	for (int i = 0; i < ORCU__NR_KNOBS; i++) {
		char *g = (char *)&orcu__g + knobs[i].g_off;

		switch (knobs[i].store) {
		case STORE_LONG:
			*(long *)g = c->knob[i];
			break;
		case STORE_INT:
			*(int *)g = (int)c->knob[i];
			break;
		case STORE_POSITIVE:
			*(int *)g = c->knob[i] > 0;
			break;
		}
	}
	orcu__g.nr_groups = (c->nr_possible + orcu__g.stride - 1) / orcu__g.stride;
	orcu__g.futex_hash = c->futex_hash;
	free(orcu__g.housekeeping);
	orcu__g.housekeeping = c->housekeeping;
	c->housekeeping = NULL;
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
		return true; /* not configured yet: nothing to compare with */
	if ((alive > spawned ? alive : spawned) < max)
		return true;
	if (first_time(&thread_cap_reported))
		orcu__warn("library thread cap reached (ORCU_MAX_THREADS=%ld): no more "
			   "threads are created; slots without their own are served by others",
			   max);
	return false;
}
