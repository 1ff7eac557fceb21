/*
 * check.h - the tiny assertion vocabulary of orcu's tests.  A failed check
 * prints file:line, the expression and the values, then exits 1 so CTest
 * reports the test as failed.  Bounded waits use check_wait_until().
 */
#ifndef ORCU_TEST_CHECK_H
#define ORCU_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sched.h>

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		exit(1); \
	} } while (0)

#define CHECK_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { \
		fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", \
			__FILE__, __LINE__, #a, #b, _a, _b); \
		exit(1); \
	} } while (0)

#define CHECK_LE(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (!(_a <= _b)) { \
		fprintf(stderr, "%s:%d: CHECK_LE failed: %s <= %s (%lld vs %lld)\n", \
			__FILE__, __LINE__, #a, #b, _a, _b); \
		exit(1); \
	} } while (0)

static inline double check_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Timeouts scale with ORCU_TEST_TIMEOUT_MULT (sanitizer builds set it). */
static inline double check_timeout_s(double base)
{
	const char *m = getenv("ORCU_TEST_TIMEOUT_MULT");
	double mult = m ? atof(m) : 1.0;
	return base * (mult > 0 ? mult : 1.0);
}

/* Poll cond (yielding) until it holds or timeout_s passes; fail on timeout. */
#define CHECK_WAIT_UNTIL(cond, timeout_s) do { \
	double _deadline = check_now_s() + check_timeout_s(timeout_s); \
	while (!(cond)) { \
		if (check_now_s() > _deadline) { \
			fprintf(stderr, "%s:%d: timed out after %.0fs waiting for %s\n", \
				__FILE__, __LINE__, check_timeout_s(timeout_s), #cond); \
			exit(1); \
		} \
		struct timespec _ts = { 0, 1000000 }; \
		nanosleep(&_ts, NULL); \
	} } while (0)

#define TEST_PASS(name) do { printf("PASS %s\n", name); return 0; } while (0)

#endif
