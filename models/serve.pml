/*
 * serve.pml -- the in-place engine (docs/DESIGN.md 5.8, src/callbacks/serve.c): callbacks
 * never move between slots; a slot is attached (served by its own
 * threads), else in place: the GP thread offers its ready callbacks to the
 * slot's application threads, which invoke them at their quiescent
 * points, and takes what they left when the offer ends.
 *
 * 2 slots, each in its own group.  Slot 0 is attached from the start: its
 * leader L0 runs and invokes slot 0's callbacks itself (no follower); a
 * leader scans only its own group.  Slot 1's threads may never exist, or be
 * created at any moment (the thread-creation retry): its follower F1
 * and/or its leader L1.  Callbacks 0 and 1 are posted to slot 1 (and with
 * -DPOST0 callback 2 to slot 0), each at any moment.  The server S is
 * whoever drives GPs: the GP thread, or where none runs an application
 * thread that waits or passes a safe point (those poll on a timeout; the
 * GP thread sleeps, so S sleeps here as the GP thread does).  The server
 * finds slot 1 through its bit in the work bitmap (`wbit`), which posters
 * set.  App is slot 1's application thread: at each quiescent point it
 * invokes one offered callback (a batch of 1), or never comes by.
 *
 * A slot is a FIFO of three lists under its cb_lock (one atomic step in the
 * model): newq (posted, not yet spliced), wl (spliced, waiting for a GP),
 * done (ready).  The GP is abstracted as always available: a scan moves
 * wl to done (the GP its callbacks waited for ended), then splices newq
 * into wl, and a scanner that left callbacks in wl waits for the GP (at
 * once) and scans again; the server drives the GPs itself, so its serve
 * moves newq through wl to done at once.  Ready callbacks are invoked by
 * the slot's follower if it has one (woken by the scanner), else by the
 * scanner, under the per-slot claim `invoking`: taken under cb_lock, the
 * holder looks for more before it lets go, a thread that finds it busy
 * leaves the work to the holder.
 *
 * Proctype  <->  C it mirrors
 *   poster    orcu_call() -> do_call() (src/top/call.c): publish (seq_cst
 *             exchange of the queue tail, or a release store and the fence
 *             of orcu__serve_posted()), orcu__nocb_wake_leader() of the
 *             slot's leader (src/callbacks/nocb.c), then, if the slot is not
 *             attached, orcu__serve_posted() (src/callbacks/serve.c): fence,
 *             set the slot's bit (mark_work()), then if `unserved` reads 0,
 *             store 1 and kick the GP thread (orcu__gp_kick(): fence,
 *             notify unless it reads it awake).
 *   server    gp_thread_main() (src/readers/gp.c) and the serve hook,
 *             serve_unserved() (src/callbacks/serve.c): exchange `unserved`
 *             to 0, fence, then each slot whose bit is set: clear the bit,
 *             serve_slot(): splice, drive the GPs, then offer what is ready
 *             (offered, the bit set again, a timer: inplace_due_ns) or,
 *             the offer over, invoke it; then sleep: req.sleeping, prepare
 *             (fence), re-check `unserved` and the timer (serve_due_ns()),
 *             wait.
 *   app       orcu__inplace_poll_slow() (src/top/entry.c): at a quiescent
 *             point, if the slot's offer is up, invoke a batch under the
 *             claim; DONE drained ends the offer (done_drained_locked()).
 *   leader    leader_main() (src/callbacks/nocb.c): scan its own attached
 *             slots, invoke where no follower; leader_sleep(): sleep =
 *             SLEEPING, prepare (fence), re-scan (own attached slots, force,
 *             sleep), wait.
 *   follower  follower_main() (src/callbacks/nocb.c)
 *   spawner   orcu__nocb_spawn_slot() (src/callbacks/nocb.c) under orcu__g.lock, via
 *             the thread-creation retry (src/callbacks/serve.c): follower first (may
 *             fail), leader (may fail), then attach the slot
 *             (orcu__slot_attach()) and force-wake its leader.
 *
 * Memory is sequentially consistent here.  That holds because every
 * publication the rule relies on is seq_cst or fenced: the post is a
 * seq_cst exchange (a post to a thread's own queue is a release store, and
 * orcu__serve_posted() fences before it reads `unserved`; postq_wake.pml
 * covers the own-queue store against the leader), the server exchanges
 * `unserved` and fences before it scans, a kick fences before it reads
 * the GP thread's sleep, a forced wake stores force then fences before it
 * reads `sleep`, and both sleepers fence between their sleep state and
 * their re-check.  The poster's read of `attached` must come after its
 * publication (see models/README.md).
 *
 * Variants (spin's cpp):
 *   default            orcu.  Expected: verified.
 *   -DFOLLOWER         slot 1's follower may be created too, alone (its
 *                      leader failed: the server invokes, the follower
 *                      may too) or before its leader.  Expected: verified
 *                      (bigger: safety only in run.sh).
 *   -DCLEAR_AFTER      mutant: the server clears `unserved` after its
 *                      serve instead of taking it before.  Expected: lost
 *                      wake-up: a poster that published after the serve
 *                      read the flag still 1 and raised nothing; the server
 *                      clears it and sleeps with slot 1's callback posted.
 *   -DCLEAR_BIT_AFTER  mutant: the server clears a slot's work bit after
 *                      serving it instead of before.  Expected: lost
 *                      wake-up: a poster that published during the serve
 *                      found the bit set and raised `unserved`; the
 *                      server's next turn finds the bit it cleared since
 *                      and skips the slot.
 *   -DNO_HAND_BACK     mutant: an application thread that leaves its
 *                      batch after the offer ended (or the slot was
 *                      attached) tells nobody.  Expected: lost wake-up:
 *                      the server, its timer fired, or L1 found the claim
 *                      busy and sleeps with the rest ready.
 *   -DATTACH_GAP       mutant: a slot becomes attached without a forced
 *                      wake of its leader.  Expected: lost wake-up: L1 ran
 *                      its first scan before the attach (it skipped slot 1)
 *                      and sleeps; a poster that reads the slot attached
 *                      leaves it to L1, and the server skips it.
 *
 * Properties:
 *   - safety (assert): no callback is invoked twice;
 *   - safety (ltl `nolost`): no lost wake-up -- never is a leader or the
 *     server blocked in its futex wait while a slot it must serve has work
 *     only a scanner can move on (new posts, callbacks waiting for a GP,
 *     ready callbacks with no follower and no claim holder) and no poster
 *     or spawner is still on its way to wake it: L0 for slot 0, L1 for
 *     slot 1 once attached, the server for slot 1 while it is not (an
 *     offer with its timer armed is not lost: the timer wakes the server);
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
bit  unserved;            /* orcu__g.unserved                               */
bit  ssleep;              /* the server's req.sleeping                      */
bit  snotified;           /* the server's event was notified since prepare */
bit  s_futex;             /* the server is blocked in orcu__event_wait()    */
bit  wbit;                /* slot 1's bit in the work bitmap                */
bit  offered;             /* slot 1's inv.offered_ns != 0                   */
bit  due;                 /* the server's offer timer is armed              */
bit  expired;             /* the offer's end has passed (the clock)         */
bit  invoked[NCB];
byte ninvoked;
byte onway;               /* ghost: posters between publish and wake done   */
bit  attaching;           /* ghost: spawner between attach and its wake     */

