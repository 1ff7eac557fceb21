/*
 * membar_target.pml - a GP's barrier sent only to the CPUs its memb
 * readers may run on (src/readers/registry.c point 6, memb_cpus() and
 * membarrier_readers()), against a reader that moves between CPUs while
 * the GP reads where it may be and sends the barrier.
 *
 * Two CPUs.  The reader's stores to ctr go through a FIFO store buffer
 * (TSO), drained at any moment by the drainer; the reader's sections
 * store ctr and load ptr with no fence between (orcu__mb_slave() with
 * membarrier).  The GP is sequentially consistent.  The kernel, also
 * sequentially consistent here (its locks: pi_lock, the run-queue locks):
 *  - affinity: the changer replaces the reader's mask (sched_setaffinity,
 *    under pi_lock), at most CHANGES times, never empty;
 *  - scheduler: the reader is switched out at any time (a context
 *    switch: its buffer drained) and, switched out, is switched in on a
 *    CPU its mask allows then, where the kernel writes its rseq cpu_id
 *    before the reader's next instruction; at most MOVES switches.  A
 *    reader on a CPU its new mask excludes runs there until switched out
 *    (the stopper's migration, after the change);
 *  - membarrier(PRIVATE_EXPEDITED_RSEQ, FLAG_CPU, c): if the reader runs
 *    on c, its buffer drains (the IPI's smp_mb()); otherwise nothing (a
 *    reader switched out drained at the switch).
 * GP: ptr = NEW (the updater's fence follows), then reads the mask and
 * the reader's cpu_id (two steps, anything may happen between), sends
 * the barrier to each CPU of mask | cpu_id, then waits until ctr shows
 * no section and frees OLD.  A section asserts that what it loaded was
 * not freed while it used it.
 *
 *   default       orcu: mask | cpu_id: verified
 *   -DSKIP_CPU    mutant: the barrier skips the CPU the reader's cpu_id
 *                 names (a CPU it runs on): counterexample
 *   -DNO_RSEQ     mutant: the mask alone, which misses a reader still on
 *                 a CPU its new mask excludes: counterexample
 * Not modelled: CPU hotplug (the targeted call holds the hotplug lock),
 * the broadcast fallbacks, the phase flips (models/reader_phase.pml).
 */

#define OLD 0
#define NEW 1
#define NONE 2 /* switched out */

#define IDLE 0
#define INSEC 1

#ifndef MOVES
#define MOVES 3
#endif
#ifndef CHANGES
#define CHANGES 2
#endif
#ifndef K
#define K 2 /* sections */
#endif

byte ctr = IDLE;            /* memory */
chan buf = [4] of { byte }; /* the reader's CPU's store buffer */
bit ptr = OLD;
bit freed;
byte mask = 3;              /* bit c: CPU c allowed */
byte cpu = 0;               /* where the reader runs, NONE switched out */
byte cpu_id = 0;            /* its rseq area's cpu_id */

inline drain() {
	byte v;
	do
	:: buf?v -> ctr = v
	:: empty(buf) -> break
	od
}

/* One reader step: only while it runs on a CPU. */
inline section() {
	bit r;
	atomic { cpu != NONE -> buf!INSEC };
	atomic { cpu != NONE -> r = ptr };
	/* the section uses what it loaded */
	atomic { cpu != NONE -> assert(!(r == OLD && freed)) };
	atomic { cpu != NONE -> buf!IDLE }
}

active proctype reader()
{
	byte i;
	for (i : 1 .. K) {
		section()
	}
}

active proctype drainer()
{
	byte v;
end:	do
	:: atomic { buf?v -> ctr = v }
	od
}

active proctype sched()
{
	byte moves = 0;
end:	do
	:: atomic { cpu != NONE && moves < MOVES -> drain(); cpu = NONE; moves++ }
	:: atomic { cpu == NONE && (mask & 1) -> cpu = 0; cpu_id = 0 }
	:: atomic { cpu == NONE && (mask & 2) -> cpu = 1; cpu_id = 1 }
	od
}

active proctype changer()
{
	byte n = 0;
end:	do
	:: atomic { n < CHANGES -> mask = 1; n++ }
	:: atomic { n < CHANGES -> mask = 2; n++ }
	:: atomic { n < CHANGES -> mask = 3; n++ }
	od
}

active proctype gp()
{
	byte targets, c;

	ptr = NEW;
	targets = mask;         /* sched_getaffinity(), after the fence */
#ifndef NO_RSEQ
	c = cpu_id;
#ifdef SKIP_CPU
	targets = targets & ~(1 << c);
#else
	targets = targets | (1 << c);
#endif
#endif
	for (c : 0 .. 1) {
		if
		:: (targets >> c) & 1 -> atomic { if :: cpu == c -> drain() :: else -> skip fi }
		:: else -> skip
		fi
	}
	(ctr != INSEC);
	freed = 1
}
