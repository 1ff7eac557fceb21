/*
 * test_cpulist.c - unit test of src/base/cpulist.c: every accepted cpulist form,
 * every rejection class with the text its message must quote, the
 * never-half-applied rule, format round-trips, ORCU_CPUS and numeric knobs.
 */
#include "check.h"
#include "cpulist.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#define NBITS_MAX 4096
#define POISON UINT64_C(0xa5a5a5a5a5a5a5a5)

static uint64_t bits[ORCU__BITMAP_WORDS(NBITS_MAX)];
static char err[256];
static char buf[8192];

/* Parse text over nbits and compare the canonical form; returns the weight. */
static int check_parse(const char *text, int nbits, const char *canonical, int line)
{
	int rc;

	memset(bits, 0xa5, sizeof(bits));
	err[0] = '\0';
	rc = orcu__cpulist_parse(text, bits, nbits, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "line %d: parse(\"%s\", %d) = %d: %s\n", line, text, nbits, rc, err);
		exit(1);
	}
	rc = orcu__cpulist_format(bits, nbits, buf, sizeof(buf));
	if (rc < 0 || strcmp(buf, canonical) != 0 || (size_t)rc != strlen(canonical)) {
		fprintf(stderr, "line %d: parse(\"%s\") formats as \"%s\" (%d), want \"%s\"\n",
			line, text, buf, rc, canonical);
		exit(1);
	}
	/* Words past nbits are the parser's too: they must come back clean, not poisoned. */
	for (int c = nbits; c < (int)ORCU__BITMAP_WORDS(nbits) * 64; c++)
		CHECK(!orcu__bit_test(bits, c));
	return orcu__bitmap_weight(bits, nbits);
}
#define PARSE_OK(text, nbits, canonical) check_parse(text, nbits, canonical, __LINE__)

/* Rejection: -EINVAL, a message containing want, and bits exactly as before. */
static void check_reject(const char *text, int nbits, const char *want, int line)
{
	static uint64_t before[ORCU__BITMAP_WORDS(NBITS_MAX)];
	int rc;

	for (size_t i = 0; i < ORCU__BITMAP_WORDS(NBITS_MAX); i++)
		bits[i] = before[i] = POISON ^ (i * 0x9e3779b97f4a7c15ull);
	err[0] = '\0';
	rc = orcu__cpulist_parse(text, bits, nbits, err, sizeof(err));
	if (rc != -EINVAL || !strstr(err, want) || strchr(err, '\n')) {
		fprintf(stderr, "line %d: parse(\"%s\", %d) = %d, err \"%s\", want -EINVAL and \"%s\"\n",
			line, text, nbits, rc, err, want);
		exit(1);
	}
	CHECK(memcmp(bits, before, sizeof(bits)) == 0);
}
#define REJECT(text, nbits, want) check_reject(text, nbits, want, __LINE__)

static void test_valid_forms(void)
{
	CHECK_EQ(PARSE_OK("0-3,8,10-15", 16, "0-3,8,10-15"), 11);
	CHECK_EQ(PARSE_OK("0", 1, "0"), 1);
	CHECK_EQ(PARSE_OK("", 8, "none"), 0);
	CHECK_EQ(PARSE_OK("none", 8, "none"), 0);
	CHECK_EQ(PARSE_OK("all", 8, "0-7"), 8);
	CHECK_EQ(PARSE_OK("all", 0, "none"), 0);
	CHECK_EQ(PARSE_OK("", 0, "none"), 0);
	CHECK_EQ(PARSE_OK("3-3", 8, "3"), 1);
	CHECK_EQ(PARSE_OK("5,1,3,2", 8, "1-3,5"), 4);      /* order and merging */
	CHECK_EQ(PARSE_OK("0-3,2-5", 8, "0-5"), 6);        /* overlap */
	CHECK_EQ(PARSE_OK("007", 8, "7"), 1);              /* leading zeros, as the kernel */
	CHECK_EQ(PARSE_OK("0-15:2", 16, "0,2,4,6,8,10,12,14"), 8);
	CHECK_EQ(PARSE_OK("1-9:4", 16, "1,5,9"), 3);
	CHECK_EQ(PARSE_OK("0-15:1", 16, "0-15"), 16);
	CHECK_EQ(PARSE_OK("0-15:2/4", 16, "0-1,4-5,8-9,12-13"), 8); /* kernel used/group */
	CHECK_EQ(PARSE_OK("0-14:3/4", 16, "0-2,4-6,8-10,12-14"), 12);
	CHECK_EQ(PARSE_OK("0-10:100", 16, "0"), 1);
	CHECK_EQ(PARSE_OK("63,64,127,128", 129, "63-64,127-128"), 4); /* word boundaries */
	CHECK_EQ(PARSE_OK("0-4095", 4096, "0-4095"), 4096);
	CHECK_EQ(PARSE_OK("4095", 4096, "4095"), 1);
}

