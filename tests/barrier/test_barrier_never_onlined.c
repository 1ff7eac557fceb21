/*
 * test_barrier_never_onlined - DESIGN 5.3, kernel commit d7e29933969e: orcu_barrier() never
 * waits on what cannot run.  Each scenario runs in a child process with its
 * stderr redirected to a file, bounded by the parent (a hang is a failure):
 *  A. never-onlined slots without callbacks are skipped: the barrier
 *     returns promptly and prints nothing;
 *  B. a never-onlined slot with callbacks is reported exactly once (one
 *     line naming the CPU, even across several barriers), its callbacks are
 *     served in place (by the GP thread, or by the barrier if it gets
 *     there first) and invoked, the barrier is exact, the slot grows no
 *     thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>
#include <orcu/debug.h>

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static atomic_int invoked;

static void cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add(&invoked, 1);
}

static void scenario_empty(void)
{
	static struct orcu_head heads[100];

	/* Slots 2..63 are possible and never online; none has callbacks. */
	CHECK_EQ(orcu_thread_bind_cpu(40), 0);   /* bound, but posts nothing */
	orcu_thread_bind_cpu(0);
	for (int i = 0; i < 100; i++)
		orcu_call(&heads[i], cb);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 100);
	orcu_barrier();                           /* nothing pending at all */
	orcu_thread_bind_cpu(-1);
	CHECK_EQ(orcu_slot_pending(40), 0);
}

static void scenario_orphans(void)
{
	static struct orcu_head heads[300];
	struct orcu_stats st;

	CHECK_EQ(orcu_thread_bind_cpu(40), 0);
	for (int i = 0; i < 200; i++)
		orcu_call(&heads[i], cb);
	orcu_thread_bind_cpu(1);
	for (int i = 200; i < 250; i++)
		orcu_call(&heads[i], cb);
	orcu_thread_bind_cpu(-1);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 250);
	CHECK_EQ(orcu_slot_pending(40), 0);
	/* More on the same slot: served again, but reported only once. */
	orcu_thread_bind_cpu(40);
	for (int i = 250; i < 300; i++)
		orcu_call(&heads[i], cb);
	orcu_thread_bind_cpu(-1);
	orcu_barrier();
	CHECK_EQ(atomic_load(&invoked), 300);
	orcu_get_stats(&st);
	CHECK_EQ(st.adopted_callbacks, 250);
	CHECK_EQ(st.slots_online, 2);
	CHECK_LE(orcu_debug_thread_count(), 1 + 1 + 2);
}

/* Run fn in a child with stderr in a file; return that stderr. */
static char *run_child(void (*fn)(void), const char *path)
{
	static char out[8192];
	double deadline;
	int status = 0, fd;
	pid_t pid, w;
	ssize_t n;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(3);
		setenv("ORCU_CPUS", "possible=64,online=0-1", 1);
		unsetenv("ORCU_NOCBS");
		fn();
		CHECK_EQ(orcu_shutdown(), 0);
		_exit(0);
	}
	deadline = check_now_s() + check_timeout_s(30);
	while ((w = waitpid(pid, &status, WNOHANG)) == 0) {
		if (check_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "child hung in orcu_barrier (kernel commit d7e29933969e)\n");
			exit(1);
		}
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(w, pid);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	n = read(fd, out, sizeof(out) - 1);
	close(fd);
	unlink(path);
	out[n > 0 ? n : 0] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "child failed (status 0x%x); its stderr:\n%s", status, out);
		exit(1);
	}
	return out;
}

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

int main(void)
{
	char path[64], *err;
	int lines = 0;

	snprintf(path, sizeof(path), "/tmp/orcu-test-barrier-%d.err", (int)getpid());

	err = run_child(scenario_empty, path);
	CHECK_EQ(count_lines_with(err, "never came online"), 0);

	err = run_child(scenario_orphans, path);
	for (const char *p = err; *p; p++)
		lines += *p == '\n';
	if (count_lines_with(err, "CPU 40 never came online") != 1 || lines != 1)
		fprintf(stderr, "child stderr was:\n%s", err);
	CHECK_EQ(count_lines_with(err, "CPU 40 never came online"), 1);
	CHECK_EQ(lines, 1);
	TEST_PASS("barrier_never_onlined");
}
