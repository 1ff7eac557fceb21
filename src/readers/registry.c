/*
 * registry.c - reader records: registration (memb and qsbr, idempotent),
 * automatic unregistration at thread exit, the qsbr quiescent-state calls,
 * the read-side slow paths and ORCU_PROVE's report, and the reader wait
 * at the heart of a grace period, with stall reports, and the checks of
 * a caller about to wait.
 * Calls os.c, config.c (ORCU_NO_MEMBARRIER) and delay.c (debug hooks);
 * reads gp.c's state.
 * The public registration and quiescent-point calls are in entry.c, which
 * starts the library and runs inline callbacks around these.
 *
 * Why a grace period is safe (memb readers).  A reader's outermost lock
 * copies orcu__gp_ctr (ORCU__MEMB_IDLE | phase | 1) into its ctr; its
 * unlock stores ORCU__MEMB_IDLE (no nesting).  Every store to ctr is a
 * release (a plain store on x86), and no fence follows it: the GP makes up
 * for the missing store -> load fence with ONE membarrier(), which runs a
 * full barrier on every CPU that may run an unparked memb reader (point
 * 6), at its start.
 *  1. A reader whose section-opening store our scans never see stored it
 *     after its barrier point, so the section sees every update made
 *     before the GP began: it cannot hold what the GP protects.
 *  2. The GP waits twice, flipping the phase before each wait, for every
 *     reader inside a section entered under the old phase.  A reader that
 *     loaded the phase before a flip but stored it after our scan looked
 *     is caught by the second wait.
 *  3. The GP ends only after it saw, with an acquire load, a value of ctr
 *     stored after each section it waited for (ORCU__MEMB_IDLE from its
 *     unlock, or a later lock's or nesting's store): all are releases, so
 *     the section's reads happen before the GP ends, and no closing
 *     membarrier() is needed (liburcu's memb flavor pays a second one).
 *  4. A memb reader that waits for a GP (orcu__gp_drive(): synchronize, a
 *     barrier) is in no section, and parks: its ctr becomes MEMB_PARKED
 *     (release) until it returns.  A GP opens with a seq_cst fence, then
 *     reads every memb ctr (acquire); only if some reader is not parked
 *     does it pay the membarrier().  A reader seen parked has finished
 *     every earlier section (release/acquire).  To leave, it stores its
 *     ctr, then fences (seq_cst), then may open a section: of that fence
 *     and the GP's opening fence, if the GP's comes first, the section
 *     sees every update made before the GP began (the updater fenced
 *     before it read gp_seq, gp.c point 2); if the reader's comes first,
 *     the GP's load sees it unparked and the GP pays the membarrier().
 *     The value stored before the fence is MEMB_UNPARKING, not IDLE: a
 *     signal handler that interrupts the unpark between the store and
 *     the fence and opens a section finds ctr neither IDLE nor nested,
 *     takes the slow path and unparks itself, fence included, before its
 *     section (with IDLE there it took the fast path, with no fence and
 *     no membarrier() from a GP that read PARKED).  IDLE is stored only
 *     after the fence (models/unpark.pml; -DIDLE_FIRST fails).
 *     So the thread running a GP for its own synchronize costs that GP
 *     nothing, and nor does any other memb thread waiting for one.
 *
 *  5. With nobody registered, a GP is one swap of gp_seq (gp.c point 5),
 *     made under registry_lock after nr_readers was read there as 0
 *     (orcu__registry_swap_if_none()).  A registration holds that lock, so
 *     it comes wholly before the swap (which then fails) or after it; then
 *     its fence comes after the swap, which comes after the fence of every
 *     updater whose snapshot of gp_seq the swap satisfies, so its sections
 *     see their updates.  Read without the lock, then swapped, the count
 *     let a reader register and enter a section in between: a GP that a
 *     later snapshot counted ended without waiting for it.
 *  6. The barrier reaches only the CPUs an unparked memb reader may run
 *     on (membarrier_readers()): the union of each one's affinity mask,
 *     read with sched_getaffinity() after the GP's opening fence, and of
 *     the CPU its rseq area says it runs on, each sent
 *     membarrier(PRIVATE_EXPEDITED_RSEQ, FLAG_CPU).  The kernel IPIs that
 *     CPU if it runs one of our threads, and the IPI runs smp_mb() there
 *     (ipi_rseq(), Linux 5.10, with its restart of an rseq critical
 *     section, harmless: rseq code must survive preemption); if it runs
 *     another task, the scheduler's barriers around rq->curr do what the
 *     broadcast relies on for any CPU.  A reader is thus covered on every
 *     CPU it may be on, as by the broadcast.  A reader that moves: to
 *     run on a CPU outside the mask we read, its mask must change after
 *     our read, under the task's pi_lock, which sched_getaffinity() took
 *     after our fence; the move, then its first instruction there, come
 *     after that change (the scheduler places it only where its mask
 *     allows, under the same locks), so after our fence: its sections
 *     there see every update made before the GP.  Its accesses on the
 *     CPU it left sit before that switch's barrier, on a CPU in our set.
 *     The change can come before our read while it still runs on the
 *     CPU its new mask excludes (until the stopper moves it, which
 *     sched_setaffinity() waits for): that CPU is its rseq cpu_id, which
 *     the kernel wrote when it arrived there.  A CPU on its way down or
 *     up is left out of sched_getaffinity()'s answer (mask & active),
 *     but the targeted membarrier() holds the hotplug lock, so it runs
 *     once the move off (or the activation) is over: as above.  Anything
 *     we cannot read (no rseq area, an empty mask, an error), more than
 *     TARGET_READERS unparked memb readers, or more than TARGET_CPUS
 *     CPUs or all online ones (one call per CPU, each waiting for its
 *     IPI, then costs more) sends the broadcast, and a reader whose mask
 *     was that wide is not asked again for WIDE_SKIP barriers; so does a
 *     kernel without the targeted form.  models/membar_target.pml checks a
 *     reader that moves between our read and the barrier
 *     (-DSKIP_CPU, a CPU it runs on left out, fails).
 *
 * qsbr readers announce quiescent states by copying the GP counter into
 * qs_seq (acquire load, release store); 0 means offline.  The GP waits until
 * each online qsbr reader has announced the current counter.
 */