static void test_rejections(void)
{
	REJECT("3-1", 8, "reversed range at \"3-1\"");
	REJECT("0,7-2", 8, "reversed range at \"7-2\"");
	REJECT("1,,2", 8, "bad CPU number at \",2\"");
	REJECT(",1", 8, "bad CPU number at \",1\"");
	REJECT("1,", 8, "bad CPU number after \"1,\"");
	REJECT("-1", 8, "bad CPU number at \"-1\"");
	REJECT("1-", 8, "bad CPU number after \"1-\"");
	REJECT("1--2", 8, "bad CPU number at \"-2\"");
	REJECT("a", 8, "bad CPU number at \"a\"");
	REJECT("x3", 8, "bad CPU number at \"x3\"");
	REJECT("1-x3", 8, "bad CPU number at \"x3\"");
	REJECT("0x1", 8, "unexpected text at \"x1\"");
	REJECT("+1", 8, "bad CPU number at \"+1\"");
	REJECT("1-+2", 8, "bad CPU number at \"+2\"");
	REJECT("2147483648", 8, "CPU number too large at \"2147483648\"");
	REJECT("0-99999999999999999999", 8, "too large at \"99999999999999999999\"");
	REJECT("9", 8, "CPU 9 is beyond the 8 possible");
	REJECT("0-8", 8, "CPU 8 is beyond the 8 possible");
	REJECT("0-15:4", 8, "CPU 15 is beyond the 8 possible");
	REJECT("0", 0, "CPU 0 is beyond the 0 possible");
	REJECT("2147483647", 8, "CPU 2147483647 is beyond");
	REJECT("1,2x", 8, "unexpected text at \"x\"");
	REJECT("1 ", 8, "unexpected text at \" \"");
	REJECT(" 1", 8, "bad CPU number at \" 1\"");
	REJECT("1, 2", 8, "bad CPU number at \" 2\"");
	/* A setting ends where its text ends: a sysfs file's newline is its
	 * reader's to drop (config.c), never a cpulist's. */
	REJECT("0-3\n", 8, "unexpected text at \"\\n\"");
	REJECT("\n", 8, "bad CPU number at \"\\n\"");
	REJECT("all\n", 8, "bad CPU number at \"all\\n\"");
	REJECT("1\n\n", 8, "unexpected text at \"\\n\\n\"");
	REJECT("1\n2", 8, "unexpected text at \"\\n2\"");
	REJECT("\t", 8, "bad CPU number at \"\\x09\"");
	REJECT("all,1", 8, "bad CPU number at \"all,1\"");
	REJECT("ALL", 8, "bad CPU number at \"ALL\"");
	REJECT("none\n\n", 8, "bad CPU number");
	REJECT("0-7:0", 8, "bad stride at \":0\"");
	REJECT("0-7:", 8, "bad CPU number after \"0-7:\"");
	REJECT("0-7:3/2", 8, "bad stride at \":3/2\"");
	REJECT("0-7:0/2", 8, "bad stride at \":0/2\"");
	REJECT("0-7:1/0", 8, "bad stride at \":1/0\"");
	REJECT("0-7:2/", 8, "bad CPU number after \"0-7:2/\"");
	REJECT("3:2", 8, "stride without a range at \"3:2\"");
	REJECT("0-7:2:2", 8, "unexpected text at \":2\"");
	/* Long and hostile text is cut and escaped so the message stays one short line. */
	REJECT("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,x", 64, "bad CPU number at \"x\"");
	REJECT("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", 8, "at \"zzzzzzzzzzzzzzzzzzzzzzzz...\"");
	REJECT("0,1,2,3,4,5,6,7,8,9,10,11,", 64, "after \"...1,2,3,4,5,6,7,8,9,10,11,\"");
	REJECT("\"\\\x7f", 8, "at \"\\\"\\\\\\x7f\"");
}

