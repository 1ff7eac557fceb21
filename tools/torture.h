/*
 * torture.h - what orcu-torture.c (options, topology, reporting, main) and
 * torture_threads.c (the element pool and the thread bodies) share: limits,
 * the options and topology records, counters and error kinds, the element
 * type, and the small rng/clock helpers.  Uses <orcu.h> and <orcu/debug.h>.
 */
#ifndef ORCU_TORTURE_H
#define ORCU_TORTURE_H

#include <orcu.h>
#include <orcu/debug.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define PIPE_LEN 10          /* ages 0..9, then ">= 10"; freed at 10 */
#define POOL_SIZE 4096
#define MAX_READERS 32
#define MAX_FAKE 16
#define NR_BARRIER_THREADS 2
#define BARRIER_HEADS 64
#define FLOOD_HEADS 20000
#define MAX_HP 24            /* slots hotplug and offload toggling may touch */

#define relaxed memory_order_relaxed
#define acquire memory_order_acquire
#define release memory_order_release

/* ------------------------------------------------------------------ */
/* Options and topology (defined in orcu-torture.c) */

struct torture_opts {
	int readers, qsbr_readers, fake_writers, stride;
	double duration;
	unsigned long long seed;
	bool hotplug, toggle_offload, barrier_torture, flood, busted, fork, move_readers;
	const char *cpus, *nocbs;
	unsigned delays_us;
};
extern struct torture_opts opt;

/* What we know of the slots.  With a virtual topology (--cpus or ORCU_CPUS)
 * threads bind to slots; without one they follow their real CPU. */
struct torture_topo {
	bool virt;
	int possible;
	int *online, n_online;   /* initially online slots */
	int hp[MAX_HP], n_hp;    /* hotplug / offload targets */
	int never;               /* a slot nothing onlines, or -1 */
};
extern struct torture_topo topo;

/* ------------------------------------------------------------------ */
/* Random numbers: xorshift64*, one generator per thread, all derived from
 * the printed seed so a failing configuration's choices can be replayed. */

struct rng { uint64_t s; };

static inline void rng_init(struct rng *r, uint64_t id)
{
	uint64_t z = opt.seed + id * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	r->s = (z ^ (z >> 31)) | 1;
}

static inline uint64_t rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ull;
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_us(unsigned long us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Busy-wait: keeps the thread on its CPU inside a read-side section. */
static inline void spin_us(unsigned us)
{
	double end = now_s() + us / 1e6;

	while (now_s() < end)
		;
}

/* ------------------------------------------------------------------ */
/* Errors: counted by kind; the first few are described as they happen
 * (fail() and the counts live in orcu-torture.c). */

enum err { E_PIPE, E_FREED, E_REUSED, E_BARRIER, E_LOST, E_PROGRESS, E_BOUND,
	   E_API, E_N };
extern _Atomic int stop;

void fail(enum err e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ */
/* Counters (defined in torture_threads.c).  Per-reader records have one
 * writer each (no contended RMW on the read path); everything else is a
 * shared relaxed counter. */

struct rstat {
	_Atomic uint64_t pipe[PIPE_LEN + 1];
	_Atomic uint64_t reads;
} __attribute__((aligned(64)));
extern struct rstat rstats[2 * MAX_READERS];

static inline void bump_own(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, relaxed) + 1, relaxed);
}

static inline void count(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, relaxed);
}

enum { UPD_SYNC, UPD_CALL, UPD_LAZY, UPD_POLL, UPD_EXP, UPD_N };
extern _Atomic uint64_t updates[UPD_N], alloc_fail, fake_ops;
extern _Atomic uint64_t wcount[PIPE_LEN + 1];   /* pipe bumps reaching each age */

enum { CB_PIPE, CB_BARRIER, CB_FLOOD, CB_EARLY, CB_N };
extern _Atomic uint64_t cb_posted[CB_N], cb_invoked[CB_N];

extern _Atomic uint64_t barrier_rounds, hp_online, hp_offline, hp_refused,
	offload_toggles, flood_full, forks;

/* ------------------------------------------------------------------ */
/* The element pool (torture_threads.c) */

struct elem {
	struct orcu_head rcu;      /* first: callbacks convert back by cast */
	_Atomic int pipe;          /* the age; see the oracle in orcu-torture.c */
	_Atomic int live;          /* 1 from allocation until freed (0 = poison) */
	_Atomic unsigned gen;      /* bumped at allocation and at free */
	struct elem *removed_next; /* writer only: retired, waiting for sync GPs */
};

struct free_queue {
	pthread_mutex_t lock;
	unsigned ring[POOL_SIZE];  /* FIFO: a freed element stays poisoned longest */
	unsigned head, count;
};
extern struct free_queue freeq;

extern struct elem *published;       /* orcu_dereference / orcu_xchg_pointer */
extern struct elem *writer_removed;  /* the writer's list, handed over at exit */

struct elem *elem_alloc(void);
void removed_advance(struct elem **list);

/* ------------------------------------------------------------------ */
/* Thread bodies and their shared records (torture_threads.c) */

struct bthread;
struct bhead {
	struct orcu_head h;
	struct bthread *t;
};
struct bthread {
	struct bhead heads[BARRIER_HEADS];
	_Atomic long invoked;
	int id;
};
extern struct bthread bthreads[NR_BARRIER_THREADS];

struct fhead {
	struct orcu_head h;
	_Atomic int pending;
};
extern struct fhead *fheads;

void *memb_reader(void *arg);
void *qsbr_reader(void *arg);
void *writer_main(void *arg);
void *fake_writer(void *arg);
void *barrier_main(void *arg);
void *hotplug_main(void *arg);
void *offload_main(void *arg);
void *flood_main(void *arg);
void *fork_main(void *arg);
/* --move-readers: the memb readers' threads, and how often one moved. */
extern pthread_t *memb_threads;
extern _Atomic uint64_t reader_moves;
void *mover_main(void *arg);
void early_scenario(void);

#endif /* ORCU_TORTURE_H */
