/*
 * isolation.c - what an "isolated" CPU that only reads pays for the grace
 * periods of the rest of the process.  One child process per library:
 * the last CPU of the affinity mask (the isolated one) runs a reader
 * that spins (one read-side section, a clock read, a quiescent state
 * every BENCH_QS_EVERY sections for qsbr); the first CPU runs a busy
 * memb reader and an updater (synchronize, then call, in a loop).  The
 * figures: function-call IPIs per second the isolated CPU received (its
 * column of the CAL line of /proc/interrupts, the machine's whole count:
 * another process's IPIs land there too), the same per grace period
 * (orcu: GPs completed; liburcu: per synchronize, a lower bound of its
 * GPs), and the largest gap the spinning loop saw (as osnoise measures:
 * IPIs, ticks and, on this shared machine, other processes' threads).
 * orcu: isolated qsbr reader, busy memb reader (the mixed process), and
 * the same with the updater idle, library threads on the busy CPU
 * (ORCU_HOUSEKEEPING); liburcu memb: memb readers on both
 * CPUs; liburcu qsbr: qsbr readers on both.
 * The machine is shared: whenever another process's thread runs on the
 * isolated CPU, that process's IPIs land there too.  So the window is cut
 * into slices of SLICE_MS, and the per-GP figure counts only the quiet
 * slices, those in which the spinning loop never lost its CPU (no gap
 * over QUIET_GAP_US): what arrived then came to our thread.
 */
#include <orcu.h>

#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum lib { ORCU, URCU_MEMB, URCU_QSBR };

static enum lib iso_lib;
static int iso_cpu, busy_cpu;
static _Atomic int iso_stop, iso_ready, iso_measure;
static _Atomic uint64_t iso_max_gap, iso_slice_gap;

#define SLICE_MS 5
#define QUIET_GAP_US 200

/* The isolated CPU's function-call interrupts so far, or -1. */
static long cal_count(int cpu)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[8192], want[16];
	int col = -1;
	long v = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "CPU%d", cpu);
	if (fgets(line, sizeof(line), f)) {
		int i = 0;

		for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n"), i++)
			if (!strcmp(tok, want))
				col = i;
	}
	while (col >= 0 && fgets(line, sizeof(line), f)) {
		char *tok = strtok(line, " \t\n");

		if (!tok || strcmp(tok, "CAL:"))
			continue;
		for (int i = 0; i <= col && (tok = strtok(NULL, " \t\n")); i++)
			if (i == col)
				v = atol(tok);
		break;
	}
	fclose(f);
	return v;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		abort();
}

/* The isolated CPU's reader: spin, and keep the largest gap between two
 * clock reads while measuring. */
static void *iso_reader(void *arg)
{
	long sum = 0;
	uint64_t prev, max = 0;

	(void)arg;
	pin(iso_cpu);
	if (iso_lib == ORCU && orcu_register_thread_qsbr() < 0)
		abort();
	if (iso_lib == URCU_MEMB)
		urcu_m_register();
	if (iso_lib == URCU_QSBR)
		urcu_q_register();
	atomic_store(&iso_ready, 1);
	prev = now_ns();
	while (!atomic_load_explicit(&iso_stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_QS_EVERY; i++) {
			uint64_t t;

			sum += iso_lib == ORCU ? orcu_q_read1() :
			       iso_lib == URCU_MEMB ? urcu_m_read1() :
						    urcu_q_read1();
			t = now_ns();
			if (t - prev > max)
				max = t - prev;
			prev = t;
		}
		/* The thread's own work, not noise: a quiescent state may
		 * wake a waiting GP (a futex wake). */
		if (iso_lib == ORCU)
			orcu_quiescent_state();
		else if (iso_lib == URCU_QSBR)
			urcu_q_quiescent();
		prev = now_ns();
		if (!atomic_load_explicit(&iso_measure, memory_order_relaxed))
			max = 0;
		else if (max > atomic_load_explicit(&iso_max_gap, memory_order_relaxed))
			atomic_store(&iso_max_gap, max);
		if (max > atomic_load_explicit(&iso_slice_gap, memory_order_relaxed))
			atomic_store(&iso_slice_gap, max);
		max = 0;
	}
	if (iso_lib == ORCU)
		orcu_unregister_thread();
	else if (iso_lib == URCU_MEMB)
		urcu_m_unregister();
	else
		urcu_q_unregister();
	return (void *)sum;
}

