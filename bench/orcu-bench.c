/*
 * orcu-bench.c - orcu side by side with liburcu (memb, qsbr), ck_epoch, a
 * pthread rwlock and an unsynchronised read, in one run on one machine.
 * Every figure is the median of --reps runs with min-max; comparisons are
 * ratios.  This file: main, the read-side scenario and synchronize
 * latency.  cb.c: callback scenarios.  topo.c: the child-process
 * scenarios (flood, scale, idle, threads, lazy).  isolation.c: IPIs to a
 * CPU that only reads.  free.c and retire.cc:
 * orcu_free and the C++ retire against liburcu's call_rcu(free).
 */
#include <orcu.h>

#include "bench.h"
#include "hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

struct bobj *bench_gp;
struct headline hl;

/* ------------------------------------------------------------------ */
/* Read loops that need no special translation unit */

uint64_t read_orcu_memb(const _Atomic int *stop, long *sink)
{
	uint64_t n = 0;
	long sum = 0;

	if (orcu_register_thread() < 0)
		abort();
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_INNER; i++) {
			struct bobj *p;

			orcu_read_lock();
			p = orcu_dereference(bench_gp);
			sum += p->val;
			orcu_read_unlock();
		}
		n += BENCH_INNER;
	}
	orcu_unregister_thread();
	*sink = sum;
	return n;
}

static pthread_rwlock_t rwl = PTHREAD_RWLOCK_INITIALIZER;

uint64_t read_rwlock(const _Atomic int *stop, long *sink)
{
	uint64_t n = 0;
	long sum = 0;

	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_INNER; i++) {
			struct bobj *p;

			pthread_rwlock_rdlock(&rwl);
			p = __atomic_load_n(&bench_gp, __ATOMIC_RELAXED);
			sum += p->val;
			pthread_rwlock_unlock(&rwl);
		}
		n += BENCH_INNER;
	}
	*sink = sum;
	return n;
}

uint64_t read_unsync(const _Atomic int *stop, long *sink)
{
	uint64_t n = 0;
	long sum = 0;

	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (int i = 0; i < BENCH_INNER; i++) {
			struct bobj *p = __atomic_load_n(&bench_gp, __ATOMIC_RELAXED);

			sum += p->val;
		}
		n += BENCH_INNER;
	}
	*sink = sum;
	return n;
}

/* ------------------------------------------------------------------ */
/* Updaters: replace the object, wait for readers the flavor's way, free. */

static struct bobj *new_obj(void)
{
	struct bobj *o = calloc(1, sizeof(*o));

	if (!o)
		abort();
	o->val = 1;
	return o;
}

static void upd_orcu(void)
{
	struct bobj *old = orcu_xchg_pointer(&bench_gp, new_obj());

	orcu_synchronize();
	free(old);
}

static void upd_urcu_memb(void)
{
	struct bobj *old = __atomic_exchange_n(&bench_gp, new_obj(), __ATOMIC_SEQ_CST);

	urcu_m_synchronize();
	free(old);
}

static void upd_urcu_qsbr(void)
{
	struct bobj *old = __atomic_exchange_n(&bench_gp, new_obj(), __ATOMIC_SEQ_CST);

	urcu_q_synchronize();
	free(old);
}

static void upd_ck(void)
{
	struct bobj *old = __atomic_exchange_n(&bench_gp, new_obj(), __ATOMIC_SEQ_CST);

	ck_synchronize_rec(ck_thread_rec());
	free(old);
}

static void upd_rwlock(void)
{
	struct bobj *o = new_obj(), *old;

	pthread_rwlock_wrlock(&rwl);
	old = bench_gp;
	__atomic_store_n(&bench_gp, o, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&rwl);
	free(old);
}

static void upd_unsync(void)
{
	/* Nothing can be freed safely: just make the readers' line bounce. */
	struct bobj *p = __atomic_load_n(&bench_gp, __ATOMIC_RELAXED);

	__atomic_store_n(&p->val, p->val + 1, __ATOMIC_RELAXED);
}

struct flavor {
	const char *name;
	read_loop_fn loop;
	void (*update)(void);
};

