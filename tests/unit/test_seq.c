/*
 * test_seq.c - grace-period sequence arithmetic (src/base/seq.h): snapshots from
 * an idle and from a running GP, done/ge/lt, all across the wrap of the
 * counter at ULONG_MAX, and the half-range limit of wrap-safe comparison.
 */
#include <limits.h>
#include <stdbool.h>

#include "check.h"
#include "seq.h"

/* Drive a counter from s through whole GPs and report when one GP that
 * started after s has ended: the value orcu__seq_snap(s) must name. */
static unsigned long first_full_gp_end(unsigned long s)
{
	unsigned long c = s;

	if (orcu__seq_in_progress(c))
		c = orcu__seq_end(c);   /* the running GP started before s */
	c = orcu__seq_start(c);         /* this one starts after s ... */
	return orcu__seq_end(c);        /* ... and ends here */
}

static void test_basic(void)
{
	CHECK(!orcu__seq_in_progress(4));
	CHECK(orcu__seq_in_progress(5));
	CHECK_EQ(orcu__seq_start(4), 5);
	CHECK_EQ(orcu__seq_end(5), 6);
	CHECK_EQ(orcu__seq_end(4), 6);  /* ending from idle: next even value */

	/* Idle at 4: the next GP runs 4 -> 5 -> 6. */
	CHECK_EQ(orcu__seq_snap(4), 6);
	/* In progress at 5: that GP may have started before us; it ends at 6,
	 * the next full one at 8. */
	CHECK_EQ(orcu__seq_snap(5), 8);

	CHECK(!orcu__seq_done(5, 6));
	CHECK(orcu__seq_done(6, 6));
	CHECK(orcu__seq_done(7, 6));
	CHECK(orcu__seq_ge(6, 6) && orcu__seq_ge(7, 6) && !orcu__seq_ge(5, 6));
	CHECK(orcu__seq_lt(5, 6) && !orcu__seq_lt(6, 6) && !orcu__seq_lt(7, 6));
}

static void test_wrap(void)
{
	/* Idle just below the wrap: ULONG_MAX-1 -> ULONG_MAX -> 0. */
	CHECK_EQ(orcu__seq_snap(ULONG_MAX - 1), 0);
	CHECK(!orcu__seq_done(ULONG_MAX - 1, 0));
	CHECK(!orcu__seq_done(ULONG_MAX, 0));
	CHECK(orcu__seq_done(0, 0));
	CHECK(orcu__seq_done(1, 0));

	/* In progress at ULONG_MAX: it ends at 0, the next full GP at 2. */
	CHECK_EQ(orcu__seq_snap(ULONG_MAX), 2);
	CHECK_EQ(orcu__seq_end(ULONG_MAX), 0);
	CHECK_EQ(orcu__seq_start(ULONG_MAX - 1), ULONG_MAX);
	CHECK(!orcu__seq_done(0, 2));
	CHECK(!orcu__seq_done(1, 2));
	CHECK(orcu__seq_done(2, 2));

	/* Ordering across the wrap; a raw < would get every one wrong. */
	CHECK(orcu__seq_lt(ULONG_MAX, 0));
	CHECK(orcu__seq_lt(ULONG_MAX - 5, 3));
	CHECK(orcu__seq_ge(3, ULONG_MAX - 5));
	CHECK(!orcu__seq_ge(ULONG_MAX - 5, 3));
	CHECK(orcu__seq_done(4, ULONG_MAX - 1));
	CHECK(!orcu__seq_done(ULONG_MAX - 3, 2));
}

/* Every start value in windows around 0 and around the wrap. */
static void test_sweep(void)
{
	static const unsigned long bases[] = { 0, ULONG_MAX - 40, LONG_MAX - 40UL };

	for (unsigned b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		for (unsigned long i = 0; i < 80; i++) {
			unsigned long s = bases[b] + i;
			unsigned long snap = orcu__seq_snap(s);

			CHECK(!orcu__seq_in_progress(snap));
			CHECK_EQ(snap, first_full_gp_end(s));
			CHECK_EQ(snap - s, orcu__seq_in_progress(s) ? 3 : 2);
			/* Not done at any value from s up to snap, done from there. */
			for (unsigned long c = s; c != snap; c++)
				CHECK(!orcu__seq_done(c, snap));
			for (unsigned long k = 0; k < 10; k++)
				CHECK(orcu__seq_done(snap + k, snap));
			/* Snapshots never go backwards as the counter moves on. */
			CHECK(orcu__seq_ge(orcu__seq_snap(s + 1), snap));
		}
	}
}

/* The documented limit: comparisons hold while values are less than half
 * the counter range apart. */
static void test_half_range(void)
{
	unsigned long t = ULONG_MAX - 10;

	CHECK(orcu__seq_done(t + (unsigned long)LONG_MAX, t));
	CHECK(!orcu__seq_done(t + (unsigned long)LONG_MAX + 1, t));
	CHECK(orcu__seq_lt(t - (unsigned long)LONG_MAX, t));
}

int main(void)
{
	test_basic();
	test_wrap();
	test_sweep();
	test_half_range();
	TEST_PASS("seq");
}
