/*
 * check.c - the functions behind check.h, compiled once into the
 * orcu_test_support library.
 */
#include "check.h"
#include "os.h"
#include "delay.h"

#include <dlfcn.h>
#include <sys/wait.h>

/* Timeouts scale with ORCU_TEST_TIMEOUT_MULT (sanitizer builds set it). */
double check_timeout_s(double base)
{
	const char *m = getenv("ORCU_TEST_TIMEOUT_MULT");
	double mult = m ? atof(m) : 1.0;
	return base * (mult > 0 ? mult : 1.0);
}

/* The names (comm) of this process's threads that start with prefix, into
 * names[0..max); returns how many there are (possibly more than max).
 * Threads that have ended are not counted. */
int check_thread_names(const char *prefix, char names[][32], int max)
{
	const char *const prefixes[] = { prefix, NULL };
	int n = orcu__thread_names(prefixes, names, max);

	CHECK(n >= 0);
	return n;
}

const char *check_library_thread(void *(*fn)(void *), void *arg)
{
	return fn == orcu__spawn_trampoline ? ((struct orcu__spawn_arg *)arg)->name : NULL;
}

int check_real_pthread_create(pthread_t *t, const pthread_attr_t *attr,
			      void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			dlsym(RTLD_NEXT, "pthread_create");
	return real(t, attr, fn, arg);
}

static char watchdog_msg[256];

static void watchdog_fire(int sig)
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
void test_watchdog(const char *what, double base_s)
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

pid_t check_fork_run(int (*child)(void))
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child());
	return pid;
}

int check_wait_child(pid_t pid, const char *what, double base_s)
{
	double deadline = check_now_s() + check_timeout_s(base_s);
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		struct timespec ts = { 0, 2000000 };

		CHECK(w >= 0);
		if (w == pid)
			return st;
		if (check_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fprintf(stderr, "deadlock in %s: still running after %.0fs\n",
				what, check_timeout_s(base_s));
			exit(1);
		}
		nanosleep(&ts, NULL);
	}
}

bool check_child_passed(pid_t pid, const char *what, double base_s)
{
	int st = check_wait_child(pid, what, base_s);

	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return true;
	fprintf(stderr, "%s: child failed: %s %d\n", what,
		WIFEXITED(st) ? "exit status" : "signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return false;
}

void check_child_ok(pid_t pid, const char *what, double base_s)
{
	if (!check_child_passed(pid, what, base_s))
		exit(1);
}

void *check_dlopen(const char *path)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!dl)
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
	CHECK(dl != NULL);
	return dl;
}

void *check_dlsym(void *dl, const char *name)
{
	void *p = dlsym(dl, name);

	if (!p)
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
	CHECK(p != NULL);
	return p;
}
