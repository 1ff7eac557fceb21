/*
 * reader_wake.pml -- readers wake a grace period that sleeps on them.
 *
 * Instead of polling (the sleep loop registry.c used before), the thread
 * running a grace period sleeps on a futex word `gp_wait`, and a reader that
 * leaves a section the GP is waiting for wakes it:
 *
 *   waiter, one round:  (1) scan; nobody holds -> done
 *                       (2) gp_wait = 1
 *                       (3) membarrier(): a full barrier on every reader CPU
 *                       (4) re-scan; nobody holds -> gp_wait = 0, done
 *                       (5) futex_wait(&gp_wait, 1)
 *                       (6) back to (1)
 *   reader, leaving:    (a) ctr = 0 (memb; "no nesting", ORCU__MEMB_IDLE in the
 *                           code) / qs = counter or 0 (qsbr):
 *                           a plain store, compiler barrier only
 *                       (b) load gp_wait
 *                       (c) if 1: xchg(gp_wait, 0), futex_wake()
 *
 * The readers have no fence between (a) and (b): their store may still sit in
 * the CPU's store buffer when the load executes, which is the store->load
 * reordering even x86 does (on weaker CPUs, the load is satisfied before the
 * store is visible: the same outcome).  Each reader CPU therefore has an
 * explicit store buffer (`sb`, drained by proctype `cpu` at any moment), and
 * the waiter's membarrier() is modelled as what it guarantees: it marks every
 * reader CPU (`mb_pending`), each CPU then executes a full barrier -- drains
 * its buffer -- at an arbitrary point of its reader's execution, and the
 * waiter goes on only when every CPU has done so.  The reader's seq_cst
 * exchange in (c) is a full barrier too: it drains the buffer.
 * The waiter is sequentially consistent: between its store (2) and its loads
 * (4) stands membarrier(), a full barrier on the caller as well.  The mutants
 * keep that (M1 as if the waiter still had its own seq_cst fence, which is
 * what orcu__registry_wait_readers() uses today when no memb reader is
 * registered), so their counterexamples need no reordering on the waiter.
 *
 * One phase: every reader is inside a section the GP must wait for when the
 * GP starts, and leaves it once.  The memb phase flip that keeps new sections
 * from holding a GP is not part of this protocol and not modelled.
 *
 * Proctype  <->  C it mirrors
 *   reader       memb: the outermost path of orcu_read_unlock() (include/orcu.h),
 *                ctr store then the orcu__gp_wait check;
 *                -DQSBR: qsbr_announce() (src/readers/registry.c) from
 *                orcu_quiescent_state() (the counter) or
 *                orcu_thread_offline() (0), both in src/top/entry.c;
 *                -DQSBR -DNOMB -DREADER_FENCE is the C as built for
 *                qsbr-only programs: the reader fences after announcing
 *                (once per GP) and the waiter uses only its own fence
 *   cpu          the reader's CPU: store buffer drain; membarrier()'s IPI
 *   waiter       wait_phase() (src/readers/registry.c), its arming after the spin:
 *                steps (2)-(5); membarrier = orcu__membarrier_master();
 *                futex_wait = orcu__event_prepare(&gp_wait_event), re-check
 *                gp_wait == 1, orcu__event_wait(); futex_wake =
 *                orcu__event_notify() in orcu__reader_wake_gp() (src/base/event.h:
 *                the event blocks only while no notify followed the prepare,
 *                and the reader notifies only after its exchange)
 *
 * Variants (spin's cpp):
 *   default        orcu, memb readers.  Expected: verified.
 *   -DQSBR         orcu, qsbr readers (quiescent state or offline; a reader
 *                  holds while it is online and has not announced the GP's
 *                  counter).  Expected: verified.
 *   -DQSBR -DNOMB -DREADER_FENCE  qsbr readers that fence themselves, waiter
 *                  without membarrier (orcu's qsbr-only case).  Expected:
 *                  verified.
 *   -DWAKE_IF_XCHG the reader calls futex_wake() only if its xchg returned 1
 *                  (a cheaper form of (c)).  Expected: verified.
 *   -DNOMB         mutant M1: no membarrier() at (3) (at most a fence on the
 *                  waiter alone).  Expected: lost wake-up.
 *   -DLOAD_FIRST   mutant M2: the reader loads gp_wait before its store (a).
 *                  Expected: lost wake-up.
 *   -DNORESCAN     mutant M3: no re-scan (4); the waiter sleeps right after
 *                  gp_wait = 1 (membarrier() kept, to show that it is the
 *                  re-scan that closes the race).  Expected: lost wake-up.
 *   -DTRUST_WAKE   mutant M4: after futex_wait returns the waiter declares
 *                  the wait done instead of going back to (1).
 *                  Expected: assertion (GP ends while a reader is inside).
 *   -DNR=n         n readers (default 2).  The mutants M1-M3 are run with one
 *                  reader: the shortest counterexample.
 *   -DMIXED        both kinds under one GP, as wait_phase() arms today: reader
 *                  0 is qsbr (fences after announcing), reader 1 memb, whose
 *                  section-opening store may still sit in its store buffer
 *                  when the GP starts (it registered, or unparked, after the
 *                  GP chose not to pay a membarrier() at its start, so no
 *                  barrier drained it).  The waiter's barrier covers the
 *                  readers its scans saw holding: a fence if only qsbr
 *                  readers, membarrier() if a memb reader; its first scan
 *                  stops at the first holder (reader 0), the scans after
 *                  arming are whole, and a memb holder seen after a
 *                  fence-only arm makes it pay membarrier() and re-scan
 *                  before it sleeps.  Expected: verified.
 *   -DMIXED -DARM_AT_START  mutant M5: the barrier is chosen when the GP
 *                  starts, from the memb readers registered then (none:
 *                  a fence), as wait_phase() did before.  Expected: lost
 *                  wake-up (in the C, a 100 ms wait slice).
 *   -DMIXED -DNO_UPGRADE  mutant M6: the barrier is chosen from the scan
 *                  before arming only; a memb holder the re-scan finds does
 *                  not upgrade it.  Expected: lost wake-up.
 *
 * Properties:
 *   - safety (assert in waiter): when the wait is done, no reader is still
 *     inside a section the GP waits for (ghosts `in_cs`, cleared with the
 *     store (a), and `old_cs`);
 *   - safety (invalid end state): the waiter blocked in futex_wait with every
 *     reader finished is a deadlock -- the futex wait has no end label;
 *   - safety (ltl `nolost`): never is the waiter in futex_wait while every
 *     reader has finished its unlock path (wake included): nobody is left to
 *     wake it;
 *   - liveness (ltl `live`, weak fairness): the wait always ends: <> gp_done.
 */

