/*
 * reader_phase.pml -- the targeted reader wake: a memb reader leaving a
 * section wakes a sleeping grace period only if that GP waits for the
 * section, that is, if the section began under the other phase.
 *
 * reader_wake.pml checks the wake protocol with one phase: every reader is
 * in a section the GP waits for and leaves it once.  Here readers keep
 * entering and leaving sections while the GP flips the phase twice and waits
 * after each flip, as orcu__registry_wait_readers() does, and a reader that
 * sees gp_wait set wakes the waiter only if the phase it reads now differs
 * from its section's (orcu__reader_left_gp()): a busy reader's sections of
 * the current phase no longer take the flag and make the GP arm again.
 *
 *   waiter, per pass:   flip the phase (seq_cst store of orcu__gp_ctr)
 *                       (1) scan: a reader holds if its ctr is non-zero and
 *                           of the other phase; nobody -> pass done
 *                       (2) not armed: gp_wait = 1, membarrier(), armed,
 *                           back to (1)
 *                       (3) armed: futex_wait(&gp_wait, 1); then armed =
 *                           (gp_wait != 0); back to (1)
 *                       end of pass: if armed, gp_wait = 0
 *   reader, K times:    lock: ctr = (phase, nested)
 *                       unlock: (a) ctr = 0, a plain store (store buffer)
 *                               (b) load gp_wait
 *                               (c) if 1: load the phase; if it differs from
 *                                   the section's: xchg(gp_wait, 0), wake
 *
 * The lock is one atomic step that is visible at once: that a section's
 * reads are ordered after its ctr store is the job of the membarrier() a GP
 * issues before its first flip (registry.c point 1), not of the wake, and is
 * not modelled.  The unlock store sits in the reader CPU's store buffer (as
 * in reader_wake.pml): store -> load reordering, drained at any moment, by
 * membarrier()'s barrier on that CPU, or by the reader's seq_cst exchange.
 * The waiter is sequentially consistent.
 *
 * Proctype  <->  C it mirrors
 *   reader   orcu_read_lock() / the outermost path of orcu_read_unlock()
 *            (include/orcu.h): ctr store, the orcu__gp_wait check, then
 *            orcu__reader_left_gp() -> orcu__reader_wake_gp() (src/readers/registry.c)
 *   cpu      the reader's CPU: store buffer drain; membarrier()'s IPI
 *   waiter   orcu__registry_wait_readers() and wait_phase() (src/readers/registry.c):
 *            the two flips, memb_holds() as HOLDS, the armed flag; futex_wait
 *            = orcu__event_prepare, re-check gp_wait == 1, orcu__event_wait
 *
 * Variants (spin's cpp):
 *   default        orcu.  Expected: verified.
 *   -DUNTARGETED   every unlock that sees gp_wait set wakes (the code before
 *                  the targeted wake).  Expected: verified.
 *   -DPHASE_EARLY  mutant: the reader reads the phase before its store (a)
 *                  (say, once at lock time).  Expected: lost wake-up.
 *   -DSAME_PHASE   mutant: the test inverted, a section of the current phase
 *                  wakes.  Expected: lost wake-up.
 *   -DNR=n -DK=k   n readers (default 2) of k sections each (default 2).
 *
 * Properties:
 *   - safety (assert in waiter): when a pass ends, no reader is inside a
 *     section of the other phase (ghosts in_cs, csph);
 *   - safety (invalid end state): the waiter asleep with every reader
 *     finished is a deadlock (futex_wait has no end label);
 *   - safety (ltl nolost): never is the waiter in futex_wait while every
 *     reader has finished: nobody is left to wake it;
 *   - liveness (ltl live, weak fairness): <> gp_done.
 */

#ifndef NR
#define NR 2
#endif
#ifndef K
#define K 2
#endif
#define NPASS 2

/* ctr[i]: 0 outside a section, else 1 + the section's phase */
#define HOLDS(i) (ctr[i] != 0 && ctr[i] - 1 != gp_phase)

