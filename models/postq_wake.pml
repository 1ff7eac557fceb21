/*
 * postq_wake.pml -- posting to a thread's own queue, with no fence on the
 * post path, against a leader that goes to sleep (src/callbacks/postq.c points 4 to 6);
 * queues given back (thread exit, undrained; a switch, drained) and taken
 * over by a new owner with heads left in them.
 *
 * A thread that owns a posting queue on a slot publishes each callback with
 * a release store of the queue's count, then loads the leader's `sleep`
 * state, with no fence between the two: its store may still sit in the
 * CPU's store buffer when the load executes.  The leader makes up for the
 * missing fence:
 *
 *   leader, going to sleep:  (1) sleep = SLEEPING; fence
 *                            (2) if the group has queue owners (seq_cst
 *                                load of postq_owners): membarrier() -- a
 *                                full barrier on every CPU running one of
 *                                our threads
 *                            (3) re-scan every queue; anything new -> awake
 *                            (4) futex_wait(&sleep, SLEEPING)
 *   poster, claiming:        (a) a free queue (CAS of owned 0 -> 1,
 *                                acq_rel) or a new one; owners++ (seq_cst);
 *                                its first post then fences before it
 *                                loads `sleep`
 *   poster, each post:       (b) write the entry, posted = p + 1 (release)
 *                            (c) load sleep (relaxed); if SLEEPING:
 *                                xchg(sleep, AWAKE) (a full barrier),
 *                                futex_wake
 *   poster, giving back:     (d) owners-- (release fetch_sub), then
 *                                owned = 0 (release store): NOT a full
 *                                barrier -- postq.c give_up()
 *
 * Memory.  Each poster CPU has an explicit FIFO store buffer (channel sb),
 * drained by proctype cpu one entry at a time, at any moment.  Every store a
 * poster makes is a release store or a release RMW (the count, postq_owners,
 * owned) and its only plain load is `sleep`: release orders each store
 * after everything before it in program order, so the stores become
 * visible in program order (a FIFO), and the only reordering left is a
 * later load passing earlier buffered stores -- exactly what a FIFO store
 * buffer with loads from memory allows.  The entry and its count drain as
 * one step (the entry's relaxed store may become visible earlier, but a
 * consumer reads entries only up to a count it read with acquire).
 * seq_cst RMWs (the claim's owners++, the xchg of `sleep`) and fences
 * drain the buffer first.  The leader is sequentially consistent: its
 * `sleep` store is seq_cst and followed by a fence, its owners load is
 * seq_cst, and membarrier() is a full barrier on every poster CPU (each
 * drains at a point of its own choosing; the leader goes on only when all
 * have).  The mutants make a release store relaxed by letting it bypass
 * the buffer: it may then become visible before the posts ahead of it.
 *
 * Posters (each on its own CPU):
 *   0  claims a new queue, posts 2, exits: thread_exit() (src/callbacks/postq.c)
 *      gives the queue back UNDRAINED (heads may still be untaken).
 *   1  a thread that appears at any moment, claims a queue: queue 0 taken
 *      over if poster 0 gave it back (postq.c claim() takes a free
 *      queue first: heads left in it stay in order, ours follow), else a
 *      new one; posts 2, then leaves the slot: orcu__postq_switch() gives the
 *      queue back only once orcu__postq_drained() (acquire of taken == posted),
 *      else keeps it.
 *   2  (-DNP=3) as poster 1, with 1 post, from the start.
 *
 * Proctype  <->  C it mirrors
 *   poster   call_fast() / post_own() / postq_posted() (src/top/call.c),
 *            orcu__postq_push() (src/callbacks/postq.h), orcu__postq_switch()
 *            / claim() / give_up() / thread_exit() (src/callbacks/postq.c)
 *   cpu      the poster's CPU: store buffer drain; membarrier()'s IPI
 *   leader   leader_main() / leader_sleep() (src/callbacks/nocb.c): the scan takes
 *            (orcu__slot_splice_new_locked() -> orcu__postq_take()), (1) is
 *            the seq_cst store of `sleep` and orcu__event_prepare()'s
 *            fence, (2) reads postq_owners and calls
 *            orcu__membarrier_master(), (3) is group_has_new() ->
 *            orcu__slot_has_new(), (4) is orcu__event_wait(); futex_wake
 *            is orcu__event_notify() in orcu__nocb_wake_leader() (nocb.c)
 *
 * Variants (spin's cpp):
 *   default     orcu.  Expected: verified.
 *   -DNOMB      mutant: the leader skips membarrier() in (2).  Expected:
 *               lost wake-up.
 *   -DNORESCAN  mutant: membarrier() kept, no re-scan (3).  Expected: lost
 *               wake-up.
 *   -DRELAXED_OWNERS  mutant: the give-back's fetch_sub of postq_owners is
 *               relaxed (bypasses the buffer).  Expected: lost wake-up --
 *               the leader reads no owner, skips membarrier(), and its
 *               re-scan misses a post still buffered ahead of the give-back.
 *   -DRELAXED_OWNED   mutant: the give-back's store of owned = 0 is
 *               relaxed.  Expected: assertion -- the new owner claims the
 *               queue, reads a stale count and publishes a position the old
 *               owner published too (one callback overwritten, lost).
 *   -DNP=3      a third poster.
 *
 * Properties:
 *   - safety (ltl `nolost`): never is the leader blocked in futex_wait once
 *     every poster has finished (wake included) while a callback is
 *     untaken: nobody is left to wake it;
 *   - safety (assert): each queue position is published once, in order; no
 *     callback is taken twice;
 *   - liveness (ltl `live`, weak fairness): every callback is taken:
 *     <> (ntaken == NPOSTS).
 */

