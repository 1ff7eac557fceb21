/*
 * orcu-torture.c - the rcutorture analogue's driver: options, topology,
 * progress, the final report and verdict, the shutdown watchdog and main().
 * The element pool and the thread bodies live in torture_threads.c, the
 * shared declarations in torture.h.
 */

/*
 * Readers (memb, qsbr or both) histogram the age ("pipe count") of the
 * element they read while a writer replaces it and retires the old one
 * through every update-side API in turn; fake writers, barrier torture,
 * hotplug, offload toggling and a callback flood run alongside.  Ends with
 * the histograms, the counters and one line: SUCCESS or FAILURE (exit
 * status 0 or 1).  Uses <orcu.h> and <orcu/debug.h> only.
 *
 * The oracle (rcutorture's).  An element's pipe count is 0 while it is
 * published, 1 once it is unpublished (retired), and grows by one after
 * every grace period that ends after its retirement.  A reader that loaded
 * the element inside a read-side section may see 0 or 1 there, never 2: a
 * 2 means a grace period ended while a reader that predates it still ran.
 * Elements come from a fixed pool and are never free()d: a freed element is
 * poisoned (live = 0, generation bumped) and queued FIFO for reuse, so a
 * use-after-free shows up as a poisoned or re-generated element, not as a
 * crash.  At the end every element must come back to the pool and every
 * callback the tool posted must have run: a lost callback is a FAILURE too.
 */
#include "torture.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Options and topology */

struct torture_opts opt = { .readers = 2, .qsbr_readers = 1, .fake_writers = 1, .duration = 10 };
struct torture_topo topo = { .never = -1 };

static double timeout_mult = 1;

/* ------------------------------------------------------------------ */
/* Errors: counted by kind; the first few are described as they happen. */

static const char *const err_name[E_N] = {
	"too-old", "freed", "reused", "barrier", "lost", "progress", "bound", "api" };
static _Atomic uint64_t errors[E_N];
static _Atomic int errors_printed;
_Atomic int stop;

void fail(enum err e, const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	atomic_fetch_add(&errors[e], 1);
	if (atomic_fetch_add(&errors_printed, 1) >= 20)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line: readers report concurrently. */
	printf("\norcu-torture: ERROR (%s): %s\n", err_name[e], buf);
	fflush(stdout);
}

static uint64_t total_errors(void)
{
	uint64_t n = 0;

	for (int i = 0; i < E_N; i++)
		n += atomic_load(&errors[i]);
	return n;
}

static const char *const upd_name[UPD_N] = { "sync", "call", "lazy", "poll", "expedited" };
static const char *const cb_name[CB_N] = { "pipe", "barrier", "flood", "early" };

/* ------------------------------------------------------------------ */
/* Topology: parse "possible=N,online=<cpulist>" (ORCU_CPUS syntax) just
 * enough to know which slots to bind to and which one never comes online. */

static bool parse_cpus(const char *spec)
{
	const char *p = strstr(spec, "possible="), *o = strstr(spec, "online=");
	char *end;
	bool *on;

	if (!p)
		return false;
	topo.possible = (int)strtol(p + 9, &end, 10);
	if (topo.possible < 1)
		return false;
	on = calloc((size_t)topo.possible, sizeof(*on));
	topo.online = calloc((size_t)topo.possible, sizeof(int));
	if (!on || !topo.online)
		exit(2);
	if (!o) {
		for (int i = 0; i < topo.possible; i++)
			on[i] = true;
	} else {
		const char *q = o + 7;

		/* Ranges until the end or the ",key=" of the next pair. */
		while (*q >= '0' && *q <= '9') {
			long a = strtol(q, &end, 10), b = a;

			if (*end == '-')
				b = strtol(end + 1, &end, 10);
			for (long c = a; c <= b && c < topo.possible; c++)
				on[c] = true;
			q = *end == ',' ? end + 1 : end;
		}
	}
	for (int i = 0; i < topo.possible; i++)
		if (on[i])
			topo.online[topo.n_online++] = i;
	for (int i = topo.possible - 1; i >= 0 && topo.never < 0; i--)
		if (!on[i])
			topo.never = i;
	/* Hotplug: up to 16 online slots and 4 offline ones, never the
	 * reserved never-onlined slot. */
	for (int i = 0; i < topo.n_online && topo.n_hp < 16; i++)
		topo.hp[topo.n_hp++] = topo.online[i];
	for (int i = 0, extra = 0; i < topo.possible && extra < 4; i++)
		if (!on[i] && i != topo.never) {
			topo.hp[topo.n_hp++] = i;
			extra++;
		}
	free(on);
	topo.virt = topo.n_online > 0;
	return topo.virt;
}

