/*
 * topo.c - scenarios that need a process of their own: flood (peak RSS per
 * library), scale (virtual topologies set through ORCU_CPUS before first
 * use), idle wake-ups, library thread counts, and lazy vs normal trickles.
 * The parent re-executes this binary with a hidden "__name" subcommand and
 * reads "key value" lines from the child's stdout.
 */
#include <orcu.h>
#include <orcu/debug.h>

#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void kvout(const char *k, double v)
{
	printf("%s %.6g\n", k, v);
}

/* ------------------------------------------------------------------ */
/* flood: two posters as fast as they can (or at a given rate) */

static _Atomic long fl_invoked;
static _Atomic int fl_stop;

struct fl_obj {
	union {
		struct orcu_head oh;
		char peer[32];
	} u;
	char payload[32];
};

static void fl_orcu_cb(struct orcu_head *h)
{
	atomic_fetch_add_explicit(&fl_invoked, 1, memory_order_relaxed);
	free(h);
}

static void fl_peer_cb(void *m)
{
	atomic_fetch_add_explicit(&fl_invoked, 1, memory_order_relaxed);
	free(m);
}

struct fl_poster {
	pthread_t tid;
	int orcu;          /* 0 liburcu, 1 orcu_call, 2 orcu_free */
	double rate;       /* posts per second for this poster; 0 = flat out */
	_Atomic long posted;
};

static void *fl_poster_main(void *p)
{
	struct fl_poster *a = p;
	uint64_t next = now_ns();

	if (a->orcu) {
		if (orcu_register_thread() < 0)
			abort();
	} else {
		urcu_m_register();
	}
	while (!atomic_load_explicit(&fl_stop, memory_order_relaxed)) {
		for (int i = 0; i < 100; i++) {
			struct fl_obj *o = malloc(sizeof(*o));

			if (!o)
				abort();
			if (a->orcu == 2)
				orcu_free(o);
			else if (a->orcu)
				orcu_call(&o->u.oh, fl_orcu_cb);
			else
				urcu_m_call(o, fl_peer_cb);
		}
		atomic_fetch_add_explicit(&a->posted, 100, memory_order_relaxed);
		if (a->rate > 0) {
			next += (uint64_t)(100.0 * 1e9 / a->rate);
			sleep_until_ns(next);
		}
	}
	if (a->orcu)
		orcu_unregister_thread();
	else
		urcu_m_unregister();
	return NULL;
}

