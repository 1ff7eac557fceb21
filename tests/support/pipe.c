/*
 * pipe.c - the age ("pipe count") oracle of the grace-period guarantee and
 * run_child(), shared by orcu's core tests; common_pipe.h says what they do.
 * Compiled once, without ORCU_QSBR (code shared by memb and qsbr readers);
 * a test's own ORCU_QSBR unit only changes the read side it inlines itself.
 */
#include <orcu.h>

#include "common_pipe.h"

#define PIPE_POOL      32768
#define PIPE_POISON    0xdeadu
#define PIPE_MAGIC     0x0c0ffee5u
#define PIPE_MAXTHR    16
#define PIPE_POLL_RING 64

struct pipe_elem {
	struct orcu_head head;         /* first: the callback casts back */
	_Atomic unsigned age;          /* 0 live, 1..PIPE_LEN-1 retiring, POISON free */
	_Atomic unsigned long gen;     /* bumped at every reuse */
	_Atomic unsigned magic;
	struct pipe_elem *free_next;   /* under pipe_pool_lock */
};

/* ------------------------------------------------------------------ */
/* The age oracle */

static struct pipe_elem *pipe_pool;
static struct pipe_elem *pipe_free;
static long pipe_nfree;
static pthread_mutex_t pipe_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pipe_pool_cond = PTHREAD_COND_INITIALIZER;
static struct pipe_elem *pipe_cur;   /* the published element */

static struct pipe_cfg pipe_cfg_now;
static atomic_int pipe_stop;
atomic_ulong pipe_errors;
static atomic_ulong pipe_reads, pipe_updates, pipe_gen_changed;
static atomic_ulong pipe_hist[PIPE_LEN + 1];
static atomic_int pipe_first_error_printed;
static pthread_t pipe_threads[PIPE_MAXTHR * 7];
static int pipe_nthreads;
static uint64_t pipe_gp_start;

static void pipe_put(struct pipe_elem *e)
{
	atomic_store_explicit(&e->age, PIPE_POISON, memory_order_relaxed);
	pthread_mutex_lock(&pipe_pool_lock);
	e->free_next = pipe_free;
	pipe_free = e;
	pipe_nfree++;
	pthread_cond_signal(&pipe_pool_cond);
	pthread_mutex_unlock(&pipe_pool_lock);
}

/* A free element, made live (age 0, new generation); NULL once stopping. */
static struct pipe_elem *pipe_get(void)
{
	struct pipe_elem *e;
	double deadline = check_now_s() + check_timeout_s(30);

	pthread_mutex_lock(&pipe_pool_lock);
	for (;;) {
		struct timespec ts;

		if (atomic_load(&pipe_stop)) {
			pthread_mutex_unlock(&pipe_pool_lock);
			return NULL;
		}
		if (pipe_free)
			break;
		if (check_now_s() > deadline) {
			fprintf(stderr, "pipe: pool of %d elements exhausted for 30s: "
				"retired elements are not coming back (callbacks lost "
				"or grace periods stuck)\n", PIPE_POOL);
			exit(1);
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&pipe_pool_cond, &pipe_pool_lock, &ts);
	}
	e = pipe_free;
	pipe_free = e->free_next;
	pipe_nfree--;
	pthread_mutex_unlock(&pipe_pool_lock);
	atomic_fetch_add_explicit(&e->gen, 1, memory_order_relaxed);
	atomic_store_explicit(&e->age, 0, memory_order_relaxed);
	return e;
}

/* Publish a fresh element; return the one it replaced (now age 1). */
static struct pipe_elem *pipe_replace(struct pipe_elem *e)
{
	struct pipe_elem *old = orcu_xchg_pointer(&pipe_cur, e);

	atomic_store_explicit(&old->age, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pipe_updates, 1, memory_order_relaxed);
	return old;
}

/* One GP stage has passed since the last: age the element. */
static void pipe_age(struct pipe_elem *e)
{
	atomic_fetch_add_explicit(&e->age, 1, memory_order_relaxed);
}

static void pipe_cb(struct orcu_head *h)
{
	struct pipe_elem *e = (struct pipe_elem *)h;

	pipe_age(e);
	if (atomic_load_explicit(&e->age, memory_order_relaxed) < PIPE_LEN)
		orcu_call(&e->head, pipe_cb);
	else
		pipe_put(e);
}

