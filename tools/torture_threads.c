/*
 * torture_threads.c - the workload of orcu-torture: the element pool and its
 * pipe-count oracle bookkeeping, and the reader (memb, qsbr), writer, fake
 * writer, barrier, hotplug, offload, flood and reader-mover thread bodies plus the early
 * callback scenario.  Writes the counters in torture.h; calls fail() on error.
 */
#include "torture.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <errno.h>
#include <stdint.h>

_Atomic uint64_t updates[UPD_N], alloc_fail, fake_ops;
_Atomic uint64_t wcount[PIPE_LEN + 1];
_Atomic uint64_t cb_posted[CB_N], cb_invoked[CB_N];
_Atomic uint64_t barrier_rounds, hp_online, hp_offline, hp_refused,
	offload_toggles, flood_full, forks;
struct rstat rstats[2 * MAX_READERS];

/* ------------------------------------------------------------------ */
/* The element pool */

static struct elem pool[POOL_SIZE];
struct free_queue freeq = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct elem *published;
struct elem *writer_removed;

struct elem *elem_alloc(void)
{
	struct elem *e = NULL;

	pthread_mutex_lock(&freeq.lock);
	if (freeq.count) {
		e = &pool[freeq.ring[freeq.head]];
		freeq.head = (freeq.head + 1) % POOL_SIZE;
		freeq.count--;
	}
	pthread_mutex_unlock(&freeq.lock);
	if (e) {
		atomic_store_explicit(&e->pipe, 0, relaxed);
		atomic_fetch_add_explicit(&e->gen, 1, relaxed);
		/* Release: readers that find it through the publication see a
		 * fully initialised element (the publication is seq_cst too). */
		atomic_store_explicit(&e->live, 1, release);
	}
	return e;
}

static void elem_free(struct elem *e)
{
	atomic_store_explicit(&e->live, 0, release);
	atomic_fetch_add_explicit(&e->gen, 1, release);
	pthread_mutex_lock(&freeq.lock);
	freeq.ring[(freeq.head + freeq.count) % POOL_SIZE] = (unsigned)(e - pool);
	freeq.count++;
	pthread_mutex_unlock(&freeq.lock);
}

static int pipe_bump(struct elem *e)
{
	int v = atomic_fetch_add_explicit(&e->pipe, 1, relaxed) + 1;

	count(&wcount[v < PIPE_LEN ? v : PIPE_LEN]);
	return v;
}

/* orcu_call path: each invocation is one more GP past retirement. */
static void pipe_cb(struct orcu_head *h)
{
	struct elem *e = (struct elem *)h;

	count(&cb_invoked[CB_PIPE]);
	if (pipe_bump(e) >= PIPE_LEN) {
		elem_free(e);
		return;
	}
	count(&cb_posted[CB_PIPE]);
	orcu_call(&e->rcu, pipe_cb);
}

/* Synchronous paths: every element retired before the GP that just ended
 * gets one more year. */