static void test_error_buffer(void)
{
	char small[8];
	int rc;

	/* A short buffer truncates; it never overflows and stays terminated. */
	memset(small, 'Z', sizeof(small));
	rc = orcu__cpulist_parse("3-1", bits, 8, small, sizeof(small));
	CHECK_EQ(rc, -EINVAL);
	CHECK_EQ(strlen(small), sizeof(small) - 1);
	/* No buffer at all is allowed: the caller just wants the verdict. */
	CHECK_EQ(orcu__cpulist_parse("3-1", bits, 8, NULL, 0), -EINVAL);
	CHECK_EQ(orcu__cpulist_parse("0-3", bits, 8, NULL, 0), 0);
	CHECK_EQ(orcu__cpulist_parse("0", bits, -1, err, sizeof(err)), -EINVAL);
	CHECK(err[0] != '\0');
}

static void test_format(void)
{
	uint64_t set[ORCU__BITMAP_WORDS(200)] = { 0 };
	char tiny[6];

	CHECK_EQ(orcu__cpulist_format(set, 200, buf, sizeof(buf)), 4);
	CHECK(strcmp(buf, "none") == 0);
	orcu__bit_set(set, 0);
	orcu__bit_set(set, 1);
	orcu__bit_set(set, 2);
	orcu__bit_set(set, 64);
	orcu__bit_set(set, 199);
	CHECK_EQ(orcu__bitmap_weight(set, 200), 5);
	CHECK_EQ(orcu__cpulist_format(set, 200, buf, sizeof(buf)), 10);
	CHECK(strcmp(buf, "0-2,64,199") == 0);
	orcu__bit_clear(set, 1);
	CHECK(!orcu__bit_test(set, 1));
	CHECK_EQ(orcu__cpulist_format(set, 200, buf, sizeof(buf)), 10);
	CHECK(strcmp(buf, "0,2,64,199") == 0);
	/* Bits at or past nbits are not part of the set. */
	CHECK_EQ(orcu__cpulist_format(set, 64, buf, sizeof(buf)), 3);
	CHECK(strcmp(buf, "0,2") == 0);
	CHECK_EQ(orcu__bitmap_weight(set, 64), 2);
	/* "0,2,64,199" needs 11 bytes: 10 and 6 are too small, exactly 11 fits. */
	CHECK_EQ(orcu__cpulist_format(set, 200, buf, 10), -ENOSPC);
	CHECK_EQ(buf[0], '\0');
	CHECK_EQ(orcu__cpulist_format(set, 200, tiny, sizeof(tiny)), -ENOSPC);
	CHECK_EQ(orcu__cpulist_format(set, 200, buf, 11), 10);
	memset(set, 0, sizeof(set));
	CHECK_EQ(orcu__cpulist_format(set, 200, tiny, 4), -ENOSPC);
	CHECK_EQ(orcu__cpulist_format(set, 200, tiny, 5), 4);

	/* Round trip over pseudo-random sets: format, parse back, same bits. */
	uint64_t x = 0x243f6a8885a308d3ull;
	for (int iter = 0; iter < 2000; iter++) {
		static uint64_t a[ORCU__BITMAP_WORDS(NBITS_MAX)], b[ORCU__BITMAP_WORDS(NBITS_MAX)];
		int nbits = 1 + (int)(x % 300);

		memset(a, 0, sizeof(a));
		for (int c = 0; c < nbits; c++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Runs and isolated bits both: keep a bit with 1/2, 3/4 or 1/8 odds. */
			if ((x & 7) < (uint64_t)(iter % 3 == 0 ? 4 : iter % 3 == 1 ? 6 : 1))
				orcu__bit_set(a, c);
		}
		CHECK(orcu__cpulist_format(a, nbits, buf, sizeof(buf)) > 0);
		CHECK_EQ(orcu__cpulist_parse(buf, b, nbits, err, sizeof(err)), 0);
		CHECK(memcmp(a, b, ORCU__BITMAP_WORDS(nbits) * sizeof(uint64_t)) == 0);
	}
}

