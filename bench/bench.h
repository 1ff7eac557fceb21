/*
 * bench.h - what the orcu-bench modules share: timing, summaries of
 * repeated runs, the result writers (JSON, markdown, gnuplot data, target
 * rows) and the peer entry points.  Each peer lives in its own translation
 * unit because each wants its own headers and defines (_LGPL_SOURCE for
 * liburcu's inline read side, ORCU_QSBR for orcu's empty qsbr read side).
 */
#ifndef ORCU_BENCH_H
#define ORCU_BENCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* The object readers dereference and updaters replace. */

struct bobj {
	long val;
	char pad[56];
};

extern struct bobj *bench_gp;   /* the published pointer */

/* Reader loops: read until *stop, one read-side section per iteration
 * (lock, dereference, use, unlock); return the number of sections.  The
 * qsbr loops announce a quiescent state every BENCH_QS_EVERY sections. */
#define BENCH_QS_EVERY 1024
#define BENCH_INNER 1024

typedef uint64_t (*read_loop_fn)(const _Atomic int *stop, long *sink);

uint64_t read_orcu_memb(const _Atomic int *stop, long *sink);
uint64_t read_orcu_qsbr(const _Atomic int *stop, long *sink);      /* read_qsbr.c */
uint64_t read_urcu_memb(const _Atomic int *stop, long *sink);      /* peer_urcu_memb.c */
uint64_t read_urcu_qsbr(const _Atomic int *stop, long *sink);      /* peer_urcu_qsbr.c */
uint64_t read_ck(const _Atomic int *stop, long *sink);             /* peer_ck.c */
uint64_t read_rwlock(const _Atomic int *stop, long *sink);
uint64_t read_unsync(const _Atomic int *stop, long *sink);

/* ------------------------------------------------------------------ */
/* liburcu memb flavor (peer_urcu_memb.c) */

struct bench_cb;  /* opaque to the peer: a callback object */
void urcu_m_register(void);
void urcu_m_unregister(void);
void urcu_m_synchronize(void);
void urcu_m_barrier(void);
/* Post head embedded at offset 0 of mem (which must be >= 16 bytes); the
 * callback calls fn(mem). */
void urcu_m_call(void *mem, void (*fn)(void *mem));
/* call_rcu(head at offset 0 of mem, a callback that frees mem) */
void urcu_m_call_free(void *mem);
int urcu_m_create_all_cpu(void);
size_t urcu_head_size(void);

/* liburcu qsbr flavor (peer_urcu_qsbr.c) */
void urcu_q_register(void);
void urcu_q_unregister(void);
void urcu_q_synchronize(void);
void urcu_q_quiescent(void);
void urcu_q_barrier(void);
void urcu_q_call(void *mem, void (*fn)(void *mem));   /* as urcu_m_call */
/* One read-side section each (isolation.c's isolated reader). */
long orcu_q_read1(void);   /* read_qsbr.c: a qsbr thread's */
long urcu_m_read1(void);
long urcu_q_read1(void);

/* ck_epoch (peer_ck.c) */
void ck_init_global(void);
void *ck_rec_new(void);             /* registers a record for this thread */
void ck_rec_free(void *rec);
void ck_post(void *rec, void *mem, void (*fn)(void *mem));  /* mem >= 32 bytes */
void ck_barrier_rec(void *rec);
void ck_synchronize_rec(void *rec);
size_t ck_entry_size(void);
void *ck_thread_rec(void);          /* this thread's record (lazily made) */

/* ------------------------------------------------------------------ */
/* Options and time */

struct bench_opts {
	int reps;          /* repetitions; medians are reported */
	int ms;            /* measuring window per point */
	int seconds;       /* flood */
	int tail_seconds;  /* sync-tail, per library */
	int nproc;
	int quick;         /* headline: fewer reps */
	const char *outdir;
	const char *self;  /* path of this binary, for child processes */
};
extern struct bench_opts opt;

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time: what it ran, not how long it waited for
 * a CPU on this shared machine. */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sleep_ns(uint64_t ns);
void sleep_until_ns(uint64_t t);

/* ------------------------------------------------------------------ */
/* Summaries */