static void real_topology(void)
{
	struct orcu_stats st;

	orcu_get_stats(&st);
	topo.possible = (int)st.slots_possible;
	topo.online = calloc(1, sizeof(int));
	if (!topo.online)
		exit(2);
	topo.n_online = 1;
	/* Unbound threads follow their real CPU; hotplug the first few. */
	for (int i = 0; i < topo.possible && i < 8; i++)
		topo.hp[topo.n_hp++] = i;
}

/* ------------------------------------------------------------------ */
/* Reporting */

static void sum_reads(uint64_t hist[PIPE_LEN + 1], uint64_t *memb, uint64_t *qsbr)
{
	*memb = *qsbr = 0;
	for (int a = 0; a <= PIPE_LEN; a++)
		hist[a] = 0;
	for (int i = 0; i < 2 * MAX_READERS; i++) {
		for (int a = 0; a <= PIPE_LEN; a++)
			hist[a] += atomic_load_explicit(&rstats[i].pipe[a], relaxed);
		*(i < MAX_READERS ? memb : qsbr) +=
			atomic_load_explicit(&rstats[i].reads, relaxed);
	}
}

static uint64_t total_updates(void)
{
	uint64_t n = 0;

	for (int i = 0; i < UPD_N; i++)
		n += atomic_load_explicit(&updates[i], relaxed);
	return n;
}

static void progress(double elapsed, bool tty)
{
	struct orcu_stats st;
	uint64_t hist[PIPE_LEN + 1], memb, qsbr;

	orcu_get_stats(&st);
	sum_reads(hist, &memb, &qsbr);
	printf("%s[%6.1f/%.0f s] reads %llu upd %llu GPs %llu cbs %llu/%llu barriers %llu hotplug %llu errors %llu%s",
	       tty ? "\r" : "", elapsed, opt.duration,
	       (unsigned long long)(memb + qsbr), (unsigned long long)total_updates(),
	       (unsigned long long)st.gp_completed,
	       (unsigned long long)st.callbacks_invoked,
	       (unsigned long long)st.callbacks_queued,
	       (unsigned long long)st.barriers,
	       (unsigned long long)(atomic_load(&hp_online) + atomic_load(&hp_offline)),
	       (unsigned long long)total_errors(), tty ? "   " : "\n");
	fflush(stdout);
}