static void test_max(void)
{
	CHECK_EQ(orcu__cpulist_max("0-4095", err, sizeof(err)), 4096);
	CHECK_EQ(orcu__cpulist_max("0-4095\n", err, sizeof(err)), -EINVAL);
	CHECK_EQ(orcu__cpulist_max("0-3", err, sizeof(err)), 4);
	CHECK_EQ(orcu__cpulist_max("7,0-3", err, sizeof(err)), 8);
	CHECK_EQ(orcu__cpulist_max("0-15:4", err, sizeof(err)), 16); /* the range end counts */
	CHECK_EQ(orcu__cpulist_max("", err, sizeof(err)), 0);
	CHECK_EQ(orcu__cpulist_max("none", err, sizeof(err)), 0);
	CHECK_EQ(orcu__cpulist_max("2147483646", err, sizeof(err)), INT_MAX);
	CHECK_EQ(orcu__cpulist_max("2147483647", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "too large at \"2147483647\""));
	CHECK_EQ(orcu__cpulist_max("all", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "\"all\""));
	CHECK_EQ(orcu__cpulist_max("0-3,", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "bad CPU number after \"0-3,\""));
	CHECK_EQ(orcu__cpulist_max("4-2", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "reversed range at \"4-2\""));
}

/* ORCU_CPUS accepted: returns the online weight after checking possible and the canonical online. */
static void check_spec(const char *text, int want_possible, const char *want_online, int line)
{
	int possible = -1;
	uint64_t *online = NULL;
	int rc = orcu__parse_cpus_spec_given(text, &possible, &online, NULL, err,
					     sizeof(err));

	if (rc != 0 || possible != want_possible || !online) {
		fprintf(stderr, "line %d: spec \"%s\" = %d, possible %d: %s\n",
			line, text, rc, possible, rc ? err : "");
		exit(1);
	}
	CHECK(orcu__cpulist_format(online, possible, buf, sizeof(buf)) > 0);
	if (strcmp(buf, want_online) != 0) {
		fprintf(stderr, "line %d: spec \"%s\": online \"%s\", want \"%s\"\n",
			line, text, buf, want_online);
		exit(1);
	}
	free(online);
}
#define SPEC_OK(text, p, online) check_spec(text, p, online, __LINE__)

static void check_spec_reject(const char *text, const char *want, int line)
{
	int possible = -1;
	uint64_t *online = (uint64_t *)&possible; /* any sentinel: it must not be replaced */
	int rc = orcu__parse_cpus_spec_given(text, &possible, &online, NULL, err,
					     sizeof(err));

	if (rc != -EINVAL || !strstr(err, want) || possible != -1 ||
	    online != (uint64_t *)&possible) {
		fprintf(stderr, "line %d: spec \"%s\" = %d, err \"%s\", want -EINVAL and \"%s\"\n",
			line, text, rc, err, want);
		exit(1);
	}
}
#define SPEC_REJECT(text, want) check_spec_reject(text, want, __LINE__)