static inline unsigned pipe_rand(unsigned *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void pipe_spin_us(unsigned us)
{
	double end = check_now_s() + us / 1e6;

	while (check_now_s() < end)
		;
}

/* Look at the published element across a hold; called inside a section. */
static void pipe_read_one(unsigned *rnd)
{
	struct pipe_elem *p = orcu_dereference(pipe_cur);
	unsigned long g0 = atomic_load_explicit(&p->gen, memory_order_relaxed);
	unsigned r = pipe_rand(rnd), age, magic;
	unsigned long g1;
	unsigned every = pipe_cfg_now.long_every ? pipe_cfg_now.long_every : 64;
	unsigned hold = pipe_cfg_now.long_hold_us ? pipe_cfg_now.long_hold_us : 200;

	if (r % every == 0)
		pipe_spin_us(hold);
	else
		for (unsigned i = 0; i < (r >> 8) % 128; i++)
			atomic_signal_fence(memory_order_seq_cst);
	if ((r >> 20) % 2048 == 0)
		sched_yield();          /* be preempted inside the section */
	age = atomic_load_explicit(&p->age, memory_order_relaxed);
	g1 = atomic_load_explicit(&p->gen, memory_order_relaxed);
	magic = atomic_load_explicit(&p->magic, memory_order_relaxed);
	atomic_fetch_add_explicit(&pipe_reads, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pipe_hist[age >= PIPE_LEN ? PIPE_LEN : age], 1,
				  memory_order_relaxed);
	if (age >= 2 || g1 != g0 || magic != PIPE_MAGIC) {
		atomic_fetch_add_explicit(&pipe_errors, 1, memory_order_relaxed);
		if (g1 != g0)
			atomic_fetch_add_explicit(&pipe_gen_changed, 1, memory_order_relaxed);
		if (!atomic_exchange(&pipe_first_error_printed, 1))
			fprintf(stderr, "pipe: reader saw element %p age %u%s gen %lu->%lu "
				"magic %#x: a grace period ended inside a read-side "
				"critical section\n", (void *)p, age,
				age == PIPE_POISON ? " (poisoned/freed)" : "", g0, g1, magic);
	}
}

static void *pipe_memb_reader(void *arg)
{
	unsigned rnd = (unsigned)(uintptr_t)arg * 2654435761u + 1;

	CHECK_EQ(orcu_register_thread(), 0);
	while (!atomic_load_explicit(&pipe_stop, memory_order_relaxed)) {
		orcu_read_lock();
		if (pipe_rand(&rnd) % 16 == 0) {
			orcu_read_lock();      /* nested */
			pipe_read_one(&rnd);
			orcu_read_unlock();
			pipe_read_one(&rnd);   /* still inside the outer section */
		} else {
			pipe_read_one(&rnd);
		}
		orcu_read_unlock();
	}
	orcu_unregister_thread();
	return NULL;
}

/* qsbr: a "section" is everything between two quiescent states. */
static void pipe_qsbr_loop(unsigned *rnd, int rounds)
{
	for (int n = 0; rounds < 0 || n < rounds; n++) {
		unsigned r;

		if (atomic_load_explicit(&pipe_stop, memory_order_relaxed))
			return;
		r = pipe_rand(rnd);
		for (unsigned k = 0; k < 1 + r % 4; k++)
			pipe_read_one(rnd);
		if (r % 512 == 0) {
			orcu_thread_offline();
			sched_yield();
			orcu_thread_online();
		} else {
			orcu_quiescent_state();
		}
	}
}

static void *pipe_qsbr_reader(void *arg)
{
	unsigned rnd = (unsigned)(uintptr_t)arg * 2246822519u + 7;

	CHECK_EQ(orcu_register_thread_qsbr(), 0);
	pipe_qsbr_loop(&rnd, -1);
	orcu_thread_offline();
	orcu_unregister_thread();
	return NULL;
}

/* Registers and unregisters as memb and qsbr in turn, while GPs run. */
static void *pipe_switch_reader(void *arg)
{
	unsigned rnd = (unsigned)(uintptr_t)arg * 3266489917u + 3;

	while (!atomic_load_explicit(&pipe_stop, memory_order_relaxed)) {
		CHECK_EQ(orcu_register_thread(), 0);
		for (int i = 0; i < 2000; i++) {
			orcu_read_lock();
			pipe_read_one(&rnd);
			orcu_read_unlock();
		}
		orcu_unregister_thread();
		CHECK_EQ(orcu_register_thread_qsbr(), 0);
		/* shared code calls orcu_read_lock on a qsbr thread: allowed */
		orcu_read_lock();
		pipe_read_one(&rnd);
		orcu_read_unlock();
		orcu_quiescent_state();
		pipe_qsbr_loop(&rnd, 2000);
		orcu_unregister_thread();
	}
	return NULL;
}

static void *pipe_call_writer(void *arg)
{
	(void)arg;
	for (;;) {
		struct pipe_elem *e = pipe_get();

		if (!e)
			break;
		orcu_call(&pipe_replace(e)->head, pipe_cb);
	}
	return NULL;
}

/* arg: NULL synchronize, 1 expedited, 2 synchronize from a memb reader
 * that reads a section right after each wait (parked while it waits:
 * its first section after it must still be protected, registry.c
 * point 4). */
static void *pipe_sync_writer(void *arg)
{
	bool expedited = arg == (void *)1, memb = arg == (void *)2;
	unsigned rnd = 12345;

	if (memb)
		CHECK_EQ(orcu_register_thread(), 0);
	for (;;) {
		struct pipe_elem *e = pipe_get(), *old;

		if (!e)
			break;
		old = pipe_replace(e);
		for (int i = 1; i < PIPE_LEN; i++) {
			if (expedited)
				orcu_synchronize_expedited();
			else
				orcu_synchronize();
			if (memb) {
				orcu_read_lock();
				pipe_read_one(&rnd);
				orcu_read_unlock();
			}
			pipe_age(old);
		}
		pipe_put(old);
	}
	if (memb)
		orcu_unregister_thread();
	return NULL;
}

static void *pipe_poll_writer(void *arg)
{
	struct { struct pipe_elem *e; unsigned long cookie; } ring[PIPE_POLL_RING];
	unsigned head = 0, tail = 0, n = 0;
	unsigned long i = 0;

	(void)arg;
	for (;;) {
		struct pipe_elem *e = NULL;

		if (!atomic_load_explicit(&pipe_stop, memory_order_relaxed))
			e = pipe_get();
		if (e) {
			struct pipe_elem *old = pipe_replace(e);

			/* Alternate the two ways to take a cookie. */
			ring[tail].e = old;
			ring[tail].cookie = (i++ & 1) ? orcu_start_poll() : orcu_get_state();
			tail = (tail + 1) % PIPE_POLL_RING;
			n++;
		}
		/* Retire what is old enough; wait when the ring is full or at the end. */
		while (n && (orcu_poll_state(ring[head].cookie) || n == PIPE_POLL_RING || !e)) {
			orcu_cond_synchronize(ring[head].cookie);
			CHECK(orcu_poll_state(ring[head].cookie));
			pipe_age(ring[head].e);
			/* Second stage through a fresh cookie, synchronously. */
			orcu_cond_synchronize(orcu_get_state());
			pipe_age(ring[head].e);
			pipe_put(ring[head].e);
			head = (head + 1) % PIPE_POLL_RING;
			n--;
		}
		if (!e)
			break;
	}
	return NULL;
}

static void pipe_spawn(void *(*fn)(void *), int count)
{
	for (int i = 0; i < count; i++) {
		CHECK(pipe_nthreads < (int)(sizeof(pipe_threads) / sizeof(pipe_threads[0])));
		CHECK_EQ(pthread_create(&pipe_threads[pipe_nthreads], NULL, fn,
					(void *)(uintptr_t)(pipe_nthreads + 1)), 0);
		pipe_nthreads++;
	}
}

static void pipe_spawn_arg(void *(*fn)(void *), int count, void *arg)
{
	for (int i = 0; i < count; i++) {
		CHECK(pipe_nthreads < (int)(sizeof(pipe_threads) / sizeof(pipe_threads[0])));
		CHECK_EQ(pthread_create(&pipe_threads[pipe_nthreads], NULL, fn, arg), 0);
		pipe_nthreads++;
	}
}

uint64_t pipe_gps_now(void)
{
	struct orcu_stats st;

	orcu_get_stats(&st);
	return st.gp_completed;
}

/* Start readers and writers.  The pool is (re)filled on the first call. */
void pipe_start(const struct pipe_cfg *cfg)
{
	if (!pipe_pool) {
		pipe_pool = calloc(PIPE_POOL, sizeof(*pipe_pool));
		CHECK(pipe_pool);
		for (int i = 1; i < PIPE_POOL; i++) {
			atomic_store(&pipe_pool[i].magic, PIPE_MAGIC);
			pipe_put(&pipe_pool[i]);
		}
		atomic_store(&pipe_pool[0].magic, PIPE_MAGIC);
		orcu_assign_pointer(pipe_cur, &pipe_pool[0]);
	}
	pipe_cfg_now = *cfg;
	atomic_store(&pipe_stop, 0);
	atomic_store(&pipe_reads, 0);
	atomic_store(&pipe_errors, 0);
	atomic_store(&pipe_updates, 0);
	atomic_store(&pipe_gen_changed, 0);
	atomic_store(&pipe_first_error_printed, 0);
	for (int i = 0; i <= PIPE_LEN; i++)
		atomic_store(&pipe_hist[i], 0);
	pipe_nthreads = 0;
	pipe_gp_start = pipe_gps_now();
	CHECK(cfg->memb_readers <= PIPE_MAXTHR && cfg->qsbr_readers <= PIPE_MAXTHR);
	pipe_spawn(pipe_memb_reader, cfg->memb_readers);
	pipe_spawn(pipe_switch_reader, cfg->switch_readers);
	pipe_spawn(pipe_qsbr_reader, cfg->qsbr_readers);
	pipe_spawn(pipe_call_writer, cfg->call_writers);
	pipe_spawn_arg(pipe_sync_writer, cfg->sync_writers, NULL);
	pipe_spawn_arg(pipe_sync_writer, cfg->exp_writers, (void *)1);
	pipe_spawn_arg(pipe_sync_writer, cfg->memb_sync_writers, (void *)2);
	pipe_spawn(pipe_poll_writer, cfg->poll_writers);
}

/* Stop, join, drain every retiring element, and check none was lost. */
void pipe_stop_run(struct pipe_result *res)
{
	atomic_store(&pipe_stop, 1);
	pthread_mutex_lock(&pipe_pool_lock);
	pthread_cond_broadcast(&pipe_pool_cond);
	pthread_mutex_unlock(&pipe_pool_lock);
	for (int i = 0; i < pipe_nthreads; i++)
		CHECK_EQ(pthread_join(pipe_threads[i], NULL), 0);
	pipe_nthreads = 0;
	/* Chained callbacks re-post themselves: drain, not one barrier. */
	CHECK_EQ(orcu_drain((long)(check_timeout_s(30) * 1000)), 0);
	pthread_mutex_lock(&pipe_pool_lock);
	/* Every element but the published one is back: no callback lost. */
	CHECK_EQ(pipe_nfree, PIPE_POOL - 1);
	pthread_mutex_unlock(&pipe_pool_lock);

	memset(res, 0, sizeof(*res));
	res->reads = atomic_load(&pipe_reads);
	res->errors = atomic_load(&pipe_errors);
	res->updates = atomic_load(&pipe_updates);
	res->gen_changed = atomic_load(&pipe_gen_changed);
	for (int i = 0; i <= PIPE_LEN; i++)
		res->hist[i] = atomic_load(&pipe_hist[i]);
	res->gps = pipe_gps_now() - pipe_gp_start;
}

void pipe_print(const char *name, const struct pipe_result *r)
{
	printf("%s: reads %lu updates %lu gps %lu errors %lu (gen changed %lu) "
	       "ages:", name, r->reads, r->updates, r->gps, r->errors, r->gen_changed);
	for (int i = 0; i <= PIPE_LEN; i++)
		printf(" %lu", r->hist[i]);
	printf("\n");
	fflush(stdout);
}

/* Run for seconds, then check the guarantee held and work was done. */
void pipe_run_checked(const char *name, const struct pipe_cfg *cfg,
		      double seconds)
{
	struct pipe_result r;
	double end = check_now_s() + seconds;
	double deadline = check_now_s() + check_timeout_s(seconds + 20);

	pipe_start(cfg);
	/* At least `seconds`, and on a slow (sanitized, loaded) machine on
	 * until a minimum of work was done, bounded by the deadline. */
	while (!atomic_load(&pipe_errors) && check_now_s() < deadline &&
	       (check_now_s() < end || atomic_load(&pipe_reads) <= 1000 ||
		atomic_load(&pipe_updates) <= 100 ||
		pipe_gps_now() - pipe_gp_start < 10))
		sleep_ms(20);
	pipe_stop_run(&r);
	pipe_print(name, &r);
	CHECK_EQ(r.errors, 0);
	CHECK(r.reads > 1000);
	CHECK(r.updates > 100);
	CHECK(r.gps >= 10);
}

/* ------------------------------------------------------------------ */
/* Child processes with captured stderr */


/* Run fn in a forked child whose stderr goes to a pipe; the child exits
 * with fn's return value.  Bounded: the child is killed after timeout_s. */
void run_child(int (*fn)(void *), void *arg, double timeout_s,
	       struct child_result *res)
{
	int fds[2];
	pid_t pid;
	size_t len = 0;
	double deadline = check_now_s() + check_timeout_s(timeout_s);
	bool eof = false, reaped = false;

	memset(res, 0, sizeof(*res));
	CHECK_EQ(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		close(fds[1]);
		_exit(fn(arg));
	}
	close(fds[1]);
	while (!eof || !reaped) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };

		if (check_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &res->status, 0);
			fprintf(stderr, "child timed out after %.0fs; its stderr so far:\n%.*s\n",
				check_timeout_s(timeout_s), (int)len, res->err);
			exit(1);
		}
		if (!eof && poll(&pfd, 1, 50) > 0) {
			char buf[512];
			ssize_t n = read(fds[0], buf, sizeof(buf));

			if (n <= 0) {
				eof = true;
			} else {
				size_t room = sizeof(res->err) - 1 - len;
				size_t k = (size_t)n < room ? (size_t)n : room;

				memcpy(res->err + len, buf, k);
				len += k;
			}
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &res->status, WNOHANG);

			CHECK(w >= 0);
			if (w == pid)
				reaped = true;
			else if (eof)
				sleep_ms(5);
		}
	}
	close(fds[0]);
	res->err[len] = '\0';
	/* Under qemu-user (scripts/cross-test.sh) a guest killed by a signal
	 * gets one more line on its stderr, written by the emulator after the
	 * program died: not the program's output. */
	if (WIFSIGNALED(res->status)) {
		char *q = strstr(res->err, "qemu: uncaught target signal ");

		if (q && (q == res->err || q[-1] == '\n')) {
			*q = '\0';
			len = (size_t)(q - res->err);
		}
	}
	for (size_t i = 0; i < len; i++)
		res->lines += res->err[i] == '\n';
}

void expect_child_abort(const char *name, int (*fn)(void *), void *arg, const char *call)
{
	struct child_result r;
	char want[128];

	run_child(fn, arg, 30, &r);
	snprintf(want, sizeof(want), "orcu: %s: ", call);
	printf("%-22s -> %s", name, r.err);
	if (!WIFSIGNALED(r.status) || WTERMSIG(r.status) != SIGABRT) {
		fprintf(stderr, "%s: child did not abort (status %#x: %s %d); stderr:\n%s\n",
			name, r.status, WIFSIGNALED(r.status) ? "signal" : "exit",
			WIFSIGNALED(r.status) ? WTERMSIG(r.status) : WEXITSTATUS(r.status),
			r.err);
		exit(1);
	}
	if (r.lines != 1 || strncmp(r.err, want, strlen(want)) != 0) {
		fprintf(stderr, "%s: expected one line starting \"%s\", got %d line(s):\n%s\n",
			name, want, r.lines, r.err);
		exit(1);
	}
}
