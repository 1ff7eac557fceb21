/*
 * tail.c - sync-tail: the synchronize latency's tail over a long run with
 * the reader population changing under it.  orcu: one busy qsbr reader,
 * one busy memb reader, and a thread that registers (memb and qsbr in
 * turn), reads a little, and unregisters, over and over, while a
 * memb-registered caller synchronizes back to back.  liburcu has no mixed
 * domain: its memb flavor with two busy memb readers and the same churn of
 * memb registrations is the peer.  Every call's latency goes to a
 * histogram; the row shows p50 to max and the count per power-of-two
 * latency band, so a GP that sleeps out a timer tick or a wait slice shows
 * up however rare it is.
 */
#include <orcu.h>

#include "bench.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TAIL_CHURN_GAP_NS 100000ull   /* between a churn thread's registrations */
#define TAIL_BANDS 12                 /* < 8 us, < 16 us, ..., >= 8 ms */

struct tail_lib {
	const char *name;
	bool orcu;
	read_loop_fn loop[2];
	void (*sync)(void);
};

static void orcu_churn_once(unsigned k)
{
	struct bobj *p;

	if (k & 1) {
		if (orcu_register_thread_qsbr() < 0)
			abort();
		p = orcu_dereference(bench_gp);
		(void)p;
		orcu_quiescent_state();
	} else {
		if (orcu_register_thread() < 0)
			abort();
		orcu_read_lock();
		p = orcu_dereference(bench_gp);
		(void)p;
		orcu_read_unlock();
	}
	orcu_unregister_thread();
}

static void urcu_churn_once(unsigned k)
{
	(void)k;
	urcu_m_register();
	urcu_m_unregister();
}

struct churn {
	pthread_t tid;
	bool orcu;
	const _Atomic int *stop;
	uint64_t n;
};

static void *churn_main(void *p)
{
	struct churn *c = p;

	while (!atomic_load_explicit(c->stop, memory_order_relaxed)) {
		if (c->orcu)
			orcu_churn_once((unsigned)c->n);
		else
			urcu_churn_once((unsigned)c->n);
		c->n++;
		sleep_ns(TAIL_CHURN_GAP_NS);
	}
	return NULL;
}

struct tail_reader {
	pthread_t tid;
	read_loop_fn loop;
	const _Atomic int *stop;
	_Atomic int started;
	long sink;
};

static void *tail_reader_main(void *p)
{
	struct tail_reader *r = p;

	atomic_store(&r->started, 1);
	r->loop(r->stop, &r->sink);
	return NULL;
}

static void tail_run(const struct tail_lib *l, int seconds, struct lhist *h, uint64_t *churns)
{
	struct tail_reader r[2];
	struct churn c = { 0 };
	_Atomic int stop = 0;
	uint64_t end;

	for (int i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].loop = l->loop[i];
		r[i].stop = &stop;
		pthread_create(&r[i].tid, NULL, tail_reader_main, &r[i]);
	}
	for (int i = 0; i < 2; i++)
		while (!atomic_load(&r[i].started))
			sleep_ns(100000);
	c.orcu = l->orcu;
	c.stop = &stop;
	pthread_create(&c.tid, NULL, churn_main, &c);
	if (l->orcu) {
		/* A memb-registered caller, outside its sections here. */
		if (orcu_register_thread() < 0)
			abort();
		orcu_read_lock();
		orcu_read_unlock();
	}
	sleep_ns(20000000);
	end = now_ns() + (uint64_t)seconds * 1000000000ull;
	while (now_ns() < end) {
		uint64_t t0 = now_ns();

		l->sync();
		lhist_add(h, now_ns() - t0);
	}
	if (l->orcu)
		orcu_unregister_thread();
	atomic_store(&stop, 1);
	pthread_join(c.tid, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i].tid, NULL);
	*churns = c.n;
}

/* Samples per band: [0] < 8 us, [i] < 8 << i us, last >= 8 ms. */
static void bands(const struct lhist *h, uint64_t *out)
{
	memset(out, 0, sizeof(uint64_t) * TAIL_BANDS);
	for (unsigned i = 0; i < LHIST_BUCKETS; i++) {
		double us;
		int b = 0;

		if (!h->b[i])
			continue;
		/* The bucket's lower bound decides (buckets never straddle a
		 * power of two). */
		us = i < 16 ? (double)i / 1e3 : (double)((16ull + i % 16) << (i / 16 - 1)) / 1e3;
		while (b < TAIL_BANDS - 1 && us >= (double)(8u << b))
			b++;
		out[b] += h->b[i];
	}
}