#define STUCK(s) (len(newq[s]) > 0 || len(wl[s]) > 0 || \
		  (len(done[s]) > 0 && !has_follower[s] && !invoking[s]))
#define LOST0 (in_futex[0] && STUCK(0) && onway == 0)
#define LOST1 (in_futex[1] && attached[1] && STUCK(1) && onway == 0 && !attaching)
#define LOSTS (s_futex && !attached[1] && STUCK(1) && onway == 0 && !due)

ltl nolost { [] !(LOST0 || LOST1 || LOSTS) }
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
	/* publish: seq_cst exchange of the tail; counted before visible */
	atomic { newq[s]!id; pending[s]++; onway++ };
	wake_leader(s, 0);
	/* not attached: orcu__serve_posted() (fence, set the bit, load,
	 * store, kick) */
	if
	:: atomic { !attached[s] -> wbit = 1 };
	   if
	   :: atomic { !unserved -> skip };
		unserved = 1;
		/* orcu__gp_kick(): fence, read req.sleeping, notify */
		atomic {
			if
			:: ssleep -> snotified = 1; s_futex = 0
			:: else -> skip
			fi;
			onway--
		}
	   :: atomic { else -> onway-- }
	   fi
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
			fi;
			if
			:: s == 1 && len(done[1]) == 0 -> offered = 0; expired = 0
			:: else -> skip
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

