/*
 * leader_wake.pml -- orcu's no-CBs leader sleep/wake protocol (docs/DESIGN.md 5.1, 5.2).
 *
 * One group = 2 offloaded slots (slot 0 is the leader's own slot, slot 1 a
 * follower slot), NCB = 3 callbacks posted by application threads, possibly
 * before the group's threads exist.  Memory is sequentially consistent in
 * Promela; that is what orcu's C code guarantees at the two points that
 * matter: the enqueue is a seq_cst xchg (published before the `sleep` load
 * that follows it) and the leader issues a seq_cst fence between `sleep = 1`
 * and its re-scan (the fence in orcu__event_prepare(), src/base/event.h).
 *
 * Proctype  <->  C function it mirrors
 *   enqueuer     orcu_call() -> do_call() (src/top/call.c), then
 *                orcu__nocb_wake_leader() (src/callbacks/nocb.c)
 *   leader       leader_main() (src/callbacks/nocb.c)
 *   follower     follower_main() (src/callbacks/nocb.c): invoke handed-over callbacks
 *   gp_thread    the GP thread (src/readers/gp.c), abstracted to "a GP ends when asked"
 *   init         also slot onlining / thread spawning (orcu__nocb_spawn_slot() in
 *                src/callbacks/nocb.c): may run before, between or after the enqueues
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
 *   -DLAZY       callback 0 normal, 1 and 2 lazy, all on slot 1 (see "Lazy").
 *   -DNO_LAZY_RESCAN mutant of orcu whose re-scan before sleeping ignores
 *                the lazy queue (group_has_new() without its point-5
 *                clause "lazy callbacks no timer was armed for").
 *                Expected: lost wake-up.
 *   -DLAZY_LEFT_UNARMED  the lazy arm as src/callbacks/nocb.c scan_slot() has it at
 *                9552413: lazy_armed = nlazy && !take_lazy, so a pass
 *                that takes the lazy queue arms nothing, even when a lazy
 *                poster counted in n_lazy has not pushed yet.  Expected:
 *                lost wake-up (see "Lazy" below).
 *
 * Lazy (orcu_call_lazy(): post_shared()'s lazy branch, src/top/call.c): the
 * poster counts itself in n_lazy (relaxed fetch_add, nl = the old value),
 * pushes to the slot's lazyq (the seq_cst exchange), and wakes the leader
 * only if nl == 0 (normal wake) or nl + 1 >= LAZY_MAX (forced wake).  The
 * leader's scan_slot() (src/callbacks/nocb.c) reads n_lazy; with lazy callbacks
 * counted it takes them if their timer is due (time is abstract: any scan
 * may find it due, and a scan after a sleep ended by its timeout does),
 * if n_lazy >= LAZY_MAX, or if the slot has other new work; otherwise it
 * arms a timer (the pass's timeout) and records lazy_armed.  The default
 * (orcu) arms the timer also when lazy callbacks are still counted after
 * the take (a poster between its count and its push): lazy_armed = the
 * n_lazy left after the splice != 0.  leader_sleep() re-scans with
 * group_has_new(), where a lazy queue no timer was armed for is new work,
 * and sleeps with the pass's timeout.
 *
 * Properties:
 *   - safety (assert): no callback is invoked twice;
 *   - safety (ltl `nolost`): no lost wake-up -- never is the leader blocked
 *     (orcu: in futex_wait; prefix: in wait_event) while some queue of its
 *     group is non-empty and no enqueuer is still on its way to wake it
 *     (pending_wake: ghost count of enqueuers between publish and wake);
 *     a lazy queue counts unless the leader sleeps with a timeout;
 *   - safety (invalid end state): nothing blocks except at `end` labels;
 *   - liveness (ltl `live`, weak fairness): every posted callback is
 *     eventually invoked: <> (ninvoked == NCB).
 */

#define NSLOT 2
#define NCB   3          /* 0, 1 on slot 0 and 2 on slot 1; with -DLAZY:
                          * 0 on slot 1, and 1 and 2 lazy on slot 1 */
#ifndef LAZY_MAX
#define LAZY_MAX 3       /* ORCU_LAZY_MAX: the 2nd lazy post does not wake */
#endif
#define GPMOD 2          /* bounded GP counter (one requester: parity suffices) */

chan q[NSLOT]    = [NCB] of { byte };   /* per-slot MPSC "new" queue          */
chan wl[NSLOT]   = [NCB] of { byte };   /* segmented list: waiting for a GP   */
chan done[NSLOT] = [NCB] of { byte };   /* ready, handed over to the follower */
chan lazyq[NSLOT] = [NCB] of { byte };  /* per-slot lazy MPSC queue             */
byte n_lazy[NSLOT];       /* s->post.n_lazy: posters +1 before push, taker -n */
bit  lazy_armed[NSLOT];   /* s->inv.lazy_armed: leader only                     */
bit  force;               /* l->force                                          */
bit  timed;               /* the leader's current wait has a timeout (lazy)    */
bit  expired;             /* the last wait ended by its timeout: timers due    */

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
#define LAZYQ     ((len(lazyq[0]) > 0) || (len(lazyq[1]) > 0))

