/*
 * cpulist.h - CPU-set bitmaps and the strict parsers of orcu's configuration
 * strings: kernel cpulists, the ORCU_CPUS topology and numeric knobs.
 * Owns no state; every function is thread-safe and prints nothing, so the
 * caller (config.c) turns an error into exactly one line naming the variable.
 */
#ifndef ORCU_CPULIST_H
#define ORCU_CPULIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A CPU set over slots [0, nbits) is a caller-provided array of this many words. */
#define ORCU__BITMAP_WORDS(n) (((size_t)(n) + 63) / 64)

/* Upper bound of ORCU_CPUS possible=; also the kernel's NR_CPUS ceiling. */
#define ORCU__MAX_POSSIBLE 65536

static inline void orcu__bit_set(uint64_t *words, int bit)
{
	words[bit / 64] |= UINT64_C(1) << (bit % 64);
}

static inline void orcu__bit_clear(uint64_t *words, int bit)
{
	words[bit / 64] &= ~(UINT64_C(1) << (bit % 64));
}

static inline int orcu__bit_test(const uint64_t *words, int bit)
{
	return (int)((words[bit / 64] >> (bit % 64)) & 1);
}

/* Counts only bits below nbits, so stray high bits of the last word never leak in. */
static inline int orcu__bitmap_weight(const uint64_t *words, int nbits)
{
	int weight = 0;
	int full = nbits / 64;

	for (int i = 0; i < full; i++)
		weight += __builtin_popcountll(words[i]);
	if (nbits % 64)
		weight += __builtin_popcountll(words[full] &
					       ((UINT64_C(1) << (nbits % 64)) - 1));
	return weight;
}

/*
 * Kernel cpulist syntax: "0-3,8", "all", "none", "" (= none), and ranges
 * with a stride "0-15:2" or the kernel's used/group form "0-15:2/4".  No
 * newline: a sysfs file's is dropped by its reader (config.c).  On success every word of bits is
 * rewritten and 0 returned; on error bits is untouched, -EINVAL returned and
 * err holds a one-line phrase quoting the offending text.  nbits >= 0.
 */
int orcu__cpulist_parse(const char *text, uint64_t *bits, int nbits,
			char *err, size_t errlen);

/* Canonical "0-3,8" ("none" for the empty set); length, or -ENOSPC. */
int orcu__cpulist_format(const uint64_t *bits, int nbits, char *buf, size_t len);

/*
 * Highest CPU number + 1 mentioned in a cpulist (a range counts by its end),
 * 0 for an empty list; -EINVAL for a malformed one or "all", which names no
 * size.  Sizes the possible set from /sys/devices/system/cpu/possible.
 */
int orcu__cpulist_max(const char *text, char *err, size_t errlen);

/*
 * ORCU_CPUS: "possible=N[,online=<cpulist>][,nohz_full=<text>][,isolated=<text>]",
 * keys in any order, each once.
 * A new pair starts only at a ',' followed by an identifier and '=', so
 * "possible=16,online=0-3,8" gives online "0-3,8".  possible is required,
 * 1..ORCU__MAX_POSSIBLE; without online= the parser reports every
 * possible CPU online (the configuration narrows that to the real online
 * CPUs: *online_given says whether the text named online=, see config.c for
 * what a topology without it means; online_given may be NULL).  On success
 * *online_out is a malloc'ed bitmap of ORCU__BITMAP_WORDS(*possible) words
 * the caller frees; on error neither output is written.  nohz_full= and
 * isolated= stand in for the sysfs files of those names: their text is
 * not checked here but where the files' is (config.c), and read with
 * orcu__cpus_spec_value().
 */
int orcu__parse_cpus_spec_given(const char *text, int *possible, uint64_t **online_out,
				bool *online_given, char *err, size_t errlen);

/* The text of key in an ORCU_CPUS value the parser accepted, not
 * NUL-terminated (*len bytes), or NULL if the value does not name it. */
const char *orcu__cpus_spec_value(const char *text, const char *key, size_t *len);

/* A boolean variable: exactly "0" or "1"; anything else (also "") is -EINVAL. */
int orcu__parse_bool(const char *text, int *out, char *err, size_t errlen);

/*
 * The user's whole value for a message: escaped (\n, \", \\, \xNN for other
 * control or non-ASCII bytes) and cut after ORCU__QUOTE_VALUE_MAX bytes
 * with "...", so a long or hostile value cannot push the reason out of
 * the line or break it.  Returns dst.
 */
#define ORCU__QUOTE_VALUE_MAX 48
#define ORCU__QUOTE_VALUE_BUF (ORCU__QUOTE_VALUE_MAX * 4 + 8)
const char *orcu__quote_value(char dst[ORCU__QUOTE_VALUE_BUF], const char *text);

/* A decimal knob in [min, max]: optional '-', digits, nothing else. */
int orcu__parse_long(const char *text, long min, long max, long *out,
		     char *err, size_t errlen);

#endif