static const struct flavor flavors[] = {
	{ "orcu-memb", read_orcu_memb, upd_orcu },
	{ "orcu-qsbr", read_orcu_qsbr, upd_orcu },
	{ "urcu-memb", read_urcu_memb, upd_urcu_memb },
	{ "urcu-qsbr", read_urcu_qsbr, upd_urcu_qsbr },
	{ "ck_epoch", read_ck, upd_ck },
	{ "rwlock", read_rwlock, upd_rwlock },
	{ "unsync", read_unsync, upd_unsync },
};
#define NFLAV ((int)(sizeof(flavors) / sizeof(flavors[0])))

/* ------------------------------------------------------------------ */
/* One measurement: n readers (and maybe an updater) for opt.ms */

struct rthread {
	pthread_t tid;
	read_loop_fn loop;
	const _Atomic int *stop;
	_Atomic int started;   /* set before the loop (which registers first) */
	uint64_t n, ns;
	long sink;
};

/* The reader's own CPU time, not wall time: on a shared 2-CPU machine a
 * reader preempted by someone else's work would otherwise be charged for
 * it.  Cache-line traffic caused by an updater still shows. */
static void *reader_main(void *p)
{
	struct rthread *r = p;
	uint64_t t0 = thread_cpu_ns();

	atomic_store(&r->started, 1);
	r->n = r->loop(r->stop, &r->sink);
	r->ns = thread_cpu_ns() - t0;
	return NULL;
}

struct uthread {
	pthread_t tid;
	void (*update)(void);
	const _Atomic int *stop;
	uint64_t n;
};

#define UPDATE_PERIOD_NS 100000ull  /* one update (publish + wait + free) per 100 us */

static void *updater_main(void *p)
{
	struct uthread *u = p;

	while (!atomic_load_explicit(u->stop, memory_order_relaxed)) {
		u->update();
		u->n++;
		sleep_ns(UPDATE_PERIOD_NS);
	}
	if (u->update == upd_ck)
		ck_rec_free(ck_thread_rec());
	return NULL;
}

/* Returns reader CPU ns per read-side section; *ups = updates/s. */
static double read_point(const struct flavor *f, int nreaders, bool updater,
			 int ms, double *ups)
{
	struct rthread r[64];
	struct uthread u = { 0 };
	_Atomic int stop = 0, ustop = 0;
	uint64_t t0, tot_ns = 0, tot_n = 0;

	for (int i = 0; i < nreaders; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].loop = f->loop;
		r[i].stop = &stop;
		pthread_create(&r[i].tid, NULL, reader_main, &r[i]);
	}
	if (updater) {
		u.update = f->update;
		u.stop = &ustop;
		pthread_create(&u.tid, NULL, updater_main, &u);
	}
	t0 = now_ns();
	sleep_ns((uint64_t)ms * 1000000ull);
	/* The updater stops first: a qsbr updater waits for readers' QS. */
	atomic_store(&ustop, 1);
	if (updater)
		pthread_join(u.tid, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < nreaders; i++) {
		pthread_join(r[i].tid, NULL);
		tot_ns += r[i].ns;
		tot_n += r[i].n;
	}
	if (ups)
		*ups = updater ? (double)u.n * 1e9 / (double)(now_ns() - t0) : 0;
	/* Weighted: a reader that barely ran (machine busy) counts little. */
	return (double)tot_ns / (double)(tot_n ? tot_n : 1);
}

static void read_warmup(void)
{
	if (!bench_gp)
		bench_gp = new_obj();
	ck_init_global();
	/* Start each library once so no first-use cost lands in a point. */
	orcu_synchronize();
	urcu_m_synchronize();
	urcu_q_synchronize();
}