int scen_sync_tail(void)
{
	static const struct tail_lib libs[] = {
		{ "orcu (qsbr + memb readers, memb caller)", true,
		  { read_orcu_qsbr, read_orcu_memb }, orcu_synchronize },
		{ "liburcu memb (2 memb readers)", false,
		  { read_urcu_memb, read_urcu_memb }, urcu_m_synchronize },
	};
	struct jdoc *d = jdoc_new("sync-tail");
	FILE *md = out_open("sync-tail.md");
	static struct lhist h[2];
	uint64_t churns[2], band[2][TAIL_BANDS];
	double p[2][5];
	static const double qs[5] = { 0.5, 0.99, 0.999, 0.9999, 1.0 };
	char meas[240];

	if (!bench_gp) {
		bench_gp = calloc(1, sizeof(*bench_gp));
		if (!bench_gp)
			abort();
		bench_gp->val = 1;
	}
	/* Each library started once, outside the measured runs. */
	orcu_synchronize();
	urcu_m_synchronize();
	printf("== sync-tail: synchronize back to back for %d s per library, busy readers and "
	       "a thread registering and unregistering every %llu us ==\n", opt.tail_seconds,
	       TAIL_CHURN_GAP_NS / 1000);
	for (int l = 0; l < 2; l++) {
		memset(&h[l], 0, sizeof(h[l]));
		tail_run(&libs[l], opt.tail_seconds, &h[l], &churns[l]);
		for (int q = 0; q < 5; q++)
			p[l][q] = lhist_quantile_us(&h[l], qs[q]);
		bands(&h[l], band[l]);
	}
	fprintf(md, "## sync-tail: synchronize latency over a long run, readers coming and "
		"going\n\n%d s per library. orcu: one busy qsbr reader (a quiescent state every %d "
		"reads), one busy memb reader, a thread that registers (memb and qsbr in turn), "
		"reads once and unregisters every %llu us, and a memb-registered caller that "
		"synchronizes back to back. liburcu (no mixed domain): memb with two busy memb "
		"readers and the same churn of memb registrations. Latency in us from a "
		"histogram of every call (within 1/16); bands count the calls per latency band."
		"\n\n| library | calls | registrations | calls/s | p50 | p99 | p99.9 | p99.99 | max "
		"| < 8 us | 8-16 | 16-32 | 32-64 | 64-128 | 128-256 | 256-512 | 0.5-1 ms | 1-2 ms "
		"| 2-4 ms | 4-8 ms | >= 8 ms |\n"
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		"---|\n", opt.tail_seconds, BENCH_QS_EVERY, TAIL_CHURN_GAP_NS / 1000);
	printf("%-42s %9s %8s %9s %8s %8s %8s %9s %9s\n", "library", "calls", "regs",
	       "calls/s", "p50", "p99", "p99.9", "p99.99", "max");
	for (int l = 0; l < 2; l++) {
		double rate = h[l].sum_ns ? (double)h[l].n * 1e9 / (double)h[l].sum_ns : 0;

		printf("%-42s %9llu %8llu %9.0f %8.1f %8.1f %8.1f %9.1f %9.1f\n", libs[l].name,
		       (unsigned long long)h[l].n, (unsigned long long)churns[l], rate, p[l][0],
		       p[l][1], p[l][2], p[l][3], p[l][4]);
		printf("%-42s", "  bands (<8us, x2 ..., >=8ms)");
		for (int b = 0; b < TAIL_BANDS; b++)
			printf(" %llu", (unsigned long long)band[l][b]);
		printf("\n");
		fprintf(md, "| %s | %llu | %llu | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f |",
			libs[l].name, (unsigned long long)h[l].n, (unsigned long long)churns[l],
			rate, p[l][0], p[l][1], p[l][2], p[l][3], p[l][4]);
		for (int b = 0; b < TAIL_BANDS; b++)
			fprintf(md, " %llu |", (unsigned long long)band[l][b]);
		fprintf(md, "\n");
		jdoc_row_begin(d);
		jdoc_str(d, "library", libs[l].name);
		jdoc_num(d, "calls", (double)h[l].n);
		jdoc_num(d, "registrations", (double)churns[l]);
		jdoc_num(d, "calls_per_s", rate);
		jdoc_num(d, "p50_us", p[l][0]);
		jdoc_num(d, "p99_us", p[l][1]);
		jdoc_num(d, "p999_us", p[l][2]);
		jdoc_num(d, "p9999_us", p[l][3]);
		jdoc_num(d, "max_us", p[l][4]);
		for (int b = 0; b < TAIL_BANDS; b++) {
			char key[32];

			snprintf(key, sizeof(key), "band_%d", b);
			jdoc_num(d, key, (double)band[l][b]);
		}
		jdoc_row_end(d);
	}
	fprintf(md, "\n");
	printf("\n");
	jdoc_param(d, "seconds_per_library", opt.tail_seconds);
	jdoc_param(d, "churn_gap_us", (double)(TAIL_CHURN_GAP_NS / 1000));
	snprintf(meas, sizeof(meas), "max %.2fx (%.0f vs %.0f us), p99.9 %.2fx (%.0f vs %.0f us)",
		 p[0][4] / p[1][4], p[0][4], p[1][4], p[0][2] / p[1][2], p[0][2], p[1][2]);
	target_row("sync-tail", "sync-tail: max <= 2.0x liburcu memb", meas,
		   p[0][4] <= 2 * p[1][4]);
	jdoc_write(d);
	fclose(md);
	return 0;
}