void removed_advance(struct elem **list)
{
	struct elem **pp = list;

	while (*pp) {
		struct elem *e = *pp;

		if (pipe_bump(e) >= PIPE_LEN) {
			*pp = e->removed_next;
			elem_free(e);
		} else {
			pp = &e->removed_next;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Readers */

static const char *flavor_of(int id)
{
	return id < MAX_READERS ? "memb" : "qsbr";
}

static void bind_slot(int slot)
{
	if (topo.virt && orcu_thread_bind_cpu(slot) < 0)
		fail(E_API, "orcu_thread_bind_cpu(%d) failed", slot);
}

static int home_slot(int id)
{
	return topo.virt ? topo.online[id % topo.n_online] : -1;
}

/* A pointer read inside the section is checked again before it ends: it
 * must still be the same live element. */
static void check_same(int id, struct elem *e, unsigned gen)
{
	if (!atomic_load_explicit(&e->live, acquire))
		fail(E_FREED, "%s reader %d: element %ld freed under it",
		     flavor_of(id), id % MAX_READERS, (long)(e - pool));
	else if (atomic_load_explicit(&e->gen, acquire) != gen)
		fail(E_REUSED, "%s reader %d: element %ld freed and reused under it",
		     flavor_of(id), id % MAX_READERS, (long)(e - pool));
}

static struct elem *read_elem(int id, unsigned *gen)
{
	struct elem *e = orcu_dereference(published);

	*gen = atomic_load_explicit(&e->gen, acquire);
	if (!atomic_load_explicit(&e->live, acquire))
		fail(E_FREED, "%s reader %d: found freed element %ld published",
		     flavor_of(id), id % MAX_READERS, (long)(e - pool));
	return e;
}

static void record(int id, int pipe)
{
	struct rstat *st = &rstats[id];

	bump_own(&st->pipe[pipe < PIPE_LEN ? pipe : PIPE_LEN]);
	bump_own(&st->reads);
	if (pipe > 1)
		fail(E_PIPE, "%s reader %d: element aged %d inside the section that loaded it",
		     flavor_of(id), id % MAX_READERS, pipe);
}

/* Mostly nothing; sometimes a short spin, rarely a sleep: a reader must be
 * caught inside its section while grace periods try to end. */
static void reader_delay(struct rng *r)
{
	uint64_t x = rnd(r);

	if ((x & 63) == 0)
		spin_us(1 + (unsigned)((x >> 8) % 20));
	else if ((x & 2047) == 1)
		sleep_us(100 + (x >> 16) % 900);
}

void *memb_reader(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct rng r;
	unsigned long n = 0;

	rng_init(&r, (uint64_t)id);
	if (orcu_register_thread() < 0)
		fail(E_API, "orcu_register_thread failed");
	bind_slot(home_slot(id));
	while (!atomic_load_explicit(&stop, relaxed)) {
		unsigned gen, gen2;
		struct elem *e, *e2;
		int pipe;

		orcu_read_lock();
		e = read_elem(id, &gen);
		if ((rnd(&r) & 15) == 0) {
			/* Nested section: the inner unlock must not end the outer one. */
			orcu_read_lock();
			e2 = read_elem(id, &gen2);
			reader_delay(&r);
			orcu_read_unlock();
			check_same(id, e2, gen2);
		}
		reader_delay(&r);
		pipe = atomic_load_explicit(&e->pipe, relaxed);
		check_same(id, e, gen);
		orcu_read_unlock();
		record(id, pipe);
		if ((++n & 255) == 0) {
			/* Outside any section: run this slot's inline callbacks. */
			orcu_quiescent_state();
			if ((n & 8191) == 0)
				sleep_us(rnd(&r) % 200);
		}
	}
	orcu_unregister_thread();
	return NULL;
}

/* A qsbr reader's section runs from one quiescent state to the next: every
 * element loaded in between must stay young until the next announcement. */
void *qsbr_reader(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct rng r;
	unsigned long n = 0;

	rng_init(&r, (uint64_t)id);
	if (orcu_register_thread_qsbr() < 0)
		fail(E_API, "orcu_register_thread_qsbr failed");
	bind_slot(home_slot(id));
	while (!atomic_load_explicit(&stop, relaxed)) {
		struct { struct elem *e; unsigned gen; } held[8];
		int nh = 1 + (int)(rnd(&r) % 8);

		for (int i = 0; i < nh; i++) {
			/* Shared code calls the lock: cheap on qsbr threads. */
			orcu_read_lock();
			held[i].e = read_elem(id, &held[i].gen);
			orcu_read_unlock();
		}
		reader_delay(&r);
		for (int i = 0; i < nh; i++) {
			int pipe = atomic_load_explicit(&held[i].e->pipe, relaxed);

			check_same(id, held[i].e, held[i].gen);
			record(id, pipe);
		}
		orcu_quiescent_state();
		if ((++n & 1023) == 0) {
			orcu_thread_offline();
			sleep_us(rnd(&r) % 200);
			orcu_thread_online();
		}
	}
	orcu_unregister_thread();
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The writer: replace, retire through each update-side API in turn. */

static int pick_online(struct rng *r)
{
	return topo.online[rnd(r) % (uint64_t)topo.n_online];
}

void *writer_main(void *arg)
{
	struct elem *removed = NULL;
	struct rng r;

	(void)arg;
	rng_init(&r, 1000);
	while (!atomic_load_explicit(&stop, relaxed)) {
		struct elem *e = elem_alloc(), *old;
		int mode = (int)(rnd(&r) % 4);
		unsigned long cookie;

		if (!e) {
			/* Every element is waiting for grace periods. */
			count(&alloc_fail);
			sleep_us(1000);
			continue;
		}
		if (topo.virt)
			bind_slot(pick_online(&r));
		old = orcu_xchg_pointer(&published, e);
		pipe_bump(old);        /* retired: 0 -> 1 */
		switch (mode) {
		case 0:
			orcu_synchronize();
			count(&updates[UPD_SYNC]);
			break;
		case 1:
			count(&cb_posted[CB_PIPE]);
			if ((rnd(&r) & 7) == 0) {
				orcu_call_lazy(&old->rcu, pipe_cb);
				count(&updates[UPD_LAZY]);
			} else {
				orcu_call(&old->rcu, pipe_cb);
				count(&updates[UPD_CALL]);
			}
			old = NULL;
			break;
		case 2:
			switch (rnd(&r) % 3) {
			case 0:
				cookie = orcu_start_poll();
				orcu_cond_synchronize(cookie);
				break;
			case 1:
				cookie = orcu_start_poll();
				while (!orcu_poll_state(cookie))
					sleep_us(20 + rnd(&r) % 100);
				break;
			default:
				/* get_state does not start a GP: someone else must. */
				cookie = orcu_get_state();
				orcu_cond_synchronize(cookie);
				break;
			}
			if (!orcu_poll_state(cookie))
				fail(E_API, "orcu_poll_state false after the cookie's GP was waited for");
			count(&updates[UPD_POLL]);
			break;
		default:
			orcu_synchronize_expedited();
			count(&updates[UPD_EXP]);
			break;
		}
		if (old) {
			old->removed_next = removed;
			removed = old;
			removed_advance(&removed);
		}
		sleep_us(rnd(&r) % 200);
	}
	writer_removed = removed;
	return NULL;
}

/* Fake writers add concurrent grace-period and barrier demand. */
void *fake_writer(void *arg)
{
	struct rng r;

	rng_init(&r, 2000 + (uint64_t)(intptr_t)arg);
	while (!atomic_load_explicit(&stop, relaxed)) {
		unsigned long cookie;

		switch (rnd(&r) % 5) {
		case 0: orcu_synchronize(); break;
		case 1: orcu_synchronize_expedited(); break;
		case 2: orcu_barrier(); break;
		case 3: orcu_cond_synchronize(orcu_get_state()); break;
		default:
			cookie = orcu_start_poll();
			while (!orcu_poll_state(cookie))
				sleep_us(50 + rnd(&r) % 200);
			break;
		}
		count(&fake_ops);
		sleep_us(rnd(&r) % 1000);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Barrier torture: callbacks from many slots, then a barrier that must
 * find every one of them invoked.  Two threads, so barriers piggyback. */

struct bthread bthreads[NR_BARRIER_THREADS];

static void barrier_cb(struct orcu_head *h)
{
	struct bhead *b = (struct bhead *)h;

	count(&cb_invoked[CB_BARRIER]);
	/* Release pairs with the acquire after orcu_barrier() returns. */
	atomic_fetch_add_explicit(&b->t->invoked, 1, release);
}

static int pick_any_slot(struct rng *r)
{
	uint64_t x = rnd(r);

	if (topo.never >= 0 && (x & 255) == 0)
		return topo.never;       /* kernel commit d7e29933969e: a slot that never came online */
	if ((x & 7) == 1)
		return -1;               /* follow the real CPU */
	if (topo.n_hp && (x & 7) == 2)
		return topo.hp[(x >> 8) % (uint64_t)topo.n_hp];
	return topo.online[(x >> 8) % (uint64_t)topo.n_online];
}

void *barrier_main(void *arg)
{
	struct bthread *t = arg;
	struct rng r;
	long posted = 0;

	rng_init(&r, 3000 + (uint64_t)t->id);
	while (!atomic_load_explicit(&stop, relaxed)) {
		int n = 1 + (int)(rnd(&r) % BARRIER_HEADS);
		long inv;

		for (int i = 0; i < n; i++) {
			if (topo.virt)
				orcu_thread_bind_cpu(pick_any_slot(&r));
			t->heads[i].t = t;
			count(&cb_posted[CB_BARRIER]);
			orcu_call(&t->heads[i].h, barrier_cb);
			posted++;
		}
		bind_slot(home_slot(t->id));
		orcu_barrier();
		inv = atomic_load_explicit(&t->invoked, acquire);
		if (inv != posted)
			fail(E_BARRIER, "barrier thread %d: orcu_barrier returned with %ld of %ld callbacks not invoked",
			     t->id, posted - inv, posted);
		count(&barrier_rounds);
		sleep_us(rnd(&r) % 2000);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Hotplug and offload toggling */

void *hotplug_main(void *arg)
{
	struct rng r;

	(void)arg;
	rng_init(&r, 4000);
	while (!atomic_load_explicit(&stop, relaxed)) {
		int s = topo.hp[rnd(&r) % (uint64_t)topo.n_hp], ret;

		if (rnd(&r) & 1) {
			ret = orcu_cpu_online(s);
			if (ret == 0)
				count(&hp_online);
			else
				fail(E_API, "orcu_cpu_online(%d) = %d", s, ret);
		} else {
			ret = orcu_cpu_offline(s);
			if (ret == 0)
				count(&hp_offline);
			else if (ret == -EBUSY)
				count(&hp_refused);   /* the last online slot */
			else
				fail(E_API, "orcu_cpu_offline(%d) = %d", s, ret);
		}
		sleep_us(1000 + rnd(&r) % 9000);
	}
	return NULL;
}

/* --move-readers: change the memb readers' affinity while they read (a
 * GP's barrier goes to the CPUs their masks allow, registry.c point 6):
 * all to one CPU, or one of them to one CPU, at random times. */
pthread_t *memb_threads;
_Atomic uint64_t reader_moves;

void *mover_main(void *arg)
{
	int cpus[CPU_SETSIZE], n = 0;
	cpu_set_t set;
	struct rng r;

	(void)arg;
	rng_init(&r, 5000);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	while (n > 0 && !atomic_load_explicit(&stop, relaxed)) {
		int all = rnd(&r) & 1, one = (int)(rnd(&r) % (uint64_t)opt.readers);

		CPU_ZERO(&set);
		CPU_SET(cpus[rnd(&r) % (uint64_t)n], &set);
		for (int i = 0; i < opt.readers; i++)
			if ((all || i == one) &&
			    pthread_setaffinity_np(memb_threads[i], sizeof(set), &set) == 0)
				count(&reader_moves);
		if (rnd(&r) & 1)
			spin_us((unsigned)(rnd(&r) % 200));
		else
			sleep_us(rnd(&r) % 1000);
	}
	return NULL;
}

void *offload_main(void *arg)
{
	struct rng r;

	(void)arg;
	rng_init(&r, 5000);
	while (!atomic_load_explicit(&stop, relaxed)) {
		int s = topo.hp[rnd(&r) % (uint64_t)topo.n_hp];
		int ret = (rnd(&r) & 1) ? orcu_cpu_offload(s) : orcu_cpu_deoffload(s);

		if (ret == 0)
			count(&offload_toggles);
		else
			fail(E_API, "orcu_cpu_(de)offload(%d) = %d", s, ret);
		sleep_us(1000 + rnd(&r) % 9000);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Callback flood: post as fast as the heads come back.  Forward progress
 * is checked by the monitor in main(). */

struct fhead *fheads;

static void flood_cb(struct orcu_head *h)
{
	struct fhead *f = (struct fhead *)h;

	count(&cb_invoked[CB_FLOOD]);
	/* Release pairs with the flood thread's acquire before reuse. */
	atomic_store_explicit(&f->pending, 0, release);
}

void *flood_main(void *arg)
{
	struct rng r;

	(void)arg;
	rng_init(&r, 6000);
	bind_slot(home_slot(7));
	for (unsigned long i = 0; !atomic_load_explicit(&stop, relaxed); i++) {
		struct fhead *f = &fheads[i % FLOOD_HEADS];

		while (atomic_load_explicit(&f->pending, acquire)) {
			if (atomic_load_explicit(&stop, relaxed))
				return NULL;
			count(&flood_full);
			sleep_us(100);
		}
		atomic_store_explicit(&f->pending, 1, relaxed);
		count(&cb_posted[CB_FLOOD]);
		orcu_call(&f->h, flood_cb);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Early callbacks: posted before any other orcu call, one of them on a
 * slot that never comes online, then a barrier must find them invoked. */

static struct orcu_head early_heads[2];

static void early_cb(struct orcu_head *h)
{
	(void)h;
	atomic_fetch_add_explicit(&cb_invoked[CB_EARLY], 1, release);
}

void early_scenario(void)
{
	count(&cb_posted[CB_EARLY]);
	orcu_call(&early_heads[0], early_cb);
	if (topo.never >= 0) {
		orcu_thread_bind_cpu(topo.never);
		count(&cb_posted[CB_EARLY]);
		orcu_call(&early_heads[1], early_cb);
		orcu_thread_bind_cpu(-1);
	}
	orcu_barrier();
	if (atomic_load_explicit(&cb_invoked[CB_EARLY], acquire) !=
	    atomic_load(&cb_posted[CB_EARLY]))
		fail(E_BARRIER, "early callbacks (one on never-onlined slot %d) not invoked by orcu_barrier",
		     topo.never);
}

/* ------------------------------------------------------------------ */
/* fork: a child inherits every queued callback (and whatever the other
 * threads had taken for invocation) but none of the threads; it must
 * still post, wait for a barrier and a GP, and read the published element
 * alive, under a watchdog.  The pool's lock is taken around fork so the
 * inherited callbacks can free elements in the child. */

static void fork_prepare(void) { pthread_mutex_lock(&freeq.lock); }
static void fork_release(void) { pthread_mutex_unlock(&freeq.lock); }

static atomic_int child_cb_ran;

static void child_cb(struct orcu_head *h)
{
	(void)h;
	atomic_store(&child_cb_ran, 1);
}

static int fork_child(void)
{
	static struct orcu_head h;
	struct elem *e;
	int bad = 0;

	alarm(60);
	if (orcu_register_thread() < 0)
		return 3;
	orcu_read_lock();
	e = orcu_dereference(published);
	bad |= e && !atomic_load_explicit(&e->live, acquire);
	orcu_read_unlock();
	orcu_call(&h, child_cb);
	orcu_barrier();
	bad |= !atomic_load(&child_cb_ran) << 1;
	orcu_synchronize();
	orcu_unregister_thread();
	return bad ? 4 + bad : 0;
}

void *fork_main(void *arg)
{
	struct rng r;

	(void)arg;
	rng_init(&r, 7000);
	pthread_atfork(fork_prepare, fork_release, fork_release);
	while (!atomic_load_explicit(&stop, relaxed)) {
		int status;
		pid_t pid = fork();

		if (pid == 0)
			_exit(fork_child());
		if (pid < 0) {
			fail(E_API, "fork: %s", strerror(errno));
			break;
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			fail(E_API, "fork child %d: status 0x%x (14: hung in barrier/synchronize)",
			     (int)pid, status);
		count(&forks);
		sleep_us(20000 + rnd(&r) % 30000);
	}
	return NULL;
}