int child_flood(int argc, char **argv)
{
	struct fl_poster ps[2];
	int orcu = argc < 3 ? 0 : !strcmp(argv[2], "orcu") ? 1 :
		   !strcmp(argv[2], "orcu_free") ? 2 : 0;
	double secs = argc > 3 ? atof(argv[3]) : 3, rate = argc > 4 ? atof(argv[4]) : 0;
	long peak = 0, base_kb, cap_kb, avail = 0;
	uint64_t t0, t1, end;
	int capped = 0;
	FILE *mi = fopen("/proc/meminfo", "r");
	char line[128];

	while (mi && fgets(line, sizeof(line), mi))
		if (!strncmp(line, "MemAvailable:", 13))
			avail = strtol(line + 13, NULL, 10);
	if (mi)
		fclose(mi);
	/* Safety only: stop posting (and say so) before the machine swaps. */
	cap_kb = avail > 0 ? avail / 2 : 4L << 20;
	if (cap_kb > 8L << 20)
		cap_kb = 8L << 20;
	if (orcu) {
		orcu_barrier();   /* threads started */
	} else {
		urcu_m_register();
		urcu_m_call(calloc(1, 64), fl_peer_cb);
		urcu_m_unregister();
		urcu_m_barrier();
	}
	atomic_store(&fl_invoked, 0);
	base_kb = vm_kb("VmRSS");
	t0 = now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	for (int i = 0; i < 2; i++) {
		ps[i].orcu = orcu;
		ps[i].rate = rate / 2;
		atomic_store(&ps[i].posted, 0);
		pthread_create(&ps[i].tid, NULL, fl_poster_main, &ps[i]);
	}
	/* Monitor: pending = posted - invoked, sampled every millisecond. */
	for (int it = 0; now_ns() < end; it++) {
		long posted = atomic_load(&ps[0].posted) + atomic_load(&ps[1].posted);
		long pend = posted - atomic_load(&fl_invoked);

		if (pend > peak)
			peak = pend;
		if (it % 16 == 0 && vm_kb("VmRSS") > cap_kb) {
			capped = 1;
			break;
		}
		sleep_ns(1000000);
	}
	atomic_store(&fl_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(ps[i].tid, NULL);
	t1 = now_ns();
	kvout("posted", (double)(atomic_load(&ps[0].posted) + atomic_load(&ps[1].posted)));
	kvout("rate", (double)(atomic_load(&ps[0].posted) + atomic_load(&ps[1].posted)) * 1e9 /
	      (double)(t1 - t0));
	kvout("peak_pending", (double)peak);
	kvout("hwm_kb", (double)vm_kb("VmHWM"));
	kvout("base_kb", (double)base_kb);
	kvout("capped", capped);
	if (orcu) {
		struct orcu_stats st;

		orcu_get_stats(&st);
		kvout("poster_waits", (double)st.poster_waits);
		kvout("hurried_gps", (double)st.hurried_gps);
		orcu_barrier();
	} else {
		urcu_m_barrier();
	}
	kvout("drain_ms", (double)(now_ns() - t1) / 1e6);
	fflush(stdout);
	_exit(0);
}

int run_flood(const char *lib, double rate, struct kv *kv)
{
	char secs[32], r[32], name[16];
	char *argv[] = { (char *)opt.self, "__flood", name, secs, r, NULL };

	snprintf(name, sizeof(name), "%s", lib);
	snprintf(secs, sizeof(secs), "%d", opt.seconds);
	snprintf(r, sizeof(r), "%.0f", rate);
	return run_child(argv, NULL, kv);
}

int scen_flood(void)
{
	int reps = opt.reps < 3 ? opt.reps : 3;
	double v[4][5][8];   /* [run kind][metric][rep] */
	const char *kinds[4] = { "orcu (flat out)", "liburcu (flat out)",
				 "orcu (common rate)", "liburcu (common rate)" };
	const char *metrics[5] = { "rate", "peak_pending", "hwm_kb", "base_kb", "capped" };
	struct summ s[4][5];
	struct jdoc *d = jdoc_new("flood");
	FILE *md = out_open("flood.md");
	char meas[200];
	double ratio;

	printf("== flood: 2 threads post malloc'd callbacks for %d s, each library in its own "
	       "process; median of %d ==\n", opt.seconds, reps);
	for (int k = 0; k < reps; k++) {
		struct kv kv;

		if (run_flood("orcu", 0, &kv) < 0)
			return -1;
		for (int m = 0; m < 5; m++)
			v[0][m][k] = kv_get(&kv, metrics[m], NAN);
		if (run_flood("urcu", 0, &kv) < 0)
			return -1;
		for (int m = 0; m < 5; m++)
			v[1][m][k] = kv_get(&kv, metrics[m], NAN);
		/* The same posting rate for both: the slower one's flat-out
		 * rate (a library cannot be paced faster than it can post). */
		double common = v[0][0][k] < v[1][0][k] ? v[0][0][k] : v[1][0][k];

		if (run_flood("orcu", common, &kv) < 0)
			return -1;
		for (int m = 0; m < 5; m++)
			v[2][m][k] = kv_get(&kv, metrics[m], NAN);
		if (run_flood("urcu", common, &kv) < 0)
			return -1;
		for (int m = 0; m < 5; m++)
			v[3][m][k] = kv_get(&kv, metrics[m], NAN);
	}
	fprintf(md, "## flood: two threads post as fast as they can for %d s\n\nEach library "
		"in its own process (peak RSS = VmHWM of that process; baseline RSS before "
		"posting shown). orcu's posters are throttled by its flood control "
		"(ORCU_QHIMARK/ORCU_QMAX). To compare at the same posting rate, both are "
		"then run paced at the common rate: the lower of the two flat-out rates of "
		"that repetition. Median of %d [min-max].\n\n"
		"| run | posts/s (M) | peak pending | peak RSS (MiB) | baseline RSS (MiB) |\n"
		"|---|---|---|---|---|\n", opt.seconds, reps);
	jdoc_param(d, "seconds", opt.seconds);
	for (int r = 0; r < 4; r++) {
		for (int m = 0; m < 5; m++)
			s[r][m] = summarize(v[r][m], reps);
		printf("%-22s %7.2f M posts/s  peak pending %10.0f [%.0f-%.0f]  peak RSS %8.1f MiB "
		       "[%.1f-%.1f] (baseline %.1f)%s\n", kinds[r], s[r][0].med / 1e6, s[r][1].med,
		       s[r][1].min, s[r][1].max, s[r][2].med / 1024, s[r][2].min / 1024,
		       s[r][2].max / 1024, s[r][3].med / 1024,
		       s[r][4].max > 0 ? "  (stopped early at the RSS safety cap)" : "");
		fprintf(md, "| %s | %.2f | %.0f [%.0f-%.0f] | %.1f [%.1f-%.1f] | %.1f |\n",
			kinds[r], s[r][0].med / 1e6, s[r][1].med, s[r][1].min, s[r][1].max,
			s[r][2].med / 1024, s[r][2].min / 1024, s[r][2].max / 1024,
			s[r][3].med / 1024);
		jdoc_row_begin(d);
		jdoc_str(d, "run", kinds[r]);
		jdoc_summ(d, "posts_per_s", s[r][0]);
		jdoc_summ(d, "peak_pending", s[r][1]);
		jdoc_summ(d, "peak_rss_kb", s[r][2]);
		jdoc_summ(d, "baseline_rss_kb", s[r][3]);
		jdoc_num(d, "capped", s[r][4].max);
		jdoc_row_end(d);
	}
	ratio = s[2][2].med / s[3][2].med;
	printf("peak RSS orcu / liburcu at the same rate: %.2f (flat out: %.2f)\n\n", ratio,
	       s[0][2].med / s[1][2].med);
	fprintf(md, "\nPeak RSS orcu / liburcu at the same posting rate: %.2f; each flat out: "
		"%.2f.\n\n", ratio, s[0][2].med / s[1][2].med);
	/* Pacing can fall short of the rate on a loaded machine: say so. */
	snprintf(meas, sizeof(meas), "%.2fx (%.1f vs %.1f MiB; %.2f vs %.2f M posts/s)", ratio,
		 s[2][2].med / 1024, s[3][2].med / 1024, s[2][0].med / 1e6, s[3][0].med / 1e6);
	target_row("flood", "flood: peak RSS <= 0.5x liburcu at the same posting rate", meas,
		   ratio <= 0.5);
	jdoc_write(d);
	fclose(md);
	return 0;
}

/* ------------------------------------------------------------------ */
/* scale: N virtual slots, all online and offloaded, posts spread over all */

#define SCALE_POSTERS 4
#define SCALE_SLEEP_NS 200000ull

static _Atomic unsigned long sc_next;
static _Atomic int sc_stop;
static int sc_n;

static void sc_cb(struct orcu_head *h)
{
	free(h);
}

static void *sc_poster(void *p)
{
	(void)p;
	/* Registered qsbr readers, offline (as a server's threads are while
	 * they block): each GP then runs on the GP thread, where a program
	 * with no reader registered makes it a swap in the leader (gp.c point
	 * 5), and costs it no reader wait, so the rows measure the GP
	 * thread's own work: ending GPs and waking leaders. */
	if (orcu_register_thread_qsbr() < 0)
		abort();
	orcu_thread_offline();
	while (!atomic_load_explicit(&sc_stop, memory_order_relaxed)) {
		unsigned long i = atomic_fetch_add(&sc_next, 1) % (unsigned long)sc_n;
		struct orcu_head *h = malloc(sizeof(*h));

		if (!h)
			abort();
		orcu_thread_bind_cpu((int)i);
		orcu_call(h, sc_cb);
		sleep_ns(SCALE_SLEEP_NS);   /* block, then wake: a context switch per post */
	}
	orcu_unregister_thread();
	return NULL;
}

int child_scale(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 16;
	int stride = argc > 3 ? atoi(argv[3]) : 0;
	double secs = argc > 4 ? atof(argv[4]) : 2;
	pthread_t t[SCALE_POSTERS];
	struct orcu_stats s0, s1;
	uint64_t t0, t1, c0, c1, prev = 0, stable_since, spawn0;
	int groups, nthreads = 0, samples = 0;
	double gww = 0;

	sc_n = n;
	if (stride <= 0)
		stride = (int)sqrt((double)n) > 0 ? (int)sqrt((double)n) : 1;
	groups = (n + stride - 1) / stride;
	spawn0 = now_ns();
	orcu_barrier();   /* start: a follower per online slot, a leader per group */
	/* Wait until the library threads have all started (bounded). */
	stable_since = now_ns();
	while (now_ns() - spawn0 < 30000000000ull) {
		uint64_t cur;

		orcu_get_stats(&s0);
		cur = s0.threads_alive;
		if (cur != prev) {
			prev = cur;
			stable_since = now_ns();
		} else if (now_ns() - stable_since > 200000000ull) {
			break;
		}
		sleep_ns(10000000);
	}
	kvout("spawn_s", (double)(now_ns() - spawn0) / 1e9);
	for (int i = 0; i < SCALE_POSTERS; i++)
		pthread_create(&t[i], NULL, sc_poster, NULL);
	sleep_ns(300000000);
	orcu_get_stats(&s0);
	c0 = task_ctxsw("orcu-", &nthreads);
	t0 = now_ns();
	while (now_ns() - t0 < (uint64_t)(secs * 1e9)) {
		int gw = 0;

		for (int g = 0; g < groups; g++) {
			for (int c = g * stride; c < (g + 1) * stride && c < n; c++) {
				if (orcu_slot_pending(c) > 0) {
					gw++;
					break;
				}
			}
		}
		gww += gw;
		samples++;
		sleep_ns(2000000);
	}
	orcu_get_stats(&s1);
	t1 = now_ns();
	c1 = task_ctxsw("orcu-", NULL);
	atomic_store(&sc_stop, 1);
	for (int i = 0; i < SCALE_POSTERS; i++)
		pthread_join(t[i], NULL);
	{
		double dt = (double)(t1 - t0) / 1e9;
		double gps = (double)(s1.gp_completed - s0.gp_completed);

		kvout("slots", n);
		kvout("stride", stride);
		kvout("groups", groups);
		kvout("threads", nthreads);
		kvout("posts_per_s", (double)(s1.callbacks_queued - s0.callbacks_queued) / dt);
		kvout("gps_per_s", gps / dt);
		kvout("gp_wakeups_per_gp", gps > 0 ? (double)(s1.gp_wakeups - s0.gp_wakeups) / gps : 0);
		kvout("gp_leader_wakeups_per_gp",
		      gps > 0 ? (double)(s1.gp_leader_wakeups - s0.gp_leader_wakeups) / gps : 0);
		kvout("groups_with_work", samples ? gww / samples : 0);
		kvout("gp_cpu_frac", (double)(s1.gp_thread_cpu_ns - s0.gp_thread_cpu_ns) /
		      (double)(t1 - t0));
		kvout("gp_cpu_us_per_gp", gps > 0 ? (double)(s1.gp_thread_cpu_ns -
		      s0.gp_thread_cpu_ns) / 1e3 / gps : 0);
		kvout("follower_wakeups_per_s", (double)(s1.leader_wakeups - s0.leader_wakeups) / dt);
		kvout("enqueue_wakeups_per_s", (double)(s1.enqueue_wakeups - s0.enqueue_wakeups) / dt);
		kvout("lib_ctxsw_per_s", (double)(c1 - c0) / dt);
	}
	fflush(stdout);
	_exit(0);
}

static int run_scale(int n, bool flat, int secs, struct kv *kv)
{
	char ns[16], st[16], se[16], cpus[96];
	char *argv[] = { (char *)opt.self, "__scale", ns, st, se, NULL };
	char *env[] = { cpus, "ORCU_NOCBS=all", "ORCU_MAX_THREADS=10000",
			flat ? "ORCU_NOCB_STRIDE=1" : NULL, NULL };

	snprintf(ns, sizeof(ns), "%d", n);
	snprintf(st, sizeof(st), "%d", flat ? 1 : 0);
	snprintf(se, sizeof(se), "%d", secs);
	snprintf(cpus, sizeof(cpus), "ORCU_CPUS=possible=%d,online=0-%d", n, n - 1);
	return run_child(argv, env, kv);
}

static const char *const sc_keys[] = { "gp_wakeups_per_gp", "groups_with_work", "gp_cpu_frac",
				       "gps_per_s", "posts_per_s", "follower_wakeups_per_s",
				       "lib_ctxsw_per_s", "threads", "groups", "gp_cpu_us_per_gp" };
#define SC_NKEYS 10

/* Median over reps of each key, for one (n, flat) point. */
static int scale_point(int n, bool flat, int reps, int secs, struct summ *out)
{
	double v[SC_NKEYS][8];

	for (int k = 0; k < reps; k++) {
		struct kv kv;

		if (run_scale(n, flat, secs, &kv) < 0)
			return -1;
		for (int i = 0; i < SC_NKEYS; i++)
			v[i][k] = kv_get(&kv, sc_keys[i], NAN);
	}
	for (int i = 0; i < SC_NKEYS; i++)
		out[i] = summarize(v[i], reps);
	return 0;
}

int scen_scale(void)
{
	static const int sizes[] = { 16, 64, 256, 1024, 4096 };
	int reps = opt.reps < 3 ? opt.reps : 3;
	struct jdoc *d = jdoc_new("scale");
	FILE *md = out_open("scale.md"), *dat = out_open("scale.dat");
	struct summ s[2][SC_NKEYS];
	double us16 = 0, us256 = 0;
	char meas[200];

	printf("== scale: N virtual slots all online+offloaded, %d offline qsbr posters bind to slot i, post, "
	       "sleep %llu us (round robin over all slots); median of %d ==\n", SCALE_POSTERS,
	       SCALE_SLEEP_NS / 1000, reps);
	printf("%6s %-9s %7s %8s %9s %10s %8s %9s %9s %11s %11s\n", "slots", "stride", "groups",
	       "threads", "GPs/s", "wakes/GP", "grp-work", "GP-CPU%", "GP-us/GP", "follower/s",
	       "libctxsw/s");
	fprintf(md, "## scale: GP-thread wake-ups and CPU vs number of slots\n\nVirtual "
		"topology ORCU_CPUS=possible=N,online=0-(N-1), all offloaded. %d poster threads, "
		"registered as qsbr readers and offline (every GP runs on the GP thread, none waits for a reader), bind to slot i (round robin over all slots), post one callback (freeing memory), "
		"sleep %llu us. wakes/GP = GP-thread wake-ups (stats.gp_wakeups) per completed GP; "
		"groups with work = mean number of groups holding pending callbacks, sampled "
		"every 2 ms; GP-CPU = GP-thread CPU time per second of wall time, and per "
		"completed GP (us). Default stride (sqrt N) vs stride 1 (flat). Median of %d "
		"runs.\n\n"
		"| slots | stride | groups | threads | GPs/s | wakes/GP | groups with work | "
		"GP-thread CPU %% | GP-thread us per GP | follower wake-ups/s | library ctx "
		"switches/s |\n|---|---|---|---|---|---|---|---|---|---|---|\n", SCALE_POSTERS,
		SCALE_SLEEP_NS / 1000, reps);
	fprintf(dat, "# slots wakesPerGP_default wakesPerGP_flat groupsWithWork_default "
		"gpcpu%%_default gpcpu%%_flat groups_default\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int f = 0; f < 2; f++) {
			if (scale_point(sizes[i], f, reps, 2, s[f]) < 0)
				return -1;
			printf("%6d %-9s %7.0f %8.0f %9.0f %10.2f %8.2f %9.2f %9.2f %11.0f %11.0f\n",
			       sizes[i], f ? "1 (flat)" : "default", s[f][8].med, s[f][7].med,
			       s[f][3].med, s[f][0].med, s[f][1].med, s[f][2].med * 100,
			       s[f][9].med, s[f][5].med, s[f][6].med);
			fprintf(md, "| %d | %s | %.0f | %.0f | %.0f | %.2f [%.2f-%.2f] | %.2f | "
				"%.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] | %.0f | %.0f |\n", sizes[i],
				f ? "1 (flat)" : "default", s[f][8].med, s[f][7].med, s[f][3].med,
				s[f][0].med, s[f][0].min, s[f][0].max, s[f][1].med,
				s[f][2].med * 100, s[f][2].min * 100, s[f][2].max * 100,
				s[f][9].med, s[f][9].min, s[f][9].max, s[f][5].med, s[f][6].med);
			jdoc_row_begin(d);
			jdoc_num(d, "slots", sizes[i]);
			jdoc_str(d, "stride", f ? "1" : "default");
			for (int k = 0; k < SC_NKEYS; k++)
				jdoc_summ(d, sc_keys[k], s[f][k]);
			jdoc_row_end(d);
		}
		if (sizes[i] == 16)
			us16 = s[0][9].med;
		if (sizes[i] == 256)
			us256 = s[0][9].med;
		fprintf(dat, "%d %.3f %.3f %.3f %.3f %.3f %.0f\n", sizes[i], s[0][0].med,
			s[1][0].med, s[0][1].med, s[0][2].med * 100, s[1][2].med * 100,
			s[0][8].med);
	}
	/* s[] now holds 4096 slots */
	fprintf(md, "\n![wake-ups vs slots](img/scale.png)\n\n");
	printf("\n");
	snprintf(meas, sizeof(meas), "%.2f wake-ups/GP vs %.2f groups with work (of %.0f)",
		 s[0][0].med, s[0][1].med, s[0][8].med);
	target_row("scale", "scale 4096: GP-thread wake-ups per GP <= groups with work", meas,
		   s[0][0].med <= s[0][1].med);
	snprintf(meas, sizeof(meas), "%.2f%% of one CPU (stride 1: %.2f%%)",
		 s[0][2].med * 100, s[1][2].med * 100);
	target_row("scale", "scale 4096: GP-thread CPU <= 5% of one CPU (default stride)", meas,
		   s[0][2].med <= 0.05);
	snprintf(meas, sizeof(meas), "%.2fx (%.2f us at 16, %.2f at 256, %.2f at 4096 slots)",
		 s[0][9].med / us16, us16, us256, s[0][9].med);
	target_row("scale", "scale: GP-thread CPU per GP at 4096 slots <= 1.2x at 16 and "
		   "<= 10 us (default stride)", meas,
		   s[0][9].med <= 1.2 * us16 && s[0][9].med <= 10);
	jdoc_write(d);
	fclose(md);
	fclose(dat);
	return 0;
}

