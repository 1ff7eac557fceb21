/*
 * leader_wake.pml -- orcu's no-CBs leader sleep/wake protocol (DESIGN.md 5.1, 5.2).
 *
 * One group = 2 offloaded slots (slot 0 is the leader's own slot, slot 1 a
 * follower slot), NCB = 3 callbacks posted by application threads, possibly
 * before the group's threads exist.  Memory is sequentially consistent in
 * Promela; that is what orcu's C code guarantees at the two points that
 * matter: the enqueue is a seq_cst xchg (published before the `sleep` load
 * that follows it) and the leader issues a seq_cst fence between `sleep = 1`
 * and its re-scan (the fence in orcu__event_prepare(), src/event.h).
 *
 * Proctype  <->  C function it mirrors
 *   enqueuer     orcu_call() -> do_call() (src/call.c), then
 *                orcu__nocb_wake_leader() (src/slot.c)
 *   leader       leader_main() (src/nocb.c)
 *   follower     follower_main() (src/nocb.c): invoke handed-over callbacks
 *   gp_thread    the GP thread (src/gp.c), abstracted to "a GP ends when asked"
 *   init         also slot onlining / thread spawning (orcu__nocb_spawn_slot() in
 *                src/nocb.c): may run before, between or after the enqueues
 *
 * Variants (spin's cpp):
 *   default      orcu: state `sleep`, zero-initialised, 0 == ORCU__LEADER_AWAKE,
 *                1 == ORCU__LEADER_SLEEPING; a new leader scans at once; the
 *                enqueuer wakes only on sleep==1 (exchange to 0, then
 *                orcu__event_notify(&l->wake)); the leader sleeps with sleep=1;
 *                orcu__event_prepare() (fence); re-scan; re-check sleep == 1;
 *                orcu__event_wait(), modelled as futex_wait(&sleep, 1): the
 *                event blocks only while no notify followed the prepare, and
 *                the enqueuer notifies only after its exchange (event.h).
 *   -DPREFIX     Linux v3.17-rc before commit 11ed7f934cb8: flag
 *                `nocb_leader_wake`, zero-initialised, 0 == NOT awake; the
 *                new leader kthread first waits for wake==1; wake_nocb_leader()
 *                returns early while the leader kthread does not exist.
 *                Expected: boot-hang counterexample.
 *   -DLATE_PUBLISH mutant of orcu where the spawner publishes "leader exists"
 *                only after the leader thread started (the kernel's order):
 *                the leader can scan, find nothing and sleep while it is
 *                still marked missing, so an enqueuer skips the wake.  Expected:
 *                counterexample -- so orcu must publish first.
 *   -DNORESCAN   mutant of orcu without the re-scan after sleep=1 (shows the
 *                re-scan is what closes the race).  Expected: counterexample.
 *
 * Properties:
 *   - safety (assert): no callback is invoked twice;
 *   - safety (ltl `nolost`): no lost wake-up -- never is the leader blocked
 *     (orcu: in futex_wait; prefix: in wait_event) while some queue of its
 *     group is non-empty and no enqueuer is still on its way to wake it
 *     (pending_wake: ghost count of enqueuers between publish and wake);
 *   - safety (invalid end state): nothing blocks except at `end` labels;
 *   - liveness (ltl `live`, weak fairness): every posted callback is
 *     eventually invoked: <> (ninvoked == NCB).
 */

#define NSLOT 2
#define NCB   3
#define GPMOD 2          /* bounded GP counter (one requester: parity suffices) */

chan q[NSLOT]    = [NCB] of { byte };   /* per-slot MPSC "new" queue          */
chan wl[NSLOT]   = [NCB] of { byte };   /* segmented list: waiting for a GP   */
chan done[NSLOT] = [NCB] of { byte };   /* ready, handed over to the follower */

bit  leader_exists;       /* the leader thread has been created                */
#ifdef PREFIX
bit  wake;                /* rdp->nocb_leader_wake: 0 (default) == not awake   */
bit  waiting;             /* leader is inside wait_event(wake)                 */
#define LEADER_BLOCKED (waiting && !wake)
#else
bit  sleep;               /* leader->sleep: 0 (default) == AWAKE               */
bit  in_futex;            /* leader is blocked in orcu__event_wait(&l->wake)   */
#define LEADER_BLOCKED (in_futex)
#endif
byte pending_wake;        /* enqueuers between publish and end of wake step    */
bit  invoked[NCB];
byte ninvoked;
byte gp_seq;              /* bounded GP counter                                */
bit  gp_req;

#define QNONEMPTY ((len(q[0]) > 0) || (len(q[1]) > 0))

ltl nolost { [] !(LEADER_BLOCKED && QNONEMPTY && pending_wake == 0) }
ltl live   { <> (ninvoked == NCB) }