#ifndef NP
#define NP 2              /* posters */
#endif
#define NQ NP             /* queues: at most one new queue per poster */
#if NP == 3
#define NPOSTS 5
#else
#define NPOSTS 4
#endif
#define CAP NPOSTS        /* positions per queue: all posts may share one */

/* store buffer entries */
#define PUB    1          /* e[q][v - 1] = id; posted[q] = v */
#define ODEC   2          /* postq_owners-- */
#define OWNED0 3          /* owned[q] = 0 */

chan sb[NP] = [4] of { byte, byte, byte, byte };  /* kind, q, v, id */
byte posted[NQ];          /* memory: each queue's published count         */
byte e[NQ * CAP];         /* memory: the entries (callback id + 1)          */
bit  created[NQ];         /* on the slot's list of queues                   */
bit  owned[NQ];
byte taken[NQ];           /* leader: how far it took each queue             */
byte owners;              /* postq_owners of the group                      */
bit  mb_pending[NP];      /* membarrier() issued, CPU i has not yet fenced  */
bit  sleep;               /* leader->sleep: 1 == SLEEPING                   */
bit  in_futex;            /* the leader is blocked in futex_wait            */
bit  took[NPOSTS];        /* ghost: callback taken                          */
byte nfinished;           /* ghost: posters past their last step            */
byte ntaken;              /* ghost: callbacks taken                         */

ltl nolost { [] !(in_futex && nfinished == NP && ntaken < NPOSTS) }
ltl live   { <> (ntaken == NPOSTS) }

inline apply(i) {
	sb[i]?k, qq, v, id;
	if
	:: k == PUB ->
		assert(posted[qq] == v - 1);   /* each position published once */
		e[qq * CAP + v - 1] = id + 1;
		posted[qq] = v
	:: k == ODEC -> owners--
	:: k == OWNED0 -> owned[qq] = 0
	fi;
	k = 0; qq = 0; v = 0; id = 0
}

/* a fence, or a seq_cst RMW: everything buffered becomes visible */
inline drain_all(i) {
	do
	:: nempty(sb[i]) -> apply(i)
	:: empty(sb[i]) -> break
	od
}

inline futex_wake() { in_futex = 0 }

