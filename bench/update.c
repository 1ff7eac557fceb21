/*
 * update.c - the update side under load, modelled on liburcu's test_urcu:
 * N readers read the published object flat out while one updater replaces
 * it flat out, either waiting for a grace period and freeing the old
 * object itself (synchronize) or handing it to a callback (call_rcu).
 * Writes/s and reads/s for orcu and liburcu, memb and qsbr, side by side.
 * Retired objects are poisoned (val = 0) before they are freed; a reader
 * that ever reads a poisoned object counts a violation (RCU is broken).
 */
#include <orcu.h>

#include "bench.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The published object with room behind it for any library's head. */
struct uobj {
	struct bobj b;   /* first: readers see a struct bobj */
	union {
		struct orcu_head oh;
		char peer[32];
	} u;
};

enum umode { UPD_SYNC, UPD_CALL };
static const char *const mode_names[] = { "synchronize", "call_rcu" };

struct ulib {
	const char *name;
	const char *flavor;
	bool orcu;
	read_loop_fn loop;
};

/* Pairs: index 2k is orcu, 2k+1 the liburcu flavor it is compared with. */
static const struct ulib ulibs[] = {
	{ "orcu", "memb", true, read_orcu_memb },
	{ "liburcu", "memb", false, read_urcu_memb },
	{ "orcu", "qsbr", true, read_orcu_qsbr },
	{ "liburcu", "qsbr", false, read_urcu_qsbr },
};
#define NULIB ((int)(sizeof(ulibs) / sizeof(ulibs[0])))

static _Atomic long violations;

static struct uobj *uobj_new(void)
{
	struct uobj *o = malloc(sizeof(*o));

	if (!o)
		abort();
	memset(o, 0, sizeof(*o));
	o->b.val = 1;
	return o;
}

/* After the grace period: no reader may still see it, so poison it. */
static void uobj_retire(struct uobj *o)
{
	__atomic_store_n(&o->b.val, 0, __ATOMIC_RELAXED);
	free(o);
}

static void orcu_retire_cb(struct orcu_head *h)
{
	uobj_retire((struct uobj *)((char *)h - offsetof(struct uobj, u)));
}

static void peer_retire_cb(void *mem)
{
	uobj_retire((struct uobj *)((char *)mem - offsetof(struct uobj, u)));
}

/* ------------------------------------------------------------------ */
/* Threads */

/* Unlike the read scenario's readers (charged their own CPU time), these
 * count reads per second of wall time: an update side that takes CPUs
 * away from busy readers must show up in their figure.  Their CPU time is
 * kept too, to tell a slower read side from a reader that ran less. */
struct ureader {
	pthread_t tid;
	read_loop_fn loop;
	const _Atomic int *stop;
	_Atomic int started;
	uint64_t n, t0, t1, cpu_ns;
};

static void *ureader_main(void *p)
{
	struct ureader *r = p;
	long sum = 0;

	atomic_store(&r->started, 1);
	r->t0 = now_ns();
	r->cpu_ns = thread_cpu_ns();
	r->n = r->loop(r->stop, &sum);
	r->cpu_ns = thread_cpu_ns() - r->cpu_ns;
	r->t1 = now_ns();
	/* Every object a reader can legally see has val 1. */
	if ((uint64_t)sum != r->n)
		atomic_fetch_add(&violations, (long)(r->n - (uint64_t)sum));
	return NULL;
}

struct uupdater {
	pthread_t tid;
	const struct ulib *lib;
	enum umode mode;
	const _Atomic int *stop;
	struct lhist *lat;   /* synchronize: each write's latency, replace to free */
	uint64_t n, t0, t1;
};

static void update_sync(const struct ulib *l)
{
	struct uobj *o = uobj_new(), *old;

	if (l->orcu) {
		old = (struct uobj *)orcu_xchg_pointer(&bench_gp, &o->b);
		orcu_synchronize();
	} else {
		old = (struct uobj *)__atomic_exchange_n(&bench_gp, &o->b, __ATOMIC_SEQ_CST);
		if (!strcmp(l->flavor, "memb"))
			urcu_m_synchronize();
		else
			urcu_q_synchronize();
	}
	uobj_retire(old);
}

/* call_rcu needs a registered caller in liburcu; a registered qsbr
 * updater announces a quiescent state after each write, as a qsbr
 * program's update loop would.  orcu's updater is registered the same way. */
static void update_call(const struct ulib *l, bool qsbr)
{
	struct uobj *o = uobj_new(), *old;

	if (l->orcu) {
		old = (struct uobj *)orcu_xchg_pointer(&bench_gp, &o->b);
		orcu_call(&old->u.oh, orcu_retire_cb);
		if (qsbr)
			orcu_quiescent_state();
	} else {
		old = (struct uobj *)__atomic_exchange_n(&bench_gp, &o->b, __ATOMIC_SEQ_CST);
		if (qsbr) {
			urcu_q_call(&old->u, peer_retire_cb);
			urcu_q_quiescent();
		} else {
			urcu_m_call(&old->u, peer_retire_cb);
		}
	}
}