static void print_summary(double secs, long pool_missing)
{
	struct orcu_stats st;
	uint64_t hist[PIPE_LEN + 1], memb, qsbr;

	orcu_get_stats(&st);
	sum_reads(hist, &memb, &qsbr);
	printf("orcu-torture: ran %.1f s, seed %llu\n", secs, opt.seed);
	printf("pipe histogram (age 0 1 2 3 4 5 6 7 8 9 >=10):");
	for (int a = 0; a <= PIPE_LEN; a++)
		printf(" %llu", (unsigned long long)hist[a]);
	printf("\nfree-block circulation                     :");
	for (int a = 0; a <= PIPE_LEN; a++)
		printf(" %llu", (unsigned long long)atomic_load(&wcount[a]));
	printf("\nreads: %llu (memb %llu, qsbr %llu)\nupdates: %llu (",
	       (unsigned long long)(memb + qsbr), (unsigned long long)memb,
	       (unsigned long long)qsbr, (unsigned long long)total_updates());
	for (int i = 0; i < UPD_N; i++)
		printf("%s%s %llu", i ? ", " : "", upd_name[i],
		       (unsigned long long)atomic_load(&updates[i]));
	printf("), pool empty %llu, elements not back %ld\n",
	       (unsigned long long)atomic_load(&alloc_fail), pool_missing);
	printf("fake writer ops: %llu\n", (unsigned long long)atomic_load(&fake_ops));
	printf("GPs: %llu completed, %llu hurried\n",
	       (unsigned long long)st.gp_completed, (unsigned long long)st.gp_expedited);
	printf("callbacks: queued %llu, invoked %llu, inline %llu, adopted %llu; tool posted/invoked:",
	       (unsigned long long)st.callbacks_queued,
	       (unsigned long long)st.callbacks_invoked,
	       (unsigned long long)st.callbacks_inline,
	       (unsigned long long)st.adopted_callbacks);
	for (int i = 0; i < CB_N; i++)
		printf(" %s %llu/%llu", cb_name[i],
		       (unsigned long long)atomic_load(&cb_posted[i]),
		       (unsigned long long)atomic_load(&cb_invoked[i]));
	printf("\nbarriers: %llu calls, %llu run; barrier-torture rounds %llu\n",
	       (unsigned long long)st.barriers, (unsigned long long)st.barriers_run,
	       (unsigned long long)atomic_load(&barrier_rounds));
	printf("fork: %llu children, each posted, barriered and synchronized\n",
	       (unsigned long long)atomic_load(&forks));
	printf("memb readers moved: %llu times\n", (unsigned long long)atomic_load(&reader_moves));
	printf("hotplug: %llu online, %llu offline, %llu refused; offload toggles %llu; slots online %llu/%llu\n",
	       (unsigned long long)atomic_load(&hp_online),
	       (unsigned long long)atomic_load(&hp_offline),
	       (unsigned long long)atomic_load(&hp_refused),
	       (unsigned long long)atomic_load(&offload_toggles),
	       (unsigned long long)st.slots_online, (unsigned long long)st.slots_possible);
	printf("flood: peak pending %llu, poster waits %llu, overruns %llu, qhimark crossings %llu, heads busy %llu\n",
	       (unsigned long long)st.peak_pending, (unsigned long long)st.poster_waits,
	       (unsigned long long)st.poster_overruns,
	       (unsigned long long)st.qhimark_crossings,
	       (unsigned long long)atomic_load(&flood_full));
	printf("threads: leaders %llu, followers %llu, library total %llu\nerrors:",
	       (unsigned long long)st.leaders_alive, (unsigned long long)st.followers_alive,
	       (unsigned long long)st.threads_alive);
	for (int i = 0; i < E_N; i++)
		printf(" %s %llu", err_name[i], (unsigned long long)atomic_load(&errors[i]));
	printf("\n");
}

/* ------------------------------------------------------------------ */
/* Watchdog: a hung grace period, barrier or callback must end the run with
 * FAILURE, not with a test-harness timeout and no diagnosis. */

static _Atomic int end_done;
static double end_deadline;

static void *watchdog_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&end_done)) {
		if (now_s() > end_deadline) {
			printf("\norcu-torture: ERROR (progress): shutdown stuck for %.0f s: a grace period, barrier or callback never completed\nFAILURE\n",
			       60 * timeout_mult);
			fflush(stdout);
			_exit(1);
		}
		sleep_us(100000);
	}
	return NULL;
}

/* Names of the orcu-* threads still alive, for the report. */
static void library_thread_names(char *buf, size_t len)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t used = 0;

	buf[0] = '\0';
	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if (e->d_name[0] == '.' || !(f = fopen(path, "re")))
			continue;
		if (fgets(comm, sizeof(comm), f) && strncmp(comm, "orcu-", 5) == 0) {
			comm[strcspn(comm, "\n")] = '\0';
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
						 " %s", comm);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
}