int scen_read(int headline)
{
	int maxr = opt.nproc < 64 ? opt.nproc : 64;
	int reps = opt.reps, ms = headline ? 600 : opt.ms;
	struct jdoc *d = headline ? NULL : jdoc_new("read");
	FILE *md = headline ? NULL : out_open("read.md");
	FILE *dat = headline ? NULL : out_open("read.dat");
	double idle1[NFLAV] = { 0 };
	char meas[160];

	read_warmup();
	if (!headline) {
		jdoc_param(d, "ms_per_point", ms);
		jdoc_param(d, "qs_every", BENCH_QS_EVERY);
		jdoc_param(d, "updater_period_us", UPDATE_PERIOD_NS / 1000.0);
		printf("== read: ns per read-side section (lock, dereference, use, unlock); "
		       "median of %d x %d ms, [min-max] ==\n", reps, ms);
		fprintf(md, "## read: ns per read-side critical section\n\n"
			"Each reader loops lock, dereference, use, unlock (cost = the reader thread's CPU time / sections, so time lost to preemption by other work is not charged); qsbr loops announce a "
			"quiescent state every %d reads. Updater: one replace + grace period + "
			"free every ~%llu us. Median of %d runs of %d ms, [min-max].\n\n",
			BENCH_QS_EVERY, UPDATE_PERIOD_NS / 1000, reps, ms);
		fprintf(md, "| readers | updater |");
		for (int f = 0; f < NFLAV; f++)
			fprintf(md, " %s |", flavors[f].name);
		fprintf(md, "\n|---|---|");
		for (int f = 0; f < NFLAV; f++)
			fprintf(md, "---|");
		fprintf(md, "\n");
		fprintf(dat, "# readers");
		for (int f = 0; f < NFLAV; f++)
			fprintf(dat, " %s", flavors[f].name);
		fprintf(dat, "  (idle, then with updater)\n");
		printf("%-8s %-8s", "readers", "updater");
		for (int f = 0; f < NFLAV; f++)
			printf(" %20s", flavors[f].name);
		printf("\n");
	}
	for (int upd = 0; upd <= (headline ? 0 : 1); upd++) {
		for (int nr = 1; nr <= (headline ? 1 : maxr); nr++) {
			double med[NFLAV];

			if (!headline) {
				printf("%-8d %-8s", nr, upd ? "yes" : "no");
				fprintf(md, "| %d | %s |", nr, upd ? "yes" : "no");
				fprintf(dat, "%d", nr + (upd ? 1000 : 0));
			}
			double v[NFLAV][64], ups[NFLAV][64];

			/* Runs interleave the flavors, so a change in the machine's
			 * state (other work, frequency) hits every flavor alike. */
			for (int k = 0; k < reps; k++)
				for (int f = 0; f < NFLAV; f++)
					if (!headline || (f != 4 && f != 5))
						v[f][k] = read_point(&flavors[f], nr, upd, ms,
								     &ups[f][k]);
			for (int f = 0; f < NFLAV; f++) {
				struct summ s, su;

				if (headline && (f == 4 || f == 5))
					continue;   /* ck and rwlock are not in the headline */
				s = summarize(v[f], reps);
				su = summarize(ups[f], reps);
				med[f] = s.med;
				if (nr == 1 && !upd)
					idle1[f] = s.med;
				if (headline)
					continue;
				printf(" %6.2f [%5.2f-%6.2f]", s.med, s.min, s.max);
				fflush(stdout);
				fprintf(md, " %.2f [%.2f-%.2f] |", s.med, s.min, s.max);
				fprintf(dat, " %.3f", s.med);
				jdoc_row_begin(d);
				jdoc_str(d, "flavor", flavors[f].name);
				jdoc_num(d, "readers", nr);
				jdoc_num(d, "updater", upd);
				jdoc_summ(d, "ns_per_read", s);
				if (upd)
					jdoc_num(d, "updates_per_s", su.med);
				jdoc_row_end(d);
			}
			(void)med;
			if (!headline) {
				printf("\n");
				fprintf(md, "\n");
				fprintf(dat, "\n");
			}
		}
	}
	hl.read_orcu_memb = idle1[0];
	hl.read_orcu_qsbr = idle1[1];
	hl.read_urcu_memb = idle1[2];
	hl.read_urcu_qsbr = idle1[3];
	hl.read_unsync = idle1[6];
	if (headline)
		return 0;
	fprintf(md, "\nRatios (1 reader, idle): orcu-memb / urcu-memb = %.3f; "
		"orcu-qsbr / unsync = %.3f; orcu-qsbr / urcu-qsbr = %.3f.\n\n",
		idle1[0] / idle1[2], idle1[1] / idle1[6], idle1[1] / idle1[3]);
	printf("ratios (1 reader, idle): orcu-memb/urcu-memb %.3f, orcu-qsbr/unsync %.3f, "
	       "orcu-qsbr/urcu-qsbr %.3f\n\n", idle1[0] / idle1[2], idle1[1] / idle1[6],
	       idle1[1] / idle1[3]);
	snprintf(meas, sizeof(meas), "%.3fx (%.2f vs %.2f ns)", idle1[0] / idle1[2],
		 idle1[0], idle1[2]);
	target_row("read", "read: orcu memb <= 1.0x liburcu memb (1 reader, idle)", meas,
		   idle1[0] <= idle1[2] * 1.0);
	snprintf(meas, sizeof(meas), "%.3fx (%.2f vs %.2f ns)", idle1[1] / idle1[6],
		 idle1[1], idle1[6]);
	target_row("read", "read: orcu qsbr <= 1.05x unsynchronised (1 reader, idle)", meas,
		   idle1[1] <= idle1[6] * 1.05);
	jdoc_write(d);
	fclose(md);
	fclose(dat);
	return 0;
}

