/*
 * test_config_possible_only_caps_threads.c - ORCU_CPUS=possible=N without
 * online= does not put N slots online (issue: possible=65536 alone created
 * a thread per slot until the PID space ran out).  The rule: online is
 * then the real online set (sysfs online, cut to this process's
 * affinity) below N, as for the real topology.  Each case runs in a
 * forked child, since the topology is read once:
 *  - possible=65536 from the environment: 65536 possible slots, online
 *    exactly the real online CPUs, checked before any thread exists (so
 *    the unfixed library fails here instead of spawning 65536 threads);
 *    after a grace period, a callback and a barrier, at most one GP
 *    thread plus a leader and a follower per online slot;
 *  - the same through orcu_init(cfg->cpus = "possible=65536");
 *  - possible=1: the real online set cut to slot 0;
 *  - control: an explicit online= list is still taken as given
 *    (possible=8,online=0-7 has 8 online slots on any machine).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <orcu.h>

#include <sched.h>

#include "common_pipe.h"

/* The real online CPUs below limit that this process may run on. */
static int real_online_below(int limit)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	cpu_set_t aff;
	int n = 0;

	CHECK(f);
	CHECK(fgets(buf, sizeof(buf), f));
	fclose(f);
	CHECK_EQ(sched_getaffinity(0, sizeof(aff), &aff), 0);
	/* "0-3,8,10-11\n" */
	for (char *p = buf; *p >= '0' && *p <= '9';) {
		long a = strtol(p, &p, 10), b = a;

		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (long c = a; c <= b; c++)
			n += c < limit && c < CPU_SETSIZE && CPU_ISSET((int)c, &aff);
		if (*p == ',')
			p++;
	}
	return n ? n : 1;    /* none below limit: slot 0 stands in */
}

static void nop_cb(struct orcu_head *h)
{
	(void)h;
}

struct topo_case {
	const char *env;     /* ORCU_CPUS, or NULL */
	const char *cfg;     /* cfg->cpus for orcu_init, or NULL */
	long possible, online;
};

static int topo_child(void *arg)
{
	const struct topo_case *c = arg;
	static struct orcu_head heads[64];
	struct orcu_stats st;

	unsetenv("ORCU_CPUS");
	unsetenv("ORCU_NOCB_STRIDE");
	if (c->env)
		setenv("ORCU_CPUS", c->env, 1);
	if (c->cfg) {
		struct orcu_config cfg = { .cpus = c->cfg };

		/* orcu_init starts the threads: check their number after. */
		if (orcu_init(&cfg) != 0)
			return 2;
	} else {
		/* Configures the slots without starting any thread. */
		(void)orcu_current_cpu();
	}
	orcu_get_stats(&st);
	if ((long)st.slots_possible != c->possible || (long)st.slots_online != c->online) {
		fprintf(stderr, "possible %llu online %llu, want %ld and %ld\n",
			(unsigned long long)st.slots_possible,
			(unsigned long long)st.slots_online, c->possible, c->online);
		return 3;
	}
	orcu_synchronize();
	for (int i = 0; i < 64; i++)
		orcu_call(&heads[i], nop_cb);
	orcu_barrier();
	orcu_get_stats(&st);
	if ((long)st.threads_alive > 1 + 2 * (long)st.slots_online ||
	    (long)st.followers_alive > (long)st.slots_online) {
		fprintf(stderr, "%llu threads (%llu followers) for %llu online slots\n",
			(unsigned long long)st.threads_alive,
			(unsigned long long)st.followers_alive,
			(unsigned long long)st.slots_online);
		return 4;
	}
	return orcu_shutdown() == 0 ? 0 : 5;
}

static void run_case(const char *what, const struct topo_case *c)
{
	struct child_result r;

	run_child(topo_child, (void *)c, 60, &r);
	printf("%-34s -> possible %ld, want online %ld: exit %d%s%s", what, c->possible,
	       c->online, WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1,
	       r.lines ? "; said: " : "", r.lines ? r.err : "\n");
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
		fprintf(stderr, "%s failed (status %#x); stderr:\n%s\n", what, r.status, r.err);
		exit(1);
	}
	CHECK_EQ(r.lines, 0);
}

int main(void)
{
	const struct topo_case env_big = { "possible=65536", NULL, 65536,
					   real_online_below(65536) };
	const struct topo_case cfg_big = { NULL, "possible=65536", 65536,
					   real_online_below(65536) };
	const struct topo_case env_one = { "possible=1", NULL, 1, 1 };
	const struct topo_case explicit8 = { "possible=8,online=0-7", NULL, 8, 8 };

	test_watchdog("test_config_possible_only_caps_threads", 240);
	run_case("ORCU_CPUS=possible=65536", &env_big);
	run_case("orcu_init cpus=possible=65536", &cfg_big);
	run_case("ORCU_CPUS=possible=1", &env_one);
	run_case("control: possible=8,online=0-7", &explicit8);
	TEST_PASS("test_config_possible_only_caps_threads");
}