/* Long-window forward-progress checks, sampled by main(). */
static void monitor(double t, double limit)
{
	static double gp_t, cb_t, upd_t;
	static uint64_t gp_last, cb_last, upd_last;
	static bool reported;
	struct orcu_stats st;
	uint64_t inv = 0, posted = 0, upd = total_updates();

	orcu_get_stats(&st);
	for (int i = 0; i < CB_N; i++) {
		inv += atomic_load(&cb_invoked[i]);
		posted += atomic_load(&cb_posted[i]);
	}
	if (!gp_t)
		gp_t = cb_t = upd_t = t;
	if (st.gp_completed != gp_last)
		gp_last = st.gp_completed, gp_t = t;
	if (inv != cb_last || inv == posted)
		cb_last = inv, cb_t = t;
	if (upd != upd_last)
		upd_last = upd, upd_t = t;
	if (reported)
		return;
	if (t - gp_t > limit || t - cb_t > limit || t - upd_t > limit) {
		reported = true;
		fail(E_PROGRESS, "no %s for %.0f s",
		     t - gp_t > limit ? "grace period completed" :
		     t - cb_t > limit ? "callback invoked while callbacks were pending" :
		     "update completed", limit);
		atomic_store(&stop, 1);
	}
}

/* ------------------------------------------------------------------ */

/* The library's test-only hook (a weak reference in the engine): the
 * busted flavor exists only in validation programs that define it. */
static atomic_int busted_on;

int orcu_test_gp_busted(void);
__attribute__((visibility("default"))) int orcu_test_gp_busted(void)
{
	return atomic_load_explicit(&busted_on, memory_order_relaxed);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: orcu-torture [options]\n"
"  --readers N          memb readers (default 2)\n"
"  --qsbr-readers N     qsbr readers (default 1); both > 0 = mixed flavor\n"
"  --fake-writers N     threads calling synchronize/barrier/polled API (default 1)\n"
"  --duration S         seconds to run (default 10)\n"
"  --seed N             random seed (printed at start, for replay)\n"
"  --hotplug            random orcu_cpu_online/offline\n"
"  --toggle-offload     random orcu_cpu_offload/deoffload\n"
"  --barrier-torture    concurrent barriers over callbacks posted from many slots\n"
"  --flood              a thread floods orcu_call (forward progress, bounded pending)\n"
"  --fork               a thread forks; each child posts, barriers, synchronizes\n"
"  --move-readers       a thread changes the memb readers' CPU affinity at random\n"
"  --cpus SPEC          virtual topology, sets ORCU_CPUS (\"possible=N,online=LIST\")\n"
"  --nocbs SPEC         sets ORCU_NOCBS (all | none | cpulist)\n"
"  --stride N           sets ORCU_NOCB_STRIDE\n"
"  --delays US          engine delay hooks up to US microseconds\n"
"  --busted             grace periods that do not wait: must end in FAILURE\n");
}