static void test_cpus_spec(void)
{
	SPEC_OK("possible=4096,online=0-3", 4096, "0-3");
	SPEC_OK("online=0-3,8,possible=16", 16, "0-3,8");
	SPEC_OK("possible=16,online=0-3,8", 16, "0-3,8");
	SPEC_OK("possible=16,online=0-15:4,1", 16, "0-1,4,8,12");
	SPEC_OK("possible=8", 8, "0-7");                  /* online defaults to all */
	SPEC_OK("possible=1", 1, "0");
	SPEC_OK("possible=65536,online=65535", 65536, "65535");
	SPEC_OK("online=all,possible=3", 3, "0-2");
	SPEC_OK("possible=0003", 3, "0-2");

	SPEC_REJECT("", "missing possible=N");
	SPEC_REJECT("online=0-3", "missing possible=N");
	SPEC_REJECT("possible=4,cpus=2", "unknown key \"cpus\"");
	SPEC_REJECT("possibel=4", "unknown key \"possibel\"");
	SPEC_REJECT("possible=4,possible=8", "duplicate key \"possible\"");
	SPEC_REJECT("online=0,possible=4,online=1", "duplicate key \"online\"");
	SPEC_REJECT("possible=0", "possible: out of range 1..65536: \"0\"");
	SPEC_REJECT("possible=65537", "out of range 1..65536: \"65537\"");
	SPEC_REJECT("possible=-4", "out of range 1..65536: \"-4\"");
	SPEC_REJECT("possible=", "possible: not a number: \"\"");
	SPEC_REJECT("possible=4x", "not a number: \"4x\"");
	SPEC_REJECT("possible=4,", "not a number: \"4,\"");
	SPEC_REJECT("possible=4,online=0-4", "online: CPU 4 is beyond the 4 possible");
	/* No CPU online is no topology (slot 0 would be made online behind
	 * the text's back). */
	SPEC_REJECT("online=none,possible=3", "online: names no CPU: \"none\"");
	SPEC_REJECT("possible=3,online=", "online: names no CPU: \"\"");
	SPEC_REJECT("online=0-3,,possible=16", "online: bad CPU number after \"0-3,\"");
	SPEC_REJECT("online=0-3,,8,possible=16", "online: bad CPU number at \",8\"");
	SPEC_REJECT("possible=16,online=0-3,", "online: bad CPU number after \"0-3,\"");
	SPEC_REJECT("possible=16,online=3-1", "online: reversed range at \"3-1\"");
	SPEC_REJECT("possible", "expected key=value at \"possible\"");
	SPEC_REJECT("=4", "expected key=value at \"=4\"");
	SPEC_REJECT(",possible=4", "expected key=value at \",possible=4\"");
	SPEC_REJECT("possible=4 ", "unexpected character at \" \"");
	SPEC_REJECT("possible=4,online=0-3\n", "unexpected character at \"\\n\"");
	SPEC_REJECT("possible=4, online=1", "unexpected character at \" online=1\"");

	int possible = 0;
	uint64_t *online = NULL;
	CHECK_EQ(orcu__parse_cpus_spec_given(NULL, &possible, &online, NULL, err,
					     sizeof(err)), -EINVAL);
	CHECK(err[0] != '\0');
}

