/*
 * cb.c - the callback scenarios: enqueue cost, end-to-end throughput,
 * post-to-invoke latency at a trickle, and barrier latency, each for orcu
 * and liburcu memb (and ck_epoch where it has the operation); the enqueue
 * instruction count runs the poster loop under callgrind in a child.
 */
#include <orcu.h>

#include "bench.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum lib { LIB_ORCU, LIB_URCU, LIB_CK };
static const char *const lib_names[] = { "orcu", "liburcu", "ck_epoch" };

/* A callback object big enough for any library's head at offset 0. */
struct cbobj {
	union {
		struct orcu_head oh;
		char peer[32];
	} u;
	uint64_t t_post;
	long idx;
	double *samples;
};

static void orcu_noop(struct orcu_head *h) { (void)h; }
static void peer_noop(void *m) { (void)m; }
static void free_cb(struct orcu_head *h) { free(h); }
static void peer_free(void *m) { free(m); }

static void lib_register(enum lib l)
{
	if (l == LIB_ORCU) {
		if (orcu_register_thread() < 0)
			abort();
	} else if (l == LIB_URCU) {
		urcu_m_register();
	} else {
		ck_thread_rec();
	}
}

static void lib_unregister(enum lib l)
{
	if (l == LIB_ORCU)
		orcu_unregister_thread();
	else if (l == LIB_URCU)
		urcu_m_unregister();
	else
		ck_rec_free(ck_thread_rec());
}

static void lib_barrier(enum lib l)
{
	if (l == LIB_ORCU)
		orcu_barrier();
	else if (l == LIB_URCU)
		urcu_m_barrier();
	else
		ck_barrier_rec(ck_thread_rec());
}

static void check_sizes(void)
{
	if (urcu_head_size() > 32 || ck_entry_size() > 32) {
		fprintf(stderr, "orcu-bench: peer head larger than 32 bytes\n");
		abort();
	}
}

/* ------------------------------------------------------------------ */
/* enqueue: ns per post with preallocated heads and a no-op callback */

#define ENQ_BATCH 8192   /* under orcu's default ORCU_QHIMARK (10000) */
#define ENQ_MIN_RUNS 10  /* the target is on the worst of these */

static void post_batch(enum lib l, struct cbobj *objs, int n)
{
	if (l == LIB_ORCU) {
		for (int i = 0; i < n; i++)
			orcu_call(&objs[i].u.oh, orcu_noop);
	} else if (l == LIB_URCU) {
		for (int i = 0; i < n; i++)
			urcu_m_call(&objs[i], peer_noop);
	} else {
		void *rec = ck_thread_rec();

		for (int i = 0; i < n; i++)
			ck_post(rec, &objs[i], peer_noop);
	}
}

struct enq_arg {
	enum lib lib;
	int batches;
	double ns;
};

/* One run: a fresh poster thread, warmed, then timed batches. */
static void *enq_main(void *p)
{
	struct enq_arg *a = p;
	struct cbobj *objs = calloc(ENQ_BATCH, sizeof(*objs));
	uint64_t total = 0;

	if (!objs)
		abort();
	lib_register(a->lib);
	/* Warm: first use, threads, page faults on objs. */
	post_batch(a->lib, objs, ENQ_BATCH);
	lib_barrier(a->lib);
	for (int b = 0; b < a->batches; b++) {
		uint64_t t0 = thread_cpu_ns();

		post_batch(a->lib, objs, ENQ_BATCH);
		total += thread_cpu_ns() - t0;
		lib_barrier(a->lib);   /* untimed: heads are reused */
	}
	a->ns = (double)total / ((double)ENQ_BATCH * a->batches);
	lib_unregister(a->lib);
	free(objs);
	return NULL;
}

/* ---- instructions per post, counted by callgrind ---- */

#define INSNS_BATCHES 4

/* The only function callgrind collects in (--toggle-collect): the posts
 * and everything they call, on the poster thread. */
__attribute__((noinline)) void enq_insns_loop(enum lib l, struct cbobj *objs, int n);
__attribute__((noinline)) void enq_insns_loop(enum lib l, struct cbobj *objs, int n)
{
	post_batch(l, objs, n);
}

/* Reached through a volatile pointer so the compiler cannot inline or
 * clone the collected function under another name. */
static void (*volatile enq_insns_fn)(enum lib, struct cbobj *, int) = enq_insns_loop;