static long parse_num(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max) {
		fprintf(stderr, "orcu-torture: bad %s \"%s\" (%ld..%ld)\n", what, s, min, max);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "readers", 1, 0, 'r' }, { "qsbr-readers", 1, 0, 'q' },
		{ "fake-writers", 1, 0, 'f' }, { "duration", 1, 0, 'd' },
		{ "seed", 1, 0, 's' }, { "hotplug", 0, 0, 'H' },
		{ "toggle-offload", 0, 0, 'O' }, { "barrier-torture", 0, 0, 'B' },
		{ "flood", 0, 0, 'F' }, { "cpus", 1, 0, 'c' }, { "nocbs", 1, 0, 'n' },
		{ "stride", 1, 0, 'S' }, { "delays", 1, 0, 'D' }, { "busted", 0, 0, 'X' },
		{ "fork", 0, 0, 'K' }, { "move-readers", 0, 0, 'M' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 } };
	struct timespec ts;
	char *end;
	int c;

	clock_gettime(CLOCK_REALTIME, &ts);
	opt.seed = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^
		   ((unsigned long long)getpid() << 40);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': opt.readers = (int)parse_num(optarg, "--readers", 0, MAX_READERS); break;
		case 'q': opt.qsbr_readers = (int)parse_num(optarg, "--qsbr-readers", 0, MAX_READERS); break;
		case 'f': opt.fake_writers = (int)parse_num(optarg, "--fake-writers", 0, MAX_FAKE); break;
		case 'd':
			opt.duration = strtod(optarg, &end);
			if (*end || !(opt.duration > 0)) {
				fprintf(stderr, "orcu-torture: bad --duration \"%s\"\n", optarg);
				exit(2);
			}
			break;
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 'H': opt.hotplug = true; break;
		case 'O': opt.toggle_offload = true; break;
		case 'B': opt.barrier_torture = true; break;
		case 'F': opt.flood = true; break;
		case 'K': opt.fork = true; break;
		case 'M': opt.move_readers = true; break;
		case 'c': opt.cpus = optarg; break;
		case 'n': opt.nocbs = optarg; break;
		case 'S': opt.stride = (int)parse_num(optarg, "--stride", 1, 1 << 20); break;
		case 'D': opt.delays_us = (unsigned)parse_num(optarg, "--delays", 0, 1000000); break;
		case 'X': opt.busted = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc) {
		usage(stderr);
		exit(2);
	}
	if (opt.readers + opt.qsbr_readers == 0) {
		fprintf(stderr, "orcu-torture: need at least one reader\n");
		exit(2);
	}
}

/* Flood control limits the engine applies, for the pending bound check. */
static long env_long(const char *name, long def)
{
	const char *s = getenv(name);

	return s && *s ? atol(s) : def;
}