/* The busy reader beside the updater: memb, or qsbr for liburcu qsbr. */
static void *busy_reader(void *arg)
{
	long sink;

	(void)arg;
	pin(busy_cpu);
	if (iso_lib == ORCU)
		read_orcu_memb(&iso_stop, &sink);
	else if (iso_lib == URCU_MEMB)
		read_urcu_memb(&iso_stop, &sink);
	else
		read_urcu_qsbr(&iso_stop, &sink);
	return NULL;
}

static void free_head(struct orcu_head *h)
{
	free(h);
}

/* One updater step: a synchronize and a call. */
static void update_once(void)
{
	if (iso_lib == ORCU) {
		orcu_synchronize();
		orcu_call(malloc(sizeof(struct orcu_head)), free_head);
	} else if (iso_lib == URCU_MEMB) {
		urcu_m_synchronize();
		urcu_m_call(calloc(1, 64), free);
	} else {
		urcu_q_synchronize();
		urcu_q_call(calloc(1, 64), free);
	}
}

static uint64_t orcu_gps(void)
{
	struct orcu_stats s;

	orcu_get_stats(&s);
	return s.gp_completed;
}

/* __isolation <orcu|urcu-memb|urcu-qsbr> <update 0|1> <ms> */
int child_isolation(int argc, char **argv)
{
	int update = argc > 3 && atoi(argv[3]);
	long ms = argc > 4 ? atol(argv[4]) : 2000;
	pthread_t ti, tb;
	cpu_set_t set;
	uint64_t t0, t1, g0 = 0, g1 = 0, syncs = 0, q_ipis = 0, q_gps = 0, q_ns = 0;
	long c0, c1;

	iso_lib = argc > 2 && !strcmp(argv[2], "urcu-memb") ? URCU_MEMB :
		  argc > 2 && !strcmp(argv[2], "urcu-qsbr") ? URCU_QSBR :
							       ORCU;
	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < 2)
		return 3;
	busy_cpu = iso_cpu = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (busy_cpu < 0)
				busy_cpu = c;
			iso_cpu = c;
		}
	bench_gp = calloc(1, sizeof(*bench_gp));
	if (iso_lib == ORCU) {
		/* As an isolated setup configures it: library threads stay
		 * off the isolated CPU (liburcu's call_rcu thread inherits
		 * the updater's CPU below). */
		char hk[16];

		snprintf(hk, sizeof(hk), "%d", busy_cpu);
		setenv("ORCU_HOUSEKEEPING", hk, 1);
		/* Started here, with the process's whole mask: started by the
		 * isolated reader, it would see that CPU alone. */
		if (orcu_init(NULL) < 0)
			return 3;
	}
	pin(busy_cpu);
	if (pthread_create(&ti, NULL, iso_reader, NULL) ||
	    pthread_create(&tb, NULL, busy_reader, NULL))
		return 3;
	while (!atomic_load(&iso_ready))
		sched_yield();
	/* Warm up: threads started, first grace periods run. */
	for (uint64_t end = now_ns() + 200000000ull; now_ns() < end;)
		if (update)
			update_once();
		else
			sleep_ns(1000000);
	atomic_store(&iso_measure, 1);
	c0 = cal_count(iso_cpu);
	g0 = iso_lib == ORCU ? orcu_gps() : 0;
	t0 = now_ns();
	for (t1 = t0; t1 - t0 < (uint64_t)ms * 1000000ull;) {
		long sc0 = cal_count(iso_cpu), sc1;
		uint64_t sg0 = iso_lib == ORCU ? orcu_gps() : syncs, sg1, st0 = now_ns();

		atomic_store(&iso_slice_gap, 0);
		for (t1 = st0; t1 - st0 < SLICE_MS * 1000000ull; t1 = now_ns()) {
			if (update) {
				update_once();
				syncs++;
			} else {
				sleep_ns(1000000);
			}
		}
		sc1 = cal_count(iso_cpu);
		sg1 = iso_lib == ORCU ? orcu_gps() : syncs;
		if (atomic_load(&iso_slice_gap) <= QUIET_GAP_US * 1000ull && sc0 >= 0 && sc1 >= 0) {
			q_ipis += (uint64_t)(sc1 - sc0);
			q_gps += sg1 - sg0;
			q_ns += t1 - st0;
		}
	}
	c1 = cal_count(iso_cpu);
	g1 = iso_lib == ORCU ? orcu_gps() : syncs;
	atomic_store(&iso_stop, 1);
	pthread_join(ti, NULL);
	pthread_join(tb, NULL);
	printf("iso_cpu %d\n", iso_cpu);
	printf("ipis_per_s %.6g\n", c0 < 0 || c1 < 0 ? NAN : (double)(c1 - c0) * 1e9 / (double)(t1 - t0));
	printf("gps_per_s %.6g\n", (double)(g1 - g0) * 1e9 / (double)(t1 - t0));
	printf("ipis_per_gp %.6g\n", g1 > g0 && c0 >= 0 ? (double)(c1 - c0) / (double)(g1 - g0) : NAN);
	printf("max_gap_us %.6g\n", (double)atomic_load(&iso_max_gap) / 1e3);
	printf("quiet_share %.6g\n", (double)q_ns / (double)(t1 - t0));
	printf("quiet_ipis_per_s %.6g\n", q_ns ? (double)q_ipis * 1e9 / (double)q_ns : NAN);
	printf("quiet_ipis %llu\nquiet_gps %llu\n", (unsigned long long)q_ipis,
	       (unsigned long long)q_gps);
	fflush(stdout);
	_exit(0);
}