int child_insns(int argc, char **argv)
{
	enum lib l = argc > 2 && !strcmp(argv[2], "orcu") ? LIB_ORCU : LIB_URCU;
	struct cbobj *objs = calloc(ENQ_BATCH, sizeof(*objs));

	if (!objs)
		abort();
	lib_register(l);
	post_batch(l, objs, ENQ_BATCH);   /* warm, not collected */
	lib_barrier(l);
	for (int b = 0; b < INSNS_BATCHES; b++) {
		enq_insns_fn(l, objs, ENQ_BATCH);
		lib_barrier(l);
	}
	lib_unregister(l);
	printf("posts %d\n", INSNS_BATCHES * ENQ_BATCH);
	fflush(stdout);
	_exit(0);
}

/* Instructions per post of one library: "valgrind --tool=callgrind
 * --toggle-collect=enq_insns_loop <self> __insns <lib>", total Ir of the
 * collected function / posts.  -1 if valgrind is missing or fails. */
static double insns_per_post(const char *lib)
{
	char out[600], tog[] = "--toggle-collect=enq_insns_loop", line[512];
	char *argv[] = { "valgrind", "--tool=callgrind", tog, out, (char *)opt.self,
			 "__insns", (char *)lib, NULL };
	char path[512];
	double ir = -1;
	int status;
	pid_t pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/callgrind.enqueue.%s.out", opt.outdir, lib);
	snprintf(out, sizeof(out), "--callgrind-out-file=%s", path);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp("valgrind", argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "totals:", 7) || !strncmp(line, "summary:", 8))
			ir = strtod(strchr(line, ':') + 1, NULL);
	if (f)
		fclose(f);
	unlink(path);
	return ir < 0 ? -1 : ir / (INSNS_BATCHES * ENQ_BATCH);
}

