/*
 * postq_wake.pml -- posting to a thread's own queue, with no fence on the
 * post path, against a leader that goes to sleep (src/slot.c point 7).
 *
 * A thread that owns a posting queue on a slot publishes each callback with
 * a plain (release) store of the queue's count, then loads the leader's
 * `sleep` state, with no fence between the two: its store may still sit in
 * the CPU's store buffer when the load executes (the store->load reordering
 * even x86 does).  The leader makes up for the missing fence:
 *
 *   leader, going to sleep:  (1) sleep = SLEEPING; fence
 *                            (2) if the group has queue owners:
 *                                membarrier() -- a full barrier on every CPU
 *                                running one of our threads
 *                            (3) re-scan every queue; anything new -> awake
 *                            (4) futex_wait(&sleep, SLEEPING)
 *   poster, claiming:        (a) owners++ (seq_cst), then its first post
 *                                fences before it loads `sleep`
 *   poster, each post:       (b) posted = posted + 1 (plain store)
 *                            (c) load sleep; if SLEEPING: xchg(sleep, AWAKE)
 *                                (a full barrier), futex_wake
 *   poster, giving back:     (d) owners-- (release; here a full barrier)
 *
 * Each poster CPU has an explicit store buffer for its count (one location,
 * so one pending value: TSO keeps a CPU's stores in order), drained by
 * proctype cpu at any moment; membarrier() marks every poster CPU, each
 * drains at a point of its own choosing, and the leader goes on only when
 * all have.  The leader is sequentially consistent (its fence in (1)).
 *
 * Proctype  <->  C it mirrors
 *   poster   call_fast() / post_own() (src/call.c): orcu__postq_push()
 *            (src/internal.h), then postq_posted(); postq_switch() ->
 *            orcu__slot_postq_claim() for (a); the thread-exit destructor
 *            -> orcu__slot_postq_release() for (d) (src/slot.c)
 *   cpu      the poster's CPU: store buffer drain; membarrier()'s IPI
 *   leader   leader_main() / leader_sleep() (src/nocb.c): the scan takes
 *            (orcu__slot_splice_new_locked()), (1) is the seq_cst store of
 *            `sleep` and orcu__event_prepare()'s fence, (2) reads
 *            postq_owners and calls orcu__membarrier_master(), (3) is
 *            group_has_new() -> orcu__slot_has_new(), (4) is
 *            orcu__event_wait(); futex_wake is orcu__event_notify() in
 *            orcu__nocb_wake_leader() (src/slot.c)
 *
 * Variants (spin's cpp):
 *   default     orcu: 2 posters, 2 posts each; poster 1 gives its queue
 *               back after its posts.  Expected: verified.
 *   -DNOMB      mutant: the leader skips membarrier() in (2).  Expected:
 *               lost wake-up (one poster suffices).
 *   -DNORESCAN  mutant: membarrier() kept, no re-scan (3).  Expected: lost
 *               wake-up.
 *   -DNP=n      n posters (default 2).
 *
 * Properties:
 *   - safety (ltl `nolost`): never is the leader blocked in futex_wait once
 *     every poster has finished (wake included) while a callback is
 *     untaken: nobody is left to wake it;
 *   - safety (assert): no callback is taken twice or before it was posted;
 *   - liveness (ltl `live`, weak fairness): every callback is taken:
 *     <> (ntaken == NP * NCB).
 */

#ifndef NP
#define NP 2              /* posters, each with its own queue in the group */
#endif
#define NCB 2             /* posts per poster */

byte posted[NP];          /* memory: each queue's published count          */
bit  sb[NP];              /* poster i's count store is still buffered       */
byte sbval[NP];           /* ... with this value                            */
bit  mb_pending[NP];      /* membarrier() issued, CPU i has not yet fenced  */
byte taken[NP];           /* leader: how far it took each queue             */
byte owners;              /* postq_owners of the group                      */
bit  sleep;               /* leader->sleep: 1 == SLEEPING                   */
bit  in_futex;            /* the leader is blocked in futex_wait            */
byte nfinished;           /* ghost: posters past their last step            */
byte ntaken;              /* ghost: callbacks taken                         */
byte nposted;             /* ghost: callbacks posted (program order)        */

ltl nolost { [] !(in_futex && nfinished == NP && ntaken < NP * NCB) }
ltl live   { <> (ntaken == NP * NCB) }

inline drain(i) {
	if
	:: sb[i] -> posted[i] = sbval[i]; sb[i] = 0
	:: else -> skip
	fi
}

inline futex_wake() { in_futex = 0 }

proctype poster(byte i)
{
	byte n;
	bit saw, old;

	/* (a) claim: a seq_cst read-modify-write, a full barrier */
	atomic { drain(i); owners++ };
	do
	:: n < NCB ->
		/* (b) the count, buffered */
		atomic { n++; nposted++; sbval[i] = n; sb[i] = 1 };
		if
		:: n == 1 -> drain(i)             /* the first post after a claim fences */
		:: else -> skip
		fi;
		saw = sleep;                       /* (c) may pass the buffered store */
		if
		:: saw ->
			atomic { drain(i); old = sleep; sleep = 0 };
			if
			:: old -> futex_wake()
			:: else -> skip
			fi
		:: else -> skip
		fi
	:: else -> break
	od;
	if
	:: i == 1 -> atomic { drain(i); owners-- }   /* (d) gives its queue back */
	:: else -> skip
	fi;
	nfinished++
}

proctype cpu(byte i)
{
end:	do
	:: atomic { sb[i] -> drain(i) }
	:: atomic { mb_pending[i] -> drain(i); mb_pending[i] = 0 }
	od
}

/* take whatever each queue published (the leader's scan_slot()) */
inline take_all() {
	took = 0;
	j = 0;
	do
	:: j < NP ->
		atomic {
			if
			:: posted[j] > taken[j] ->
				assert(posted[j] <= NCB);
				ntaken = ntaken + posted[j] - taken[j];
				taken[j] = posted[j];
				took = 1
			:: else -> skip
			fi;
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
	:: j < NP -> atomic { found = found || posted[j] > taken[j]; j++ }
	:: else -> break
	od;
	j = 0
}

proctype leader()
{
	byte j;
	bit took, found;
again:
	take_all();
	if
	:: took -> goto again
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
	byte i;
	atomic {
		do
		:: i < NP -> run cpu(i); run poster(i); i++
		:: else -> break
		od;
		run leader()
	}
}
