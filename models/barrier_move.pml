/*
 * barrier_move.pml -- orcu_barrier() against the move of a slot's callbacks
 * while one of them is still being invoked (src/slot.c point 6; found by
 * orcu-torture's qsbr-inline-flood-lazy-fork configuration).
 *
 * 2 slots, A (0) and B (1), each with its FIFO and one invoker.  Callbacks
 * 0 and 1 are posted on A before the barrier, callback 2 on B.  An
 * invoker claims the callback at the front of its slot's list (the claim
 * is orcu__slot_invoke_done()'s `invoking`), then runs it in a later step
 * (no lock is held while user code runs), then gives the claim back.
 * Hotplug (orcu_cpu_offline() of inline slot A) moves whatever of A is not
 * claimed, markers included, to the end of B, at any moment.  The barrier
 * places a marker behind the last callback of each slot with callbacks
 * pending (counted until they returned), the whole pass and the move
 * under one lock (orcu__g.lock).
 *
 * Proctype  <->  C it mirrors
 *   invoker   orcu__slot_invoke_done() + invoke_chain() (src/slot.c), one
 *             callback per claim
 *   offline   orcu_cpu_offline() -> orcu__slot_move_all() (src/cpu.c,
 *             src/slot.c)
 *   barrier   barrier_start(), mark_slot(), orcu__barrier_cb() and the wait
 *             (src/barrier.c)
 *
 * Variants (spin's cpp):
 *   default     orcu: an invoker that meets another slot's marker checks,
 *               atomically with that slot's claim (its cb_lock), whether it
 *               is claimed; if so it leaves the marker to the claimer,
 *               which counts it when it gives the claim back.
 *   -DNO_DEFER  mutant, the code before the fix: a moved marker is counted
 *               where it runs.  Expected: the barrier returns while
 *               callback 0 still runs on A.
 *
 * Properties:
 *   - safety (assert in barrier): when it returns, callbacks 0, 1 and 2
 *     have returned;
 *   - safety (assert in invoker): none runs twice;
 *   - liveness (ltl `live`, weak fairness): the barrier returns.
 */

#define NSLOT 2
#define NCB   3
#define MARK  8          /* MARK + s: slot s's marker */
#define QSZ   6

chan cbl[NSLOT] = [QSZ] of { byte };
byte npending[NSLOT];  /* counted on the slot, not yet returned (or moved) */
bit  claimed[NSLOT];   /* an invoker holds the slot's claim */
bit  deferred[NSLOT];  /* the slot's marker waits for its claimer */
byte bcount;           /* markers not yet counted */
bit  started[NCB], returned[NCB];
bit  bdone;
bit  lk;               /* orcu__g.lock */

ltl live { <> bdone }

inline lock()   { atomic { lk == 0 -> lk = 1 } }
inline unlock() { lk = 0 }

/* A marker's turn on slot s. */
inline run_marker(m, s) {
	atomic {
#ifndef NO_DEFER
		if
		:: m - MARK != s && claimed[m - MARK] -> deferred[m - MARK] = 1
		:: else -> bcount--
		fi
#else
		bcount--
#endif
	}
}

proctype invoker(byte s)
{
	byte h;
end:	do
	:: atomic { cbl[s]?h -> claimed[s] = 1 };
		if
		:: h >= MARK -> run_marker(h, s)
		:: else ->
			atomic { assert(!started[h]); started[h] = 1 };
			returned[h] = 1;           /* the user callback ran */
			npending[s]--
		fi;
		atomic {                           /* the claim goes back */
			claimed[s] = 0;
			if
			:: deferred[s] -> deferred[s] = 0; bcount--
			:: else -> skip
			fi
		};
		h = 0
	od
}

proctype offline()
{
	byte h, n;
	lock();
	d_step {
		n = 0;
		do
		:: cbl[0]?h ->
			cbl[1]!h;
			if
			:: h < MARK -> n++
			:: else -> skip
			fi
		:: empty(cbl[0]) -> break
		od;
		npending[1] = npending[1] + n;
		npending[0] = npending[0] - n;
		h = 0;
		n = 0
	};
	unlock()
}

proctype barrier()
{
	byte s = 0;
	lock();
	bcount = 1;                                /* the pass's bias */
	do
	:: s == NSLOT -> break
	:: else ->
		atomic {
			if
			:: npending[s] > 0 -> bcount++; cbl[s]!(MARK + s)
			:: else -> skip
			fi
		};
		s++
	od;
	unlock();
	bcount--;
	(bcount == 0);
	assert(returned[0] && returned[1] && returned[2]);
	bdone = 1
}

init {
	atomic {
		cbl[0]!0; cbl[0]!1; npending[0] = 2;
		cbl[1]!2; npending[1] = 1;
		run invoker(0);
		run invoker(1);
		run offline();
		run barrier()
	}
}