static void test_parse_long(void)
{
	long v = 12345;

	CHECK_EQ(orcu__parse_long("1", 1, 4096, &v, err, sizeof(err)), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(orcu__parse_long("4096", 1, 4096, &v, err, sizeof(err)), 0);
	CHECK_EQ(v, 4096);
	CHECK_EQ(orcu__parse_long("-1", -1, 100, &v, err, sizeof(err)), 0); /* ORCU_STALL_MS=-1 */
	CHECK_EQ(v, -1);
	CHECK_EQ(orcu__parse_long("010", 0, 100, &v, err, sizeof(err)), 0); /* decimal, not octal */
	CHECK_EQ(v, 10);
	/* The ends of long, whatever its width (32 bits on armhf and i686). */
	char ends[2][24];
	snprintf(ends[0], sizeof(ends[0]), "%ld", LONG_MAX);
	snprintf(ends[1], sizeof(ends[1]), "%ld", LONG_MIN);
	CHECK_EQ(orcu__parse_long(ends[0], LONG_MIN, LONG_MAX, &v, err, sizeof(err)), 0);
	CHECK_EQ(v, LONG_MAX);
	CHECK_EQ(orcu__parse_long(ends[1], LONG_MIN, LONG_MAX, &v, err, sizeof(err)), 0);
	CHECK(v == LONG_MIN);

	static const struct { const char *text; const char *want; } bad[] = {
		{ "12x", "not a number: \"12x\"" },
		{ "0", "out of range 1..4096: \"0\"" },
		{ "4097", "out of range 1..4096: \"4097\"" },
		{ "-5", "out of range 1..4096: \"-5\"" },
		{ "", "not a number: \"\"" },
		{ "-", "not a number: \"-\"" },
		{ "+5", "not a number: \"+5\"" },
		{ " 5", "not a number: \" 5\"" },
		{ "5 ", "not a number: \"5 \"" },
		{ "5\n", "not a number: \"5\\n\"" },
		{ "0x10", "not a number: \"0x10\"" },
		{ "1e3", "not a number: \"1e3\"" },
		{ "--5", "not a number: \"--5\"" },
		{ "9223372036854775808", "out of range" },
		{ "99999999999999999999999", "out of range" },
		{ "-9223372036854775809", "out of range" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		err[0] = '\0';
		if (orcu__parse_long(bad[i].text, 1, 4096, &v, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].want) || v != 12345) {
			fprintf(stderr, "parse_long(\"%s\"): err \"%s\", v %ld, want \"%s\"\n",
				bad[i].text, err, v, bad[i].want);
			exit(1);
		}
	}
	CHECK_EQ(orcu__parse_long("99999999999999999999999", LONG_MIN, LONG_MAX, &v, err,
				  sizeof(err)), -EINVAL);
}

/* Whether online= was named: without it the configuration picks the real online set. */
static void test_cpus_spec_given(void)
{
	int possible;
	uint64_t *online;
	bool given = true;

	CHECK_EQ(orcu__parse_cpus_spec_given("possible=8", &possible, &online, &given,
					     err, sizeof(err)), 0);
	CHECK(!given);
	free(online);
	CHECK_EQ(orcu__parse_cpus_spec_given("online=1,possible=8", &possible, &online,
					     &given, err, sizeof(err)), 0);
	CHECK(given);
	free(online);
}

static void test_parse_bool(void)
{
	static const char *const bad[] = { "", "yes", "true", "on", "2", "01", " 1", "1\n", "-1" };
	int v = 7;

	CHECK_EQ(orcu__parse_bool("0", &v, err, sizeof(err)), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(orcu__parse_bool("1", &v, err, sizeof(err)), 0);
	CHECK_EQ(v, 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		CHECK_EQ(orcu__parse_bool(bad[i], &v, err, sizeof(err)), -EINVAL);
		CHECK_EQ(v, 7);
		CHECK(strstr(err, "expected 0 or 1"));
	}
}

/* A whole value for a message: escaped, and cut with "..." past the limit. */
static void test_quote_value(void)
{
	char q[ORCU__QUOTE_VALUE_BUF], long_text[200];

	CHECK(strcmp(orcu__quote_value(q, "0-3"), "0-3") == 0);
	CHECK(strcmp(orcu__quote_value(q, "a\"b\\c\nd\x01\xff"),
		     "a\\\"b\\\\c\\nd\\x01\\xff") == 0);
	memset(long_text, '\x01', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	orcu__quote_value(q, long_text);
	CHECK_EQ(strlen(q), ORCU__QUOTE_VALUE_MAX * 4 + 3);
	CHECK(strcmp(q + strlen(q) - 3, "...") == 0);
}

int main(void)
{
	test_cpus_spec_given();
	test_parse_bool();
	test_quote_value();
	test_valid_forms();
	test_rejections();
	test_error_buffer();
	test_format();
	test_max();
	test_cpus_spec();
	test_parse_long();
	TEST_PASS("test_cpulist");
}