/* ------------------------------------------------------------------ */
/* sync: grace-period latency as seen by the caller, with 0, 1 and 2 busy
 * readers of the same library and flavor (memb: lock, read, unlock flat
 * out; qsbr: reads with a quiescent state every BENCH_QS_EVERY).  Two rows
 * mix the kinds under orcu's one engine: "mixed", qsbr readers and a
 * caller registered as a memb reader (outside any section while it
 * synchronizes, as a thread that once called orcu_read_lock() is), against
 * liburcu qsbr with the same readers; "mixed-idle", qsbr readers, a caller
 * registered qsbr and offline, and one more memb reader that sleeps
 * elsewhere, against liburcu memb with busy memb readers (which, like it,
 * must reach every memb thread). */

struct sync_call {
	const char *name;
	const char *flavor;
	read_loop_fn loop;
	void (*sync)(void);
	int peer;     /* index of the liburcu row this one is compared with */
	bool target;  /* this row carries the target */
	void (*enter)(void);   /* the caller's registration, or NULL */
	int idle_memb;         /* memb readers that sleep meanwhile */
};

static void enter_memb(void)
{
	if (orcu_register_thread() < 0)
		abort();
	/* A reader once: its record has held a section. */
	orcu_read_lock();
	orcu_read_unlock();
}

static void enter_qsbr_offline(void)
{
	if (orcu_register_thread_qsbr() < 0)
		abort();
	orcu_thread_offline();
}

static const struct sync_call sync_calls[] = {
	{ "orcu_synchronize", "memb", read_orcu_memb, orcu_synchronize, 2, true, NULL, 0 },
	{ "orcu_synchronize_expedited", "memb", read_orcu_memb, orcu_synchronize_expedited, 2,
	  false, NULL, 0 },
	{ "urcu_memb_synchronize_rcu", "memb", read_urcu_memb, urcu_m_synchronize, 2, false,
	  NULL, 0 },
	{ "orcu_synchronize", "qsbr", read_orcu_qsbr, orcu_synchronize, 4, true, NULL, 0 },
	{ "urcu_qsbr_synchronize_rcu", "qsbr", read_urcu_qsbr, urcu_q_synchronize, 4, false,
	  NULL, 0 },
	{ "orcu_synchronize", "mixed", read_orcu_qsbr, orcu_synchronize, 4, true, enter_memb,
	  0 },
	{ "orcu_synchronize", "mixed-idle", read_orcu_qsbr, orcu_synchronize, 2, true,
	  enter_qsbr_offline, 1 },
};
#define NSYNC ((int)(sizeof(sync_calls) / sizeof(sync_calls[0])))
#define SYNC_MAX_PER_RUN 1000
#define SYNC_MIN_PER_RUN 20       /* so a p99 of slow grace periods means something */
#define SYNC_RUN_CAP_NS 1000000000ull

/* A memb reader that registers, holds one section, then sleeps until
 * told to stop: it costs a GP only what an idle memb thread costs. */
struct idle_memb {
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int registered, stop;
};

static void *idle_memb_main(void *p)
{
	struct idle_memb *m = p;

	if (orcu_register_thread() < 0)
		abort();
	orcu_read_lock();
	orcu_read_unlock();
	pthread_mutex_lock(&m->lock);
	m->registered = 1;
	pthread_cond_broadcast(&m->cond);
	while (!m->stop)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
	orcu_unregister_thread();
	return NULL;
}

