/*
 * free.c - the reclaim-without-a-callback scenario: malloc(64) +
 * orcu_free() end to end against liburcu's malloc + call_rcu(free) (1 and
 * 2 posters), the posting cost of orcu_free() against orcu_call(), the
 * C++ retire() and rcu_retire() (retire.cc) against liburcu, and peak RSS
 * under the flood with orcu_free() (topo.c's flood child).
 */
#include <orcu.h>

#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define OBJ_BYTES 64

enum mode { M_FREE, M_URCU, M_CXX_OBJ, M_CXX_RETIRE, NR_MODES };
static const char *const mode_names[] = {
	"malloc(64) + orcu_free", "malloc(64) + liburcu call_rcu(free)",
	"C++ rcu_obj_base::retire", "C++ rcu_retire",
};

struct fr_arg {
	enum mode mode;
	long n;
	pthread_t tid;
	pthread_barrier_t *start;
};

static void *fr_main(void *p)
{
	struct fr_arg *a = p;

	if (a->mode == M_URCU)
		urcu_m_register();
	else if (orcu_register_thread() < 0)
		abort();
	pthread_barrier_wait(a->start);
	if (a->mode == M_FREE) {
		for (long i = 0; i < a->n; i++) {
			void *o = malloc(OBJ_BYTES);

			if (!o)
				abort();
			orcu_free(o);
		}
	} else if (a->mode == M_URCU) {
		for (long i = 0; i < a->n; i++) {
			void *o = malloc(OBJ_BYTES);

			if (!o)
				abort();
			urcu_m_call_free(o);
		}
	} else {
		cxx_retire_loop(a->mode == M_CXX_OBJ ? 0 : 1, a->n);
	}
	if (a->mode == M_URCU)
		urcu_m_unregister();
	else
		orcu_unregister_thread();
	return NULL;
}

/* Objects freed per second, first post to the barrier after the last. */
static double fr_run(enum mode m, int posters, long total)
{
	struct fr_arg a[64];
	pthread_barrier_t start;
	uint64_t t0;

	pthread_barrier_init(&start, NULL, (unsigned)posters + 1);
	for (int i = 0; i < posters; i++) {
		a[i] = (struct fr_arg){ .mode = m, .n = total / posters, .start = &start };
		pthread_create(&a[i].tid, NULL, fr_main, &a[i]);
	}
	pthread_barrier_wait(&start);
	t0 = now_ns();
	for (int i = 0; i < posters; i++)
		pthread_join(a[i].tid, NULL);
	if (m == M_URCU)
		urcu_m_barrier();
	else
		orcu_barrier();
	pthread_barrier_destroy(&start);
	return (double)(total / posters * posters) * 1e9 / (double)(now_ns() - t0);
}

/* ---- posting cost: orcu_free vs orcu_call on the same objects ---- */

#define POST_BATCH 8192
#define POST_BATCHES 10

static void free_cb(struct orcu_head *h) { free(h); }

struct post_arg {
	int use_free;
	double ns;
};

static void *post_main(void *p)
{
	struct post_arg *a = p;
	void **objs = malloc(sizeof(void *) * POST_BATCH);
	uint64_t total = 0;

	if (!objs || orcu_register_thread() < 0)
		abort();
	for (int b = -1; b < POST_BATCHES; b++) {   /* b = -1 warms */
		uint64_t t0;

		for (int i = 0; i < POST_BATCH; i++)
			if (!(objs[i] = malloc(OBJ_BYTES)))
				abort();
		t0 = thread_cpu_ns();
		if (a->use_free)
			for (int i = 0; i < POST_BATCH; i++)
				orcu_free(objs[i]);
		else
			for (int i = 0; i < POST_BATCH; i++)
				orcu_call(objs[i], free_cb);
		if (b >= 0)
			total += thread_cpu_ns() - t0;
		orcu_barrier();   /* untimed */
	}
	a->ns = (double)total / ((double)POST_BATCH * POST_BATCHES);
	orcu_unregister_thread();
	free(objs);
	return NULL;
}

static double post_run(int use_free)
{
	struct post_arg a = { .use_free = use_free };
	pthread_t t;

	pthread_create(&t, NULL, post_main, &a);
	pthread_join(t, NULL);
	return a.ns;
}

/* ---- the scenario ---- */