proctype poster(byte i; byte first_id; byte nposts)
{
	byte q, p, n, k, qq, v, id;
	bit saw, old;

	/* (a) claim: a free queue (CAS of owned, acq_rel) or a new one, then
	 * owners++ (seq_cst RMW, a full barrier) */
	atomic {
		drain_all(i);
		q = 0;
		do
		:: q < NQ && created[q] && !owned[q] -> owned[q] = 1; break
		:: q < NQ && !(created[q] && !owned[q]) -> q++
		:: q == NQ ->
			q = i;                 /* a new queue (one per poster) */
			created[q] = 1;
			owned[q] = 1;
			break
		od;
		owners++
	};
	p = posted[q];                     /* the count of the queue we own now */
	do
	:: n < nposts ->
		/* (b) entry and count, release: buffered */
		atomic { p++; sb[i]!PUB, q, p, first_id + n; n++ };
		if
		:: n == 1 -> atomic { drain_all(i) }  /* first post after a claim fences */
		:: else -> skip
		fi;
		saw = sleep;                       /* (c) may pass the buffered stores */
		if
		:: saw ->
			atomic { drain_all(i); old = sleep; sleep = 0 };
			if
			:: old -> futex_wake()
			:: else -> skip
			fi
		:: else -> skip
		fi
	:: else -> break
	od;
	/* (d) give the queue back */
	if
	:: i == 0 -> skip                  /* thread exit: undrained or not */
	:: i > 0 && taken[q] == p -> skip  /* orcu__postq_switch(): only once drained */
	:: else -> goto keep
	fi;
#ifdef RELAXED_OWNERS
	owners--;                          /* may pass the buffered posts */
#else
	sb[i]!ODEC, 0, 0, 0;               /* release fetch_sub */
#endif
#ifdef RELAXED_OWNED
	owned[q] = 0;
#else
	sb[i]!OWNED0, q, 0, 0;             /* release store */
#endif
keep:
	nfinished++
}

proctype cpu(byte i)
{
	byte k, qq, v, id;
end:	do
	:: atomic { nempty(sb[i]) -> apply(i) }
	:: atomic { mb_pending[i] -> drain_all(i); mb_pending[i] = 0 }
	od
}

/* take whatever each queue published (scan_slot() ->
 * orcu__slot_splice_new_locked() -> orcu__postq_take()), under cb_lock */
inline take_all() {
	took_any = 0;
	j = 0;
	do
	:: j < NQ ->
		d_step {
			do
			:: taken[j] < posted[j] ->
				assert(e[j * CAP + taken[j]] > 0);
				assert(!took[e[j * CAP + taken[j]] - 1]);
				took[e[j * CAP + taken[j]] - 1] = 1;
				ntaken++;
				taken[j]++;
				took_any = 1
			:: else -> break
			od;
			j++
		}
	:: else -> break
	od;
	j = 0
}

inline has_new() {
	found = 0;
	j = 0;
	do
	:: j < NQ -> atomic { found = found || posted[j] != taken[j]; j++ }
	:: else -> break
	od;
	j = 0
}

proctype leader()
{
	byte j;
	bit took_any, found;
again:
	take_all();
	if
	:: took_any -> goto again
	:: else -> skip
	fi;
	sleep = 1;                                 /* (1) store, fence */
#ifndef NOMB
	if
	:: owners > 0 ->                           /* (2) membarrier() */
		d_step {
			do
			:: j < NP -> mb_pending[j] = 1; j++
			:: else -> break
			od;
			j = 0
		};
		do
		:: j < NP -> (mb_pending[j] == 0); j++
		:: else -> break
		od;
		j = 0
	:: else -> skip
	fi;
#endif
#ifndef NORESCAN
	has_new();                                 /* (3) */
	if
	:: found || sleep == 0 -> sleep = 0; goto again
	:: else -> skip
	fi;
#endif
	/* (4) futex_wait(&sleep, 1): sleeps only while sleep == 1 */
	atomic {
		if
		:: sleep == 1 -> in_futex = 1
		:: else -> skip
		fi
	};
end:	(in_futex == 0);
	sleep = 0;
	goto again
}

init {
	atomic {
		run cpu(0); run poster(0, 0, 2);
#if NP == 3
		run cpu(2); run poster(2, 4, 1);
#endif
		run cpu(1);
		run leader()
	};
	/* poster 1 is a thread that starts at any moment */
	run poster(1, 2, 2)
}
