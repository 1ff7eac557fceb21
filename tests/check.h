/*
 * check.h - the tiny assertion vocabulary of orcu's tests.  A failed check
 * prints file:line, the expression and the values, then exits 1 so CTest
 * reports the test as failed.  Bounded waits use check_wait_until().
 */
#ifndef ORCU_TEST_CHECK_H
#define ORCU_TEST_CHECK_H

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The names (comm) of this process's threads that start with prefix, into
 * names[0..max); returns how many there are (possibly more than max). */
static inline int check_thread_names(const char *prefix, char names[][32], int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    strncmp(comm, prefix, strlen(prefix)) == 0) {
			comm[strcspn(comm, "\n")] = '\0';
			if (n < max)
				snprintf(names[n], 32, "%s", comm);
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

static char watchdog_msg[256] __attribute__((unused));

static inline void watchdog_fire(int sig)
{
	(void)sig;
	/* async-signal-safe: write + _exit only */
	if (write(2, watchdog_msg, strlen(watchdog_msg)) < 0) {
		/* nothing more we can do */
	}
	_exit(3);
}

/* Fail the test (exit 3) if it is still running after base_s seconds
 * (scaled by ORCU_TEST_TIMEOUT_MULT).  what names the test. */
static inline void test_watchdog(const char *what, double base_s)
{
	unsigned secs = (unsigned)check_timeout_s(base_s);
	struct sigaction sa;

	snprintf(watchdog_msg, sizeof(watchdog_msg),
		 "%s: WATCHDOG: still running after %us: a grace period, barrier "
		 "or callback is probably hung\n", what, secs);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fire;
	sigaction(SIGALRM, &sa, NULL);
	alarm(secs ? secs : 1);
}

#define TEST_PASS(name) do { printf("PASS %s\n", name); return 0; } while (0)

#endif