int scen_scale_report(void)
{
	struct summ s[2][SC_NKEYS];
	int reps = opt.reps < 3 ? opt.reps : 3;

	for (int f = 0; f < 2; f++)
		if (scale_point(4096, f, reps, 2, s[f]) < 0)
			return -1;
	printf("4096 slots: GP-thread wake-ups per GP %.2f with the default stride (%.0f groups) "
	       "vs %.2f with stride 1; GP-thread CPU %.2f%% vs %.2f%% of one CPU "
	       "(median of %d runs, %.0f vs %.0f GPs/s)\n", s[0][0].med, s[0][8].med, s[1][0].med,
	       s[0][2].med * 100, s[1][2].med * 100, reps, s[0][3].med, s[1][3].med);
	return 0;
}

/* ------------------------------------------------------------------ */
/* idle: wake-ups of library threads with nothing pending */

static void idle_orcu_cb(struct orcu_head *h) { free(h); }

int child_idle(int argc, char **argv)
{
	int orcu = argc > 2 && !strcmp(argv[2], "orcu");
	uint64_t c0, c1, t0, t1;
	int n = 0;

	if (orcu) {
		for (int i = 0; i < 1000; i++)
			orcu_call(malloc(sizeof(struct orcu_head)), idle_orcu_cb);
		orcu_synchronize();
		orcu_barrier();
	} else {
		urcu_m_register();
		for (int i = 0; i < 1000; i++)
			urcu_m_call(calloc(1, 64), fl_peer_cb);
		urcu_m_unregister();
		urcu_m_synchronize();
		urcu_m_barrier();
	}
	sleep_ns(1000000000ull);
	c0 = task_ctxsw(orcu ? "orcu-" : NULL, &n);
	t0 = now_ns();
	sleep_ns(2000000000ull);
	c1 = task_ctxsw(orcu ? "orcu-" : NULL, NULL);
	t1 = now_ns();
	kvout("threads", n);
	kvout("wakeups_per_s", (double)(c1 - c0) * 1e9 / (double)(t1 - t0));
	fflush(stdout);
	_exit(0);
}

