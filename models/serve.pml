/*
 * serve.pml -- the server rule (docs/DESIGN.md 5.8, src/callbacks/serve.c): callbacks never
 * move between slots; whoever serves a slot scans and invokes it in place.
 *
 * 2 slots, each in its own group.  Slot 0 is attached from the start: its
 * leader L0 runs and is the adopter (orcu__g.adopter); L0 invokes slot 0's
 * callbacks itself (no follower).  Slot 1's threads may never exist, or be
 * created at any moment (the thread-creation retry): its follower F1
 * and/or its leader L1.  Callbacks 0 and 1 are posted to slot 1 (and with
 * -DPOST0 callback 2 to slot 0), each at any moment.
 *
 * A slot is a FIFO of three lists under its cb_lock (one atomic step in the
 * model): newq (posted, not yet spliced), wl (spliced, waiting for a GP),
 * done (ready).  The GP is abstracted as always available: a scan moves
 * wl to done (the GP its callbacks waited for ended), then splices newq
 * into wl, and a scanner that left callbacks in wl waits for the GP (at
 * once) and scans again.  Ready callbacks are invoked by the slot's
 * follower if it has one (woken by the scanner), else by the scanner,
 * under the per-slot claim `invoking`: taken under cb_lock, the holder
 * looks for more before it lets go, a thread that finds it busy leaves the
 * work to the holder.
 *
 * Proctype  <->  C it mirrors
 *   poster    orcu_call() -> do_call() (src/top/call.c): publish (seq_cst
 *             exchange of the queue tail, or a release store and the fence
 *             of the orphan path), orcu__nocb_wake_leader() of the slot's
 *             leader (src/callbacks/slot.c), then, if the slot is not attached, the
 *             orphan path (orcu__serve_posted(), src/callbacks/serve.c): if `orphans` reads 0 and the exchange to 1 returns
 *             0, a forced wake of the adopter (force = 1, fence, notify).
 *   leader    leader_main() (src/callbacks/nocb.c) with the server rule: the adopter,
 *             at the top of each pass, takes `orphans` (exchange to 0) and
 *             then serves: while serving_orphans (leader_main()'s local
 *             `orphans`, kept by scan_orphans()) it scans every slot that is
 *             not attached and has work, in place, with scan_slot(), and
 *             keeps serving_orphans while such a slot still has work
 *             (pending > 0 or new posts); leader_sleep(): sleep = SLEEPING,
 *             prepare (fence), re-scan (own attached slots, force, the
 *             adopter's orphans flag, sleep), wait.
 *   follower  follower_main() (src/callbacks/nocb.c)
 *   spawner   orcu__nocb_spawn_slot() (src/callbacks/nocb.c) under orcu__g.lock, via
 *             the thread-creation retry (src/callbacks/serve.c): follower first (may
 *             fail), leader (may fail, retried once), then attach the slot
 *             (orcu__slot_attach()) and force-wake its leader.
 *
 * Memory is sequentially consistent here.  That holds because every
 * publication the rule relies on is seq_cst or fenced: the post is a
 * seq_cst exchange (a post to a thread's own queue is a release store, and
 * orcu__serve_posted() fences before it reads orphans; postq_wake.pml
 * covers the own-queue store against the leader), `orphans` is exchanged
 * on both sides, a forced wake stores force then fences before it reads
 * `sleep`, and the leader fences between `sleep = SLEEPING` and its re-scan.
 * The poster's read of `attached` must come after its publication (see
 * models/README.md).
 *
 * Variants (spin's cpp):
 *   default            orcu.  Expected: verified.
 *   -DFOLLOWER         slot 1's follower may be created too, alone (its
 *                      leader failed: the adopter wakes it) or before its
 *                      leader.  Expected: verified (bigger: safety only in
 *                      run.sh).
 *   -DNO_ORPHAN_RESCAN mutant: the adopter serves orphans for one pass
 *                      only after taking `orphans` (serving_orphans cleared
 *                      even though an orphan slot still has work) and does
 *                      not re-check `orphans` before sleeping.  Expected:
 *                      lost wake-up: slot 1's callbacks wait for a GP in
 *                      wl, nobody scans slot 1 again.
 *   -DATTACH_GAP       mutant: a slot becomes attached without a forced
 *                      wake of its leader.  Expected: lost wake-up: L1 ran
 *                      its first scan before the attach (it skipped slot 1)
 *                      and sleeps; L0 no longer serves slot 1 (attached).
 *
 * Properties:
 *   - safety (assert): no callback is invoked twice;
 *   - safety (ltl `nolost`): no lost wake-up -- never is a leader blocked in
 *     its futex wait while a slot it must serve has work only a scanner can
 *     move on (new posts, callbacks waiting for a GP, ready callbacks with
 *     no follower and no claim holder) and no poster or spawner is still on
 *     its way to wake it: L0 for slot 0 and, while slot 1 is not attached,
 *     for slot 1; L1 for slot 1 once attached;
 *   - liveness (ltl `live`, weak fairness): every posted callback is
 *     eventually invoked: <> (ninvoked == NCB).
 */