int scen_enqueue(int headline)
{
	int reps = headline ? opt.reps : (opt.reps > ENQ_MIN_RUNS ? opt.reps : ENQ_MIN_RUNS);
	int batches = headline ? 5 : 10;
	double v[3][64], ratio[64], ins[2];
	struct summ s[3], sr;
	struct jdoc *d = headline ? NULL : jdoc_new("enqueue");
	FILE *md = headline ? NULL : out_open("enqueue.md");
	char meas[200];

	check_sizes();
	/* Runs interleave the libraries, each run a fresh poster thread. */
	for (int k = 0; k < reps; k++) {
		for (int l = 0; l < 3; l++) {
			struct enq_arg a = { .lib = (enum lib)l, .batches = batches };
			pthread_t t;

			if (headline && l == LIB_CK)
				continue;
			pthread_create(&t, NULL, enq_main, &a);
			pthread_join(t, NULL);
			v[l][k] = a.ns;
		}
		ratio[k] = v[LIB_ORCU][k] / v[LIB_URCU][k];
	}
	for (int l = 0; l < 3; l++)
		s[l] = summarize(v[l], reps);
	sr = summarize(ratio, reps);
	hl.enq_orcu = s[LIB_ORCU].med;
	hl.enq_urcu = s[LIB_URCU].med;
	if (headline)
		return 0;
	ins[0] = insns_per_post("orcu");
	ins[1] = insns_per_post("urcu");
	printf("== enqueue: ns per post, preallocated heads, no-op callback, %d batches of %d "
	       "per run, %d runs: median [min-max] ==\n", batches, ENQ_BATCH, reps);
	fprintf(md, "## enqueue: ns per post\n\nPoster CPU time per post (syscalls included, "
		"preemption not). One poster thread per run, preallocated heads, no-op callback, "
		"%d batches of %d posts per run (a barrier between batches, not timed); the "
		"libraries take turns run by run. %d runs: median [min-max]; the ratio is taken "
		"run by run (orcu's run over liburcu's run next to it).\n\n"
		"| library | ns per post | ratio to liburcu, per run | instructions per post "
		"(callgrind) |\n|---|---|---|---|\n", batches, ENQ_BATCH, reps);
	jdoc_param(d, "batch", ENQ_BATCH);
	jdoc_param(d, "batches", batches);
	jdoc_param(d, "insns_posts", INSNS_BATCHES * ENQ_BATCH);
	for (int l = 0; l < 3; l++) {
		const char *call = l == LIB_ORCU ? "orcu_call" :
				   l == LIB_URCU ? "urcu_memb_call_rcu" : "ck_epoch_call";
		struct summ r = l == LIB_ORCU ? sr : summarize((double[]){ s[l].med / s[1].med }, 1);
		char in[32] = "-";

		if (l < 2 && ins[l] >= 0)
			snprintf(in, sizeof(in), "%.1f", ins[l]);
		printf("%-20s %7.1f ns [%.1f-%.1f]  ratio %.2fx [%.2f-%.2f]  %s insns/post\n", call,
		       s[l].med, s[l].min, s[l].max, r.med, r.min, r.max, in);
		fprintf(md, "| %s | %.1f [%.1f-%.1f] | %.2f [%.2f-%.2f] | %s |\n", call, s[l].med,
			s[l].min, s[l].max, r.med, r.min, r.max, in);
		jdoc_row_begin(d);
		jdoc_str(d, "call", call);
		jdoc_summ(d, "ns_per_post", s[l]);
		if (l == LIB_ORCU)
			jdoc_summ(d, "ratio_to_liburcu_per_run", sr);
		if (l < 2 && ins[l] >= 0)
			jdoc_num(d, "insns_per_post", ins[l]);
		jdoc_row_end(d);
	}
	fprintf(md, "\nck_epoch_call only pushes onto the caller's own record: its callbacks "
		"run when that same thread polls or barriers (no helper threads, no wake-up); "
		"its ratio is of medians. Instructions: `valgrind --tool=callgrind "
		"--toggle-collect=enq_insns_loop orcu-bench __insns orcu|urcu` posts %d "
		"callbacks (a barrier after each %d, not collected); the collected Ir over the "
		"number of posts, wrapper and loop included on both sides (liburcu's goes "
		"through the bench's urcu_m_call, which stores the function and calls "
		"urcu_memb_call_rcu). Under valgrind glibc has no rseq, so sched_getcpu is a "
		"system call there.%s\n\n", INSNS_BATCHES * ENQ_BATCH, ENQ_BATCH,
		ins[0] < 0 || ins[1] < 0 ? " (valgrind not found or failed: no count.)" : "");
	printf("\n");
	snprintf(meas, sizeof(meas), "max %.2fx (min %.2f, median %.2f of %d runs; %.1f vs "
		 "%.1f ns median)", sr.max, sr.min, sr.med, reps, s[0].med, s[1].med);
	target_row("enqueue", "enqueue: orcu_call <= 0.5x liburcu call_rcu in every run", meas,
		   sr.max <= 0.5);
	if (ins[0] >= 0 && ins[1] >= 0) {
		printf("instructions per post (callgrind): orcu_call %.1f, liburcu call_rcu %.1f "
		       "-> %.2fx\n\n", ins[0], ins[1], ins[0] / ins[1]);
		jdoc_param(d, "insns_ratio", ins[0] / ins[1]);
	}
	jdoc_write(d);
	fclose(md);
	return 0;
}

/* ------------------------------------------------------------------ */
/* throughput: callbacks that free memory, invoked per second end to end */

struct tp_arg {
	enum lib lib;
	long n;
	pthread_t tid;
	pthread_barrier_t *start;
};

static void *tp_main(void *p)
{
	struct tp_arg *a = p;

	lib_register(a->lib);
	pthread_barrier_wait(a->start);
	for (long i = 0; i < a->n; i++) {
		struct cbobj *o = malloc(sizeof(*o));

		if (!o)
			abort();
		if (a->lib == LIB_ORCU)
			orcu_call(&o->u.oh, free_cb);
		else
			urcu_m_call(o, peer_free);
	}
	lib_unregister(a->lib);
	return NULL;
}

static double tp_run(enum lib lib, int posters, long total)
{
	struct tp_arg a[64];
	pthread_barrier_t start;
	uint64_t t0;

	pthread_barrier_init(&start, NULL, (unsigned)posters + 1);
	for (int i = 0; i < posters; i++) {
		a[i] = (struct tp_arg){ .lib = lib, .n = total / posters, .start = &start };
		pthread_create(&a[i].tid, NULL, tp_main, &a[i]);
	}
	pthread_barrier_wait(&start);
	t0 = now_ns();
	for (int i = 0; i < posters; i++)
		pthread_join(a[i].tid, NULL);
	lib_barrier(lib);   /* every callback invoked */
	pthread_barrier_destroy(&start);
	return (double)(total / posters * posters) * 1e9 / (double)(now_ns() - t0);
}