int scen_idle(void)
{
	char *ao[] = { (char *)opt.self, "__idle", "orcu", NULL };
	char *au[] = { (char *)opt.self, "__idle", "urcu", NULL };
	struct kv ko, ku;
	FILE *md = out_open("idle.md");
	struct jdoc *d = jdoc_new("idle");
	char meas[128];
	double w;

	if (run_child(ao, NULL, &ko) < 0 || run_child(au, NULL, &ku) < 0)
		return -1;
	w = kv_get(&ko, "wakeups_per_s", NAN);
	printf("== idle: context switches per second of library threads, 1 s after the last "
	       "callback, over 2 s ==\n");
	printf("orcu    %.2f wake-ups/s over %.0f orcu-* threads\n", w,
	       kv_get(&ko, "threads", 0));
	printf("liburcu %.2f wake-ups/s over %.0f threads (its call_rcu worker)\n\n",
	       kv_get(&ku, "wakeups_per_s", NAN), kv_get(&ku, "threads", 0));
	fprintf(md, "## idle: wake-ups per second with nothing pending\n\n1000 callbacks, a "
		"synchronize and a barrier, then 1 s of quiet; voluntary + involuntary context "
		"switches of the library's threads over the next 2 s.\n\n| library | threads | "
		"wake-ups/s |\n|---|---|---|\n| orcu | %.0f | %.2f |\n| liburcu | %.0f | %.2f |\n\n",
		kv_get(&ko, "threads", 0), w, kv_get(&ku, "threads", 0),
		kv_get(&ku, "wakeups_per_s", NAN));
	jdoc_row_begin(d);
	jdoc_str(d, "library", "orcu");
	jdoc_num(d, "threads", kv_get(&ko, "threads", 0));
	jdoc_num(d, "wakeups_per_s", w);
	jdoc_row_end(d);
	jdoc_row_begin(d);
	jdoc_str(d, "library", "liburcu");
	jdoc_num(d, "threads", kv_get(&ku, "threads", 0));
	jdoc_num(d, "wakeups_per_s", kv_get(&ku, "wakeups_per_s", NAN));
	jdoc_row_end(d);
	snprintf(meas, sizeof(meas), "%.2f wake-ups/s", w);
	target_row("idle", "idle: 0 wake-ups per second", meas, w == 0);
	jdoc_write(d);
	fclose(md);
	return 0;
}