#include "os.h"
#include "config.h"
#include "delay.h"
#include "event.h"
#include "gp.h"
#include "registry.h"
#include "sanitize.h"

#include <errno.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#ifdef ORCU_HAVE_RSEQ_OFFSET
#include <sys/rseq.h>
#endif

__thread struct orcu__reader orcu__reader;
/* The read side's shared words (the public ABI names them, so they stay
 * separate variables): read at every section or quiescent state, written
 * by GPs.  Each starts a cache line of its own, so that neither the
 * registry lock and counts a GP and registrations write, nor gp_wait,
 * which readers write, shares the line a reader loads. */
_Atomic unsigned long orcu__gp_ctr ORCU__ALIGNED = ORCU__MEMB_IDLE | 1;
_Atomic int orcu__has_membarrier ORCU__ALIGNED;

/* A memb reader's ctr while it waits for a GP (point 4): outside any
 * section, as ORCU__MEMB_IDLE says, and known to the GP to stay there until
 * it unparks.  Not ORCU__MEMB_IDLE, so a read lock taken meanwhile (a signal
 * handler, a callback the waiter runs) goes to the slow path and unparks. */
#define MEMB_PARKED (ORCU__MEMB_IDLE | (ORCU__MEMB_IDLE << 1))
/* Between leaving MEMB_PARKED and the fence that makes it safe (point 4):
 * not parked for a GP, not in a section, and not ORCU__MEMB_IDLE, so a
 * read lock taken in that window (a signal handler) unparks itself. */
#define MEMB_UNPARKING (ORCU__MEMB_IDLE << 1)

/* qsbr GP counter: odd so it is never 0 (0 = offline). */
static _Atomic unsigned long qsbr_ctr ORCU__ALIGNED = 1;

struct reader_rec {
	struct reader_rec *next, *prev;
	struct orcu__reader *r; /* the owner's TLS record */
	pthread_t thread;
	int tid;
	/* The CPU the kernel says the owner runs on (its rseq area's cpu_id),
	 * NULL without one: read by a GP's barrier (point 6). */
	const uint32_t *cpu_id;
	/* Barriers left that broadcast without reading the owner's mask
	 * (memb_cpus(), under registry_lock). */
	unsigned wide_skip;
};

/* Registration and the GP's reader scans (cold for readers). */
static pthread_mutex_t registry_lock ORCU__ALIGNED = PTHREAD_MUTEX_INITIALIZER;
static struct reader_rec registry = { &registry, &registry, NULL, 0, 0, NULL, 0 };
/* Readers registered: written under registry_lock, read without it by a
 * GP that may find nobody to wait for. */
static _Atomic int nr_readers;
static int membarrier_checked;
/* membarrier(PRIVATE_EXPEDITED_RSEQ) registered, so a GP may send its
 * barrier to chosen CPUs (point 6), and the CPUs online then; set with
 * orcu__has_membarrier, read by GPs.  Atomic: a start after
 * orcu_shutdown() stores them again (the same values) while the
 * shutdown's own GP may read them. */
static _Atomic int membarrier_targeted, cpus_online;
/* This thread's record, linked while it is registered. */
static __thread struct reader_rec own_rec;
/* ThreadSanitizer (sanitize.h): a thread that unregisters releases it,
 * the end of every GP acquires it.  Only its address is used. */
static char san_left;

/* Tests: told the CPU of each barrier a GP sends its memb readers, -1
 * for the broadcast (test_gp_memb_targeted). */
void (*orcu__reader_barrier_hook)(int cpu);

void orcu__registry_lock(void) { pthread_mutex_lock(&registry_lock); }
void orcu__registry_unlock(void) { pthread_mutex_unlock(&registry_lock); }

/* ------------------------------------------------------------------ */
/* membarrier */

/*
 * Under orcu__g.lock, before the library is started.  Order: relaxed
 * stores suffice; the flag reaches every user through a release chain: a
 * reader registers only after orcu__g.started is set (entry.c starts
 * the library before orcu__register()), and a GP reads it after it scanned
 * the readers under registry_lock (memb_cpus()), which that
 * registration took.
 */
void orcu__membarrier_init(void)
{
	const char *why = "membarrier(PRIVATE_EXPEDITED) unavailable: readers use full fences";
	int have = 0;
	long mask;

	if (orcu__env_bool("ORCU_NO_MEMBARRIER", 0)) {
		why = "membarrier disabled by ORCU_NO_MEMBARRIER: readers use full fences";
	} else {
		mask = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
		have = mask >= 0 && (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
		       syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
		/* Point 6; without it every barrier is the broadcast. */
		orcu__store_relaxed(
			&membarrier_targeted,
			have && (mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) &&
				syscall(SYS_membarrier,
					MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0);
		orcu__store_relaxed(&cpus_online, get_nprocs());
	}
	if (!have && !membarrier_checked)
		orcu__warn("%s", why);
	membarrier_checked = 1;
	orcu__store_relaxed(&orcu__has_membarrier, have);
}

/* A full barrier on this thread and, with membarrier, on every CPU running
 * one of our threads.  Pairs with orcu__mb_slave() in the read side. */
void orcu__membarrier_master(void)
{
	orcu__fence_seq_cst();
	if (orcu__load_relaxed(&orcu__has_membarrier) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
		/* Registration succeeded, so this cannot fail short of a
		 * kernel change under us; readers inside a section rely on
		 * it and cannot be fenced any other way: stop loudly. */
		orcu__die("membarrier(PRIVATE_EXPEDITED) failed after registration: %s",
			  strerror(errno));
	}
	/* Pairs with orcu__mb_slave() as the fence before the call does: our
	 * later loads (the scans) come after every reader's barrier point. */
	orcu__fence_seq_cst();
}

/* A full barrier on cpu if it runs one of our threads (point 6). */
static void membarrier_cpu(int cpu)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU,
		    cpu) != 0) {
		/* Registered, so as orcu__membarrier_master(): stop loudly. */
		orcu__die("membarrier(PRIVATE_EXPEDITED_RSEQ, cpu %d) failed after registration: %s",
			  cpu, strerror(errno));
	}
}

