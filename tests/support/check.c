/*
 * check.c - the functions behind check.h, compiled once into the
 * orcu_test_support library.
 */
#include "check.h"

#include <sys/wait.h>

/* Timeouts scale with ORCU_TEST_TIMEOUT_MULT (sanitizer builds set it). */
double check_timeout_s(double base)
{
	const char *m = getenv("ORCU_TEST_TIMEOUT_MULT");
	double mult = m ? atof(m) : 1.0;
	return base * (mult > 0 ? mult : 1.0);
}

/* A thread that has ended but is still listed (a zombie thread-group
 * leader stays in /proc/self/task until the process exits). */
static int task_ended(const char *tid)
{
	char path[300], buf[512];
	const char *state;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	state = strrchr(buf, ')');      /* "tid (comm) S ..." */
	return state && state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X');
}

/* The names (comm) of this process's threads that start with prefix, into
 * names[0..max); returns how many there are (possibly more than max).
 * Threads that have ended are not counted. */
int check_thread_names(const char *prefix, char names[][32], int max)
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
		    strncmp(comm, prefix, strlen(prefix)) == 0 && !task_ended(e->d_name)) {
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

void check_child_ok(pid_t pid, const char *what, double base_s)
{
	int st = check_wait_child(pid, what, base_s);

	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s: child failed: %s %d\n", what,
			WIFEXITED(st) ? "exit status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		exit(1);
	}
}