/* ------------------------------------------------------------------ */
/* threads: library threads at possible=4096, online=4 */

int child_threads(int argc, char **argv)
{
	int orcu = argc > 2 && !strcmp(argv[2], "orcu");

	if (orcu) {
		struct orcu_stats st;
		int stride = 64, groups;

		orcu_call(malloc(sizeof(struct orcu_head)), idle_orcu_cb);
		orcu_barrier();
		sleep_ns(100000000);
		orcu_get_stats(&st);
		groups = (int)((st.slots_online + (uint64_t)stride - 1) / (uint64_t)stride);
		kvout("threads", orcu_debug_thread_count());
		kvout("leaders", (double)st.leaders_alive);
		kvout("followers", (double)st.followers_alive);
		kvout("slots_online", (double)st.slots_online);
		kvout("slots_possible", (double)st.slots_possible);
		kvout("bound", 1 + groups + (double)st.slots_online);
	} else {
		int before = task_count(), ret;

		ret = urcu_m_create_all_cpu();
		sleep_ns(100000000);
		kvout("ret", ret);
		kvout("threads", task_count() - before);
		kvout("nprocs_conf", (double)sysconf(_SC_NPROCESSORS_CONF));
	}
	fflush(stdout);
	_exit(0);
}

int scen_threads(void)
{
	char *ao[] = { (char *)opt.self, "__threads", "orcu", NULL };
	char *au[] = { (char *)opt.self, "__threads", "urcu", NULL };
	char *env[] = { "ORCU_CPUS=possible=4096,online=0-3", NULL };
	struct kv ko, ku;
	FILE *md = out_open("threads.md");
	struct jdoc *d = jdoc_new("threads");
	char meas[160];
	double t, b;

	if (run_child(ao, env, &ko) < 0 || run_child(au, NULL, &ku) < 0)
		return -1;
	t = kv_get(&ko, "threads", NAN);
	b = kv_get(&ko, "bound", NAN);
	printf("== threads: library threads alive ==\n");
	printf("orcu, possible=4096 online=%.0f: %.0f threads (%.0f leaders, %.0f followers, "
	       "1 GP thread); bound 1 + groups + online slots = %.0f\n",
	       kv_get(&ko, "slots_online", 0), t, kv_get(&ko, "leaders", 0),
	       kv_get(&ko, "followers", 0), b);
	printf("liburcu create_all_cpu_call_rcu_data on this machine (%.0f configured CPUs): "
	       "%.0f threads (returned %.0f)\n\n", kv_get(&ku, "nprocs_conf", 0),
	       kv_get(&ku, "threads", NAN), kv_get(&ku, "ret", 0));
	fprintf(md, "## threads: library threads alive\n\n| setup | threads |\n|---|---|\n"
		"| orcu, ORCU_CPUS=possible=4096,online=0-3 (%.0f slots online) | %.0f "
		"(%.0f leaders, %.0f followers, 1 GP thread; bound %.0f) |\n"
		"| liburcu create_all_cpu_call_rcu_data, %.0f configured CPUs | %.0f |\n\n"
		"liburcu creates one call_rcu thread per CPU the system reports as configured "
		"(here %.0f); it has no virtual topology, so it cannot be run at 4096 possible "
		"CPUs on this machine: on a machine whose firmware reports 4096 possible CPUs it "
		"would create 4096.\n\n",
		kv_get(&ko, "slots_online", 0), t, kv_get(&ko, "leaders", 0),
		kv_get(&ko, "followers", 0), b, kv_get(&ku, "nprocs_conf", 0),
		kv_get(&ku, "threads", NAN), kv_get(&ku, "nprocs_conf", 0));
	jdoc_row_begin(d);
	jdoc_str(d, "library", "orcu");
	jdoc_num(d, "threads", t);
	jdoc_num(d, "bound", b);
	jdoc_num(d, "slots_online", kv_get(&ko, "slots_online", 0));
	jdoc_row_end(d);
	jdoc_row_begin(d);
	jdoc_str(d, "library", "liburcu");
	jdoc_num(d, "threads", kv_get(&ku, "threads", NAN));
	jdoc_num(d, "nprocs_conf", kv_get(&ku, "nprocs_conf", 0));
	jdoc_row_end(d);
	snprintf(meas, sizeof(meas), "%.0f threads (bound %.0f)", t, b);
	target_row("threads", "threads at possible=4096,online=4: <= 1 + groups + online slots",
		   meas, t <= b);
	jdoc_write(d);
	fclose(md);
	return 0;
}