/* Point 6's bounds: past them one broadcast costs less than reading each
 * reader's mask, or than one call, and one IPI wait, per CPU. */
#define TARGET_READERS 8
#define TARGET_CPUS 4
#define WIDE_SKIP 64
#define BARRIER_ALL INT_MAX

/* Under registry_lock: the CPUs the unparked memb readers may run on
 * (points 4 and 6): 0 if every memb reader is parked (only those can be
 * inside a section the barrier must reach), their number, or BARRIER_ALL. */
static int memb_cpus(cpu_set_t *cpus)
{
	struct reader_rec *rec;
	int readers = 0, n;

	CPU_ZERO(cpus);
	for (rec = registry.next; rec != &registry; rec = rec->next) {
		cpu_set_t mask;
		uint32_t cpu;

		/* Acquire pairs with the release in orcu__memb_park(). */
		if (rec->r->kind != ORCU__KIND_MEMB ||
		    orcu__load_acquire(&rec->r->ctr) == MEMB_PARKED)
			continue;
		if (!orcu__load_relaxed(&membarrier_targeted) || !rec->cpu_id || ++readers > TARGET_READERS)
			return BARRIER_ALL;
		/* Cost only (the broadcast needs no mask): a reader last
		 * seen free to run on too many CPUs is not asked again for
		 * WIDE_SKIP barriers.  The syscall was 1.2 us of a 1.5 us
		 * synchronize (orcu-bench sync, memb, 2 readers). */
		if (rec->wide_skip) {
			rec->wide_skip--;
			return BARRIER_ALL;
		}
		if (sched_getaffinity(rec->tid, sizeof(mask), &mask) != 0)
			return BARRIER_ALL;
		/* The kernel writes it on the owner's behalf. */
		cpu = __atomic_load_n(rec->cpu_id, __ATOMIC_RELAXED);
		if (cpu >= CPU_SETSIZE || !CPU_COUNT(&mask))
			return BARRIER_ALL;
		CPU_OR(cpus, cpus, &mask);
		CPU_SET(cpu, cpus);
		n = CPU_COUNT(cpus);
		if (n > TARGET_CPUS || n >= orcu__load_relaxed(&cpus_online)) {
			rec->wide_skip = WIDE_SKIP;
			return BARRIER_ALL;
		}
	}
	return CPU_COUNT(cpus);
}

/*
 * The barrier of a GP's reader wait (points 1, 4 and 6): a full barrier
 * here and on every CPU an unparked memb reader may run on; the fence
 * alone when every memb reader is parked.  The fence first: our earlier
 * stores (gp_seq, a phase flip, orcu__gp_wait) come before our loads of
 * the readers' ctr and masks.  Pairs with orcu__mb_slave() in the read
 * side, and with the fence of a reader that unparks (point 4).
 */
static void membarrier_readers(void)
{
	void (*hook)(int cpu) = orcu__reader_barrier_hook;
	cpu_set_t cpus;
	int n;

	orcu__fence_seq_cst();
	pthread_mutex_lock(&registry_lock);
	n = memb_cpus(&cpus);
	pthread_mutex_unlock(&registry_lock);
	if (n == 0)
		return;
	if (n == BARRIER_ALL) {
		if (hook)
			hook(-1);
		orcu__membarrier_master();
	} else {
		for (int cpu = 0; n > 0; cpu++) {
			if (!CPU_ISSET(cpu, &cpus))
				continue;
			if (hook)
				hook(cpu);
			membarrier_cpu(cpu);
			n--;
		}
		/* As in orcu__membarrier_master(): our later loads (the
		 * scans) come after every reader's barrier point. */
		orcu__fence_seq_cst();
	}
	orcu__count(gp_membarriers, 1);
}

/* ------------------------------------------------------------------ */
/* Registration */

/* This thread's exit step (lifecycle.c's table): a reader still
 * registered leaves. */
void orcu__registry_thread_exit(void)
{
	if (!orcu__reader.rec)
		return;
	if (orcu__load_relaxed(&orcu__reader.ctr) & ORCU__NEST_MASK)
		orcu__misuse("thread exit", "a registered thread exited inside a read-side critical section");
	orcu_unregister_thread();
}

/* orcu_register_thread*() and a first memb read lock (entry.c, which has
 * started the library: membarrier is decided before a reader exists). */