static void *uupdater_main(void *p)
{
	struct uupdater *u = p;
	const struct ulib *l = u->lib;
	bool qsbr = !strcmp(l->flavor, "qsbr");

	if (u->mode == UPD_CALL) {
		if (l->orcu && (qsbr ? orcu_register_thread_qsbr() : orcu_register_thread()) < 0)
			abort();
		if (!l->orcu) {
			if (qsbr)
				urcu_q_register();
			else
				urcu_m_register();
		}
	}
	/* At least one write, timed from our own start: on a busy machine this
	 * thread may first run after the window closed. */
	u->t0 = now_ns();
	do {
		if (u->mode == UPD_SYNC) {
			uint64_t t = now_ns();

			update_sync(l);
			lhist_add(u->lat, now_ns() - t);
		} else {
			/* Untimed: two clock reads would cost as much as a post. */
			update_call(l, qsbr);
		}
		u->n++;
	} while (!atomic_load_explicit(u->stop, memory_order_relaxed));
	u->t1 = now_ns();
	if (u->mode == UPD_CALL) {
		if (l->orcu) {
			orcu_unregister_thread();
		} else if (qsbr) {
			urcu_q_unregister();
		} else {
			urcu_m_unregister();
		}
	}
	return NULL;
}

struct upoint {
	/* reads_cpu: reads per second of reader CPU time, readers summed;
	 * rd_cpu: the readers' CPU time over wall time (2.0 = two CPUs). */
	double writes_s, reads_s, gp_us_per_write, reads_cpu, rd_cpu;
};

/* One run: nr readers and the updater together for ms, then every
 * callback invoked (untimed) so runs do not overlap. */
static struct upoint update_run(const struct ulib *l, enum umode mode, int nr, int ms,
			       struct lhist *lat)
{
	struct ureader r[64];
	struct uupdater u = { 0 };
	_Atomic int stop = 0, ustop = 0;
	struct orcu_stats s0, s1;
	struct upoint pt = { 0, 0, 0, 0, 0 };

	orcu_get_stats(&s0);
	for (int i = 0; i < nr; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].loop = l->loop;
		r[i].stop = &stop;
		pthread_create(&r[i].tid, NULL, ureader_main, &r[i]);
	}
	/* The updater starts once the readers run and have registered (the
	 * first thing their loops do): a grace period with no reader
	 * registered yet is a different, cheaper path in both libraries. */
	for (int i = 0; i < nr; i++)
		while (!atomic_load(&r[i].started))
			sleep_ns(100000);
	sleep_ns(10000000);
	u.lib = l;
	u.mode = mode;
	u.stop = &ustop;
	u.lat = lat;
	pthread_create(&u.tid, NULL, uupdater_main, &u);
	sleep_ns((uint64_t)ms * 1000000ull);
	/* The updater stops first: a qsbr updater waits for readers' QS. */
	atomic_store(&ustop, 1);
	pthread_join(u.tid, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < nr; i++) {
		pthread_join(r[i].tid, NULL);
		pt.reads_s += (double)r[i].n * 1e9 / (double)(r[i].t1 - r[i].t0);
		if (r[i].cpu_ns)
			pt.reads_cpu += (double)r[i].n * 1e9 / (double)r[i].cpu_ns;
		pt.rd_cpu += (double)r[i].cpu_ns / (double)(r[i].t1 - r[i].t0);
	}
	pt.writes_s = (double)u.n * 1e9 / (double)(u.t1 - u.t0);
	orcu_get_stats(&s1);
	if (l->orcu && u.n)
		pt.gp_us_per_write = (double)(s1.gp_thread_cpu_ns - s0.gp_thread_cpu_ns) / 1e3 /
				     (double)u.n;
	if (mode == UPD_CALL) {
		if (l->orcu)
			orcu_barrier();
		else if (!strcmp(l->flavor, "qsbr"))
			urcu_q_barrier();
		else
			urcu_m_barrier();
	}
	return pt;
}

