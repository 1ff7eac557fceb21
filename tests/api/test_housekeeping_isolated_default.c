/*
 * test_housekeeping_isolated_default.c - without ORCU_HOUSEKEEPING,
 * library threads keep off the CPUs the kernel isolates
 * (/sys/devices/system/cpu/nohz_full and isolated), within the process's
 * affinity, and one line says what was chosen.  ORCU_CPUS's nohz_full=
 * and isolated= keys stand in for the two files, so each case gives their
 * text; it runs in a forked child (the configuration is read once),
 * starts the library threads with a grace period and a barrier, and
 * reads the affinity of every orcu-* thread with sched_getaffinity() on
 * its tid.  A = this process's affinity, lo its lowest CPU, rest = A
 * without lo:
 *  - isolated=rest: threads on {lo}, one line naming it;
 *  - nohz_full=rest, isolated empty: the same;
 *  - nohz_full="(null)" (as some kernels print), isolated=rest: the same;
 *  - every CPU of A isolated: threads on A, one line saying so;
 *  - nohz_full="(null)", isolated empty: the plain default, no line;
 *  - isolated malformed: one line naming it, ignored (threads on A);
 *  - ORCU_HOUSEKEEPING=A with isolated=rest: the variable wins, no line.
 * On a single-CPU affinity the cases that need rest are skipped, saying so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <dirent.h>
#include <sched.h>

#include "common_pipe.h"

struct hk_case {
	const char *what;
	char cpus[448];   /* ORCU_CPUS */
	const char *hk;   /* ORCU_HOUSEKEEPING, or NULL */
	cpu_set_t want;   /* every orcu-* thread's affinity */
	const char *line; /* expected in the one line, or NULL: no line */
};

static cpu_set_t aff;
static int lo = -1, top;

/* "0-1,3" for the CPUs of set (a list of single CPUs: the parser reads it). */
static void cpus_text(const cpu_set_t *set, char *buf, size_t len)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (int i = 0; i < CPU_SETSIZE && pos < len; i++)
		if (CPU_ISSET(i, set))
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%d", pos ? "," : "", i);
}

static void nop_cb(struct orcu_head *h)
{
	(void)h;
}

/* Every orcu-* thread of this process has affinity want; how many there are. */
static int check_threads(const cpu_set_t *want)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		cpu_set_t got;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "orcu-", 5) != 0)
			continue;
		if (sched_getaffinity((pid_t)atoi(e->d_name), sizeof(got), &got) != 0)
			continue; /* gone meanwhile */
		if (!CPU_EQUAL(&got, want)) {
			char g[256], w[256];

			cpus_text(&got, g, sizeof(g));
			cpus_text(want, w, sizeof(w));
			comm[strcspn(comm, "\n")] = '\0';
			fprintf(stderr, "thread %s (%s) on CPUs %s, want %s\n", e->d_name, comm, g, w);
			closedir(d);
			return -1;
		}
		n++;
	}
	closedir(d);
	return n;
}

static int hk_child(void *arg)
{
	const struct hk_case *c = arg;
	static struct orcu_head heads[8];
	int n;

	unsetenv("ORCU_HOUSEKEEPING");
	setenv("ORCU_CPUS", c->cpus, 1);
	if (c->hk)
		setenv("ORCU_HOUSEKEEPING", c->hk, 1);
	orcu_synchronize();
	for (int i = 0; i < 8; i++)
		orcu_call(&heads[i], nop_cb);
	orcu_barrier();
	n = check_threads(&c->want);
	if (n <= 0) {
		if (n == 0)
			fprintf(stderr, "no orcu-* thread found\n");
		return 3;
	}
	return orcu_shutdown() == 0 ? 0 : 4;
}

static void run_case(struct hk_case *c)
{
	struct child_result r;
	bool ok;

	run_child(hk_child, c, 60, &r);
	ok = WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 &&
	     (c->line ? r.lines == 1 && strstr(r.err, c->line) : r.lines == 0);
	printf("%-44s ORCU_CPUS=%s%s%s -> exit %d, %d line(s)%s%s", c->what, c->cpus,
	       c->hk ? " ORCU_HOUSEKEEPING=" : "", c->hk ? c->hk : "",
	       WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, r.lines,
	       r.lines ? ": " : "\n", r.lines ? r.err : "");
	if (!ok) {
		fprintf(stderr, "%s: failed (want %s); stderr:\n%s\n", c->what,
			c->line ? c->line : "no line", r.err);
		exit(1);
	}
}

static void set_case(struct hk_case *c, const char *what, const char *keys, const cpu_set_t *want,
		     const char *line)
{
	memset(c, 0, sizeof(*c));
	c->what = what;
	snprintf(c->cpus, sizeof(c->cpus), "possible=%d,%s", top + 1, keys);
	c->want = *want;
	c->line = line;
}

int main(void)
{
	char all[200], rest[200], keys[420], lo_line[64], all_line[240];
	cpu_set_t only_lo, others;
	struct hk_case c;

	test_watchdog("test_housekeeping_isolated_default", 600);
	CHECK_EQ(sched_getaffinity(0, sizeof(aff), &aff), 0);
	CPU_ZERO(&only_lo);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &aff)) {
			if (lo < 0)
				lo = i;
			top = i;
		}
	CHECK(lo >= 0);
	CPU_SET(lo, &only_lo);
	CPU_XOR(&others, &aff, &only_lo);
	cpus_text(&aff, all, sizeof(all));
	cpus_text(&others, rest, sizeof(rest));
	snprintf(lo_line, sizeof(lo_line), "library threads run on CPUs %d,", lo);
	/* The library prints the canonical form ("0-3"): compare the count. */
	snprintf(all_line, sizeof(all_line), "is isolated (nohz_full ");

	if (CPU_COUNT(&others) > 0) {
		snprintf(keys, sizeof(keys), "isolated=%s", rest);
		set_case(&c, "isolated: all but the lowest CPU", keys, &only_lo, lo_line);
		run_case(&c);
		snprintf(keys, sizeof(keys), "nohz_full=%s,isolated=", rest);
		set_case(&c, "nohz_full: all but the lowest, isolated empty", keys, &only_lo,
			 lo_line);
		run_case(&c);
		snprintf(keys, sizeof(keys), "nohz_full=(null),isolated=%s", rest);
		set_case(&c, "nohz_full (null), isolated: all but lowest", keys, &only_lo,
			 lo_line);
		run_case(&c);
		snprintf(keys, sizeof(keys), "isolated=%s", rest);
		set_case(&c, "ORCU_HOUSEKEEPING given: it wins", keys, &aff, NULL);
		c.hk = all;
		run_case(&c);
	} else {
		printf("one CPU in this process's affinity: no case isolates part of it\n");
	}
	snprintf(keys, sizeof(keys), "nohz_full=%s,isolated=%s", all, all);
	set_case(&c, "every CPU isolated: the affinity, said", keys, &aff, all_line);
	run_case(&c);
	set_case(&c, "nohz_full (null), isolated empty: plain", "nohz_full=(null),isolated=",
		 &aff, NULL);
	run_case(&c);
	set_case(&c, "isolated malformed: one line, ignored", "nohz_full=(null),isolated=1-x",
		 &aff, "ORCU_CPUS isolated \"1-x\" ignored");
	run_case(&c);
	TEST_PASS("test_housekeeping_isolated_default");
}