int orcu__register(int kind, const char *call)
{
	struct orcu__reader *r = &orcu__reader;
	struct reader_rec *rec = &own_rec;

	if (r->kind == kind)
		return 0;
	/* A library thread runs callbacks and sleeps; it never reaches a
	 * quiescent point of its own, so as a qsbr reader it would hold every
	 * GP for ever (a callback registering the thread it runs on). */
	if (kind == ORCU__KIND_QSBR && orcu__tls.library_thread) {
		orcu__warn("%s: called on an orcu thread, from a callback: a qsbr reader there "
			   "would hold every grace period",
			   call);
		return -EPERM;
	}
	if (r->kind != ORCU__KIND_NONE) {
		orcu__warn("%s: thread already registered as %s", call,
			   r->kind == ORCU__KIND_MEMB ? "memb" : "qsbr");
		return -EBUSY;
	}
	/* The record lives in the thread's TLS: registering allocates
	 * nothing, and the record goes when the thread does (its exit step
	 * unlinks it first): without the key, it would outlive the thread. */
	if (orcu__thread_exit_arm() != 0) {
		orcu__warn("%s: no thread-specific data key for orcu (PTHREAD_KEYS_MAX "
			   "reached, or out of memory); not registered",
			   call);
		return -EAGAIN;
	}
	*rec = (struct reader_rec){ .r = r, .thread = pthread_self(), .tid = (int)syscall(SYS_gettid) };
#ifdef ORCU_HAVE_RSEQ_OFFSET
	if (__rseq_size != 0)
		rec->cpu_id = &((const struct rseq *)((const char *)__builtin_thread_pointer() +
						      __rseq_offset))
				       ->cpu_id;
#endif
	pthread_mutex_lock(&registry_lock);
	r->rec = rec;
	r->kind = kind;
	/* Owner-only word: the fast paths of orcu.h test it alone. */
	orcu__store_relaxed(&r->ctr, kind == ORCU__KIND_MEMB ? ORCU__MEMB_IDLE : 0);
	if (kind == ORCU__KIND_QSBR) {
		/* Online from the start: pairs with the acquire in wait_readers. */
		orcu__store_release(&r->qs_seq, orcu__load_acquire(&qsbr_ctr));
	}
	/* seq_cst: pairs with the load in orcu__registry_wait_readers(). */
	orcu__store_seq_cst(&nr_readers, orcu__load_relaxed(&nr_readers) + 1);
	rec->next = &registry;
	rec->prev = registry.prev;
	registry.prev->next = rec;
	registry.prev = rec;
	pthread_mutex_unlock(&registry_lock);
	/* Our store of nr_readers before our first read-side load, and a
	 * reader-less GP's swap, made under registry_lock, before them
	 * (point 5).  Pairs with the fences of the updaters' snapshots
	 * (orcu__gp_snap()): either a GP waits for us, or we see what it was
	 * for.  The unlock above is only a release: on arm64 our first loads
	 * could pass it (pair #8). */
	orcu__fence_seq_cst();
	return 0;
}

void orcu_unregister_thread(void)
{
	struct orcu__reader *r = &orcu__reader;
	struct reader_rec *rec = r->rec;

	if (!rec)
		return;
	if (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK)
		orcu__misuse("orcu_unregister_thread", "called inside a read-side critical section");
	/* For ThreadSanitizer: our sections' reads before any GP that no
	 * longer waits for us ends (san_gp_end_locked()). */
	orcu__tsan_release(&san_left);
	pthread_mutex_lock(&registry_lock);
	rec->prev->next = rec->next;
	rec->next->prev = rec->prev;
	/* Release: our last section's reads happen before the end of a GP
	 * that reads 0 here and skips the reader wait (point 5).  Pairs with
	 * the seq_cst load in orcu__registry_has_readers(). */
	orcu__store_release(&nr_readers, orcu__load_relaxed(&nr_readers) - 1);
	/* Release: our last section's reads are done.  Pairs with the
	 * acquire in qsbr_holds() (a GP then skips us as offline). */
	orcu__store_release(&r->qs_seq, 0);
	orcu__store_relaxed(&r->ctr, 0);
	r->kind = ORCU__KIND_NONE;
	r->rec = NULL;
	pthread_mutex_unlock(&registry_lock);
	/* A GP may sleep on us: we are gone (the waiter re-scans under
	 * registry_lock, which we just released). */
	orcu__reader_wake_gp();
}

static struct orcu__event gp_wait_event; /* the GP owner sleeps on it (wait_phase()) */

void orcu__registry_after_fork_child(void)
{
	struct reader_rec *rec, *next;

	/* Other threads' records describe threads that do not exist here. */
	for (rec = registry.next; rec != &registry; rec = next) {
		next = rec->next;
		if (rec->r == &orcu__reader) {
			rec->tid = (int)syscall(SYS_gettid);
			rec->thread = pthread_self();
			continue;
		}
		orcu__store_relaxed(&nr_readers, orcu__load_relaxed(&nr_readers) - 1);
		rec->prev->next = rec->next;
		rec->next->prev = rec->prev;
	}
	/* The GP owner that slept on the reader wake did not survive. */
	orcu__event_reset(&gp_wait_event);
	/* registry_lock stays held (fork_prepare took it); fork_child unlocks it. */
}

/* ------------------------------------------------------------------ */
/* Read-side slow paths */

/* orcu__read_lock_slow() (entry.c) on a registered thread. */
void orcu__registry_read_lock_slow(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->kind == ORCU__KIND_MEMB) {
		/* Parked (a section opened while this thread waits for a GP:
		 * a signal handler, a callback), or unparking (a signal
		 * handler before the unpark's fence): leave the parked state
		 * with its fence first (point 4).  Otherwise not reached from this
		 * header's fast path (a memb reader's ctr outside sections is
		 * ORCU__MEMB_IDLE); a caller compiled with an older header
		 * leaves 0 after its unlock: outside too. */
		orcu__memb_unpark();
		orcu__store_relaxed(&r->ctr, ORCU__MEMB_IDLE);
		/* orcu_read_lock()'s outermost lock, written out: the public
		 * inline's slow path is entry.c's, above this layer.  Release:
		 * pairs with the acquire scan (point 3). */
		orcu__store_release(&r->ctr, orcu__load_relaxed(&orcu__gp_ctr));
		orcu__mb_slave();
		return;
	}
	/* qsbr thread in shared code: count nesting only (no GP cost). */
	orcu__store_relaxed(&r->ctr, orcu__load_relaxed(&r->ctr) + 1);
}

void orcu__read_unlock_slow(void)
{
	struct orcu__reader *r = &orcu__reader;
	unsigned long c = orcu__load_relaxed(&r->ctr);

	if ((c & ORCU__NEST_MASK) == 0)
		orcu__misuse("orcu_read_unlock", "called without a matching orcu_read_lock");
	orcu__store_relaxed(&r->ctr, c - 1);
}

void orcu__qsbr_check_lock(void)
{
	if (orcu__reader.kind != ORCU__KIND_QSBR)
		orcu__misuse("orcu_read_lock", "ORCU_QSBR code ran on a thread not registered with orcu_register_thread_qsbr()");
}