/* ------------------------------------------------------------------ */
/* lazy: a trickle of orcu_call_lazy vs orcu_call */

int child_lazy(int argc, char **argv)
{
	int lazy = argc > 2 && !strcmp(argv[2], "lazy");
	double secs = argc > 3 ? atof(argv[3]) : 3;
	struct orcu_stats s0, s1;
	uint64_t c0, c1, t0, t1, next;

	orcu_barrier();
	orcu_get_stats(&s0);
	c0 = task_ctxsw("orcu-", NULL);
	t0 = now_ns();
	next = t0;
	while (now_ns() - t0 < (uint64_t)(secs * 1e9)) {
		struct orcu_head *h = malloc(sizeof(*h));

		if (!h)
			abort();
		if (lazy)
			orcu_call_lazy(h, idle_orcu_cb);
		else
			orcu_call(h, idle_orcu_cb);
		next += 1000000;   /* one post per ms */
		sleep_until_ns(next);
	}
	orcu_get_stats(&s1);
	c1 = task_ctxsw("orcu-", NULL);
	t1 = now_ns();
	{
		double dt = (double)(t1 - t0) / 1e9;

		kvout("gps_per_s", (double)(s1.gp_completed - s0.gp_completed) / dt);
		kvout("wakeups_per_s", (double)(c1 - c0) / dt);
		kvout("posts_per_s", (double)(s1.callbacks_queued - s0.callbacks_queued) / dt);
		kvout("invoked_per_s", (double)(s1.callbacks_invoked - s0.callbacks_invoked) / dt);
	}
	fflush(stdout);
	_exit(0);
}

