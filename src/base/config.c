/*
 * config.c - configuration: orcu_init()'s cfg and the ORCU_* environment
 * read into one record (struct orcu__conf), the topology read from sysfs,
 * the housekeeping CPUs (by default, those the kernel does not isolate),
 * boolean variables, and the cap on library threads.  One table describes
 * every numeric knob.  Calls os.c and cpulist.c; used by entry.c, and
 * by registry.c, postcheck.c and nocb.c for a boolean variable or the cap.
 */
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
 * points, and a start reads under orcu__g.lock (os.c "Cancellation").
 * A sysfs file ends in one newline, which is not part of its value (the
 * parsers take no newline: in a setting it is a stray byte). */
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
	if (n && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return n ? buf : NULL;
}

/*
 * The CPUs below nbits that are really online (sysfs) and that this thread
 * may run on (affinity), into bits (nbits wide, every word rewritten); slot
 * 0 if that leaves none.  Both the real topology and a virtual one given
 * as possible=N alone take their online set from here.
 */
static int real_online(uint64_t *bits, int nbits)
{
	char buf[4096], err[128];
	const char *list = read_small_file("/sys/devices/system/cpu/online", buf,
					   sizeof(buf));
	int max = list ? orcu__cpulist_max(list, err, sizeof(err)) : -1;
	int n = max > nbits ? max : nbits;
	uint64_t *sys = calloc(ORCU__BITMAP_WORDS(n), sizeof(uint64_t));
	cpu_set_t aff;
	bool aff_known;

	if (!sys)
		return -ENOMEM;
	if (!list || orcu__cpulist_parse(list, sys, n, err, sizeof(err)) < 0)
		orcu__cpulist_parse("all", sys, n, NULL, 0);
	aff_known = sched_getaffinity(0, sizeof(aff), &aff) == 0;
	memset(bits, 0, ORCU__BITMAP_WORDS(nbits) * sizeof(uint64_t));
	for (int i = 0; i < nbits; i++)
		if (orcu__bit_test(sys, i) &&
		    (!aff_known || (i < CPU_SETSIZE && CPU_ISSET(i, &aff))))
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
 * A bad text for the setting env (cfg field name): from cfg it fails
 * orcu_init() (-EINVAL), from the environment it is ignored (0); one line
 * says why either way.
 */
static int bad_setting(const char *env, const char *name, const char *cfgval,
		       const char *why)
{
	char q[ORCU__QUOTE_VALUE_BUF];

	if (!cfgval) {
		env_ignored(env, getenv(env), "%s", why);
		return 0;
	}
	orcu__warn("orcu_init: bad %s \"%s\": %s", name, orcu__quote_value(q, cfgval), why);
	return -EINVAL;
}

/*
 * ORCU_CPUS / cfg->cpus into c->nr_possible and c->online, which stays
 * NULL if none was given or the environment's was ignored; 0, or -errno.
 * possible=N without online= does not make N slots online (N may be
 * 65536, and every online slot gets threads): online is then the real
 * online set, as for the real topology, cut to [0, N).
 */
static int cpus_setting(const struct orcu_config *cfg, struct orcu__conf *c)
{
	const char *cpus = cfg->cpus ? cfg->cpus : getenv("ORCU_CPUS");
	char err[160];
	bool online_given;
	int ret;

	if (!cpus)
		return 0;
	ret = orcu__parse_cpus_spec_given(cpus, &c->nr_possible, &c->online, &online_given,
					  err, sizeof(err));
	/* Out of memory says nothing of the text: the start fails and is
	 * retried with the same configuration, never run on another. */
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0)
		return bad_setting("ORCU_CPUS", "cpus", cfg->cpus, err);
	c->cpus = cpus;
	return online_given ? 0 : real_online(c->online, c->nr_possible);
}

/* A cpulist-valued setting into *out, which stays NULL if none was given
 * or the environment's was ignored; cfg errors fail the call. */