int scen_update(void)
{
	int rcounts[2] = { 1, opt.nproc > 1 ? opt.nproc : 2 };
	/* Busy readers, an updater and library threads share the CPUs, so a
	 * run's figures swing with the scheduler (+-30% at 5 runs of 200 ms):
	 * at least 9 runs of 400 ms each, for medians that hold still. */
	int reps = opt.reps > 9 ? opt.reps : 9, ms = opt.ms > 400 ? opt.ms : 400;
	struct jdoc *d = jdoc_new("update");
	FILE *md = out_open("update.md");
	/* [mode][lib][readers][rep] */
	static double w[2][NULIB][2][64], rd[2][NULIB][2][64], gpc[2][NULIB][2][64];
	static double rc[2][NULIB][2][64], rcpu[2][NULIB][2][64];
	/* synchronize mode: every write's latency, pooled over the runs */
	static struct lhist lat[NULIB][2];
	struct summ sw[2][NULIB][2], sr[2][NULIB][2], sg[2][NULIB][2];
	struct summ src[2][NULIB][2], sru[2][NULIB][2];
	char meas[400], tgt[160];

	/* Our objects carry room for a head: publish one before any run, and
	 * use every library once outside the measured runs. */
	{
		struct bobj *old = __atomic_exchange_n(&bench_gp, &uobj_new()->b,
						       __ATOMIC_SEQ_CST);

		orcu_synchronize();
		urcu_m_synchronize();
		urcu_q_synchronize();
		free(old);
	}
	atomic_store(&violations, 0);
	for (int ri = 0; ri < 2; ri++)
		for (int k = 0; k < reps; k++)
			for (int m = 0; m < 2; m++)
				for (int l = 0; l < NULIB; l++) {
					struct upoint pt = update_run(&ulibs[l], (enum umode)m,
								      rcounts[ri], ms, &lat[l][ri]);

					w[m][l][ri][k] = pt.writes_s;
					rd[m][l][ri][k] = pt.reads_s;
					gpc[m][l][ri][k] = pt.gp_us_per_write;
					rc[m][l][ri][k] = pt.reads_cpu;
					rcpu[m][l][ri][k] = pt.rd_cpu;
				}
	for (int m = 0; m < 2; m++)
		for (int l = 0; l < NULIB; l++)
			for (int ri = 0; ri < 2; ri++) {
				sw[m][l][ri] = summarize(w[m][l][ri], reps);
				sr[m][l][ri] = summarize(rd[m][l][ri], reps);
				sg[m][l][ri] = summarize(gpc[m][l][ri], reps);
				src[m][l][ri] = summarize(rc[m][l][ri], reps);
				sru[m][l][ri] = summarize(rcpu[m][l][ri], reps);
			}
	printf("== update: 1 updater flat out (replace, wait or post, free) with N busy readers; "
	       "median of %d runs of %d ms ==\n", reps, ms);
	printf("%-12s %-5s %-7s %22s %22s %7s %20s %20s %7s %11s %9s %9s %17s %17s %6s\n",
	       "mode", "flav", "readers", "orcu writes/s", "liburcu writes/s", "ratio",
	       "orcu reads/s (M)", "liburcu reads/s (M)", "ratio", "rd CPUs o/u", "rd/CPU-s",
	       "GP us/wr", "orcu p99.9/max", "liburcu p99.9/max", "max x");
	fprintf(md, "## update: writes/s and reads/s, one updater and N busy readers\n\n"
		"Modelled on liburcu's test_urcu: N readers dereference the published object "
		"flat out (qsbr: a quiescent state every %d reads) while one updater replaces it "
		"flat out and either waits for a grace period and frees the old object "
		"(synchronize) or posts it to a callback that frees it (call_rcu; the updater is "
		"then a registered reader of that flavor, and a qsbr one announces a quiescent "
		"state after each write). Retired objects are poisoned before they are freed; "
		"readers that saw one: %ld. The libraries take turns run by run. Median of %d "
		"runs of %d ms [min-max]; writes/s and reads/s (all readers, millions) over wall "
		"time; reader CPUs = the readers' CPU time over wall time, orcu / liburcu (the "
		"CPUs they got beside the updater and library threads); reads per reader CPU-s = "
		"the ratio of reads per second of the readers' own CPU time; GP us/write = orcu "
		"GP-thread CPU time per write; p99.9 / max = the latency of one write (replace, "
		"wait, free) in us, every write of every run pooled (synchronize only: timing "
		"each call_rcu write would cost as much as the post).\n\n"
		"| mode | flavor | readers | orcu writes/s | liburcu writes/s | ratio | orcu "
		"reads/s (M) | liburcu reads/s (M) | ratio | reader CPUs | reads per reader CPU-s, "
		"ratio | orcu GP-thread us/write | orcu p99.9 / max us | liburcu p99.9 / max us | "
		"max ratio |\n"
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n", BENCH_QS_EVERY,
		atomic_load(&violations), reps, ms);
	jdoc_param(d, "ms_per_run", ms);
	jdoc_param(d, "qs_every", BENCH_QS_EVERY);
	jdoc_param(d, "violations", (double)atomic_load(&violations));
	for (int m = 0; m < 2; m++) {
		for (int p = 0; p < NULIB; p += 2) {
			bool met = true;
			int mpos = 0;

			meas[0] = 0;
			for (int ri = 0; ri < 2; ri++) {
				struct summ *wo = &sw[m][p][ri], *wu = &sw[m][p + 1][ri];
				struct summ *ro = &sr[m][p][ri], *ru = &sr[m][p + 1][ri];
				double wr = wo->med / wu->med, rr = ro->med / ru->med;
				double cr = src[m][p][ri].med / src[m][p + 1][ri].med;
				double co = sru[m][p][ri].med, cu = sru[m][p + 1][ri].med;
				bool timed = m == UPD_SYNC;
				double o999 = lhist_quantile_us(&lat[p][ri], 0.999);
				double u999 = lhist_quantile_us(&lat[p + 1][ri], 0.999);
				double omax = (double)lat[p][ri].max_ns / 1e3;
				double umax = (double)lat[p + 1][ri].max_ns / 1e3;
				char tails[128];

				if (timed)
					snprintf(tails, sizeof(tails), "%.0f / %.0f | %.0f / %.0f | %.2f",
						 o999, omax, u999, umax, omax / umax);
				else
					snprintf(tails, sizeof(tails), "- | - | -");

				printf("%-12s %-5s %-7d %9.0f [%.0f-%.0f] %9.0f [%.0f-%.0f] %7.2f "
				       "%7.1f [%.1f-%.1f] %7.1f [%.1f-%.1f] %7.2f %5.2f/%-5.2f %9.2f %9.2f "
				       "%s\n",
				       mode_names[m], ulibs[p].flavor, rcounts[ri], wo->med, wo->min,
				       wo->max, wu->med, wu->min, wu->max, wr, ro->med / 1e6,
				       ro->min / 1e6, ro->max / 1e6, ru->med / 1e6, ru->min / 1e6,
				       ru->max / 1e6, rr, co, cu, cr, sg[m][p][ri].med, tails);
				fprintf(md, "| %s | %s | %d | %.0f [%.0f-%.0f] | %.0f [%.0f-%.0f] | "
					"%.2f | %.1f [%.1f-%.1f] | %.1f [%.1f-%.1f] | %.2f | %.2f / %.2f | "
					"%.2f | %.2f | %s |\n",
					mode_names[m], ulibs[p].flavor, rcounts[ri], wo->med, wo->min,
					wo->max, wu->med, wu->min, wu->max, wr, ro->med / 1e6,
					ro->min / 1e6, ro->max / 1e6, ru->med / 1e6, ru->min / 1e6,
					ru->max / 1e6, rr, co, cu, cr, sg[m][p][ri].med, tails);
				for (int l = p; l < p + 2; l++) {
					jdoc_row_begin(d);
					jdoc_str(d, "mode", mode_names[m]);
					jdoc_str(d, "library", ulibs[l].name);
					jdoc_str(d, "flavor", ulibs[l].flavor);
					jdoc_num(d, "readers", rcounts[ri]);
					jdoc_summ(d, "writes_per_s", sw[m][l][ri]);
					jdoc_summ(d, "reads_per_s", sr[m][l][ri]);
					jdoc_summ(d, "reads_per_reader_cpu_s", src[m][l][ri]);
					jdoc_summ(d, "reader_cpus", sru[m][l][ri]);
					if (ulibs[l].orcu)
						jdoc_summ(d, "gp_thread_us_per_write", sg[m][l][ri]);
					if (timed) {
						jdoc_num(d, "write_p999_us",
							 lhist_quantile_us(&lat[l][ri], 0.999));
						jdoc_num(d, "write_max_us",
							 (double)lat[l][ri].max_ns / 1e3);
					}
					jdoc_row_end(d);
				}
				met = met && wr >= 1.0 && rr >= 1.0 && (!timed || omax <= 2 * umax);
				mpos += snprintf(meas + mpos, sizeof(meas) - (size_t)mpos,
						 "%s%d rd: writes %.2fx (%.0f vs %.0f/s), reads %.2fx "
						 "(per reader CPU-s %.2fx)",
						 ri ? "; " : "", rcounts[ri], wr, wo->med, wu->med, rr, cr);
				if (timed)
					mpos += snprintf(meas + mpos, sizeof(meas) - (size_t)mpos,
							 ", max %.2fx", omax / umax);
			}
			snprintf(tgt, sizeof(tgt), "update (%s) %s: writes/s >= 1.0x liburcu, "
				 "reads/s >= 1.0x liburcu%s", mode_names[m], ulibs[p].flavor,
				 m == UPD_SYNC ? ", write max <= 2.0x" : "");
			target_row("update", tgt, meas, met && atomic_load(&violations) == 0);
		}
	}
	printf("readers that saw a retired object: %ld\n\n", atomic_load(&violations));
	fprintf(md, "\n");
	jdoc_write(d);
	fclose(md);
	return 0;
}
