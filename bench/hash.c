/*
 * hash.c - orcu-bench hash: a real structure.  liburcu's rculfhash with N
 * reader threads looking keys up and one updater churning (add_replace,
 * delete, add_unique; removed nodes freed with the flavor's call_rcu), run
 * on orcu_rcu_flavor and on liburcu's memb and qsbr flavors.  Each flavor
 * runs in its own child process (so peak RSS is its own), the runs
 * interleave, and the figures are medians of --reps with [min-max] and
 * ratios to liburcu memb.  Everything goes through the flavor struct, as
 * rculfhash itself calls it.
 */
#include <orcu/urcu-flavor.h>
#include <urcu/rculfhash.h>

#include "bench.h"
#include "hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* liburcu's flavor objects (liburcu-memb, liburcu-qsbr). */
extern const struct rcu_flavor_struct urcu_memb_flavor;
extern const struct rcu_flavor_struct urcu_qsbr_flavor;

#define HASH_KEYS 65536
#define HASH_QS_EVERY 1024       /* qsbr readers: lookups per quiescent state */

/* orcu-qsbr: orcu_rcu_flavor with qsbr-registered threads. */
static const char *const hash_flavors[] = { "orcu", "orcu-qsbr", "urcu-memb", "urcu-qsbr" };
#define NHF 4
#define HF_BASE 2               /* ratios are against liburcu memb */

struct hnode {
	struct cds_lfht_node node;
	unsigned long key, val;
	struct rcu_head rcu;
};

static const struct rcu_flavor_struct *fl;
static struct cds_lfht *hht;
static _Atomic int h_stop;
static int h_qsbr;

static unsigned long hkey(unsigned long k) { return k * 0x9E3779B97F4A7C15UL; }