static void idle_memb_start(struct idle_memb *m)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	pthread_create(&m->tid, NULL, idle_memb_main, m);
	pthread_mutex_lock(&m->lock);
	while (!m->registered)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

static void idle_memb_stop(struct idle_memb *m)
{
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->tid, NULL);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
}

/* One run: nr busy readers, then synchronize back to back for opt.ms
 * (at most SYNC_MAX_PER_RUN calls; if grace periods are so slow that fewer
 * than SYNC_MIN_PER_RUN fit, on up to 1 s); latencies in us go to out,
 * the time spent in the calls to *busy_ns. */
static size_t sync_run(const struct sync_call *c, int nr, double *out, uint64_t *busy_ns)
{
	struct rthread r[64];
	struct idle_memb im[4];
	_Atomic int stop = 0;
	uint64_t start, end;
	size_t n = 0;

	for (int i = 0; i < nr; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].loop = c->loop;
		r[i].stop = &stop;
		pthread_create(&r[i].tid, NULL, reader_main, &r[i]);
	}
	for (int i = 0; i < c->idle_memb; i++)
		idle_memb_start(&im[i]);
	if (c->enter)
		c->enter();
	/* Readers running, and so registered, before the first call. */
	for (int i = 0; i < nr; i++)
		while (!atomic_load(&r[i].started))
			sleep_ns(100000);
	sleep_ns(20000000);
	start = now_ns();
	end = start + (uint64_t)opt.ms * 1000000ull;
	while (n < SYNC_MAX_PER_RUN && (now_ns() < end || (n < SYNC_MIN_PER_RUN &&
	       now_ns() - start < SYNC_RUN_CAP_NS))) {
		uint64_t t0 = now_ns(), dt;

		c->sync();
		dt = now_ns() - t0;
		*busy_ns += dt;
		out[n++] = (double)dt / 1000.0;
	}
	if (c->enter)
		orcu_unregister_thread();
	for (int i = 0; i < c->idle_memb; i++)
		idle_memb_stop(&im[i]);
	atomic_store(&stop, 1);
	for (int i = 0; i < nr; i++)
		pthread_join(r[i].tid, NULL);
	return n;
}