byte ctr[NR];             /* memory: the reader's ctr as the scan sees it    */
bit  sb[NR];              /* reader i's unlock store is still buffered       */
bit  mb_pending[NR];      /* membarrier() issued, CPU i has not yet fenced   */
bit  gp_phase;            /* orcu__gp_ctr & ORCU__PHASE                      */
bit  gp_wait;             /* 1: a GP waiter may sleep on it                  */
bit  in_futex;            /* the waiter is blocked in futex_wait(&gp_wait, 1) */
bit  in_cs[NR];           /* ghost: reader i is inside a section             */
bit  csph[NR];            /* ghost: ... begun under this phase               */
byte nfinished;           /* ghost: readers past their last unlock           */
bit  gp_done;             /* ghost: both passes ended                        */

ltl nolost { [] !(in_futex && nfinished == NR) }
ltl live   { <> gp_done }

inline futex_wake() { in_futex = 0 }

inline drain(i) {
	if
	:: sb[i] -> ctr[i] = 0; sb[i] = 0
	:: else -> skip
	fi
}

proctype reader(byte i)
{
	byte k = 0;
	bit c, ph, saw;
	do
	:: k < K ->
		/* lock: a store after the buffered unlock store of the previous
		 * section; stores stay in order, so that one drains first */
		atomic { drain(i); c = gp_phase; ctr[i] = c + 1; in_cs[i] = 1; csph[i] = c };
#ifdef PHASE_EARLY
		ph = gp_phase;
#endif
		/* (a) the section ends; the store goes to the store buffer */
		atomic { in_cs[i] = 0; sb[i] = 1 };
		saw = gp_wait;                    /* (b) may pass the buffered store */
		if
		:: saw ->
#ifndef PHASE_EARLY
			ph = gp_phase;            /* (c) acquire after (b) */
#endif
			if
#if defined(UNTARGETED)
			:: true ->
#elif defined(SAME_PHASE)
			:: ph == c ->
#else
			:: ph != c ->
#endif
				/* seq_cst exchange: drains the buffer */
				atomic { drain(i); gp_wait = 0 };
				futex_wake()
			:: else -> skip
			fi
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	nfinished++
}

proctype cpu(byte i)
{
end:	do
	:: atomic { sb[i] -> drain(i) }
	:: atomic { mb_pending[i] -> drain(i); mb_pending[i] = 0 }
	od
}

inline scan() {
	held = 0;
	j = 0;
	do
	:: j < NR && !held -> atomic { held = HOLDS(j); j++ }
	:: else -> break
	od;
	j = 0
}

proctype waiter()
{
	byte j, pass = 0;
	bit held, armed;
	do
	:: pass < NPASS ->
		gp_phase = 1 - gp_phase;          /* the flip */
		armed = 0;
again:
		scan();                           /* (1) */
		if
		:: !held -> goto passdone
		:: else -> skip
		fi;
		if
		:: !armed ->                      /* (2) */
			gp_wait = 1;
			d_step {
				do
				:: j < NR -> mb_pending[j] = 1; j++
				:: else -> break
				od;
				j = 0
			};
			do
			:: j < NR -> (mb_pending[j] == 0); j++
			:: else -> break
			od;
			j = 0;
			armed = 1;
			goto again
		:: else -> skip
		fi;
		/* (3) sleeps only while gp_wait == 1; no end label */
		atomic {
			if
			:: gp_wait == 1 -> in_futex = 1
			:: else -> skip
			fi
		};
		(in_futex == 0);
		armed = (gp_wait != 0);
		goto again;
passdone:
		atomic {
			do
			:: j < NR -> assert(!(in_cs[j] && csph[j] != gp_phase)); j++
			:: else -> break
			od;
			j = 0;
			if
			:: armed -> gp_wait = 0
			:: else -> skip
			fi;
			pass++
		}
	:: else -> break
	od;
	gp_done = 1
}

init {
	byte i;
	atomic {
		do
		:: i < NR -> run cpu(i); run reader(i); i++
		:: else -> break
		od;
		run waiter()
	}
}