#define NSLOT 2
#ifdef POST0
#define NCB   3          /* 0 and 1 on slot 1, 2 on slot 0 */
#else
#define NCB   2          /* 0 and 1 on slot 1 */
#endif

chan newq[NSLOT] = [NCB] of { byte };
chan wl[NSLOT]   = [NCB] of { byte };
chan done[NSLOT] = [NCB] of { byte };
byte pending[NSLOT];      /* posted, not yet returned from invocation      */
bit  invoking[NSLOT];     /* the slot's invocation claim                    */
bit  attached[NSLOT];
bit  has_follower[NSLOT];
bit  fsleep[NSLOT];       /* s->fol.sleep                                   */
bit  exists[NSLOT];       /* leader g exists (group g == slot g)            */
bit  sleep[NSLOT];        /* leader g: 1 == SLEEPING                        */
bit  force[NSLOT];
bit  notified[NSLOT];     /* the leader's event was notified since prepare */
bit  in_futex[NSLOT];     /* leader g is blocked in orcu__event_wait()      */
bit  orphans;             /* orcu__g.orphans                                */
bit  invoked[NCB];
byte ninvoked;
byte onway;               /* ghost: posters between publish and wake done   */
bit  attaching;           /* ghost: spawner between attach and its wake     */

#define STUCK(s) (len(newq[s]) > 0 || len(wl[s]) > 0 || \
		  (len(done[s]) > 0 && !has_follower[s] && !invoking[s]))
#define LOST0 (in_futex[0] && (STUCK(0) || (!attached[1] && STUCK(1))) && onway == 0)
#define LOST1 (in_futex[1] && attached[1] && STUCK(1) && onway == 0 && !attaching)

ltl nolost { [] !(LOST0 || LOST1) }
ltl live   { <> (ninvoked == NCB) }

inline notify(g) { atomic { notified[g] = 1; in_futex[g] = 0 } }

/* orcu__nocb_wake_leader(l, force): store force (relaxed), then (if the
 * leader exists) fence, claim a sleeping leader (load, exchange), notify
 * if claimed or forced.  The claim and the notify are one step here: the
 * leader re-checks `sleep` after preparing its event, so what falls
 * between the two does not matter (event.h). */
inline wake_leader(g, f) {
	if
	:: f -> force[g] = 1
	:: else
	fi;
	atomic {
		if
		:: exists[g] && (sleep[g] == 1 || f) -> sleep[g] = 0; notify(g)
		:: else -> skip
		fi
	}
}

proctype poster(byte s; byte id)
{
	bit first;
	/* publish: seq_cst exchange of the tail; counted before visible */
	atomic { newq[s]!id; pending[s]++; onway++ };
	wake_leader(s, 0);
	/* not attached: the orphan path (fence, exchange of orphans) */
	if
	:: atomic { !attached[s] -> first = !orphans; orphans = 1 };
		if
		:: first -> wake_leader(0, 1)     /* adopter: L0 */
		:: else
		fi;
		onway--
	:: atomic { else -> onway-- }
	fi
}

/* orcu__slot_invoke_done(): claim under cb_lock and take the first ready
 * callback (invoke_claim, id = NCB if the claim is busy or nothing is
 * ready), then invoke it and take the next one under cb_lock, or let the
 * claim go if there is none (invoke_rest): the holder looks for more before
 * it lets go, a thread that found the claim busy leaves the work to it. */
inline invoke_claim(s) {
	if
	:: !invoking[s] && len(done[s]) > 0 -> invoking[s] = 1; done[s]?id
	:: else -> id = NCB
	fi
}

inline invoke_rest(s) {
	do
	:: id < NCB ->
		d_step {
			assert(!invoked[id]);  /* never invoked twice */
			invoked[id] = 1;
			ninvoked++; pending[s]--; did = 1;
			if
			:: len(done[s]) > 0 -> done[s]?id
			:: else -> invoking[s] = 0; id = NCB
			fi
		}
	:: else -> break
	od;
	id = 0
}