int scen_sync(void)
{
	static const int readers[] = { 0, 1, 2 };
	struct jdoc *d = jdoc_new("sync");
	FILE *md = out_open("sync.md");
	double *pool[NSYNC], p50[NSYNC], p99[NSYNC], p999[NSYNC], pmax[NSYNC], rate[NSYNC];
	char meas[320], tgt[200];

	for (int c = 0; c < NSYNC; c++) {
		pool[c] = calloc((size_t)opt.reps * SYNC_MAX_PER_RUN, sizeof(double));
		if (!pool[c])
			abort();
	}
	read_warmup();
	printf("== sync: synchronize latency seen by the caller (us) with busy readers, pooled "
	       "over %d runs of %d ms ==\n", opt.reps, opt.ms);
	printf("%-28s %-10s %-7s %7s %8s %8s %8s %9s %9s %20s %7s %7s %7s\n", "call", "flavor",
	       "readers", "samples", "calls/s", "p50", "p99", "p99.9", "max", "p50 per run",
	       "p50 x", "p99 x", "max x");
	fprintf(md, "## sync: synchronize latency (us) with busy readers\n\nBusy readers of the "
		"same library and flavor read flat out (memb: lock, dereference, use, unlock; "
		"qsbr: the same with a quiescent state every %d reads) while the caller "
		"synchronizes back to back (at most %d calls per run, at least %d unless that "
		"takes over 1 s). `mixed`: orcu qsbr readers, the caller registered as a memb "
		"reader (outside any section while it synchronizes), against liburcu qsbr with "
		"the same readers. `mixed-idle`: orcu qsbr readers, the caller registered qsbr "
		"and offline, and one more memb-registered thread sleeping elsewhere, against "
		"liburcu memb with busy memb readers. The flavors take turns "
		"run by run. calls/s = calls over the time spent in them; p50/p99/p99.9/max "
		"pooled over %d runs of %d ms; p50 per run as median "
		"[min-max]; ratios to the liburcu row named in the last column, at the same "
		"reader count.\n\n"
		"| call | flavor | readers | samples | calls/s | p50 | p99 | p99.9 | max | p50 per "
		"run | p50 ratio | p99 ratio | max ratio | vs |\n"
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
		BENCH_QS_EVERY, SYNC_MAX_PER_RUN, SYNC_MIN_PER_RUN, opt.reps, opt.ms);
	jdoc_param(d, "ms_per_run", opt.ms);
	jdoc_param(d, "max_calls_per_run", SYNC_MAX_PER_RUN);
	jdoc_param(d, "qs_every", BENCH_QS_EVERY);
	for (size_t ri = 0; ri < sizeof(readers) / sizeof(readers[0]); ri++) {
		int nr = readers[ri];
		size_t n[NSYNC] = { 0 };
		uint64_t busy[NSYNC] = { 0 };
		double run50[NSYNC][64];

		/* Runs interleave the calls, so a change in the machine's state
		 * hits every library alike. */
		for (int k = 0; k < opt.reps; k++) {
			for (int c = 0; c < NSYNC; c++) {
				double *v = pool[c] + n[c];
				size_t got = sync_run(&sync_calls[c], nr, v, &busy[c]);

				n[c] += got;
				run50[c][k] = percentile(v, got, 0.5);
			}
		}
		for (int c = 0; c < NSYNC; c++) {
			rate[c] = busy[c] ? (double)n[c] * 1e9 / (double)busy[c] : 0;
			p50[c] = percentile(pool[c], n[c], 0.5);
			p99[c] = percentile(pool[c], n[c], 0.99);
			p999[c] = percentile(pool[c], n[c], 0.999);
			pmax[c] = n[c] ? pool[c][n[c] - 1] : 0;   /* sorted by percentile() */
		}
		for (int c = 0; c < NSYNC; c++) {
			const struct sync_call *sc = &sync_calls[c];
			struct summ s = summarize(run50[c], opt.reps);
			double r50 = p50[c] / p50[sc->peer], r99 = p99[c] / p99[sc->peer];
			double rmax = pmax[c] / pmax[sc->peer];

			printf("%-28s %-10s %-7d %7zu %8.0f %8.1f %8.1f %9.1f %9.1f %7.1f [%.1f-%.1f] "
			       "%7.2f %7.2f %7.2f\n", sc->name, sc->flavor, nr, n[c], rate[c], p50[c],
			       p99[c], p999[c], pmax[c], s.med, s.min, s.max, r50, r99, rmax);
			fprintf(md, "| %s | %s | %d | %zu | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f "
				"[%.1f-%.1f] | %.2f | %.2f | %.2f | %s |\n", sc->name, sc->flavor, nr,
				n[c], rate[c], p50[c], p99[c], p999[c], pmax[c], s.med, s.min, s.max,
				r50, r99, rmax, sync_calls[sc->peer].name);
			jdoc_row_begin(d);
			jdoc_str(d, "call", sc->name);
			jdoc_str(d, "flavor", sc->flavor);
			jdoc_num(d, "readers", nr);
			jdoc_num(d, "samples", (double)n[c]);
			jdoc_num(d, "calls_per_s", rate[c]);
			jdoc_num(d, "p50_us", p50[c]);
			jdoc_num(d, "p99_us", p99[c]);
			jdoc_num(d, "p999_us", p999[c]);
			jdoc_num(d, "max_us", pmax[c]);
			jdoc_summ(d, "p50_per_run_us", s);
			jdoc_str(d, "peer", sync_calls[sc->peer].name);
			jdoc_num(d, "p50_ratio_to_liburcu", r50);
			jdoc_num(d, "p99_ratio_to_liburcu", r99);
			jdoc_num(d, "max_ratio_to_liburcu", rmax);
			jdoc_row_end(d);
		}
		for (int c = 0; c < NSYNC; c++) {
			const struct sync_call *sc = &sync_calls[c];
			int pc = sc->peer;
			bool mixed = !strcmp(sc->flavor, "mixed");
			bool idle = !strcmp(sc->flavor, "mixed-idle");

			if (!sc->target)
				continue;
			/* The mixed rows are the setup: 2 busy readers. */
			if ((mixed || idle) && nr != 2)
				continue;
			if (mixed) {
				snprintf(tgt, sizeof(tgt), "sync mixed, %d busy qsbr readers: calls/s "
					 ">= 1.0x, p99 <= 1.0x, max <= 2.0x liburcu qsbr", nr);
				snprintf(meas, sizeof(meas), "calls/s %.2fx (%.0f vs %.0f), p99 %.2fx "
					 "(%.1f vs %.1f us), max %.2fx (%.0f vs %.0f us)",
					 rate[c] / rate[pc], rate[c], rate[pc], p99[c] / p99[pc], p99[c],
					 p99[pc], pmax[c] / pmax[pc], pmax[c], pmax[pc]);
				target_row("sync", tgt, meas, rate[c] >= rate[pc] && p99[c] <= p99[pc] &&
					   pmax[c] <= 2 * pmax[pc]);
				continue;
			}
			if (idle) {
				snprintf(tgt, sizeof(tgt), "sync mixed-idle, %d busy qsbr readers + 1 "
					 "idle memb: p99 <= 1.0x, max <= 2.0x liburcu memb", nr);
				snprintf(meas, sizeof(meas), "p99 %.2fx (%.1f vs %.1f us), max %.2fx "
					 "(%.0f vs %.0f us)", p99[c] / p99[pc], p99[c], p99[pc],
					 pmax[c] / pmax[pc], pmax[c], pmax[pc]);
				target_row("sync", tgt, meas, p99[c] <= p99[pc] && pmax[c] <= 2 * pmax[pc]);
				continue;
			}
			snprintf(tgt, sizeof(tgt), "sync %s, %d busy readers: p50 and p99 <= 1.0x, "
				 "max <= 2.0x liburcu %s", sc->flavor, nr, sc->flavor);
			snprintf(meas, sizeof(meas), "p50 %.2fx (%.1f vs %.1f us), p99 %.2fx "
				 "(%.1f vs %.1f us), max %.2fx (%.0f vs %.0f us)", p50[c] / p50[pc],
				 p50[c], p50[pc], p99[c] / p99[pc], p99[c], p99[pc],
				 pmax[c] / pmax[pc], pmax[c], pmax[pc]);
			target_row("sync", tgt, meas, p50[c] <= p50[pc] && p99[c] <= p99[pc] &&
				   pmax[c] <= 2 * pmax[pc]);
		}
	}
	fprintf(md, "\n");
	printf("\n");
	for (int c = 0; c < NSYNC; c++)
		free(pool[c]);
	jdoc_write(d);
	fclose(md);
	return 0;
}