#ifdef PREFIX
ltl nolost { [] !(LEADER_BLOCKED && QNONEMPTY && pending_wake == 0) }
#else
ltl nolost { [] !(LEADER_BLOCKED && (QNONEMPTY || (LAZYQ && !timed)) && pending_wake == 0) }
#endif
ltl live   { <> (ninvoked == NCB) }

inline futex_wake() { in_futex = 0 }

#ifndef PREFIX
/* orcu_call_lazy() -> post_shared(lazy) (src/top/call.c) */
proctype lazy_enqueuer(byte slot; byte id)
{
	bit nl, w;   /* nl: old n_lazy != 0 (2 lazy posts: 0 or 1) */
	/* n_lazy first (relaxed fetch_add); a poster that will wake is on
	 * its way from here (pending_wake) */
	d_step {
		nl = (n_lazy[slot] != 0);
		w = (n_lazy[slot] == 0 || n_lazy[slot] + 1 >= LAZY_MAX);
		n_lazy[slot]++;
		pending_wake = pending_wake + w
	};
	lazyq[slot]!id;          /* the push: seq_cst xchg of the tail */
	if
	:: w ->
		/* orcu__nocb_wake_leader(l, nl != 0) */
		if
		:: nl -> force = 1
		:: else -> skip
		fi;
		if
		:: atomic { !leader_exists -> pending_wake-- }
		:: else ->
			if
			:: sleep == 1 -> sleep = 0; atomic { futex_wake(); pending_wake-- }
			:: else ->
				atomic {
					if
					:: nl -> futex_wake()  /* forced: notify anyway */
					:: else -> skip
					fi;
					pending_wake--
				}
			fi
		fi
	:: else -> skip          /* only the first (or the LAZY_MAX-th) wakes */
	fi
}
#endif

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

#ifndef PREFIX
/* scan_slot()'s lazy part (src/callbacks/nocb.c) and the lazy half of
 * orcu__slot_splice_new_locked() (src/callbacks/slot.c), under cb_lock */
inline scan_lazy(s) {
	nlazy = n_lazy[s];
	take_lazy = 0;
	if
	:: nlazy > 0 ->
		if
		:: expired || nlazy >= LAZY_MAX || len(q[s]) > 0 -> take_lazy = 1
		:: else ->
			if
			:: take_lazy = 1        /* its timer is due (time passed) */
			:: arm = 1              /* not due: arm the timer */
			fi
		fi
	:: else -> skip
	fi;
	d_step {
		if
		:: take_lazy && n_lazy[s] > 0 ->
			do
			:: lazyq[s]?tmp -> wl[s]!tmp; n_lazy[s]--; got = 1
			:: len(lazyq[s]) == 0 -> break
			od
		:: else -> skip
		fi;
		tmp = 0;
#ifdef LAZY_LEFT_UNARMED
		lazy_armed[s] = (nlazy > 0 && !take_lazy)
#else
		/* lazy callbacks still counted (a poster between its count
		 * and its push) keep a timer armed */
		lazy_armed[s] = (n_lazy[s] > 0);
		if
		:: lazy_armed[s] -> arm = 1
		:: else -> skip
		fi
#endif
	};
	nlazy = 0;
	take_lazy = 0
}

/* group_has_new() (src/callbacks/nocb.c) */
#ifdef NO_LAZY_RESCAN
#define GROUP_HAS_NEW ((len(q[0]) > 0) || (len(q[1]) > 0))
#else
#define GROUP_HAS_NEW ((len(q[0]) > 0) || (len(q[1]) > 0) || \
	(!lazy_armed[0] && len(lazyq[0]) > 0) || (!lazy_armed[1] && len(lazyq[1]) > 0))
#endif
#endif

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
	byte tmp, snap, nlazy;
	bit got, take_lazy, arm;
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
	:: got = 0; force = 0; arm = 0;
	   scan_lazy(0); take(0);
	   scan_lazy(1); take(1);
	   expired = 0;
	   if
	   :: got ->
		/* callbacks need a GP: stay awake (sleep == 0) while waiting */
		wait_gp();
		hand_over(0); hand_over(1)
	   :: else ->
		sleep = 1;             /* then a seq_cst fence: SC here */
#ifndef NORESCAN
		if
		:: GROUP_HAS_NEW || force || sleep == 0 -> sleep = 0
		:: else ->
#endif
			/* re-check sleep, then orcu__event_wait(): blocks only
			 * while sleep == 1 (no enqueuer claimed and notified);
			 * with a lazy timer armed the wait has a timeout */
			atomic { if :: sleep == 1 -> in_futex = 1; timed = arm :: else -> skip fi };
end_futex:		if
			:: in_futex == 0 -> skip
			:: atomic { timed && in_futex -> in_futex = 0; expired = 1 }  /* timeout */
			fi;
			timed = 0;
			arm = 0;
			sleep = 0
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
#ifdef LAZY
		run enqueuer(1, 0);    /* on the lazy slot: its take takes the lazy queue */
#else
		run enqueuer(0, 0);    /* e.g. early callbacks from a constructor */
#endif
#ifdef LAZY
		run lazy_enqueuer(1, 1);
		run lazy_enqueuer(1, 2);
#else
		run enqueuer(0, 1);
		run enqueuer(1, 2);
#endif
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