static unsigned long hrand(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int hmatch(struct cds_lfht_node *n, const void *key)
{
	return caa_container_of(n, struct hnode, node)->key == *(const unsigned long *)key;
}

static void hfree(struct rcu_head *h)
{
	free(caa_container_of(h, struct hnode, rcu));
}

static struct hnode *hnew(unsigned long key)
{
	struct hnode *n = malloc(sizeof(*n));

	if (!n)
		abort();
	cds_lfht_node_init(&n->node);
	n->key = key;
	n->val = key;
	return n;
}

struct hreader {
	pthread_t tid;
	unsigned long seed;
	uint64_t lookups;
	uint64_t cpu_ns;       /* the thread's own CPU time */
	long sink;
};

static int h_orcu_qsbr;

static void hregister(void)
{
	if (h_orcu_qsbr) {
		if (orcu_register_thread_qsbr() < 0)
			abort();
	} else {
		fl->register_thread();
	}
}

static void *hreader_main(void *p)
{
	struct hreader *r = p;
	struct cds_lfht_iter it;
	uint64_t n = 0, c0 = thread_cpu_ns();
	long sum = 0;

	hregister();
	while (!atomic_load_explicit(&h_stop, memory_order_relaxed)) {
		for (int i = 0; i < HASH_QS_EVERY; i++) {
			unsigned long k = hrand(&r->seed) % HASH_KEYS;
			struct cds_lfht_node *nd;

			fl->read_lock();
			cds_lfht_lookup(hht, hkey(k), hmatch, &k, &it);
			nd = cds_lfht_iter_get_node(&it);
			if (nd)
				sum += (long)caa_container_of(nd, struct hnode, node)->val;
			fl->read_unlock();
		}
		n += HASH_QS_EVERY;
		if (h_qsbr)
			fl->read_quiescent_state();
	}
	if (h_qsbr)
		fl->thread_offline();
	fl->unregister_thread();
	r->lookups = n;
	r->cpu_ns = thread_cpu_ns() - c0;
	r->sink = sum;
	return NULL;
}

struct hupdater {
	pthread_t tid;
	uint64_t updates;
	uint64_t cpu_ns;
};

static void hupdate_one(unsigned long *seed)
{
	unsigned long k = hrand(seed) % HASH_KEYS, op = hrand(seed) % 3;
	struct cds_lfht_node *ret = NULL;
	struct cds_lfht_iter it;
	struct hnode *n;

	fl->read_lock();
	if (op == 0) {
		n = hnew(k);
		ret = cds_lfht_add_replace(hht, hkey(k), hmatch, &k, &n->node);
	} else if (op == 1) {
		cds_lfht_lookup(hht, hkey(k), hmatch, &k, &it);
		ret = cds_lfht_iter_get_node(&it);
		if (ret && cds_lfht_del(hht, ret) != 0)
			ret = NULL;
	} else {
		n = hnew(k);
		if (cds_lfht_add_unique(hht, hkey(k), hmatch, &k, &n->node) != &n->node)
			free(n);   /* never published */
	}
	fl->read_unlock();
	if (ret)
		fl->update_call_rcu(&caa_container_of(ret, struct hnode, node)->rcu, hfree);
}

static void *hupdater_main(void *p)
{
	struct hupdater *u = p;
	unsigned long seed = 88172645463325252UL;
	uint64_t n = 0, c0 = thread_cpu_ns();

	hregister();
	while (!atomic_load_explicit(&h_stop, memory_order_relaxed)) {
		hupdate_one(&seed);
		if ((++n & 63) == 0 && h_qsbr)
			fl->read_quiescent_state();
	}
	if (h_qsbr)
		fl->thread_offline();
	fl->unregister_thread();
	u->updates = n;
	u->cpu_ns = thread_cpu_ns() - c0;
	return NULL;
}

/* Child: __hash <flavor> <readers> <ms>; prints key value lines. */
int child_hash(int argc, char **argv)
{
	struct hreader r[64];
	struct hupdater u = { 0 };
	int nr, ms;
	uint64_t t0, t1, lookups = 0, rcpu = 0;
	unsigned long seed = 2463534242UL;

	if (argc < 5)
		return 2;
	if (!strcmp(argv[2], "orcu") || !strcmp(argv[2], "orcu-qsbr"))
		fl = &orcu_rcu_flavor;
	else if (!strcmp(argv[2], "urcu-memb"))
		fl = &urcu_memb_flavor;
	else if (!strcmp(argv[2], "urcu-qsbr"))
		fl = &urcu_qsbr_flavor;
	else
		return 2;
	h_orcu_qsbr = !strcmp(argv[2], "orcu-qsbr");
	h_qsbr = fl == &urcu_qsbr_flavor || h_orcu_qsbr;
	nr = atoi(argv[3]);
	ms = atoi(argv[4]);
	if (nr < 1 || nr > 64 || ms < 1)
		return 2;

	/* Sized for the keys from the start: the measurement does not depend on
	 * when the first lazy resize of a one-bucket table completes. */
	hht = cds_lfht_new_flavor(HASH_KEYS / 2, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				  fl, NULL);
	if (!hht)
		return 1;
	hregister();
	for (unsigned long k = 0; k < HASH_KEYS; k += 2) {
		struct hnode *n = hnew(k);

		fl->read_lock();
		cds_lfht_add(hht, hkey(k), &n->node);
		fl->read_unlock();
	}
	/* Let the table reach its size before measuring. */
	fl->barrier();
	if (h_qsbr)
		fl->thread_offline();

	for (int i = 0; i < nr; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].seed = hrand(&seed) | 1;
		pthread_create(&r[i].tid, NULL, hreader_main, &r[i]);
	}
	pthread_create(&u.tid, NULL, hupdater_main, &u);
	t0 = now_ns();
	sleep_ns((uint64_t)ms * 1000000ull);
	atomic_store(&h_stop, 1);
	pthread_join(u.tid, NULL);
	for (int i = 0; i < nr; i++) {
		pthread_join(r[i].tid, NULL);
		lookups += r[i].lookups;
		rcpu += r[i].cpu_ns;
	}
	t1 = now_ns();
	printf("lookups_per_s %.6g\n", (double)lookups * 1e9 / (double)(t1 - t0));
	printf("updates_per_s %.6g\n", (double)u.updates * 1e9 / (double)(t1 - t0));
	printf("hwm_kb %ld\n", vm_kb("VmHWM"));
	/* Per CPU-second of the threads themselves: what a lookup and an
	 * update cost, whatever share of the machine the run got. */
	printf("lookups_per_cpu_s %.6g\n", (double)lookups * 1e9 / (double)(rcpu ? rcpu : 1));
	printf("updates_per_cpu_s %.6g\n", (double)u.updates * 1e9 /
	       (double)(u.cpu_ns ? u.cpu_ns : 1));
	printf("reader_cpu_share %.6g\n", (double)rcpu / (double)(t1 - t0) / nr);
	{
		/* What the rest of the process (library threads) used. */
		struct timespec pc;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pc);
		printf("other_cpu_s %.6g\n", ((double)pc.tv_sec + pc.tv_nsec / 1e9) -
		       (double)(rcpu + u.cpu_ns) / 1e9);
	}
	if (fl == &orcu_rcu_flavor) {
		struct orcu_stats st;

		orcu_get_stats(&st);
		printf("orcu_gps_per_s %.6g\n", (double)st.gp_completed * 1e9 / (double)(t1 - t0));
		printf("orcu_poster_waits %.6g\n", (double)st.poster_waits);
	}
	fflush(stdout);
	/* Leave without tearing down: pending callbacks die with us. */
	_exit(0);
}