int scen_throughput(void)
{
	long total = 1000000;
	int pc[2] = { 1, opt.nproc };
	struct jdoc *d = jdoc_new("throughput");
	FILE *md = out_open("throughput.md");
	double ratio1 = 0, ration = 0;
	char meas[160];

	jdoc_param(d, "callbacks_per_run", (double)total);
	printf("== throughput: callbacks (malloc'd, freed by the callback) invoked per second, "
	       "first post to last invocation, %ld per run, median of %d ==\n", total, opt.reps);
	fprintf(md, "## throughput: callbacks invoked per second, end to end\n\nPosters "
		"malloc an object and post it; the callback frees it. Time from the first post "
		"to the return of the barrier after the last. %ld callbacks per run, median of "
		"%d runs [min-max], millions per second.\n\n| posters | orcu | liburcu | ratio |\n"
		"|---|---|---|---|\n", total, opt.reps);
	urcu_m_barrier();
	orcu_barrier();
	for (int pi = 0; pi < (opt.nproc > 1 ? 2 : 1); pi++) {
		double v[2][64];
		struct summ s[2];

		for (int k = 0; k < opt.reps; k++)
			for (int l = 0; l < 2; l++)
				v[l][k] = tp_run((enum lib)l, pc[pi], total) / 1e6;
		s[0] = summarize(v[0], opt.reps);
		s[1] = summarize(v[1], opt.reps);
		printf("posters %-3d orcu %6.2f M/s [%.2f-%.2f]  liburcu %6.2f M/s [%.2f-%.2f]  "
		       "ratio %.2fx\n", pc[pi], s[0].med, s[0].min, s[0].max, s[1].med, s[1].min,
		       s[1].max, s[0].med / s[1].med);
		fprintf(md, "| %d | %.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] | %.2f |\n", pc[pi],
			s[0].med, s[0].min, s[0].max, s[1].med, s[1].min, s[1].max,
			s[0].med / s[1].med);
		for (int l = 0; l < 2; l++) {
			jdoc_row_begin(d);
			jdoc_str(d, "library", lib_names[l]);
			jdoc_num(d, "posters", pc[pi]);
			jdoc_summ(d, "mcallbacks_per_s", s[l]);
			jdoc_row_end(d);
		}
		if (pi == 0)
			ratio1 = s[0].med / s[1].med;
		ration = s[0].med / s[1].med;
	}
	fprintf(md, "\n");
	printf("\n");
	snprintf(meas, sizeof(meas), "%.2fx with 1 poster, %.2fx with %d", ratio1, ration,
		 opt.nproc);
	target_row("throughput", "throughput: end-to-end >= 2x liburcu", meas,
		   ratio1 >= 2 && ration >= 2);
	jdoc_write(d);
	fclose(md);
	return 0;
}

/* ------------------------------------------------------------------ */
/* latency: post-to-invoke at a trickle, one post every 100 us */

#define TRICKLE_NS 100000ull

static void lat_record(struct cbobj *o)
{
	o->samples[o->idx] = (double)(now_ns() - o->t_post) / 1000.0;
	free(o);
}

static void orcu_lat_cb(struct orcu_head *h) { lat_record((struct cbobj *)h); }
static void peer_lat_cb(void *m) { lat_record(m); }

struct lat_arg {
	enum lib lib;
	long n;
	double *samples;
};

static void *lat_main(void *p)
{
	struct lat_arg *a = p;
	uint64_t next = now_ns();

	lib_register(a->lib);
	for (long i = 0; i < a->n; i++) {
		struct cbobj *o = malloc(sizeof(*o));

		if (!o)
			abort();
		o->idx = i;
		o->samples = a->samples;
		sleep_until_ns(next);
		next += TRICKLE_NS;
		o->t_post = now_ns();
		if (a->lib == LIB_ORCU)
			orcu_call(&o->u.oh, orcu_lat_cb);
		else
			urcu_m_call(o, peer_lat_cb);
	}
	lib_barrier(a->lib);
	lib_unregister(a->lib);
	return NULL;
}

static void write_cdf(const char *name, double *v, size_t n)
{
	FILE *f = out_open(name);
	size_t step = n > 2000 ? n / 2000 : 1;

	qsort(v, n, sizeof(double), cmp_double);
	fprintf(f, "# post-to-invoke latency (us)  cumulative fraction\n");
	for (size_t i = 0; i < n; i += step)
		fprintf(f, "%.3f %.5f\n", v[i], (double)(i + 1) / (double)n);
	fprintf(f, "%.3f 1.0\n", v[n - 1]);
	fclose(f);
}