/* A check of <orcu.h>'s ORCU_PROVE failed at file:line: one line, what
 * the call is and why it is wrong there, then abort.  reader_check: 0 for
 * orcu_dereference_protected() (its condition alone), 1 for
 * orcu_dereference(), 2 for orcu_dereference_check() (a section, or its
 * condition). */
void orcu__prove_failed(const char *call, int reader_check, const char *file, int line)
{
	const char *what = "with its condition false";

	if (reader_check) {
		int kind = orcu__reader.kind;

		what = kind == ORCU__KIND_NONE ? "on a thread not registered as a reader" :
		       kind == ORCU__KIND_QSBR ? "on an offline qsbr thread" :
						 "outside a read-side section";
	}
	(void)orcu__nocancel_begin(); /* never ended: it aborts */
	fprintf(stderr, "suspicious orcu usage: %s %s%s at %s:%d\n", call, what,
		reader_check == 2 ? ", condition false" : "", file, line);
	abort();
}

/* ------------------------------------------------------------------ */
/* qsbr */

/* Once per GP and reader: store, fence, then see whether a GP sleeps on
 * us (the reader side of the wake protocol above). */
static void qsbr_announce(struct orcu__reader *r, unsigned long g)
{
	/* For ThreadSanitizer, as the store below (sanitize.h). */
	orcu__tsan_release(&r->qs_seq);
	/* Release: reads before the quiescent state are done.  Pairs with
	 * the acquire in qsbr_holds(). */
	orcu__store_release(&r->qs_seq, g);
	/* Pairs with the fence after orcu__gp_wait = 1 in wait_phase()
	 * (pair #6). */
	orcu__fence_seq_cst();
	if (orcu__load_relaxed(&orcu__gp_wait))
		orcu__reader_wake_gp();
}

/* orcu_quiescent_state() (entry.c, which then runs inline callbacks). */
void orcu__qsbr_quiescent_state(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (orcu__unlikely(r->kind != ORCU__KIND_QSBR)) {
		if (r->kind == ORCU__KIND_NONE)
			orcu__misuse("orcu_quiescent_state", "thread is not registered (call orcu_register_thread_qsbr first)");
		return;
	}
#ifdef ORCU_DEBUG
	if (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK)
		orcu__misuse("orcu_quiescent_state", "called inside a read-side critical section");
#endif
	/* Release: our earlier reads are done before we announce.  Acquire:
	 * our later reads see what the GP that bumped qsbr_ctr was ordered
	 * after.  Pairs with the seq_cst increment in
	 * orcu__registry_wait_readers(). */
	unsigned long g = orcu__load_acquire(&qsbr_ctr);

	/* Announcing a value already announced is a no-op: skip the store
	 * (and its cache-line traffic) when no GP has begun since. */
	if (orcu__load_relaxed(&r->qs_seq) != g)
		qsbr_announce(r, g);
}

/* orcu_thread_offline() (entry.c), after its inline callbacks ran. */
void orcu__qsbr_offline(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->kind == ORCU__KIND_QSBR) {
		if (orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK)
			orcu__misuse("orcu_thread_offline", "called inside a read-side critical section");
		/* Release: reads of our last section are complete. */
		qsbr_announce(r, 0);
	}
}

/* The checks every waiting call (orcu_synchronize*, orcu_barrier, ...)
 * makes of its caller. */
void orcu__gp_check_caller(const char *call)
{
	struct orcu__reader *r = &orcu__reader;

	if (orcu__unlikely(r->in_callback))
		orcu__misuse(call, "called from inside an orcu callback (would wait for itself)");
	if (orcu__unlikely(orcu__tls.gp_owning))
		orcu__misuse(call, "called from a stall handler, inside the grace period it reports (would wait for itself)");
	if (orcu__unlikely(orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK))
		orcu__misuse(call, "called inside a read-side critical section (would deadlock)");
}

/* A qsbr thread that waits must not hold the GP it waits for. */
bool orcu__qsbr_offline_for_wait(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->kind == ORCU__KIND_QSBR && orcu__load_relaxed(&r->qs_seq) != 0) {
		/* Offline as orcu_thread_offline() goes: a GP that already
		 * sleeps on us is woken, not left to its next time slice. */
		qsbr_announce(r, 0);
		return true;
	}
	return false;
}

/* Point 4.  Only a memb reader outside any section parks: the check of
 * the caller (orcu__gp_check_caller()) has ruled a section out for a
 * synchronize, and other callers of orcu__gp_drive() are library threads
 * or safe points, outside their sections too. */
bool orcu__memb_park(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->kind != ORCU__KIND_MEMB || orcu__load_relaxed(&r->ctr) != ORCU__MEMB_IDLE)
		return false;
	/* Release: our last section's reads are done.  Pairs with the
	 * acquire in memb_cpus(). */
	orcu__store_release(&r->ctr, MEMB_PARKED);
	return true;
}

/* Also from a signal handler that interrupted an unpark (MEMB_UNPARKING):
 * it does the whole unpark itself. */
void orcu__memb_unpark(void)
{
	struct orcu__reader *r = &orcu__reader;
	unsigned long c = orcu__load_relaxed(&r->ctr);

	if (c != MEMB_PARKED && c != MEMB_UNPARKING)
		return;
	orcu__store_relaxed(&r->ctr, MEMB_UNPARKING);
	orcu__delay(ORCU__DELAY_MEMB_UNPARK);
	/* Point 4: our next section's reads come after this store in the
	 * single total order.  Pairs with the fence that opens
	 * orcu__registry_wait_readers() before it reads our ctr (pair #7). */
	orcu__fence_seq_cst();
	/* Only now may a section open on the fast path. */
	orcu__store_relaxed(&r->ctr, ORCU__MEMB_IDLE);
}