proctype leader(byte g)
{
	byte tmp, id;
	bit need_gp, did;
	do
	:: /* top of the pass: take force, scan its own group (cb_lock) */
	   atomic {
		force[g] = 0; need_gp = 0; did = 0;
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
	   /* wait for the GP (at once) or, with progress made, scan again;
	    * else leader_sleep(): sleep = SLEEPING, prepare (fence) */
	   if
	   :: atomic { need_gp || did -> skip }
	   :: atomic { else -> sleep[g] = 1; notified[g] = 0 };
		/* re-scan; wait while no notify came after the prepare */
		atomic {
			if
			:: (attached[g] && HAS_NEW(g)) || force[g] || sleep[g] == 0 -> sleep[g] = 0
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

/* serve_slot() (src/callbacks/serve.c): under cb_lock splice, advance and
 * drive the GPs here until nothing waits, then invoke_done() */
inline serve_slot(s) {
	d_step {
		do
		:: newq[s]?tmp -> wl[s]!tmp
		:: len(newq[s]) == 0 -> break
		od;
		do
		:: wl[s]?tmp -> done[s]!tmp
		:: len(wl[s]) == 0 -> break
		od;
		tmp = 0
	}
}

/* serve_slot() for slot 1 with work, its bit cleared: splice, advance
 * (the server drives the GPs), then offer what is ready, or invoke it
 * once the offer is over (`takeover`: its timer fired) */
inline serve_one() {
	serve_slot(1);
	if
	:: len(done[1]) > 0 && !takeover -> offered = 1; wbit = 1; due = 1; id = NCB
	:: else -> invoke_claim(1)
	fi
}

proctype server()
{
	byte tmp, id;
	bit did, takeover;
	do
	:: /* serve_unserved(): exchange to 0 and fence, or the offer's
	    * timer; then serve each slot whose bit is set */
	   if
#ifndef CLEAR_AFTER
	   :: atomic { unserved -> unserved = 0 }
#else
	   :: atomic { unserved -> skip }
#endif
	   :: atomic { due -> due = 0; takeover = 1; expired = offered }
	   fi;
	   atomic {
		if
#ifndef CLEAR_BIT_AFTER
		:: wbit && !attached[1] -> wbit = 0; serve_one()
#else
		:: wbit && !attached[1] -> serve_one()
#endif
		:: else -> id = NCB
		fi
	   };
	   invoke_rest(1);
#ifdef CLEAR_BIT_AFTER
	   if
	   :: atomic { id == 0 && !offered -> wbit = 0 }
	   :: else -> skip
	   fi;
#endif
#ifdef CLEAR_AFTER
	   unserved = 0;
#endif
	   did = 0; takeover = 0
	:: /* nothing to serve: req.sleeping, prepare (fence), re-check */
	   atomic { !unserved && !due -> ssleep = 1; snotified = 0 };
	   atomic {
		if
		:: unserved || due -> ssleep = 0
		:: else -> s_futex = !snotified
		fi
	   };
end_sfutex: atomic { s_futex == 0 -> ssleep = 0 }
	od
}

/* Slot 1's application thread at its quiescent points: a batch (one
 * callback) of what is offered, under the claim; or it never comes by.
 * Leaving its batch with the offer over, it posts for the slot as a
 * poster does (the server may have found its claim busy), or, the slot
 * attached since, force-wakes its leader: without that (-DNO_HAND_BACK)
 * the rest is never invoked. */
proctype app()
{
	byte id;
	bit did;
end:	do
	:: atomic { offered -> invoke_claim(1) };
	   if
	   :: atomic { id < NCB ->
			assert(!invoked[id]);
			invoked[id] = 1; ninvoked++; pending[1]--;
			invoking[1] = 0;
			if
			:: len(done[1]) == 0 -> offered = 0; expired = 0
			:: else -> skip
			fi;
			did = expired || attached[1];
#ifndef NO_HAND_BACK
			onway = onway + did
#endif
	     }
#ifndef NO_HAND_BACK
	      if
	      :: did && attached[1] -> wake_leader(1, 1); onway--
	      :: did && !attached[1] ->
		wbit = 1;
		if
		:: atomic { !unserved -> skip };
		   unserved = 1;
		   atomic {
			if
			:: ssleep -> snotified = 1; s_futex = 0
			:: else -> skip
			fi;
			onway--
		   }
		:: atomic { else -> onway-- }
		fi
	      :: else -> skip
	      fi
#endif
	   :: else -> skip
	   fi;
	   id = 0; did = 0
	:: break
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
		run server();
		run app();
		run poster(1, 0);
		run poster(1, 1);
#ifdef POST0
		run poster(0, 2);
#endif
		run spawner()
	}
}