int main(int argc, char **argv)
{
	pthread_t readers[2 * MAX_READERS], writer, fakes[MAX_FAKE],
		bts[NR_BARRIER_THREADS], hp, off, flood, forker, mover, wd;
	double t0, elapsed, next_line, limit;
	const char *env_cpus;
	bool tty = isatty(1);
	long missing, qhimark, qmax;
	struct orcu_stats st;
	char buf[32];
	int ret;

	parse_args(argc, argv);
	/* Our threads inherit this name; orcu-* is the library's. */
	pthread_setname_np(pthread_self(), "torture");
	if (getenv("ORCU_TEST_TIMEOUT_MULT"))
		timeout_mult = atof(getenv("ORCU_TEST_TIMEOUT_MULT")) > 1 ?
			       atof(getenv("ORCU_TEST_TIMEOUT_MULT")) : 1;
	/* The environment is read at first orcu use: set it before anything. */
	if (opt.cpus)
		setenv("ORCU_CPUS", opt.cpus, 1);
	if (opt.nocbs)
		setenv("ORCU_NOCBS", opt.nocbs, 1);
	if (opt.stride) {
		snprintf(buf, sizeof(buf), "%d", opt.stride);
		setenv("ORCU_NOCB_STRIDE", buf, 1);
	}
	if (opt.flood && !getenv("ORCU_QHIMARK") && !getenv("ORCU_QMAX")) {
		/* Low limits so the flood reaches them: hurry and poster waits. */
		setenv("ORCU_QHIMARK", "2000", 1);
		setenv("ORCU_QMAX", "8000", 1);
	}
	qhimark = env_long("ORCU_QHIMARK", 10000);
	qmax = env_long("ORCU_QMAX", 200000);
	if (qmax <= qhimark)
		qmax = 2 * qhimark;
	env_cpus = getenv("ORCU_CPUS");
	if (!env_cpus || !parse_cpus(env_cpus))
		topo.virt = false;
	printf("orcu-torture: seed %llu (replay with --seed %llu)\n", opt.seed, opt.seed);
	printf("orcu-torture: %.0f s, %d memb + %d qsbr readers, %d fake writers, cpus %s, nocbs %s, stride %s%s%s%s%s%s, delays %u us\n",
	       opt.duration, opt.readers, opt.qsbr_readers, opt.fake_writers,
	       env_cpus ? env_cpus : "(real)", getenv("ORCU_NOCBS") ? getenv("ORCU_NOCBS") : "(default)",
	       getenv("ORCU_NOCB_STRIDE") ? getenv("ORCU_NOCB_STRIDE") : "(default)",
	       opt.hotplug ? ", hotplug" : "", opt.toggle_offload ? ", toggle-offload" : "",
	       opt.barrier_torture ? ", barrier-torture" : "", opt.flood ? ", flood" : "",
	       opt.busted ? ", BUSTED" : "", opt.delays_us);
	fflush(stdout);

	/* First orcu use: callbacks before any thread of ours exists. */
	early_scenario();
	if (!topo.virt)
		real_topology();
	if (opt.delays_us)
		orcu_debug_set_delays(opt.delays_us);
	if (opt.busted)
		atomic_store(&busted_on, 1);

	for (int i = 0; i < POOL_SIZE; i++)
		freeq.ring[i] = (unsigned)i;
	freeq.count = POOL_SIZE;
	published = elem_alloc();

	for (int i = 0; i < opt.readers; i++)
		pthread_create(&readers[i], NULL, memb_reader, (void *)(intptr_t)i);
	for (int i = 0; i < opt.qsbr_readers; i++)
		pthread_create(&readers[MAX_READERS + i], NULL, qsbr_reader,
			       (void *)(intptr_t)(MAX_READERS + i));
	pthread_create(&writer, NULL, writer_main, NULL);
	for (int i = 0; i < opt.fake_writers; i++)
		pthread_create(&fakes[i], NULL, fake_writer, (void *)(intptr_t)i);
	if (opt.barrier_torture)
		for (int i = 0; i < NR_BARRIER_THREADS; i++) {
			bthreads[i].id = i;
			pthread_create(&bts[i], NULL, barrier_main, &bthreads[i]);
		}
	if (opt.hotplug)
		pthread_create(&hp, NULL, hotplug_main, NULL);
	if (opt.toggle_offload)
		pthread_create(&off, NULL, offload_main, NULL);
	if (opt.flood) {
		fheads = calloc(FLOOD_HEADS, sizeof(*fheads));
		if (!fheads)
			return 2;
		pthread_create(&flood, NULL, flood_main, NULL);
	}
	if (opt.fork)
		pthread_create(&forker, NULL, fork_main, NULL);
	memb_threads = readers;
	if (opt.move_readers && opt.readers > 0)
		pthread_create(&mover, NULL, mover_main, NULL);

	/* Run, showing progress; watch for long stalls. */
	limit = 30 * timeout_mult;
	t0 = now_s();
	next_line = 5;
	while ((elapsed = now_s() - t0) < opt.duration && !atomic_load(&stop)) {
		sleep_us(250000);
		monitor(now_s() - t0, limit);
		if (tty) {
			progress(now_s() - t0, true);
		} else if (now_s() - t0 >= next_line) {
			progress(now_s() - t0, false);
			next_line += 5;
		}
	}
	atomic_store(&stop, 1);
	if (tty)
		printf("\n");

	/* Shutdown under a watchdog: join, age the last retired elements,
	 * drain, and account for every element and callback. */
	end_deadline = now_s() + 60 * timeout_mult;
	pthread_create(&wd, NULL, watchdog_main, NULL);
	/* The mover first: it names the readers' threads. */
	if (opt.move_readers && opt.readers > 0)
		pthread_join(mover, NULL);
	for (int i = 0; i < opt.readers; i++)
		pthread_join(readers[i], NULL);
	for (int i = 0; i < opt.qsbr_readers; i++)
		pthread_join(readers[MAX_READERS + i], NULL);
	pthread_join(writer, NULL);
	for (int i = 0; i < opt.fake_writers; i++)
		pthread_join(fakes[i], NULL);
	if (opt.barrier_torture)
		for (int i = 0; i < NR_BARRIER_THREADS; i++)
			pthread_join(bts[i], NULL);
	if (opt.hotplug)
		pthread_join(hp, NULL);
	if (opt.toggle_offload)
		pthread_join(off, NULL);
	if (opt.flood)
		pthread_join(flood, NULL);
	if (opt.fork)
		pthread_join(forker, NULL);
	elapsed = now_s() - t0;
	for (int i = 0; i < PIPE_LEN; i++) {
		orcu_synchronize();
		removed_advance(&writer_removed);
	}
	ret = orcu_drain((long)(30000 * timeout_mult));
	if (ret < 0)
		fail(E_LOST, "orcu_drain: %s", strerror(-ret));
	pthread_mutex_lock(&freeq.lock);
	missing = POOL_SIZE - 1 - (long)freeq.count;
	pthread_mutex_unlock(&freeq.lock);
	if (missing)
		fail(E_LOST, "%ld element(s) never came back to the pool (callback lost?)", missing);
	for (int i = 0; i < CB_N; i++)
		if (atomic_load(&cb_posted[i]) != atomic_load(&cb_invoked[i]))
			fail(E_LOST, "%s callbacks: %llu posted, %llu invoked after orcu_drain",
			     cb_name[i], (unsigned long long)atomic_load(&cb_posted[i]),
			     (unsigned long long)atomic_load(&cb_invoked[i]));
	for (int i = 0, shown = 0; i < topo.possible; i++) {
		long n = orcu_slot_pending(i);

		/* Per slot, not just in sum: a miscount hides a slot from
		 * barriers (0) or makes every barrier visit it (non-zero). */
		if (n != 0 && shown++ < 4)
			fail(E_LOST, "slot %d: %ld callback(s) pending after orcu_drain", i, n);
	}
	orcu_get_stats(&st);
	if (st.callbacks_pending || st.callbacks_queued != st.callbacks_invoked)
		fail(E_LOST, "library counters after drain: queued %llu, invoked %llu, pending %llu",
		     (unsigned long long)st.callbacks_queued,
		     (unsigned long long)st.callbacks_invoked,
		     (unsigned long long)st.callbacks_pending);
	/* Bounded memory under flood (DESIGN §6): each poster overshoots
	 * ORCU_QMAX by at most one before it waits; chained pipe callbacks
	 * and barrier batches, which may not wait, add at most the pool and
	 * the barrier heads.  Hotplug moves whole queues between slots, so
	 * the bound is per slot only without it. */
	if (opt.flood && !opt.hotplug &&
	    st.peak_pending > (uint64_t)(qmax + POOL_SIZE + NR_BARRIER_THREADS * BARRIER_HEADS + 64))
		fail(E_BOUND, "peak pending %llu over ORCU_QMAX %ld + slack",
		     (unsigned long long)st.peak_pending, qmax);
	if (opt.flood && atomic_load(&cb_invoked[CB_FLOOD]) == 0)
		fail(E_PROGRESS, "no flood callback was ever invoked");
	print_summary(elapsed, missing);
	ret = orcu_shutdown();
	if (ret < 0)
		fail(E_API, "orcu_shutdown = %d", ret);
	else if ((ret = orcu_debug_thread_count()) != 0) {
		char names[160];

		library_thread_names(names, sizeof(names));
		fail(E_API, "%d library thread(s) left after orcu_shutdown:%s", ret, names);
	}
	atomic_store(&end_done, 1);
	pthread_join(wd, NULL);
	if (total_errors()) {
		printf("FAILURE\n");
		return 1;
	}
	printf("SUCCESS\n");
	return 0;
}