/* ------------------------------------------------------------------ */

struct iso_row {
	const char *name, *lib, *setup;
	int update;
	double v[6][64];
	double q_ipis, q_gps; /* summed over the runs' quiet slices */
};

/* The child's figures, in the order of the table's columns. */
static const char *const iso_keys[6] = { "ipis_per_s", "quiet_ipis_per_s", "ipis_per_gp",
					 "quiet_share", "gps_per_s", "max_gap_us" };

int scen_isolation(void)
{
	static struct iso_row rows[] = {
		{ .name = "orcu", .lib = "orcu", .setup = "qsbr isolated, memb busy, updater", .update = 1 },
		{ .name = "orcu idle", .lib = "orcu", .setup = "the same, updater idle" },
		{ .name = "liburcu memb", .lib = "urcu-memb", .setup = "memb isolated, memb busy, updater", .update = 1 },
		{ .name = "liburcu qsbr", .lib = "urcu-qsbr", .setup = "qsbr isolated, qsbr busy, updater", .update = 1 },
	};
	enum { NROWS = sizeof(rows) / sizeof(rows[0]) };
	int reps = opt.reps > 64 ? 64 : opt.reps;
	char ms[32], meas[160];
	FILE *md = out_open("isolation.md");
	struct jdoc *d = jdoc_new("isolation");
	struct summ s[NROWS][6];
	struct kv kv;
	int cpu = -1;

	snprintf(ms, sizeof(ms), "%d", opt.ms < 1000 ? 1000 : opt.ms);
	for (int r = 0; r < reps; r++) {
		for (int k = 0; k < NROWS; k++) {
			char *argv[] = { (char *)opt.self, "__isolation", (char *)rows[k].lib,
					 rows[k].update ? "1" : "0", ms, NULL };

			if (run_child(argv, NULL, &kv) < 0) {
				fprintf(stderr, "orcu-bench isolation: needs two CPUs\n");
				fclose(md);
				return -1;
			}
			cpu = (int)kv_get(&kv, "iso_cpu", -1);
			for (int c = 0; c < 6; c++)
				rows[k].v[c][r] = kv_get(&kv, iso_keys[c], NAN);
			rows[k].q_ipis += kv_get(&kv, "quiet_ipis", 0);
			rows[k].q_gps += kv_get(&kv, "quiet_gps", 0);
		}
	}
	printf("== isolation: IPIs received by the isolated CPU %d (only reads) while the other "
	       "runs a busy reader and an updater; %d runs of %s ms, median [min-max]; quiet: "
	       "%d ms slices in which the spinning loop never lost its CPU for over %d us ==\n",
	       cpu, reps, ms, SLICE_MS, QUIET_GAP_US);
	printf("%-13s %-22s %-24s %-22s %-30s %-17s %-16s %s\n", "library", "IPIs/s", "IPIs per GP",
	       "IPIs/s quiet", "IPIs per GP quiet (IPIs/GPs)", "quiet share", "GPs/s", "max gap us");
	fprintf(md, "## isolation: IPIs to a CPU that only reads\n\n"
		"The isolated CPU (%d) runs a spinning reader; the other runs a busy reader and an "
		"updater (synchronize + call in a loop).  orcu: qsbr reader isolated, memb reader "
		"busy, library threads on the busy CPU (`ORCU_HOUSEKEEPING`), and the same with "
		"the updater idle; liburcu memb: memb readers on both; liburcu qsbr: qsbr readers "
		"on both.  Function-call IPIs the isolated CPU received (the CAL line of "
		"/proc/interrupts: the whole machine's, so on this shared machine another "
		"process's thread running there brings its own) per second and per grace period "
		"(liburcu: per synchronize); the same in the quiet %d ms slices, those in which "
		"the spinning loop never lost its CPU for over %d us (summed over the runs); the "
		"largest gap the spinning loop saw (as osnoise measures; here mostly other "
		"processes).  %d runs of %s ms, median [min-max].\n\n"
		"| library | IPIs/s | IPIs per GP | IPIs/s, quiet | IPIs per GP, quiet | quiet share "
		"| GPs/s | max gap, us |\n|---|---|---|---|---|---|---|---|\n",
		cpu, SLICE_MS, QUIET_GAP_US, reps, ms);
	for (int k = 0; k < NROWS; k++) {
		double qpg = rows[k].q_gps > 0 ? rows[k].q_ipis / rows[k].q_gps : NAN;
		char q[64];

		for (int c = 0; c < 6; c++)
			s[k][c] = summarize(rows[k].v[c], reps);
		snprintf(q, sizeof(q), "%.4f (%.0f/%.0f)", qpg, rows[k].q_ipis, rows[k].q_gps);
		printf("%-13s %6.1f [%.1f-%.1f] %7.4f [%.4f-%.4f] %6.1f [%.1f-%.1f] %-30s %.2f [%.2f-%.2f] "
		       "%6.0f [%.0f-%.0f] %.0f [%.0f-%.0f]\n",
		       rows[k].name, s[k][0].med, s[k][0].min, s[k][0].max, s[k][2].med, s[k][2].min,
		       s[k][2].max, s[k][1].med, s[k][1].min, s[k][1].max, q, s[k][3].med,
		       s[k][3].min, s[k][3].max, s[k][4].med, s[k][4].min, s[k][4].max, s[k][5].med,
		       s[k][5].min, s[k][5].max);
		fprintf(md, "| %s | %.1f [%.1f-%.1f] | %.4f [%.4f-%.4f] | %.1f [%.1f-%.1f] | %s | %.2f | "
			"%.0f | %.0f [%.0f-%.0f] |\n",
			rows[k].name, s[k][0].med, s[k][0].min, s[k][0].max, s[k][2].med, s[k][2].min,
			s[k][2].max, s[k][1].med, s[k][1].min, s[k][1].max, q, s[k][3].med,
			s[k][4].med, s[k][5].med, s[k][5].min, s[k][5].max);
		jdoc_row_begin(d);
		jdoc_str(d, "library", rows[k].name);
		for (int c = 0; c < 6; c++)
			jdoc_summ(d, iso_keys[c], s[k][c]);
		jdoc_num(d, "quiet_ipis", rows[k].q_ipis);
		jdoc_num(d, "quiet_gps", rows[k].q_gps);
		jdoc_row_end(d);
	}
	for (int k = 2; k < NROWS; k++) {
		char r[64];

		if (s[k][0].med > 0)
			snprintf(r, sizeof(r), "%.3fx", s[0][0].med / s[k][0].med);
		else
			snprintf(r, sizeof(r), "none (median)");
		fprintf(md, "%sorcu / %s: %s%s", k == 2 ? "\nIPIs per second on the isolated CPU, " : "",
			rows[k].name, r, k + 1 < NROWS ? "; " : ".\n\n");
		printf("%sorcu / %s %s%s", k == 2 ? "IPIs/s " : "", rows[k].name, r,
		       k + 1 < NROWS ? ", " : "\n\n");
	}
	snprintf(meas, sizeof(meas), "%.4f IPIs per GP [%.4f-%.4f], quiet slices %.4f",
		 s[0][2].med, s[0][2].min, s[0][2].max,
		 rows[0].q_gps > 0 ? rows[0].q_ipis / rows[0].q_gps : NAN);
	target_row("isolation", "isolation: <= 1 IPI per 100 GPs on a CPU that only reads", meas,
		   s[0][2].med <= 0.01);
	jdoc_write(d);
	fclose(md);
	return 0;
}