struct summ {
	double med, min, max;
};

struct summ summarize(const double *v, int n);
double percentile(double *v, size_t n, double q);   /* sorts v */
int cmp_double(const void *a, const void *b);

/* Latency histogram, log-linear (16 sub-buckets per power of two, within
 * 1/16 of the value): cheap to fill per call, pooled across runs, so tails
 * (p99.9, max) come from every sample, not from a capped sample array. */
#define LHIST_BUCKETS 1024
struct lhist {
	uint64_t n, max_ns, sum_ns;
	uint64_t b[LHIST_BUCKETS];
};
void lhist_add(struct lhist *h, uint64_t ns);
void lhist_merge(struct lhist *into, const struct lhist *from);
double lhist_quantile_us(const struct lhist *h, double q);   /* upper bucket bound */

/* ------------------------------------------------------------------ */
/* Results: one JSON document per scenario, built row by row. */

struct jdoc;
struct jdoc *jdoc_new(const char *scenario);
void jdoc_param(struct jdoc *d, const char *key, double v);
void jdoc_param_str(struct jdoc *d, const char *key, const char *v);
void jdoc_row_begin(struct jdoc *d);
void jdoc_str(struct jdoc *d, const char *key, const char *v);
void jdoc_num(struct jdoc *d, const char *key, double v);
void jdoc_summ(struct jdoc *d, const char *key, struct summ s);
void jdoc_row_end(struct jdoc *d);
void jdoc_write(struct jdoc *d);   /* <outdir>/<scenario>.json, frees d */

/* <outdir>/<name> opened for writing (markdown, gnuplot data, targets) */
FILE *out_open(const char *name);

/* One row of the final targets table (appends to <outdir>/<scen>.targets). */
void target_row(const char *scen, const char *target, const char *measured, bool met);

/* Library threads: context switches of threads whose name starts with
 * prefix (NULL: every thread but the calling one), and how many. */
uint64_t task_ctxsw(const char *prefix, int *nthreads);
int task_count(void);
long vm_kb(const char *field);   /* "VmHWM", "VmRSS" from /proc/self/status */

/* Child processes: run "<self> <args...>" with extra environment entries
 * ("K=V", NULL-terminated), collect "key value" lines from its stdout. */
struct kv {
	int n;
	char key[64][48];
	double val[64];
};
int run_child(char *const argv[], char *const env[], struct kv *out);
double kv_get(const struct kv *kv, const char *key, double def);

/* Scenarios */
int scen_read(int headline);
int scen_sync(void);
int scen_update(void);   /* update.c */
int scen_sync_tail(void);   /* tail.c */
int scen_enqueue(int headline);
int scen_throughput(void);
int scen_latency(int headline);
int scen_barrier(int headline);
int scen_flood(void);
int scen_scale(void);
int scen_scale_report(void);
int scen_idle(void);
int scen_threads(void);
int scen_lazy(void);
int scen_free(void);   /* free.c */
int scen_isolation(void);   /* isolation.c */

/* retire.cc: C++ <orcu/rcu.hpp> posters, objects of 64 bytes.  kind 0:
 * rcu_obj_base::retire(), 1: rcu_retire(); n objects; returns at once. */
void cxx_retire_loop(int kind, long n);

/* Hidden subcommands run in child processes */
int child_flood(int argc, char **argv);
/* topo.c: one flood child ("orcu", "orcu_free" or "urcu"; rate 0: flat out) */
int run_flood(const char *lib, double rate, struct kv *kv);
int child_scale(int argc, char **argv);
int child_idle(int argc, char **argv);
int child_threads(int argc, char **argv);
int child_lazy(int argc, char **argv);
int child_isolation(int argc, char **argv);   /* isolation.c */
int child_insns(int argc, char **argv);   /* cb.c: posts under callgrind */

/* Headline figures filled in by the scenarios when headline != 0 */
struct headline {
	double read_orcu_memb, read_orcu_qsbr, read_urcu_memb, read_urcu_qsbr, read_unsync;
	double enq_orcu, enq_urcu;
	double lat_orcu_p50, lat_urcu_p50;
	double bar_orcu, bar_urcu;
};
extern struct headline hl;

#endif