int scen_free(void)
{
	long total = 3000000;
	int reps = opt.reps, pc[2] = { 1, opt.nproc > 1 ? 2 : 1 };
	double v[2][NR_MODES][64], ratio[2][NR_MODES][64], pv[2][64], pr[64];
	struct summ s[2][NR_MODES], sr[2][NR_MODES], ps[2], psr;
	struct jdoc *d = jdoc_new("free");
	FILE *md = out_open("free.md");
	char meas[240];
	bool met;

	orcu_barrier();
	urcu_m_barrier();
	/* Runs interleave the modes. */
	for (int k = 0; k < reps; k++)
		for (int pi = 0; pi < 2; pi++)
			for (int m = 0; m < NR_MODES; m++) {
				if (pi == 1 && m >= M_CXX_OBJ)
					continue;
				v[pi][m][k] = fr_run((enum mode)m, pc[pi], total) / 1e6;
			}
	for (int pi = 0; pi < 2; pi++)
		for (int m = 0; m < NR_MODES; m++) {
			if (pi == 1 && m >= M_CXX_OBJ)
				continue;
			for (int k = 0; k < reps; k++)
				ratio[pi][m][k] = v[pi][m][k] / v[pi][M_URCU][k];
			s[pi][m] = summarize(v[pi][m], reps);
			sr[pi][m] = summarize(ratio[pi][m], reps);
		}
	for (int k = 0; k < reps; k++) {
		pv[0][k] = post_run(1);
		pv[1][k] = post_run(0);
		pr[k] = pv[0][k] / pv[1][k];
	}
	ps[0] = summarize(pv[0], reps);
	ps[1] = summarize(pv[1], reps);
	psr = summarize(pr, reps);

	printf("== free: objects freed per second end to end (M/s), %ld per run, %d runs, "
	       "median [min-max]; ratio to liburcu run by run ==\n", total, reps);
	fprintf(md, "## free: reclaim without a callback\n\nPosters malloc a 64-byte object "
		"and hand it over: `orcu_free(p)`, liburcu's `call_rcu(head, cb)` whose "
		"callback frees it (head at offset 0), or in C++ (`<orcu/rcu.hpp>`) an object "
		"of 64 bytes deriving from `rcu_obj_base` (`p->retire()`) or a plain one "
		"(`rcu_retire(p)`). Time from the first post to the return of the barrier "
		"after the last; %ld objects per run, %d runs, the modes taking turns; "
		"millions per second, median [min-max]; the ratio to liburcu is taken run by "
		"run.\n\n| posters | mode | M objects/s | ratio to liburcu |\n|---|---|---|---|\n",
		total, reps);
	jdoc_param(d, "objects_per_run", (double)total);
	for (int pi = 0; pi < 2; pi++)
		for (int m = 0; m < NR_MODES; m++) {
			if (pi == 1 && m >= M_CXX_OBJ)
				continue;
			printf("posters %d  %-38s %6.2f [%.2f-%.2f]  ratio %.2fx [%.2f-%.2f]\n",
			       pc[pi], mode_names[m], s[pi][m].med, s[pi][m].min, s[pi][m].max,
			       sr[pi][m].med, sr[pi][m].min, sr[pi][m].max);
			fprintf(md, "| %d | %s | %.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] |\n", pc[pi],
				mode_names[m], s[pi][m].med, s[pi][m].min, s[pi][m].max,
				sr[pi][m].med, sr[pi][m].min, sr[pi][m].max);
			jdoc_row_begin(d);
			jdoc_str(d, "mode", mode_names[m]);
			jdoc_num(d, "posters", pc[pi]);
			jdoc_summ(d, "mobjects_per_s", s[pi][m]);
			jdoc_summ(d, "ratio_to_liburcu_per_run", sr[pi][m]);
			jdoc_row_end(d);
		}
	printf("posting cost, ns per call (poster CPU time): orcu_free %.1f [%.1f-%.1f], "
	       "orcu_call %.1f [%.1f-%.1f], ratio %.2f [%.2f-%.2f]\n", ps[0].med, ps[0].min,
	       ps[0].max, ps[1].med, ps[1].min, ps[1].max, psr.med, psr.min, psr.max);
	fprintf(md, "\nPosting cost (poster CPU time per call, %d calls per run on objects "
		"malloc'd beforehand, a barrier after each %d, not timed): `orcu_free` "
		"%.1f [%.1f-%.1f] ns, `orcu_call` (callback frees) %.1f [%.1f-%.1f] ns; ratio "
		"run by run %.2f [%.2f-%.2f].\n\n", POST_BATCH * POST_BATCHES, POST_BATCH,
		ps[0].med, ps[0].min, ps[0].max, ps[1].med, ps[1].min, ps[1].max, psr.med,
		psr.min, psr.max);
	jdoc_row_begin(d);
	jdoc_str(d, "mode", "posting cost");
	jdoc_summ(d, "orcu_free_ns", ps[0]);
	jdoc_summ(d, "orcu_call_ns", ps[1]);
	jdoc_summ(d, "ratio_per_run", psr);
	jdoc_row_end(d);

	snprintf(meas, sizeof(meas), "min %.2fx (median %.2f of %d runs; %.2f vs %.2f M/s "
		 "median)", sr[0][M_FREE].min, sr[0][M_FREE].med, reps, s[0][M_FREE].med,
		 s[0][M_URCU].med);
	target_row("free", "free: malloc(64)+orcu_free >= 2.0x liburcu call_rcu(free), 1 poster, "
		   "every run", meas, sr[0][M_FREE].min >= 2.0);
	snprintf(meas, sizeof(meas), "%.2fx median [%.2f-%.2f] (%.2f vs %.2f M/s)",
		 sr[1][M_FREE].med, sr[1][M_FREE].min, sr[1][M_FREE].max, s[1][M_FREE].med,
		 s[1][M_URCU].med);
	snprintf(meas + strlen(meas), sizeof(meas) - strlen(meas), "; %d posters", pc[1]);
	target_row("free", "free: malloc(64)+orcu_free >= 2.0x liburcu call_rcu(free), 2 posters",
		   meas, sr[1][M_FREE].med >= 2.0);
	snprintf(meas, sizeof(meas), "%.2fx median, max %.2f (%.1f vs %.1f ns)", psr.med,
		 psr.max, ps[0].med, ps[1].med);
	target_row("free", "free: orcu_free posting cost <= orcu_call's", meas, psr.med <= 1.0);
	met = sr[0][M_CXX_OBJ].med >= 2.0 && sr[0][M_CXX_RETIRE].med >= 2.0;
	snprintf(meas, sizeof(meas), "retire() %.2fx [%.2f-%.2f], rcu_retire %.2fx [%.2f-%.2f]",
		 sr[0][M_CXX_OBJ].med, sr[0][M_CXX_OBJ].min, sr[0][M_CXX_OBJ].max,
		 sr[0][M_CXX_RETIRE].med, sr[0][M_CXX_RETIRE].min, sr[0][M_CXX_RETIRE].max);
	target_row("free", "free: C++ retire() and rcu_retire >= 2.0x liburcu call_rcu(free)",
		   meas, met);

	/* Flood: orcu_free against liburcu at the same posting rate. */
	{
		int freps = reps < 3 ? reps : 3;
		double rss[2][8], rate[2][8];
		struct summ srss[2], srate[2];

		for (int k = 0; k < freps; k++) {
			struct kv kv;
			double fo, fu, common;

			if (run_flood("orcu_free", 0, &kv) < 0)
				return -1;
			fo = kv_get(&kv, "rate", NAN);
			if (run_flood("urcu", 0, &kv) < 0)
				return -1;
			fu = kv_get(&kv, "rate", NAN);
			common = fo < fu ? fo : fu;
			if (run_flood("orcu_free", common, &kv) < 0)
				return -1;
			rss[0][k] = kv_get(&kv, "hwm_kb", NAN) / 1024;
			rate[0][k] = kv_get(&kv, "rate", NAN) / 1e6;
			if (run_flood("urcu", common, &kv) < 0)
				return -1;
			rss[1][k] = kv_get(&kv, "hwm_kb", NAN) / 1024;
			rate[1][k] = kv_get(&kv, "rate", NAN) / 1e6;
		}
		for (int l = 0; l < 2; l++) {
			srss[l] = summarize(rss[l], freps);
			srate[l] = summarize(rate[l], freps);
		}
		printf("flood at the same rate: peak RSS orcu_free %.1f MiB [%.1f-%.1f] (%.2f M/s), "
		       "liburcu %.1f MiB [%.1f-%.1f] (%.2f M/s) -> %.2fx\n\n", srss[0].med,
		       srss[0].min, srss[0].max, srate[0].med, srss[1].med, srss[1].min,
		       srss[1].max, srate[1].med, srss[0].med / srss[1].med);
		fprintf(md, "Flood (topo.c's: two threads post malloc'd 64-byte objects for %d s, "
			"each library in its own process, both paced at the lower of their "
			"flat-out rates; %d runs): peak RSS with `orcu_free` %.1f [%.1f-%.1f] MiB "
			"at %.2f M posts/s, liburcu %.1f [%.1f-%.1f] MiB at %.2f M posts/s: "
			"%.2fx.\n\n", opt.seconds, freps, srss[0].med, srss[0].min, srss[0].max,
			srate[0].med, srss[1].med, srss[1].min, srss[1].max, srate[1].med,
			srss[0].med / srss[1].med);
		jdoc_row_begin(d);
		jdoc_str(d, "mode", "flood");
		jdoc_summ(d, "orcu_free_peak_rss_mib", srss[0]);
		jdoc_summ(d, "liburcu_peak_rss_mib", srss[1]);
		jdoc_row_end(d);
		snprintf(meas, sizeof(meas), "%.2fx (%.1f vs %.1f MiB; %.2f vs %.2f M posts/s)",
			 srss[0].med / srss[1].med, srss[0].med, srss[1].med, srate[0].med,
			 srate[1].med);
		target_row("free", "free: flood peak RSS with orcu_free <= 0.5x liburcu at the same "
			   "posting rate", meas, srss[0].med <= 0.5 * srss[1].med);
	}
	jdoc_write(d);
	fclose(md);
	return 0;
}