/* A waiting thread that invokes callbacks itself (barrier.c) must be in a
 * context a GP waits for: an offline qsbr thread comes online around the
 * invocation.  Returns true if it did; orcu__qsbr_leave_for_callbacks()
 * undoes it.  No inline poll: the caller is the invoker. */
bool orcu__qsbr_enter_for_callbacks(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->kind != ORCU__KIND_QSBR || orcu__load_relaxed(&r->qs_seq))
		return false;
	/* As orcu_thread_online(): the fence orders our store before the
	 * callbacks' reads. */
	orcu__qsbr_online();
	return true;
}

void orcu__qsbr_leave_for_callbacks(bool entered)
{
	/* Offline again, waking a GP that sleeps on us (qsbr_announce()). */
	if (entered)
		qsbr_announce(&orcu__reader, 0);
}

/* orcu_thread_online() (entry.c, which then runs inline callbacks). */
void orcu__qsbr_online(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->kind == ORCU__KIND_QSBR) {
		/* The acquire pairs with the seq_cst bump of qsbr_ctr in
		 * orcu__registry_wait_readers().  The fence makes our store
		 * visible before our next reads (store -> load order), so qsbr
		 * never needs membarrier(). */
		orcu__store_relaxed(&r->qs_seq, orcu__load_acquire(&qsbr_ctr));
		orcu__fence_seq_cst();
	}
}

/* ------------------------------------------------------------------ */
/* The reader wait */

static bool memb_holds(struct reader_rec *rec, unsigned long cur)
{
	/* Acquire pairs with the release store of the outermost unlock. */
	unsigned long c = orcu__load_acquire(&rec->r->ctr);

	return (c & ORCU__NEST_MASK) && ((c ^ cur) & ORCU__PHASE);
}

static bool qsbr_holds(struct reader_rec *rec, unsigned long want)
{
	unsigned long q = orcu__load_acquire(&rec->r->qs_seq);

	return q != 0 && q != want;
}

/* Under registry_lock: who holds the GP.  The report itself is emitted by
 * stall_emit() after the lock is dropped: a user's handler may call into
 * the library (register a thread, post a callback). */
static void stall_collect(struct orcu_stall_info *info, uint64_t gp_start_ns,
			  unsigned long cur, unsigned long want)
{
	struct reader_rec *rec;

	memset(info, 0, sizeof(*info));
	info->gp_seq = orcu__load_relaxed(&orcu__gp_seq);
	info->waited_ms = (long)((orcu__now_ns() - gp_start_ns) / 1000000);
	for (rec = registry.next; rec != &registry; rec = rec->next) {
		bool memb = rec->r->kind == ORCU__KIND_MEMB;

		if (memb ? !memb_holds(rec, cur) : !qsbr_holds(rec, want))
			continue;
		if (info->nr_readers < ORCU_STALL_MAX_READERS) {
			struct orcu_stall_reader *sr = &info->readers[info->nr_readers];

			sr->tid = rec->tid;
			if (pthread_getname_np(rec->thread, sr->name, sizeof(sr->name)))
				snprintf(sr->name, sizeof(sr->name), "?");
			sr->flavor = memb ? "memb" : "qsbr";
			sr->nesting = memb ? (orcu__load_relaxed(&rec->r->ctr) & ORCU__NEST_MASK) : 0;
		}
		info->nr_readers++;
	}
}

/* The GP owner may be an application thread (a synchronize): it is not
 * cancelled in the handler or the report's writes, which would leave the
 * GP owned for ever.  A cancel waits for its next cancellation point. */
static void stall_emit(const struct orcu_stall_info *info)
{
	int old = orcu__nocancel_begin();
	void *arg;
	orcu_stall_handler_t handler = orcu__stall_handler_get(&arg);

	orcu__count(stalls_reported, 1);
	if (handler) {
		handler(info, arg);
	} else {
		fprintf(stderr, "orcu: stall: grace period %lu waiting %ld ms for %d reader(s):",
			info->gp_seq, info->waited_ms, info->nr_readers);
		for (int i = 0; i < info->nr_readers && i < ORCU_STALL_MAX_READERS; i++)
			fprintf(stderr, " [tid %d \"%s\" %s nesting %lu]", info->readers[i].tid,
				info->readers[i].name, info->readers[i].flavor,
				info->readers[i].nesting);
		fputc('\n', stderr);
	}
	orcu__nocancel_end(old);
}

/*
 * Readers wake a waiting GP (models/reader_wake.pml).  The waiter sets
 * orcu__gp_wait to 1, then issues a full barrier on every reader's CPU
 * (membarrier, or its own fence where readers fence themselves), then
 * scans again, and sleeps on gp_wait_event only while orcu__gp_wait is
 * still 1.  A reader leaving its section stores its state, then loads
 * orcu__gp_wait, and if it is 1 exchanges it to 0 and notifies the event.
 * The barrier sits between the reader's store and its load: either the
 * waiter's re-scan sees the reader gone, or the reader sees the flag and
 * wakes it.  memb readers get that barrier from membarrier(); qsbr readers
 * fence after their announcement (once per GP); without membarrier, memb
 * readers have no fence after their store, so the waiter sleeps in short
 * slices.  The flag is the read side's one load (include/orcu.h); only a
 * reader that takes it calls into the event, whose own store -> fence ->
 * load (event.h) covers the flag's exchange against the waiter's check
 * of orcu__gp_wait after it prepares.  Its own line: readers write it.
 */
_Atomic int orcu__gp_wait ORCU__ALIGNED;

void orcu__reader_wake_gp(void)
{
	/* Pairs with the store of 1 in wait_phase(): one reader takes the
	 * flag and pays the notify; the waiter re-checks the flag after it
	 * prepares. */
	if (orcu__xchg_seq_cst(&orcu__gp_wait, 0))
		orcu__event_notify(&gp_wait_event);
}