int scen_latency(int headline)
{
	long n = 2000;
	int reps = headline ? 3 : opt.reps;
	double *pool[2], p50[2][64], p99[2][64];
	struct summ s50[2], s99[2];
	struct jdoc *d = headline ? NULL : jdoc_new("latency");
	FILE *md;
	char meas[160];

	pool[0] = calloc((size_t)(n * reps), sizeof(double));
	pool[1] = calloc((size_t)(n * reps), sizeof(double));
	if (!pool[0] || !pool[1])
		abort();
	urcu_m_barrier();
	for (int k = 0; k < reps; k++) {
		for (int l = 0; l < 2; l++) {
			struct lat_arg a = { .lib = (enum lib)l, .n = n,
					     .samples = pool[l] + k * n };
			double tmp[4000];
			pthread_t t;

			pthread_create(&t, NULL, lat_main, &a);
			pthread_join(t, NULL);
			memcpy(tmp, a.samples, sizeof(double) * (size_t)n);
			p50[l][k] = percentile(tmp, (size_t)n, 0.5);
			p99[l][k] = percentile(tmp, (size_t)n, 0.99);
		}
	}
	for (int l = 0; l < 2; l++) {
		s50[l] = summarize(p50[l], reps);
		s99[l] = summarize(p99[l], reps);
	}
	hl.lat_orcu_p50 = s50[0].med;
	hl.lat_urcu_p50 = s50[1].med;
	if (headline) {
		free(pool[0]);
		free(pool[1]);
		return 0;
	}
	md = out_open("latency.md");
	printf("== latency: post-to-invoke (us), one post every %llu us, %ld posts per run, "
	       "median of %d runs ==\n", TRICKLE_NS / 1000, n, reps);
	fprintf(md, "## latency: post-to-invoke at a trickle (us)\n\nOne post every %llu us, "
		"%ld posts per run; p50 and p99 of each run, median of %d runs [min-max]. "
		"liburcu's call_rcu worker sleeps 10 ms after each wake-up to batch.\n\n"
		"| library | p50 | p99 |\n|---|---|---|\n", TRICKLE_NS / 1000, n, reps);
	jdoc_param(d, "trickle_us", TRICKLE_NS / 1000.0);
	jdoc_param(d, "posts_per_run", (double)n);
	for (int l = 0; l < 2; l++) {
		printf("%-10s p50 %9.1f [%.1f-%.1f]  p99 %9.1f [%.1f-%.1f]\n", lib_names[l],
		       s50[l].med, s50[l].min, s50[l].max, s99[l].med, s99[l].min, s99[l].max);
		fprintf(md, "| %s | %.1f [%.1f-%.1f] | %.1f [%.1f-%.1f] |\n", lib_names[l],
			s50[l].med, s50[l].min, s50[l].max, s99[l].med, s99[l].min, s99[l].max);
		jdoc_row_begin(d);
		jdoc_str(d, "library", lib_names[l]);
		jdoc_summ(d, "p50_us", s50[l]);
		jdoc_summ(d, "p99_us", s99[l]);
		jdoc_row_end(d);
	}
	printf("ratio p50 orcu/liburcu %.4f, p99 %.4f\n\n", s50[0].med / s50[1].med,
	       s99[0].med / s99[1].med);
	fprintf(md, "\nRatio orcu / liburcu: p50 %.4f, p99 %.4f. Distribution: "
		"![latency](img/latency.png)\n\n", s50[0].med / s50[1].med, s99[0].med / s99[1].med);
	write_cdf("latency_orcu.dat", pool[0], (size_t)(n * reps));
	write_cdf("latency_urcu.dat", pool[1], (size_t)(n * reps));
	snprintf(meas, sizeof(meas), "%.4fx (p50 %.0f vs %.0f us)", s50[0].med / s50[1].med,
		 s50[0].med, s50[1].med);
	target_row("latency", "latency: post-to-invoke p50 <= 0.1x liburcu", meas,
		   s50[0].med <= 0.1 * s50[1].med);
	jdoc_write(d);
	fclose(md);
	free(pool[0]);
	free(pool[1]);
	return 0;
}

/* ------------------------------------------------------------------ */
/* barrier: latency idle and under a steady stream of posts */

struct load_arg {
	enum lib lib;
	_Atomic int stop;
	long posted;
};