static int run_hash(int f, int nr, int ms, struct kv *kv)
{
	char rs[16], mss[16];
	char *argv[] = { (char *)opt.self, "__hash", (char *)hash_flavors[f], rs, mss, NULL };

	snprintf(rs, sizeof(rs), "%d", nr);
	snprintf(mss, sizeof(mss), "%d", ms);
	return run_child(argv, NULL, kv);
}

int scen_hash(void)
{
	int nr = opt.nproc < 64 ? opt.nproc : 64, reps = opt.reps;
	int ms = opt.ms < 300 ? 300 : opt.ms;
	double lk[NHF][64], up[NHF][64], rss[NHF][64], lkc[NHF][64], upc[NHF][64];
	struct summ sl[NHF], su[NHF], sr[NHF], slc[NHF], suc[NHF];
	struct jdoc *d = jdoc_new("hash");
	FILE *md = out_open("hash.md");
	char meas[160];

	printf("== hash: rculfhash, %d readers (lookups) + 1 updater (add_replace/del/"
	       "add_unique, call_rcu), %d keys, each flavor in its own process; median of "
	       "%d x %d ms ==\n", nr, HASH_KEYS, reps, ms);
	for (int k = 0; k < reps; k++) {
		for (int f = 0; f < NHF; f++) {
			struct kv kv;

			if (run_hash(f, nr, ms, &kv) < 0)
				return 1;
			lk[f][k] = kv_get(&kv, "lookups_per_s", 0);
			up[f][k] = kv_get(&kv, "updates_per_s", 0);
			rss[f][k] = kv_get(&kv, "hwm_kb", 0) / 1024.0;
			lkc[f][k] = kv_get(&kv, "lookups_per_cpu_s", 0);
			upc[f][k] = kv_get(&kv, "updates_per_cpu_s", 0);
		}
	}
	jdoc_param(d, "readers", nr);
	jdoc_param(d, "keys", HASH_KEYS);
	jdoc_param(d, "ms", ms);
	fprintf(md, "## hash: rculfhash on each flavor (a real structure)\n\n"
		"liburcu's rculfhash (`cds_lfht_new_flavor`, auto-resize), %d keys half "
		"populated; %d reader threads look up random keys, one updater does "
		"add_replace / delete / add_unique at random, freeing removed nodes with the "
		"flavor's call_rcu; every call goes through the flavor struct (orcu-qsbr: orcu_rcu_flavor on threads registered with orcu_register_thread_qsbr). Each flavor runs "
		"in its own process (peak RSS = that process's VmHWM). Median of %d runs of "
		"%d ms, [min-max]; ratios against liburcu memb. The last two columns divide "
		"by the threads' own CPU time instead of wall time (what a lookup or an update "
		"costs, whatever share of a shared machine the run got).\n\n",
		HASH_KEYS, nr, reps, ms);
	fprintf(md, "| flavor | lookups/s (M) | ratio | updates/s (M) | ratio | peak RSS (MiB) "
		"| lookups per reader CPU-s, ratio | updates per updater CPU-s, ratio |\n"
		"|---|---|---|---|---|---|---|---|\n");
	printf("%-10s %26s %7s %26s %7s %10s\n", "flavor", "lookups/s (M)", "ratio",
	       "updates/s (M)", "ratio", "RSS MiB");
	for (int f = 0; f < NHF; f++) {
		sl[f] = summarize(lk[f], reps);
		su[f] = summarize(up[f], reps);
		sr[f] = summarize(rss[f], reps);
		slc[f] = summarize(lkc[f], reps);
		suc[f] = summarize(upc[f], reps);
	}
	for (int f = 0; f < NHF; f++) {
		double rl = sl[f].med / sl[HF_BASE].med, ru = su[f].med / su[HF_BASE].med;

		printf("%-10s %8.2f [%6.2f-%6.2f] %7.3f %8.3f [%6.3f-%6.3f] %7.3f %10.1f\n",
		       hash_flavors[f], sl[f].med / 1e6, sl[f].min / 1e6, sl[f].max / 1e6, rl,
		       su[f].med / 1e6, su[f].min / 1e6, su[f].max / 1e6, ru, sr[f].med);
		fprintf(md, "| %s | %.2f [%.2f-%.2f] | %.3fx | %.3f [%.3f-%.3f] | %.3fx | %.1f "
			"| %.3fx | %.3fx |\n",
			hash_flavors[f], sl[f].med / 1e6, sl[f].min / 1e6, sl[f].max / 1e6, rl,
			su[f].med / 1e6, su[f].min / 1e6, su[f].max / 1e6, ru, sr[f].med,
			slc[f].med / slc[HF_BASE].med, suc[f].med / suc[HF_BASE].med);
		jdoc_row_begin(d);
		jdoc_str(d, "flavor", hash_flavors[f]);
		jdoc_summ(d, "lookups_per_s", sl[f]);
		jdoc_summ(d, "updates_per_s", su[f]);
		jdoc_summ(d, "peak_rss_mib", sr[f]);
		jdoc_num(d, "lookups_ratio_vs_urcu_memb", rl);
		jdoc_num(d, "updates_ratio_vs_urcu_memb", ru);
		jdoc_summ(d, "lookups_per_reader_cpu_s", slc[f]);
		jdoc_summ(d, "updates_per_updater_cpu_s", suc[f]);
		jdoc_row_end(d);
	}
	fprintf(md, "\n");
	printf("\n");
	snprintf(meas, sizeof(meas), "%.3fx (%.2f vs %.2f M/s)", sl[0].med / sl[HF_BASE].med,
		 sl[0].med / 1e6, sl[HF_BASE].med / 1e6);
	target_row("hash", "hash: rculfhash lookups/s, orcu (memb) >= 1.0x liburcu memb", meas,
		   sl[0].med >= sl[HF_BASE].med);
	snprintf(meas, sizeof(meas), "%.3fx (%.3f vs %.3f M/s)", su[0].med / su[HF_BASE].med,
		 su[0].med / 1e6, su[HF_BASE].med / 1e6);
	target_row("hash", "hash: rculfhash updates/s, orcu (memb) >= 1.0x liburcu memb", meas,
		   su[0].med >= su[HF_BASE].med);
	jdoc_write(d);
	fclose(md);
	return 0;
}