/*
 * A memb reader's outermost unlock, with orcu__gp_wait seen set: wake the
 * GP only if it waits for this section, one begun under the other phase
 * (memb_holds()).  A busy reader enters and leaves sections of the current
 * phase all the time; each such unlock used to take the flag and wake the
 * GP, which then re-armed with another membarrier(): ~45 of them per GP
 * with 2 busy readers on 2 CPUs, a quarter of a CPU.  The acquire pairs
 * with the seq_cst store of 1 in wait_phase(), made after the phase flip
 * its wait compares with: the phase we read is that one or a later one.
 * A later one (the GP went on to its next wait) holds sections of the
 * phase it flipped from, and a section of ours that its previous wait
 * held has ended, which that wait saw: it does not wait for us.
 * models/reader_phase.pml checks this against both passes of a GP.
 */
void orcu__reader_left_gp(unsigned long ctr)
{
	if (!orcu__load_acquire(&orcu__gp_wait))
		return;
	if (!((ctr ^ orcu__load_relaxed(&orcu__gp_ctr)) & ORCU__PHASE))
		return;
	orcu__reader_wake_gp();
}

/* Scans before the waiter arms the wake and sleeps: about 1 us here (a
 * scan takes ~35 ns on a 2-core EPYC VM), the time a running qsbr reader
 * needs to reach its next announcement.  Longer spins only delay the sleep
 * that gives a descheduled holder its CPU back (orcu-bench sync, qsbr with
 * 2 readers on 2 CPUs: 100 scans 10.3 us p50, 30 scans 7.7 us). */
#define WAIT_SPINS 30
#define WAIT_SLICE_NS (100 * 1000000LL)   /* stall checks meanwhile */
#define WAIT_SLICE_NOMB_NS (200 * 1000LL) /* no membarrier: no wake */

/* What a scan found holding the GP: which kinds of reader (the barrier
 * that arms the wake must cover each of them). */
enum {
	HELD_MEMB = 1,
	HELD_QSBR = 2
};

/* The barrier the armed wake has paid, weakest first (wait_phase()). */
enum {
	ARM_NONE,
	ARM_FENCE,
	ARM_MEMBARRIER
};

/* Who holds: stops at the first holder unless all (the armed waiter must
 * know whether any memb reader holds). */
static int scan_held(int pass, unsigned long cur, unsigned long want_q, bool all,
		     uint64_t gp_start_ns, uint64_t *next_report_ns)
{
	struct orcu_stall_info info;
	struct reader_rec *rec;
	int held = 0;
	bool report = false;

	pthread_mutex_lock(&registry_lock);
	for (rec = registry.next; rec != &registry && (all || !held); rec = rec->next) {
		if (rec->r->kind == ORCU__KIND_MEMB)
			held |= memb_holds(rec, cur) ? HELD_MEMB : 0;
		else if (pass == 1)
			held |= qsbr_holds(rec, want_q) ? HELD_QSBR : 0;
	}
	if (held && orcu__g.stall_ms > 0 && orcu__now_ns() >= *next_report_ns) {
		uint64_t waited = orcu__now_ns() - gp_start_ns;

		stall_collect(&info, gp_start_ns, cur, want_q);
		report = true;
		/* Again at doubling intervals while the stall lasts. */
		*next_report_ns = gp_start_ns + 2 * waited;
	}
	pthread_mutex_unlock(&registry_lock);
	if (report)
		stall_emit(&info);
	return held;
}

/*
 * The barrier that arms the wake covers the readers seen holding, and only
 * them (models/reader_wake.pml, -DMIXED): qsbr readers fence after their
 * announcement themselves, so a fence of ours suffices for them; a memb
 * reader's unlock has no fence between its store and its load of
 * orcu__gp_wait, so it needs our membarrier().  The kind is decided by
 * who holds, not by who was registered when the GP began: a memb reader
 * that registered (or unparked) during a qsbr-only GP can hold it, and
 * armed with a fence only, its unlock could miss the flag and leave the
 * GP to sleep out its 100 ms slice.  Once armed, every re-scan is whole,
 * and a memb holder the armed barrier does not cover makes us pay the
 * membarrier() and re-scan before we sleep.
 */
static void wait_phase(int pass, bool expedited, uint64_t gp_start_ns,
		       uint64_t *next_report_ns, unsigned long want_q)
{
	/* Expedited spins longer before it pays for a sleep and a wake. */
	unsigned spins = expedited ? 10 * WAIT_SPINS : WAIT_SPINS;
	unsigned long cur = orcu__load_relaxed(&orcu__gp_ctr);
	int armed = ARM_NONE;
	bool ran_out = false;
	uint32_t slept = 0; /* the ticket of the slice that ran out */

	for (unsigned iter = 0;; iter++) {
		uint32_t ticket;
		int64_t slice;
		int held, need;

		held = scan_held(pass, cur, want_q, armed != ARM_NONE, gp_start_ns,
				 next_report_ns);
		/* A slice ran out, nobody holds now and no wake came since we
		 * slept: a reader left without waking us (a lost wake-up, which
		 * the tests count).  A slice that runs out on a reader still
		 * holding (preempted on a loaded machine, say), or whose wake
		 * comes just after it, is not one.  Acquire pairs with the release
		 * bump of seq in orcu__event_notify_n(). */
		if (!held && ran_out && orcu__load_acquire(&gp_wait_event.seq) == slept)
			orcu__count(gp_wait_missed, 1);
		if (!held)
			break;
		if (iter < spins) {
			orcu__cpu_relax();
			continue;
		}
		need = held & HELD_MEMB ? ARM_MEMBARRIER : ARM_FENCE;
		if (armed < need) {
			/* Pairs with the reader's store -> load of orcu__gp_wait
			 * (orcu_read_unlock(), qsbr_announce(): pairs #5 and #6;
			 * a memb reader fences only through this membarrier(),
			 * sent to the CPUs of the unparked memb readers, holders
			 * among them: point 6; one that parked since stored
			 * PARKED after its unlock, which the re-scan sees). */
			orcu__store_seq_cst(&orcu__gp_wait, 1);
			if (need == ARM_MEMBARRIER)
				membarrier_readers();
			else
				orcu__fence_seq_cst();
			armed = need;
			orcu__count(gp_wait_arms, 1);
			continue; /* re-scan, all of it, before sleeping */
		}
		slice = held & HELD_MEMB && !orcu__load_relaxed(&orcu__has_membarrier) ?
				WAIT_SLICE_NOMB_NS :
				WAIT_SLICE_NS;
		/* Readers leaving their sections wake us; none waits for us. */
		ticket = orcu__event_prepare(&gp_wait_event);
		ran_out = false;
		if (!orcu__load_relaxed(&orcu__gp_wait))
			orcu__event_cancel(&gp_wait_event);
		else if (orcu__event_wait(&gp_wait_event, ticket, slice) == -ETIMEDOUT) {
			ran_out = true;
			slept = ticket;
			orcu__count(gp_wait_slices, 1);
		}
		/* Still 1: nobody consumed our flag, the barrier still holds.
		 * 0: a reader woke us; re-arm (with a new barrier) if needed.
		 * Pairs with the exchange in orcu__reader_wake_gp(). */
		if (!orcu__load_seq_cst(&orcu__gp_wait))
			armed = ARM_NONE;
	}
	if (armed != ARM_NONE)
		orcu__store_relaxed(&orcu__gp_wait, 0);
}