/* ------------------------------------------------------------------ */

static int headline(void)
{
	uint64_t t0 = now_ns();

	opt.quick = 1;
	printf("(ratios: lower is better for orcu; same run, same machine, %d CPUs)\n",
	       opt.nproc);
	fflush(stdout);
	scen_read(1);
	printf("read side, 1 reader, ns/read: orcu-memb %.2f  urcu-memb %.2f  -> %.2fx\n",
	       hl.read_orcu_memb, hl.read_urcu_memb, hl.read_orcu_memb / hl.read_urcu_memb);
	printf("                              orcu-qsbr %.2f  urcu-qsbr %.2f  unsync %.2f"
	       "  -> %.2fx unsync, %.2fx urcu-qsbr\n",
	       hl.read_orcu_qsbr, hl.read_urcu_qsbr, hl.read_unsync,
	       hl.read_orcu_qsbr / hl.read_unsync, hl.read_orcu_qsbr / hl.read_urcu_qsbr);
	fflush(stdout);
	scen_enqueue(1);
	printf("enqueue, ns/call:             orcu_call %.1f  urcu call_rcu %.1f  -> %.2fx\n",
	       hl.enq_orcu, hl.enq_urcu, hl.enq_orcu / hl.enq_urcu);
	fflush(stdout);
	scen_latency(1);
	printf("post-to-invoke p50, us:       orcu %.0f  urcu %.0f  -> %.3fx\n",
	       hl.lat_orcu_p50, hl.lat_urcu_p50, hl.lat_orcu_p50 / hl.lat_urcu_p50);
	fflush(stdout);
	scen_barrier(1);
	printf("idle barrier, us:             orcu_barrier %.2f  urcu rcu_barrier %.0f  -> %.5fx\n",
	       hl.bar_orcu, hl.bar_urcu, hl.bar_orcu / hl.bar_urcu);
	printf("(headline took %.1f s; full tables: make bench -> docs/PERFORMANCE.md)\n",
	       (double)(now_ns() - t0) / 1e9);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: orcu-bench [--reps N] [--ms N] [--seconds N] [--tail-seconds N] [--out DIR]\n"
		"       <scenario>...\n"
		"scenarios: read sync sync-tail update enqueue throughput latency barrier flood scale\n"
		"           scale-report idle threads lazy hash free isolation all headline\n"
		"Each scenario prints a table and writes DIR/<scenario>.json (default\n"
		"DIR bench/results), a markdown table and target rows.\n");
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int (*fn)(void); } scen[] = {
		{ "read", NULL }, { "sync", scen_sync }, { "sync-tail", scen_sync_tail },
		{ "update", scen_update },
		{ "enqueue", NULL },
		{ "throughput", scen_throughput }, { "latency", NULL },
		{ "barrier", NULL }, { "flood", scen_flood }, { "scale", scen_scale },
		{ "idle", scen_idle }, { "threads", scen_threads }, { "lazy", scen_lazy },
		{ "hash", scen_hash }, { "free", scen_free }, { "isolation", scen_isolation },
	};
	int i, ran = 0;

	opt.self = "/proc/self/exe";
	{
		static char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n > 0) {
			self[n] = 0;
			opt.self = self;
		}
	}
	opt.nproc = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (opt.nproc < 1)
		opt.nproc = 1;
	/* Sleeps of 100 us must mean 100 us, not 100 us + 50 us slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/* Our threads inherit this name: "orcu-bench" would pass for a
	 * library thread (orcu-*) in the thread and wake-up counts. */
	prctl(PR_SET_NAME, (unsigned long)"obench", 0, 0, 0);

	if (argc > 1 && argv[1][0] == '_' && argv[1][1] == '_') {
		if (!strcmp(argv[1], "__flood"))
			return child_flood(argc, argv);
		if (!strcmp(argv[1], "__scale"))
			return child_scale(argc, argv);
		if (!strcmp(argv[1], "__idle"))
			return child_idle(argc, argv);
		if (!strcmp(argv[1], "__threads"))
			return child_threads(argc, argv);
		if (!strcmp(argv[1], "__lazy"))
			return child_lazy(argc, argv);
		if (!strcmp(argv[1], "__isolation"))
			return child_isolation(argc, argv);
		if (!strcmp(argv[1], "__insns"))
			return child_insns(argc, argv);
		if (!strcmp(argv[1], "__hash"))
			return child_hash(argc, argv);
		return 2;
	}
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			opt.reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			opt.ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			opt.seconds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tail-seconds") && i + 1 < argc)
			opt.tail_seconds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			opt.outdir = argv[++i];
		else {
			usage();
			return 2;
		}
	}
	if (opt.reps < 1 || opt.reps > 64)
		opt.reps = 5;
	if (opt.ms < 10)
		opt.ms = 10;
	if (opt.seconds < 1)
		opt.seconds = 1;
	if (opt.tail_seconds < 1)
		opt.tail_seconds = 1;
	if (i >= argc) {
		usage();
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (; i < argc; i++) {
		const char *s = argv[i];
		bool all = !strcmp(s, "all");
		bool found = false;

		if (!strcmp(s, "headline"))
			return headline();
		if (!strcmp(s, "scale-report")) {
			scen_scale_report();
			ran++;
			continue;
		}
		for (size_t k = 0; k < sizeof(scen) / sizeof(scen[0]); k++) {
			if (!all && strcmp(s, scen[k].name))
				continue;
			found = true;
			fflush(stdout);
			if (!strcmp(scen[k].name, "read"))
				scen_read(0);
			else if (!strcmp(scen[k].name, "enqueue"))
				scen_enqueue(0);
			else if (!strcmp(scen[k].name, "latency"))
				scen_latency(0);
			else if (!strcmp(scen[k].name, "barrier"))
				scen_barrier(0);
			else
				scen[k].fn();
			ran++;
		}
		if (!found) {
			fprintf(stderr, "orcu-bench: unknown scenario %s\n", s);
			usage();
			return 2;
		}
	}
	return ran ? 0 : 2;
}
