/*
 * util.c - orcu-bench plumbing: sleeping, summaries of repeated runs, the
 * JSON/markdown/target writers, /proc readers for thread wake-ups and RSS,
 * and child processes that report "key value" lines.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bench_opts opt = { .reps = 5, .ms = 200, .seconds = 3, .tail_seconds = 20,
			  .outdir = "bench/results" };

void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void sleep_until_ns(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct summ summarize(const double *v, int n)
{
	double t[256];
	struct summ s = { 0, 0, 0 };

	if (n <= 0)
		return s;
	if (n > 256)
		n = 256;
	memcpy(t, v, sizeof(double) * (size_t)n);
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	s.min = t[0];
	s.max = t[n - 1];
	s.med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	return s;
}

static unsigned lhist_index(uint64_t ns)
{
	unsigned e;

	if (ns < 16)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns);      /* >= 4 */
	return (e - 3) * 16 + (unsigned)((ns >> (e - 4)) & 15);
}

/* The largest value that falls in bucket i. */
static uint64_t lhist_upper(unsigned i)
{
	unsigned e, sub;

	if (i < 16)
		return i;
	e = i / 16 + 3;
	sub = i % 16;
	return ((16ull + sub + 1) << (e - 4)) - 1;
}

void lhist_add(struct lhist *h, uint64_t ns)
{
	unsigned i = lhist_index(ns);

	h->b[i < LHIST_BUCKETS ? i : LHIST_BUCKETS - 1]++;
	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void lhist_merge(struct lhist *into, const struct lhist *from)
{
	for (unsigned i = 0; i < LHIST_BUCKETS; i++)
		into->b[i] += from->b[i];
	into->n += from->n;
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

double lhist_quantile_us(const struct lhist *h, double q)
{
	uint64_t want, seen = 0;

	if (!h->n)
		return 0;
	if (q >= 1.0)
		return (double)h->max_ns / 1e3;
	want = (uint64_t)(q * (double)h->n) + 1;
	for (unsigned i = 0; i < LHIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t u = lhist_upper(i);

			return (double)(u < h->max_ns ? u : h->max_ns) / 1e3;
		}
	}
	return (double)h->max_ns / 1e3;
}

double percentile(double *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(double), cmp_double);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* ------------------------------------------------------------------ */
/* Output files */

static void ensure_outdir(void)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s", opt.outdir);
	for (p = path + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	}
	mkdir(path, 0755);
}