/* scan_slot() (the caller then invokes, if no follower): under cb_lock, advance (the GP wl waited for ended), splice
 * newq, note a GP need; ready callbacks -> wake the follower (under
 * cb_lock), else invoke here */
inline scan_slot(s) {
	d_step {
		do
		:: wl[s]?tmp -> done[s]!tmp
		:: len(wl[s]) == 0 -> break
		od;
		do
		:: newq[s]?tmp -> wl[s]!tmp
		:: len(newq[s]) == 0 -> break
		od;
		tmp = 0;
		need_gp = need_gp || (len(wl[s]) > 0);
		if
		:: (len(done[s]) > 0) && has_follower[s] -> fsleep[s] = 0
		:: else -> skip
		fi
	}
}

#define HAS_NEW(s) (len(newq[s]) > 0)
#ifdef NO_ORPHAN_RESCAN
#define ORPHANS_SET(g) false
#else
#define ORPHANS_SET(g) (g == 0 && orphans)   /* the adopter's re-check */
#endif

proctype leader(byte g)
{
	byte tmp, id;
	bit need_gp, did, serving, orphan;
	do
	:: /* top of the pass: take force; the adopter takes the orphans flag;
	    * then scan its own group (cb_lock) */
	   atomic {
		force[g] = 0; need_gp = 0; did = 0; orphan = 0;
		if
		:: g == 0 && orphans -> orphans = 0; serving = 1
		:: else -> skip
		fi;
		if
		:: attached[g] -> scan_slot(g)
		:: else -> skip
		fi;
		if
		:: attached[g] && !has_follower[g] -> invoke_claim(g)
		:: else -> id = NCB
		fi
	   };
	   invoke_rest(g);
	   /* the adopter: every slot that is not attached and has work, in
	    * place, with the same scan */
	   atomic {
		if
		:: g == 0 && serving ->
			serving = 0;
			if
			:: !attached[1] && pending[1] > 0 ->
				scan_slot(1);
				orphan = 1;
#ifndef NO_ORPHAN_RESCAN
				/* still had work: keep serving next pass */
				serving = (pending[1] > 0)
#endif
			:: else -> skip
			fi
		:: else -> skip
		fi;
		if
		:: orphan && !has_follower[1] -> invoke_claim(1)
		:: else -> id = NCB
		fi
	   };
	   invoke_rest(1);
	   /* wait for the GP (at once) or, with progress made, scan again;
	    * else leader_sleep(): sleep = SLEEPING, prepare (fence) */
	   if
	   :: atomic { need_gp || did -> skip }
	   :: atomic { else -> sleep[g] = 1; notified[g] = 0 };
		/* re-scan; wait while no notify came after the prepare */
		atomic {
			if
			:: (attached[g] && HAS_NEW(g)) || force[g] || sleep[g] == 0 ||
			   ORPHANS_SET(g) -> sleep[g] = 0
			:: else ->
				if
				:: sleep[g] == 1 && !notified[g] -> in_futex[g] = 1
				:: else -> skip
				fi
			fi
		};
end_futex:	atomic { in_futex[g] == 0 -> sleep[g] = 0 }
	   fi
	od
}

proctype follower(byte s)
{
	byte id;
	bit did;
end:	do
	:: atomic { !invoking[s] && len(done[s]) > 0 -> invoke_claim(s) }; invoke_rest(s)
	:: atomic { invoking[s] || len(done[s]) == 0 -> fsleep[s] = 1 };
end_wait:  (fsleep[s] == 0)
	od
}

/* orcu__nocb_spawn_slot() for slot 1, under orcu__g.lock */
inline create_leader() {
	exists[1] = 1;              /* published before the thread runs */
	run leader(1);
	atomic { attached[1] = 1; attaching = 1 };
#ifndef ATTACH_GAP
	wake_leader(1, 1);          /* callbacks posted while nobody scanned us */
#endif
	attaching = 0
}

proctype spawner()
{
	if
	:: skip                                     /* creation keeps failing */
#ifdef FOLLOWER
	:: has_follower[1] = 1; run follower(1);
	   if
	   :: skip                                  /* the leader failed */
	   :: create_leader()
	   fi
#endif
	:: create_leader()                          /* no follower (cap, flat) */
	fi
}

init {
	atomic {
		exists[0] = 1;
		attached[0] = 1;
		run leader(0);
		run poster(1, 0);
		run poster(1, 1);
#ifdef POST0
		run poster(0, 2);
#endif
		run spawner()
	}
}