static int cpulist_setting(const char *env, const char *cfgval, int nbits, uint64_t **out)
{
	const char *s = cfgval ? cfgval : getenv(env);
	char err[160];

	if (!s)
		return 0;
	/* The parser reads "" as the empty set; as a setting it is far more
	 * likely an unset-by-accident than "no CPU at all". */
	if (!*s)
		return bad_setting(env, env + 5, cfgval, "empty (write \"none\" for no CPU)");
	*out = calloc(ORCU__BITMAP_WORDS(nbits), sizeof(uint64_t));
	if (!*out)
		return -ENOMEM;
	if (orcu__cpulist_parse(s, *out, nbits, err, sizeof(err)) == 0)
		return 0;
	free(*out);
	*out = NULL;
	return bad_setting(env, env + 5, cfgval, err);
}

/*
 * Housekeeping CPUs must include one this process may run on, or every
 * library thread would fail to move there.  Checked here, once, against
 * the configuring thread's affinity; an unusable set is dropped, with
 * bad_setting()'s verdict.
 */
static int housekeeping_check(const char *cfgval, struct orcu__conf *c)
{
	char have[256], why[320];
	uint64_t aff_bits[ORCU__BITMAP_WORDS(CPU_SETSIZE)] = { 0 };
	cpu_set_t aff;

	if (sched_getaffinity(0, sizeof(aff), &aff) != 0)
		return 0;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &aff))
			continue;
		if (orcu__bit_test(c->housekeeping, i))
			return 0;
		orcu__bit_set(aff_bits, i);
	}
	if (orcu__cpulist_format(aff_bits, CPU_SETSIZE, have, sizeof(have)) < 0)
		snprintf(have, sizeof(have), "%d CPUs", CPU_COUNT(&aff));
	free(c->housekeeping);
	c->housekeeping = NULL;
	snprintf(why, sizeof(why), "no CPU this process may run on (%s)", have);
	return bad_setting("ORCU_HOUSEKEEPING", "housekeeping", cfgval, why);
}

/*
 * The CPUs the kernel keeps for isolated work, as /sys/devices/system/cpu/
 * <name> ("nohz_full", "isolated") lists them, or the ORCU_CPUS key of that
 * name that stands in for the file: added to iso (CPU_SETSIZE bits), the
 * list into shown; 0 or -ENOMEM.  A missing or empty file, and "(null)"
 * (some kernels' nohz_full when none is set), name no CPU; so does a
 * malformed one, which one line reports.
 */
static int isolated_cpus(const struct orcu__conf *c, const char *name, uint64_t *iso,
			 char *shown, size_t shownlen)
{
	char path[64], buf[4096], err[160], q[ORCU__QUOTE_VALUE_BUF];
	size_t n = 0;
	const char *given = c->cpus ? orcu__cpus_spec_value(c->cpus, name, &n) : NULL;
	uint64_t *bits;
	int nbits;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", name);
	if (given)
		snprintf(buf, sizeof(buf), "%.*s", (int)n, given);
	else if (!read_small_file(path, buf, sizeof(buf)))
		buf[0] = '\0';
	snprintf(shown, shownlen, "none");
	if (strcmp(buf, "(null)") == 0 || strcmp(buf, "(null)\n") == 0)
		return 0;
	/* A CPU beyond the affinity's reach is no error, only unused. */
	nbits = orcu__cpulist_max(buf, err, sizeof(err));
	nbits = nbits > CPU_SETSIZE ? nbits : CPU_SETSIZE;
	bits = calloc(ORCU__BITMAP_WORDS(nbits), sizeof(uint64_t));
	if (!bits)
		return -ENOMEM;
	if (orcu__cpulist_parse(buf, bits, nbits, err, sizeof(err)) == 0) {
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (orcu__bit_test(bits, i))
				orcu__bit_set(iso, i);
		if (orcu__cpulist_format(bits, nbits, shown, shownlen) < 0)
			snprintf(shown, shownlen, "%d CPUs", orcu__bitmap_weight(bits, nbits));
	} else {
		orcu__warn("%s%s \"%s\" ignored: %s", given ? "ORCU_CPUS " : "",
			   given ? name : path, orcu__quote_value(q, buf), err);
	}
	free(bits);
	return 0;
}