FILE *out_open(const char *name)
{
	char path[512];
	FILE *f;

	ensure_outdir();
	snprintf(path, sizeof(path), "%s/%s", opt.outdir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "orcu-bench: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

void target_row(const char *scen, const char *target, const char *measured, bool met)
{
	char path[512];
	FILE *f;

	ensure_outdir();
	snprintf(path, sizeof(path), "%s/%s.targets", opt.outdir, scen);
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s|%s|%s\n", target, measured, met ? "met" : "MISSED");
	fclose(f);
}

/* JSON: a growing buffer, rows appended as objects. */
struct jdoc {
	char scen[32];
	char *buf;
	size_t len, cap;
	char params[2048];
	size_t plen;
	int nrows, nfields;
};

static void jputs(struct jdoc *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(d->buf + d->len, d->cap - d->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < d->cap - d->len)
			break;
		d->cap = d->cap * 2 + (size_t)n + 64;
		d->buf = realloc(d->buf, d->cap);
		if (!d->buf)
			abort();
	}
	d->len += (size_t)n;
}

struct jdoc *jdoc_new(const char *scenario)
{
	struct jdoc *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	snprintf(d->scen, sizeof(d->scen), "%s", scenario);
	d->cap = 4096;
	d->buf = malloc(d->cap);
	if (!d->buf)
		abort();
	d->buf[0] = 0;
	return d;
}

static void json_num(char *out, size_t len, double v)
{
	if (v != v || v > 1e300 || v < -1e300)
		snprintf(out, len, "null");
	else
		snprintf(out, len, "%.6g", v);
}

void jdoc_param(struct jdoc *d, const char *key, double v)
{
	char num[64];

	json_num(num, sizeof(num), v);
	d->plen += (size_t)snprintf(d->params + d->plen, sizeof(d->params) - d->plen,
				    "%s\"%s\": %s", d->plen ? ", " : "", key, num);
}

void jdoc_param_str(struct jdoc *d, const char *key, const char *v)
{
	d->plen += (size_t)snprintf(d->params + d->plen, sizeof(d->params) - d->plen,
				    "%s\"%s\": \"%s\"", d->plen ? ", " : "", key, v);
}

void jdoc_row_begin(struct jdoc *d)
{
	jputs(d, "%s\n    {", d->nrows ? "," : "");
	d->nrows++;
	d->nfields = 0;
}

void jdoc_str(struct jdoc *d, const char *key, const char *v)
{
	jputs(d, "%s\"%s\": \"%s\"", d->nfields++ ? ", " : "", key, v);
}

void jdoc_num(struct jdoc *d, const char *key, double v)
{
	char num[64];

	json_num(num, sizeof(num), v);
	jputs(d, "%s\"%s\": %s", d->nfields++ ? ", " : "", key, num);
}

void jdoc_summ(struct jdoc *d, const char *key, struct summ s)
{
	char a[64], b[64], c[64];

	json_num(a, sizeof(a), s.med);
	json_num(b, sizeof(b), s.min);
	json_num(c, sizeof(c), s.max);
	jputs(d, "%s\"%s\": {\"median\": %s, \"min\": %s, \"max\": %s}",
	      d->nfields++ ? ", " : "", key, a, b, c);
}

void jdoc_row_end(struct jdoc *d)
{
	jputs(d, "}");
}

void jdoc_write(struct jdoc *d)
{
	char name[64], cpu[128] = "unknown", line[512], kern[128] = "";
	FILE *f, *ci;
	time_t t = time(NULL);
	struct tm tm;

	ci = fopen("/proc/cpuinfo", "r");
	while (ci && fgets(line, sizeof(line), ci)) {
		if (!strncmp(line, "model name", 10)) {
			char *c = strchr(line, ':');

			if (c) {
				snprintf(cpu, sizeof(cpu), "%s", c + 2);
				cpu[strcspn(cpu, "\n\"")] = 0;
			}
			break;
		}
	}
	if (ci)
		fclose(ci);
	ci = fopen("/proc/sys/kernel/osrelease", "r");
	if (ci) {
		if (fgets(kern, sizeof(kern), ci))
			kern[strcspn(kern, "\n")] = 0;
		fclose(ci);
	}
	gmtime_r(&t, &tm);
	strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(name, sizeof(name), "%s.json", d->scen);
	f = out_open(name);
	fprintf(f, "{\n  \"scenario\": \"%s\",\n  \"date\": \"%s\",\n"
		"  \"machine\": {\"nproc\": %d, \"cpu\": \"%s\", \"kernel\": \"%s\"},\n"
		"  \"reps\": %d,\n  \"params\": {%s},\n  \"results\": [%s\n  ]\n}\n",
		d->scen, line, opt.nproc, cpu, kern, opt.reps, d->params, d->buf);
	fclose(f);
	free(d->buf);
	free(d);
}

/* ------------------------------------------------------------------ */
/* /proc */

static int read_task_file(const char *tid, const char *file, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%s/%s", tid, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return 0;
}

uint64_t task_ctxsw(const char *prefix, int *nthreads)
{
	char self[32], comm[64], status[4096];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	uint64_t total = 0;
	int n = 0;

	snprintf(self, sizeof(self), "%d", (int)gettid());
	while (d && (e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		if (prefix) {
			if (read_task_file(e->d_name, "comm", comm, sizeof(comm)) < 0 ||
			    strncmp(comm, prefix, strlen(prefix)))
				continue;
		} else if (!strcmp(e->d_name, self)) {
			continue;
		}
		if (read_task_file(e->d_name, "status", status, sizeof(status)) < 0)
			continue;
		n++;
		if ((p = strstr(status, "voluntary_ctxt_switches:")))
			total += strtoull(p + 24, NULL, 10);
		if ((p = strstr(status, "nonvoluntary_ctxt_switches:")))
			total += strtoull(p + 27, NULL, 10);
	}
	if (d)
		closedir(d);
	if (nthreads)
		*nthreads = n;
	return total;
}

int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

long vm_kb(const char *field)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	long v = -1;
	size_t fl = strlen(field);

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, fl) && line[fl] == ':') {
			v = strtol(line + fl + 1, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return v;
}

/* ------------------------------------------------------------------ */
/* Child processes */

int run_child(char *const argv[], char *const env[], struct kv *out)
{
	int fds[2], status;
	pid_t pid;
	FILE *f;
	char line[256];

	memset(out, 0, sizeof(*out));
	fflush(stdout);
	fflush(stderr);
	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(opt.self, argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char key[48];
		double v;

		if (sscanf(line, "%47s %lf", key, &v) == 2 && out->n < 64) {
			snprintf(out->key[out->n], sizeof(out->key[0]), "%s", key);
			out->val[out->n++] = v;
		}
	}
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "orcu-bench: child %s %s failed (status %d)\n",
			argv[1], argv[2] ? argv[2] : "", status);
		return -1;
	}
	return 0;
}

double kv_get(const struct kv *kv, const char *key, double def)
{
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return def;
}
