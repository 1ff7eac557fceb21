/*
 * fuzz_config.c - libFuzzer harness for src/base/cpulist.c.  Feeds arbitrary
 * text to all four configuration parsers and aborts on a broken invariant:
 * errors leave outputs untouched and say something on one line; accepted
 * sets survive format -> parse; parse and max agree; an accepted ORCU_CPUS
 * has a CPU online.  See fuzz/README.md.
 */
#include "cpulist.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_BITS 4096
#define CANARY_WORDS 2
#define POISON UINT64_C(0xa5a5a5a5a5a5a5a5)

#define ASSERT(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} } while (0)

/* An error message must be non-empty, terminated inside the buffer and one line. */
static void check_err(const char *err, size_t errlen)
{
	size_t n = strnlen(err, errlen);

	ASSERT(n > 0 && n < errlen);
	ASSERT(!strchr(err, '\n'));
}

/* Interesting sizes: 0, word edges, the kernel's usual NR_CPUS values. */
static int pick_nbits(uint8_t b)
{
	static const int sizes[] = { 0, 1, 2, 8, 63, 64, 65, 127, 128, 129, 1024, 4096 };

	if (b < 200)
		return b;
	return sizes[(b - 200) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void fuzz_cpulist(const char *text, int nbits, size_t errlen)
{
	static uint64_t bits[ORCU__BITMAP_WORDS(FUZZ_MAX_BITS) + CANARY_WORDS];
	static uint64_t again[ORCU__BITMAP_WORDS(FUZZ_MAX_BITS) + CANARY_WORDS];
	static char fmt[FUZZ_MAX_BITS * 8];
	size_t words = ORCU__BITMAP_WORDS(nbits);
	/* Exactly errlen bytes on the heap so ASan sees any write past the caller's buffer. */
	char *err = malloc(errlen);
	char big[256];
	int rc, max;

	ASSERT(err);
	for (size_t i = 0; i < words + CANARY_WORDS; i++)
		bits[i] = POISON;
	memset(err, 0, errlen);
	rc = orcu__cpulist_parse(text, bits, nbits, err, errlen);
	for (size_t i = words; i < words + CANARY_WORDS; i++)
		ASSERT(bits[i] == POISON);
	if (rc) {
		ASSERT(rc == -EINVAL);
		for (size_t i = 0; i < words; i++)
			ASSERT(bits[i] == POISON);
		if (errlen > 1)
			check_err(err, errlen);
	} else {
		for (int c = nbits; c < (int)words * 64; c++)
			ASSERT(!orcu__bit_test(bits, c));
		int len = orcu__cpulist_format(bits, nbits, fmt, sizeof(fmt));
		ASSERT(len > 0 && (size_t)len == strlen(fmt));
		ASSERT(orcu__cpulist_parse(fmt, again, nbits, big, sizeof(big)) == 0);
		ASSERT(memcmp(bits, again, words * sizeof(uint64_t)) == 0);
		/* One byte short of the need must be refused, not truncated. */
		ASSERT(orcu__cpulist_format(bits, nbits, fmt, (size_t)len) == -ENOSPC);
	}
	free(err);

	/* max and parse are one grammar: a text max sizes must parse at that size. */
	max = orcu__cpulist_max(text, big, sizeof(big));
	if (max < 0) {
		ASSERT(max == -EINVAL);
		check_err(big, sizeof(big));
		/* Only "all", which names no count, may parse where max fails. */
		if (rc == 0)
			ASSERT(!strcmp(text, "all"));
	} else {
		if (rc == 0)
			ASSERT(max <= nbits);
		if (max <= FUZZ_MAX_BITS) {
			ASSERT(orcu__cpulist_parse(text, again, max, big, sizeof(big)) == 0);
			if (max > 0)
				ASSERT(orcu__cpulist_parse(text, again, max - 1, big, sizeof(big)) ==
				       -EINVAL);
		}
	}
}

static void fuzz_spec(const char *text, size_t errlen)
{
	int possible = -7;
	uint64_t sentinel[1];
	uint64_t *online = sentinel;
	char *err = malloc(errlen);
	int rc;

	ASSERT(err);
	memset(err, 0, errlen);
	rc = orcu__parse_cpus_spec_given(text, &possible, &online, NULL, err, errlen);
	if (rc) {
		ASSERT(rc == -EINVAL);
		ASSERT(possible == -7 && online == sentinel);
		if (errlen > 1)
			check_err(err, errlen);
	} else {
		static char spec[FUZZ_MAX_BITS * 8 + 64];
		static char fmt[sizeof(spec)];
		int possible2 = 0;
		uint64_t *online2 = NULL;
		char big[256];
		size_t words;

		ASSERT(possible >= 1 && possible <= ORCU__MAX_POSSIBLE && online != sentinel);
		/* A topology has a CPU online: none is reported, never made up. */
		ASSERT(orcu__bitmap_weight(online, possible) > 0);
		words = ORCU__BITMAP_WORDS(possible);
		for (int c = possible; c < (int)words * 64; c++)
			ASSERT(!orcu__bit_test(online, c));
		/* nohz_full= and isolated= are handed on as text inside the value. */
		for (int k = 0; k < 2; k++) {
			size_t n = 0;
			const char *v = orcu__cpus_spec_value(text, k ? "isolated" : "nohz_full", &n);

			ASSERT(!v || (v > text && v + n <= text + strlen(text)));
		}
		/* Rebuild the spec in canonical form, keys swapped, and expect the same topology. */
		if (orcu__cpulist_format(online, possible, fmt, sizeof(fmt)) > 0) {
			snprintf(spec, sizeof(spec), "online=%s,possible=%d", fmt, possible);
			ASSERT(orcu__parse_cpus_spec_given(spec, &possible2, &online2, NULL,
							   big, sizeof(big)) == 0);
			ASSERT(possible2 == possible);
			ASSERT(memcmp(online, online2, words * sizeof(uint64_t)) == 0);
			free(online2);
		}
		free(online);
	}
	free(err);
}

static void fuzz_long(const char *text, long min, long max, size_t errlen)
{
	long v = 0x5a5a5a5a;
	char *err = malloc(errlen);
	int rc;

	ASSERT(err);
	memset(err, 0, errlen);
	rc = orcu__parse_long(text, min, max, &v, err, errlen);
	if (rc) {
		ASSERT(rc == -EINVAL && v == 0x5a5a5a5a);
		if (errlen > 1)
			check_err(err, errlen);
	} else {
		char back[32];
		long v2 = 0;

		ASSERT(v >= min && v <= max);
		snprintf(back, sizeof(back), "%ld", v);
		ASSERT(orcu__parse_long(back, min, max, &v2, NULL, 0) == 0 && v2 == v);
	}
	free(err);
}

/* libFuzzer's entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long bounds[][2] = {
		{ 1, 4096 }, { -1, LONG_MAX }, { LONG_MIN, LONG_MAX }, { 0, 0 }, { 5, 1 },
	};
	char *text;
	size_t errlen;
	int nbits;

	if (size < 2)
		return 0;
	nbits = pick_nbits(data[0]);
	/* Mostly a roomy buffer, sometimes a cramped one to test truncation. */
	errlen = data[1] < 16 ? (size_t)data[1] + 1 : 200;
	text = malloc(size - 1);
	if (!text)
		return 0;
	memcpy(text, data + 2, size - 2);
	text[size - 2] = '\0';

	fuzz_cpulist(text, nbits, errlen);
	fuzz_spec(text, errlen);
	fuzz_long(text, bounds[data[0] % 5][0], bounds[data[0] % 5][1], errlen);
	free(text);
	return 0;
}