#ifndef NR
#define NR 2              /* readers; 2 lets one wake while the other holds */
#endif

#ifdef MIXED
#undef NR
#define NR 2
#define QSBR_READER(i) ((i) == 0)
#define READER_FENCE
#else
#ifdef QSBR
#define QSBR_READER(i) 1
#else
#define QSBR_READER(i) 0
#endif
#endif

#define OLD   1           /* qsbr: counter announced before this GP        */
#define WANT  3           /* qsbr: this GP's counter (qsbr_ctr advances by 2) */
#define START 1           /* memb: orcu__gp_ctr copied by the outermost lock;
                             qsbr: OLD                                       */
#define HOLDS(i) (QSBR_READER(i) -> (ctr[i] != 0 && ctr[i] != WANT) : ctr[i] != 0)

byte ctr[NR];             /* memory: memb ctr / qsbr qs_seq, as the scan sees it */
bit  sb[NR];              /* reader i's store (a) is still in its store buffer   */
byte sbval[NR];           /* ... with this value                                 */
bit  mb_pending[NR];      /* membarrier() issued, CPU i has not yet fenced       */
bit  gp_wait;             /* 1: a GP waiter may sleep on it                      */
bit  in_futex;            /* the waiter is blocked in futex_wait(&gp_wait, 1)    */
bit  in_cs[NR];           /* ghost: reader i is inside its section               */
bit  old_cs[NR];          /* ghost: ... one the GP must wait for (MIXED: a memb
                             section whose opening store no barrier of the GP
                             drained is not: it began after the GP's start,
                             registry.c points 1 and 4)                        */
byte nfinished;           /* ghost: readers past the end of their unlock path    */
bit  gp_done;             /* ghost: the waiter declared the wait done            */
byte saw[NR];             /* ghost: gp_wait as reader i loaded it (2: not yet)   */

ltl nolost { [] !(in_futex && nfinished == NR) }
ltl live   { <> gp_done }

inline futex_wake() { in_futex = 0 }     /* wakes the waiter if it sleeps */

/* reader i's buffered store, if any, becomes visible */
inline drain(i) {
	if
	:: sb[i] -> ctr[i] = sbval[i]; sb[i] = 0
	:: else -> skip
	fi
}

proctype reader(byte i)
{
	bit old;
#ifdef LOAD_FIRST
	saw[i] = gp_wait;                         /* M2: (b) before (a) */
#endif
	/* (a) the section ends; the store goes to the store buffer */
	atomic {
		in_cs[i] = 0;
		if
		:: QSBR_READER(i) ->
			if
			:: sbval[i] = WANT        /* orcu_quiescent_state() */
			:: sbval[i] = 0           /* orcu_thread_offline()  */
			fi
		:: else -> sbval[i] = 0
		fi;
		sb[i] = 1
	};
#ifdef READER_FENCE
	if
	:: QSBR_READER(i) -> drain(i)             /* the reader's own seq_cst fence */
	:: else -> skip
	fi;
#endif
#ifndef LOAD_FIRST
	saw[i] = gp_wait;                         /* (b) may pass the buffered store */
#endif
	if
	:: saw[i] ->
		/* (c) seq_cst exchange: a full barrier, so the store (a) is
		 * visible before it (and before the waiter can see gp_wait 0) */
		atomic { drain(i); old = gp_wait; gp_wait = 0 };
#ifdef WAKE_IF_XCHG
		if
		:: old -> futex_wake()
		:: else -> skip
		fi
#else
		futex_wake()
#endif
	:: else -> skip
	fi;
	nfinished++
}