inline futex_wake() { in_futex = 0 }

proctype enqueuer(byte slot; byte id)
{
	/* 1) publish: seq_cst xchg on the queue tail */
	atomic { q[slot]!id; pending_wake++ };
	/* 2) nocb_wake_leader() */
	/* (pending_wake is a ghost counter, updated with the real step) */
	if
	:: atomic { !leader_exists -> pending_wake-- }  /* no thread yet: stay queued */
	:: else ->
#ifdef PREFIX
		if
		:: wake == 0 -> atomic { wake = 1; pending_wake-- } /* + wake_up(): wait_event re-checks */
		:: atomic { else -> pending_wake-- }
		fi
#else
		if
		:: sleep == 1 -> sleep = 0; atomic { futex_wake(); pending_wake-- }
		:: atomic { else -> pending_wake-- }
		fi
#endif
	fi
}

/* move slot s's new callbacks to its wait-for-GP segment (xchg of the head) */
inline take(s) {
	d_step {
		do
		:: q[s]?tmp -> wl[s]!tmp; got = 1
		:: len(q[s]) == 0 -> break
		od;
		tmp = 0
	}
}

inline wait_gp() {
	snap = (gp_seq + 1) % GPMOD;
	gp_req = 1;
	atomic { (gp_seq == snap) -> snap = 0 }
}

/* advance: callbacks whose GP ended go to the follower, which is woken */
inline hand_over(s) {
	d_step {
		do
		:: wl[s]?tmp -> done[s]!tmp
		:: len(wl[s]) == 0 -> break
		od;
		tmp = 0
	}
}

proctype leader()
{
	byte tmp, snap;
	bit got;
#ifdef PREFIX
	/* rcu_nocb_kthread -> nocb_leader_wait() (v3.17-rc2, pre-fix) */
wait_again:
	waiting = 1;
	(wake == 1);                   /* wait_event_interruptible(wq, wake) */
	waiting = 0;
	got = 0;
	take(0); take(1);
	if
	:: !got ->
		/* no callbacks: sleep a bit, rescan after a memory barrier */
		wake = 0;                  /* smp_mb() follows; SC here */
		if
		:: (len(q[0]) > 0) || (len(q[1]) > 0) -> wake = 1
		:: else -> skip
		fi;
		goto wait_again
	:: else -> skip
	fi;
	wait_gp();
	wake = 0;                      /* smp_mb() follows */
	if :: (len(q[0]) > 0) -> wake = 1 :: else -> skip fi;
	hand_over(0);
	if :: (len(q[1]) > 0) -> wake = 1 :: else -> skip fi;
	hand_over(1);
	goto wait_again
#else
	/* leader_main(): sleep == 0 at start, so scan immediately */
	do
	:: got = 0;
	   take(0); take(1);
	   if
	   :: got ->
		/* callbacks need a GP: stay awake (sleep == 0) while waiting */
		wait_gp();
		hand_over(0); hand_over(1)
	   :: else ->
		sleep = 1;             /* then a seq_cst fence: SC here */
#ifndef NORESCAN
		if
		:: (len(q[0]) > 0) || (len(q[1]) > 0) -> sleep = 0
		:: else ->
#endif
			/* re-check sleep, then orcu__event_wait(): blocks only
			 * while sleep == 1 (no enqueuer claimed and notified) */
			atomic { if :: sleep == 1 -> in_futex = 1 :: else -> skip fi };
end_futex:		(in_futex == 0)
#ifndef NORESCAN
		fi
#endif
	   fi
	od
#endif
}

proctype follower(byte slot)
{
	byte id;
end:	do
	:: done[slot]?id ->
		assert(!invoked[id]);      /* never invoked twice */
		invoked[id] = 1;
		d_step { ninvoked++; id = 0 }
	od
}

proctype gp_thread()
{
end:	do
	:: gp_req -> d_step { gp_req = 0; gp_seq = (gp_seq + 1) % GPMOD }
	od
}


init {
	atomic {
		run enqueuer(0, 0);    /* e.g. early callbacks from a constructor */
		run enqueuer(0, 1);
		run enqueuer(1, 2);
		run gp_thread()
	};
	/* online(): the group's slots come online and get their threads,
	 * at any point relative to the enqueues above */
	run follower(0);
	run follower(1);
#if defined(PREFIX) || defined(LATE_PUBLISH)
	/* kernel order (rcu_spawn_one_nocb_kthread): kthread_run(), then
	 * publish rdp->nocb_kthread: the thread may scan and sleep first */
	run leader();
	leader_exists = 1
#else
	/* orcu: the leader is marked existing (seq_cst) before it can run its
	 * first scan; an enqueuer that sees it missing is then sure the scan
	 * is still to come */
	leader_exists = 1;
	run leader()
#endif
}