/*
 * For ThreadSanitizer in the user's program (sanitize.h), under
 * registry_lock, before gp_seq says the GP ended: what every reader did
 * before its last release (a memb unlock's store of ctr in the user's
 * instrumented code, a qsbr quiescent state, an unregistration) happens
 * before the GP's end, and so before the callbacks and synchronize
 * returns that acquire orcu__san_gp_end.  Readers that began a section
 * since are acquired too, which only adds edges a correct program has.
 */
static void san_gp_end_locked(void)
{
	struct reader_rec *rec;

	if (orcu__likely(!orcu__tsan_on()))
		return;
	for (rec = registry.next; rec != &registry; rec = rec->next) {
		orcu__tsan_acquire(&rec->r->ctr);
		orcu__tsan_acquire(&rec->r->qs_seq);
	}
	orcu__tsan_acquire(&san_left);
	orcu__tsan_release(&orcu__san_gp_end);
}

/* seq_cst: pairs with the store in orcu__register().  A thread that
 * registers after this load saw 0 starts its sections after it, and the
 * updater fenced its updates before it read gp_seq (gp.c point 2). */
bool orcu__registry_has_readers(void)
{
	return orcu__load_seq_cst(&nr_readers) != 0;
}

/* Point 5: swap *seq from cur to next if nobody is registered. */
bool orcu__registry_swap_if_none(_Atomic unsigned long *seq, unsigned long cur,
				 unsigned long next)
{
	bool done;

	pthread_mutex_lock(&registry_lock);
	if (!orcu__load_relaxed(&nr_readers))
		san_gp_end_locked();
	/* seq_cst, as every write of gp_seq (gp.c). */
	done = !orcu__load_relaxed(&nr_readers) && orcu__cas_seq_cst(seq, &cur, next);
	pthread_mutex_unlock(&registry_lock);
	return done;
}

static void san_gp_end(void)
{
	if (orcu__likely(!orcu__tsan_on()))
		return;
	pthread_mutex_lock(&registry_lock);
	san_gp_end_locked();
	pthread_mutex_unlock(&registry_lock);
}

void orcu__registry_wait_readers(bool expedited, uint64_t gp_start_ns)
{
	uint64_t next_report = gp_start_ns + (uint64_t)(orcu__g.stall_ms > 0 ? orcu__g.stall_ms : 0) * 1000000ull;
	unsigned long want_q;

	if (!orcu__registry_has_readers()) {
		/* Order: nobody to wait for; the fence keeps the updater's
		 * stores before the GP's end, as a reader wait's barriers do. */
		orcu__fence_seq_cst();
		san_gp_end();
		return;
	}
	/* With no memb reader registered, or every one parked (point 4),
	 * there is nobody to force through a barrier: a thread that
	 * registers later takes registry_lock after us, so its sections
	 * start after this GP and see what preceded it; one that unparks
	 * fences first.  This keeps GPs cheap for qsbr-only and
	 * callback-only programs, and for a memb thread's own synchronize.
	 * Order: membarrier_readers()'s fence comes before our loads of the
	 * readers' ctr (point 4) and, when no membarrier() follows, stands
	 * in for it: the updater's stores come before the GP, as a reader
	 * wait's barriers make them.  Otherwise updates made before this GP
	 * are visible to any reader whose section starts after the barrier;
	 * readers' earlier ctr stores are visible to our scans. */
	membarrier_readers();

	/* qsbr: readers must announce a counter value newer than this point. */
	want_q = orcu__fetch_add_seq_cst(&qsbr_ctr, 2) + 2;

	/* memb: flip, wait; flip, wait (point 2).  Order: each seq_cst flip
	 * comes before the scan loads that follow it (store -> load); the
	 * fence between keeps the first wait's scans before the second flip. */
	orcu__store_seq_cst(&orcu__gp_ctr, orcu__load_relaxed(&orcu__gp_ctr) ^ ORCU__PHASE);
	wait_phase(0, expedited, gp_start_ns, &next_report, want_q);
	orcu__fence_seq_cst();
	/* Order: as the first flip. */
	orcu__store_seq_cst(&orcu__gp_ctr, orcu__load_relaxed(&orcu__gp_ctr) ^ ORCU__PHASE);
	wait_phase(1, expedited, gp_start_ns, &next_report, want_q);

	/* No closing membarrier(): every reader we waited for was last seen
	 * through an acquire load of a release store its owner made after its
	 * section (point 3 above), so its section's reads happen before the
	 * end of this GP.  Order: the fence keeps our scans before the GP's
	 * end (end_gp() in gp.c). */
	orcu__fence_seq_cst();
	san_gp_end();
}
