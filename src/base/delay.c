/*
 * delay.c - debug delay hooks that widen race windows (GP start and end,
 * the leader's sleep path, the barrier, the enqueue path, a post to the
 * shared queue counted but not yet pushed, a reader-less GP between its
 * lock-free count and its swap, a memb reader unparking before its
 * fence) and the other validation hooks of
 * <orcu/debug.h>.
 * Switched on by orcu-torture, or by a test that installs its own hook to
 * hold a thread at one point; when off, each hook costs one relaxed load.  Touches only its own state;
 * calls os.c for the clock.
 */
#include "os.h"
#include "delay.h"
#include "orcu/debug.h"

#include <dirent.h>
#include <string.h>

_Atomic int orcu__delay_enabled;
static _Atomic unsigned int delay_max_us;
static void (*_Atomic delay_hook)(enum orcu__delay_point p);

static void delay_switch(void)
{
	/* Order: none needed; a point that sees the switch with an older
	 * bound or hook uses those (0 and NULL: no stall). */
	orcu__store_relaxed(&orcu__delay_enabled,
			    orcu__load_relaxed(&delay_max_us) != 0 ||
				    orcu__load_relaxed(&delay_hook) != NULL);
}

void orcu_debug_set_delays(unsigned int max_us)
{
	orcu__store_relaxed(&delay_max_us, max_us);
	delay_switch();
}

void orcu__delay_set_hook(void (*hook)(enum orcu__delay_point p))
{
	/* Relaxed: the hook is code, nothing it reads is published here. */
	orcu__store_relaxed(&delay_hook, hook);
	delay_switch();
}

void orcu__delay_slow(enum orcu__delay_point p)
{
	static __thread unsigned int rnd;
	void (*hook)(enum orcu__delay_point) = orcu__load_relaxed(&delay_hook);
	unsigned int max = orcu__load_relaxed(&delay_max_us), us;

	if (hook) {
		hook(p);
		return;
	}
	if (!max)
		return;
	if (!rnd)
		rnd = (unsigned int)(uintptr_t)&rnd ^ (unsigned int)orcu__now_ns();
	rnd = rnd * 1103515245u + 12345u + (unsigned int)p;
	/* Most passes go straight through; some stall to open a window. */
	if ((rnd >> 16) % 8)
		return;
	us = (rnd >> 8) % max;
	orcu__sleep_ns((long)us * 1000);
}

/* A task is read from its stat line, "tid (comm) S ...", where comm may
 * hold spaces and parentheses.  One that has ended (state Z or X) may
 * still be listed: a thread-group leader stays in /proc/self/task, a
 * zombie, until the whole process exits (a fork child's first thread is
 * a library thread when it forked from a callback or a stall handler,
 * and it may end there: gp.c point 1). */
int orcu__thread_names(const char *const *prefixes, char names[][32], int max)
{
	int old = orcu__nocancel_begin();
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d) {
		orcu__nocancel_end(old);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[300], buf[512], *comm, *end;
		bool match = false;
		size_t len;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		comm = strchr(buf, '(');
		end = strrchr(buf, ')');
		if (!comm || !end || (end[1] == ' ' && (end[2] == 'Z' || end[2] == 'X')))
			continue;
		*end = '\0';
		for (const char *const *p = prefixes; *p && !match; p++)
			match = strncmp(comm + 1, *p, strlen(*p)) == 0;
		if (!match)
			continue;
		if (n < max)
			snprintf(names[n], 32, "%s", comm + 1);
		n++;
	}
	closedir(d);
	orcu__nocancel_end(old);
	return n;
}

/* The library's threads, by their own names, not a program's thread
 * called orcu-*. */
int orcu_debug_thread_count(void)
{
	static const char *const lib[] = { "orcu-gp", "orcu-og/", "orcu-oc/", NULL };
	int n = orcu__thread_names(lib, NULL, 0);

	/* pthread_join() returns when the kernel clears the thread's tid,
	 * a little before the task leaves /proc/self/task.  Threads the
	 * library has already joined (threads_alive no longer counts them)
	 * may still be listed for that moment: let them go, for at most 1 s. */
	for (int i = 0; i < 1000 && n > orcu__load_relaxed(&orcu__g.threads_alive); i++) {
		orcu__sleep_ns(1000000);
		n = orcu__thread_names(lib, NULL, 0);
	}
	return n;
}