static void *load_main(void *p)
{
	struct load_arg *a = p;
	uint64_t next = now_ns();

	lib_register(a->lib);
	while (!atomic_load(&a->stop)) {
		/* 32 posts every 100 us: 320k callbacks per second */
		for (int i = 0; i < 32; i++) {
			struct cbobj *o = malloc(sizeof(*o));

			if (!o)
				abort();
			if (a->lib == LIB_ORCU)
				orcu_call(&o->u.oh, free_cb);
			else
				urcu_m_call(o, peer_free);
			a->posted++;
		}
		next += TRICKLE_NS;
		sleep_until_ns(next);
	}
	lib_unregister(a->lib);
	return NULL;
}

static void barrier_samples(enum lib l, int n, double *out)
{
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		lib_barrier(l);
		out[i] = (double)(now_ns() - t0) / 1000.0;
	}
}

int scen_barrier(int headline)
{
	int reps = opt.reps;
	int nsamp[2] = { headline ? 200 : 1000, headline ? 5 : 15 };
	double med[2][2][64];
	struct summ s[2][2];
	struct jdoc *d = headline ? NULL : jdoc_new("barrier");
	FILE *md;
	char meas[160];

	/* Threads exist, nothing pending. */
	orcu_barrier();
	urcu_m_register();
	urcu_m_call(calloc(1, 64), peer_free);
	urcu_m_unregister();
	urcu_m_barrier();
	for (int load = 0; load <= (headline ? 0 : 1); load++) {
		for (int k = 0; k < reps; k++) {
			for (int l = 0; l < 2; l++) {
				double v[1000];
				int n = load ? 15 : nsamp[l];
				struct load_arg la = { .lib = (enum lib)l };
				pthread_t t;

				if (load) {
					pthread_create(&t, NULL, load_main, &la);
					sleep_ns(20000000);
				}
				barrier_samples((enum lib)l, n, v);
				if (load) {
					atomic_store(&la.stop, 1);
					pthread_join(t, NULL);
				}
				lib_barrier((enum lib)l);
				med[load][l][k] = percentile(v, (size_t)n, 0.5);
			}
		}
		s[load][0] = summarize(med[load][0], reps);
		s[load][1] = summarize(med[load][1], reps);
	}
	hl.bar_orcu = s[0][0].med;
	hl.bar_urcu = s[0][1].med;
	if (headline)
		return 0;
	md = out_open("barrier.md");
	printf("== barrier: latency (us), median per run, median of %d runs [min-max] ==\n", reps);
	fprintf(md, "## barrier: orcu_barrier vs liburcu rcu_barrier (us)\n\nIdle: nothing "
		"pending (library threads exist). Under load: a thread posts 32 callbacks every "
		"100 us (320k/s) that free memory. Median latency of each run, median of %d runs "
		"[min-max].\n\n| state | orcu_barrier | urcu_memb_barrier | ratio |\n|---|---|---|---|\n",
		reps);
	for (int load = 0; load < 2; load++) {
		const char *st = load ? "under load" : "idle";

		printf("%-11s orcu %10.2f [%.2f-%.2f]  liburcu %10.1f [%.1f-%.1f]  ratio %.5f\n", st,
		       s[load][0].med, s[load][0].min, s[load][0].max, s[load][1].med,
		       s[load][1].min, s[load][1].max, s[load][0].med / s[load][1].med);
		fprintf(md, "| %s | %.2f [%.2f-%.2f] | %.1f [%.1f-%.1f] | %.5f |\n", st,
			s[load][0].med, s[load][0].min, s[load][0].max, s[load][1].med,
			s[load][1].min, s[load][1].max, s[load][0].med / s[load][1].med);
		for (int l = 0; l < 2; l++) {
			jdoc_row_begin(d);
			jdoc_str(d, "library", lib_names[l]);
			jdoc_str(d, "state", st);
			jdoc_summ(d, "median_us", s[load][l]);
			jdoc_row_end(d);
		}
	}
	fprintf(md, "\n");
	printf("\n");
	snprintf(meas, sizeof(meas), "%.5fx (%.2f vs %.0f us)", s[0][0].med / s[0][1].med,
		 s[0][0].med, s[0][1].med);
	target_row("barrier", "barrier: idle orcu_barrier <= 0.01x liburcu rcu_barrier", meas,
		   s[0][0].med <= 0.01 * s[0][1].med);
	jdoc_write(d);
	fclose(md);
	return 0;
}