int scen_lazy(void)
{
	char secs[16];
	char *al[] = { (char *)opt.self, "__lazy", "lazy", secs, NULL };
	char *an[] = { (char *)opt.self, "__lazy", "normal", secs, NULL };
	FILE *md = out_open("lazy.md");
	struct jdoc *d = jdoc_new("lazy");
	double v[2][2][8];
	struct summ s[2][2];
	int reps = opt.reps < 3 ? opt.reps : 3;

	snprintf(secs, sizeof(secs), "%d", opt.seconds);
	for (int k = 0; k < reps; k++) {
		struct kv kl, kn;

		if (run_child(al, NULL, &kl) < 0 || run_child(an, NULL, &kn) < 0)
			return -1;
		v[0][0][k] = kv_get(&kl, "gps_per_s", NAN);
		v[0][1][k] = kv_get(&kl, "wakeups_per_s", NAN);
		v[1][0][k] = kv_get(&kn, "gps_per_s", NAN);
		v[1][1][k] = kv_get(&kn, "wakeups_per_s", NAN);
	}
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			s[i][j] = summarize(v[i][j], reps);
	printf("== lazy: one post per ms for %d s, median of %d ==\n", opt.seconds, reps);
	fprintf(md, "## lazy: a trickle of orcu_call_lazy vs orcu_call\n\nOne post per ms for "
		"%d s (default ORCU_LAZY_MS, ORCU_LAZY_MAX); GPs per second and context switches "
		"per second of orcu-* threads. Median of %d [min-max].\n\n| call | GPs/s | "
		"wake-ups/s |\n|---|---|---|\n", opt.seconds, reps);
	for (int i = 0; i < 2; i++) {
		const char *c = i ? "orcu_call" : "orcu_call_lazy";

		printf("%-15s %8.1f GPs/s [%.1f-%.1f]  %9.1f wake-ups/s [%.1f-%.1f]\n", c,
		       s[i][0].med, s[i][0].min, s[i][0].max, s[i][1].med, s[i][1].min,
		       s[i][1].max);
		fprintf(md, "| %s | %.1f [%.1f-%.1f] | %.1f [%.1f-%.1f] |\n", c, s[i][0].med,
			s[i][0].min, s[i][0].max, s[i][1].med, s[i][1].min, s[i][1].max);
		jdoc_row_begin(d);
		jdoc_str(d, "call", c);
		jdoc_summ(d, "gps_per_s", s[i][0]);
		jdoc_summ(d, "wakeups_per_s", s[i][1]);
		jdoc_row_end(d);
	}
	printf("\n");
	fprintf(md, "\n");
	jdoc_write(d);
	fclose(md);
	return 0;
}
