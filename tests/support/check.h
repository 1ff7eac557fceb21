/*
 * check.h - the tiny assertion vocabulary of orcu's tests.  A failed check
 * prints file:line, the expression and the values, then exits 1 so CTest
 * reports the test as failed.  Bounded waits use CHECK_WAIT_UNTIL().  The
 * functions are compiled once, in tests/support/check.c (the
 * orcu_test_support library every test links).
 */
#ifndef ORCU_TEST_CHECK_H
#define ORCU_TEST_CHECK_H

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

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
double check_timeout_s(double base);

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

/* In a forked child: on failure, say which check and leave with status n
 * (the parent's check_child_ok() reports it). */
#define CHILD_CHECK(n, cond) do { if (!(cond)) { \
	fprintf(stderr, "child: check %d failed: %s\n", n, #cond); _exit(n); } } while (0)

/* dlopen(path, RTLD_NOW | RTLD_LOCAL) and dlsym(): fail the test with
 * dlerror()'s words if they fail. */
void *check_dlopen(const char *path);
void *check_dlsym(void *dl, const char *name);

/* Flush stdio, fork, and run child() in the child, which then exits with
 * its return value.  Returns the child's pid, in the parent. */
pid_t check_fork_run(int (*child)(void));

/* Wait for the child pid at most base_s (scaled) seconds; on timeout kill
 * it and fail the test naming what.  Returns its wait status. */
int check_wait_child(pid_t pid, const char *what, double base_s);

/* check_wait_child(); true if the child exited with 0, else one line
 * naming what (e.g. "round 2") and how it ended. */
bool check_child_passed(pid_t pid, const char *what, double base_s);

/* check_child_passed(), failing the test (exit 1) if it did not. */
void check_child_ok(pid_t pid, const char *what, double base_s);

/* The names (comm) of this process's threads that start with prefix, into
 * names[0..max); returns how many there are (possibly more than max).
 * Threads that have ended (a zombie thread-group leader) are not counted. */
int check_thread_names(const char *prefix, char names[][32], int max);

/* For a test that defines its own pthread_create() to make library threads
 * fail: the name of the library thread a call would start (NULL for any
 * other thread), and the real pthread_create() to call otherwise. */
const char *check_library_thread(void *(*fn)(void *), void *arg);
int check_real_pthread_create(pthread_t *t, const pthread_attr_t *attr,
			      void *(*fn)(void *), void *arg);

/* Fail the test (exit 3) if it is still running after base_s seconds
 * (scaled by ORCU_TEST_TIMEOUT_MULT).  what names the test. */
void test_watchdog(const char *what, double base_s);

#define TEST_PASS(name) do { printf("PASS %s\n", name); return 0; } while (0)

#endif