/*
 * Without ORCU_HOUSEKEEPING, library threads keep off the CPUs the kernel
 * isolates (nohz_full, isolated), as its own offload threads do, within
 * the process's affinity: its main thread's, not the configuring
 * thread's, which may be a worker pinned to an isolated CPU.  Nothing
 * isolated there leaves the plain default (no set); everything isolated
 * leaves the whole affinity.  Either choice other than the plain default
 * is said in one line.
 */
static int housekeeping_default(struct orcu__conf *c)
{
	enum {
		W = ORCU__BITMAP_WORDS(CPU_SETSIZE)
	};
	uint64_t iso[W] = { 0 }, aff_bits[W] = { 0 }, hk[W] = { 0 };
	char nohz[128], isol[128], list[256];
	cpu_set_t aff;
	int naff = 0, nhk = 0;

	if (sched_getaffinity(getpid(), sizeof(aff), &aff) != 0 &&
	    sched_getaffinity(0, sizeof(aff), &aff) != 0)
		return 0;
	if (isolated_cpus(c, "nohz_full", iso, nohz, sizeof(nohz)) < 0 ||
	    isolated_cpus(c, "isolated", iso, isol, sizeof(isol)) < 0)
		return -ENOMEM;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &aff))
			continue;
		orcu__bit_set(aff_bits, i);
		naff++;
		if (!orcu__bit_test(iso, i)) {
			orcu__bit_set(hk, i);
			nhk++;
		}
	}
	if (nhk == naff)
		return 0;
	c->housekeeping = malloc(sizeof(hk));
	if (!c->housekeeping)
		return -ENOMEM;
	memcpy(c->housekeeping, nhk ? hk : aff_bits, sizeof(hk));
	if (orcu__cpulist_format(c->housekeeping, CPU_SETSIZE, list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "%d CPUs", nhk ? nhk : naff);
	if (nhk)
		orcu__warn("library threads run on CPUs %s, not on the isolated ones (nohz_full %s, "
			   "isolated %s); ORCU_HOUSEKEEPING overrides",
			   list, nohz, isol);
	else
		orcu__warn("every CPU this process may run on (%s) is isolated (nohz_full %s, "
			   "isolated %s): library threads run on all of them; ORCU_HOUSEKEEPING overrides",
			   list, nohz, isol);
	return 0;
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

/* sqrt(possible) slots per leader group; at least one, as possible >= 1. */
static long default_stride(const struct orcu__conf *c)
{
	return (long)sqrt((double)c->nr_possible);
}

/* qlowmark < qhimark < qmax.  The defaults follow a given qhimark; a given
 * value that breaks the order is never moved silently (knobs_setting()). */
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
	/* -1 from cfg, 0 from the environment disables (conf_build()). */
	[ORCU__KNOB_STALL_MS] = { "ORCU_STALL_MS", CFG(stall_ms), -1, 86400000, 10000,
		NULL, ANY_ORDER, 0, G(stall_ms), STORE_LONG },
	[ORCU__KNOB_TAKEOVER_MS] = { "ORCU_INPLACE_TAKEOVER_MS", CFG(inline_takeover_ms),
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

	if (k->cfg_type == NO_FIELD)
		return 0;
	return k->cfg_type == INT_FIELD ? *(const int *)p : *(const long *)p;
}

/* A knob's environment variable; ORCU_INPLACE_TAKEOVER_MS is still read
 * under its old name, with one line. */
static const char *knob_env(const struct knob_row *k)
{
	const char *s = getenv(k->env);

	if (!s && k == &knobs[ORCU__KNOB_TAKEOVER_MS] &&
	    (s = getenv("ORCU_INLINE_TAKEOVER_MS")))
		orcu__warn("ORCU_INLINE_TAKEOVER_MS is deprecated: read as ORCU_INPLACE_TAKEOVER_MS");
	return s;
}

/*
 * Every row of knobs[], in order: the value from the config if set there
 * (nonzero), else from the environment, else the default; stops at the
 * first bad cfg value.  A knob that must stay below (or above) another:
 * a cfg value that breaks the order fails orcu_init(); an environment one
 * is ignored for the default, which keeps the order.
 */
static int knobs_setting(const struct orcu_config *cfg, struct orcu__conf *c)
{
	for (int i = 0; i < ORCU__NR_KNOBS; i++) {
		const struct knob_row *k = &knobs[i];
		const char *s = knob_env(k);
		const char *rule = k->order == BELOW_OTHER ? "be below" : "exceed";
		long def = k->default_of ? k->default_of(c) : k->def;
		long max = k->max ? k->max : c->nr_possible;
		/* A negative minimum is cfg's "off", because 0 there is
		 * "unset"; the environment says off with 0. */
		long env_min = k->min < 0 ? 0 : k->min;
		long cfgval = cfg_value(cfg, k), other = c->knob[k->other];
		long *val = &c->knob[i];
		char err[160];

		*val = def;
		if (cfgval && (cfgval < k->min || cfgval > max)) {
			orcu__warn("orcu_init: %s out of range %ld..%ld: %ld", k->env + 5,
				   k->min, max, cfgval);
			return -EINVAL;
		}
		if (cfgval)
			*val = cfgval;
		else if (s && !*s)
			env_ignored(k->env, s, "empty; unset it for the default %ld", def);
		else if (s && orcu__parse_long(s, env_min, max, val, err, sizeof(err)) < 0)
			env_ignored(k->env, s, "%s; using %ld", err, def);
		if (k->order == ANY_ORDER || (k->order == BELOW_OTHER ? *val < other : *val > other))
			continue;
		/* The default keeps the order: *val came from cfg or from s. */
		if (cfgval) {
			orcu__warn("orcu_init: %s %ld must %s %s %ld", k->env + 5, *val, rule,
				   knobs[k->other].env + 5, other);
			return -EINVAL;
		}
		env_ignored(k->env, s, "must %s %s (%ld); using %ld", rule, knobs[k->other].env,
			    other, def);
		*val = def;
	}
	return 0;
}

int orcu__conf_build(const struct orcu_config *cfg, struct orcu__conf *c)
{
	static const struct orcu_config none;
	int ret;

	if (!cfg)
		cfg = &none;
	memset(c, 0, sizeof(*c));
	ret = cpus_setting(cfg, c);
	if (ret == 0 && !c->online)
		ret = real_topology(c);
	if (ret == 0)
		ret = cpulist_setting("ORCU_NOCBS", cfg->nocbs, c->nr_possible, &c->nocbs);
	/* Default: every slot offloaded, as nocbs "all"; see README "Choosing inline". */
	if (ret == 0 && !c->nocbs)
		ret = cpulist_setting("ORCU_NOCBS", "all", c->nr_possible, &c->nocbs);
	if (ret == 0)
		ret = cpulist_setting("ORCU_HOUSEKEEPING", cfg->housekeeping, CPU_SETSIZE,
				      &c->housekeeping);
	if (ret == 0 && c->housekeeping)
		ret = housekeeping_check(cfg->housekeeping, c);
	if (ret == 0)
		ret = knobs_setting(cfg, c);
	if (ret == 0 && !c->housekeeping)
		ret = housekeeping_default(c);
	if (ret < 0) {
		orcu__conf_free(c);
		return ret;
	}
	if (c->knob[ORCU__KNOB_STALL_MS] == 0)
		c->knob[ORCU__KNOB_STALL_MS] = -1;
	/* Read here so a bad boolean is reported at configuration time, once. */
	orcu__env_bool("ORCU_NO_MEMBARRIER", 0);
	orcu__env_bool("ORCU_CHECK_CALLS", 0);
	c->futex_hash = orcu__env_bool("ORCU_FUTEX_HASH", 1);
	return 0;
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