/* the reader's CPU: the buffered store becomes visible at any moment, and
 * at the latest when membarrier()'s barrier runs on this CPU */
proctype cpu(byte i)
{
end:	do
	:: atomic { sb[i] -> drain(i) }
	:: atomic { mb_pending[i] -> drain(i); mb_pending[i] = 0 }
	od
}

/* one load per reader, stopping at the first that holds (as wait_phase),
 * or, with `all` (MIXED, once armed), every reader; heldm: a memb reader
 * was seen holding */
inline scan() {
	held = 0;
	heldm = 0;
	j = 0;
	do
	:: j < NR && (all || !held) ->
		atomic {
			if
			:: HOLDS(j) -> held = 1; heldm = heldm || !QSBR_READER(j)
			:: else -> skip
			fi;
			j++
		}
	:: else -> break
	od;
	j = 0
}

/* membarrier(): every reader CPU fences before it returns */
inline membarrier() {
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
	j = 0
}

#ifdef MIXED
/*
 * wait_phase() today: the armed barrier covers the holders seen.  armed:
 * 0 none, 1 a fence (the waiter's own; it is sequentially consistent here,
 * so nothing to model), 2 membarrier().
 */
proctype waiter()
{
	byte j;
	bit held, heldm, all;
	byte armed, need;
again:
	all = (armed != 0);
	scan();
	if
	:: !held ->
		if
		:: armed -> gp_wait = 0
		:: else -> skip
		fi;
		goto done
	:: else -> skip
	fi;
#ifdef ARM_AT_START
	need = 1;                                 /* M5: no memb reader at the start */
#else
	need = (heldm -> 2 : 1);
#endif
#ifdef NO_UPGRADE
	if
	:: armed == 0 -> skip                     /* M6: only the first arming decides */
	:: else -> need = armed
	fi;
#endif
	if
	:: armed < need ->
		gp_wait = 1;
		if
		:: need == 2 -> membarrier()
		:: else -> skip
		fi;
		armed = need;
		goto again                        /* re-scan, whole, before sleeping */
	:: else -> skip
	fi;
	/* futex_wait(&gp_wait, 1): sleeps only while gp_wait == 1.  No end
	 * label: sleeping here forever is the lost wake-up. */
	atomic {
		if
		:: gp_wait == 1 -> in_futex = 1
		:: else -> skip
		fi
	};
	(in_futex == 0);
	if
	:: gp_wait == 0 -> armed = 0              /* woken: re-arm if still needed */
	:: else -> skip
	fi;
	goto again;
done:
	atomic {
		do
		:: j < NR -> assert(!(in_cs[j] && old_cs[j])); j++
		:: else -> break
		od;
		j = 0;
		gp_done = 1
	}
}
#else
proctype waiter()
{
	byte j;
	bit held, heldm, all;
again:
	scan();                                   /* (1) */
	if
	:: !held -> goto done
	:: else -> skip
	fi;
	gp_wait = 1;                              /* (2) */
#ifndef NOMB
	membarrier();                             /* (3) */
#endif
#ifndef NORESCAN
	scan();                                   /* (4) */
	if
	:: !held -> gp_wait = 0; goto done
	:: else -> skip
	fi;
#endif
	/* (5) futex_wait(&gp_wait, 1): sleeps only while gp_wait == 1.  No
	 * end label: sleeping here forever is the lost wake-up. */
	atomic {
		if
		:: gp_wait == 1 -> in_futex = 1
		:: else -> skip
		fi
	};
	(in_futex == 0);
#ifdef TRUST_WAKE
	goto done;                                /* M4: no re-check */
#endif
	goto again;                               /* (6) */
done:
	atomic {
		do
		:: j < NR -> assert(!(in_cs[j] && old_cs[j])); j++ /* nobody it waits for is inside */
		:: else -> break
		od;
		j = 0;
		gp_done = 1
	}
}
#endif

init {
	byte i;
	atomic {
		do
		:: i < NR ->
			ctr[i] = START;           /* inside a section the GP waits for */
			old_cs[i] = 1;
#ifdef MIXED
			if
			:: !QSBR_READER(i) ->
				/* the lock's store may not be visible yet */
				if
				:: ctr[i] = 0; sbval[i] = START; sb[i] = 1; old_cs[i] = 0
				:: skip
				fi
			:: else -> skip
			fi;
#endif
			in_cs[i] = 1;
			saw[i] = 2;
			run cpu(i);
			run reader(i);
			i++
		:: else -> break
		od;
		run waiter()
	}
}
