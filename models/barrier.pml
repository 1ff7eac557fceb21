/*
 * barrier.pml -- orcu_barrier() versus slots without threads, served in
 * place (docs/DESIGN.md 5.3, 5.4, 5.8; kernel commit d7e29933969e).
 *
 * 2 offloaded slots.  Slot 0 is online and attached from the start (its
 * leader runs; the barrier caller runs there).  Slot 1 may never come
 * online, or may come online at any moment, concurrently with the posts and
 * the barrier: it gets threads, becomes attached and its leader is
 * force-woken (orcu__nocb_spawn_slot()).  Callback 0 is posted on slot 0;
 * callback 1 on slot 1 or not at all; callback 2 on slot 0 or slot 1; each
 * at any moment (before the barrier: "pre-barrier", or concurrently with
 * it), so slot 1 is covered never onlined with 0, 1 or 2 callbacks, and
 * onlined before, during or after the barrier.
 *
 * Callbacks never leave their slot.  A slot is one FIFO `cbl[s]` (new
 * queue, segmented list and the GP between them abstracted away: the
 * wake-up protocols are verified in leader_wake.pml and serve.pml).
 * Whoever invokes a slot does it under the slot's claim `invoking`
 * (orcu__slot_invoke_done()): takes one callback off the list, invokes it,
 * and only then decrements the slot's pending count (note_invoked()); the
 * holder looks for more before it lets go, a thread that finds the claim
 * busy leaves the work to the holder.  The barrier's marker is counted in
 * pending like a callback (orcu__slot_entrain_marker()), and counts itself
 * done before it counts the barrier down (orcu__slot_note_marker()), so
 * a slot whose marker waits has work (orcu__slot_has_work()).
 *
 * Who serves slot 1 while it is not attached (serve.c rule b): whoever
 * drives grace periods, in place: the GP thread, which takes `unserved`
 * and serves slot 1's own list; if no GP thread runs, the barrier waiter
 * when its timed wait runs out (orcu__serve_waited(), nondeterministic
 * timeout here), which takes `unserved` the same way.  `gpthr` is 1 from
 * the start, or becomes 1 at any moment (the creation retry), or never.
 *
 * Proctype  <->  C function it mirrors
 *   enqueuer  orcu_call() -> do_call() (src/top/call.c): publish, count, wake the
 *             slot's leader, or if the slot is not attached
 *             orcu__serve_posted() (src/callbacks/serve.c): raise `unserved`
 *             (and kick the GP thread)
 *   leader    leader_main() + follower_main() of slot s (src/callbacks/nocb.c),
 *             its own slot only; leader_sleep() until own new work or a
 *             forced wake
 *   gp        gp_thread_main() (src/readers/gp.c) and serve_unserved()
 *             (src/callbacks/serve.c): take `unserved`, then serve slot 1
 *             in place (serve_slot()) if it is not attached and has work;
 *             sleep until `unserved`; it runs from the start, or is
 *             created at any moment (orcu__retry()), or never
 *   hotplug   slot 1 online: orcu__nocb_spawn_slot() (attach, then a forced
 *             wake: the new leader scans first)
 *   barrier   orcu__barrier_timed() (src/top/barrier.c): barrier_start() with
 *             mark_slot() per slot (pending > 0 -> count, entrain the
 *             marker behind the slot's last callback on that slot
 *             (orcu__slot_entrain_marker()), orcu__serve_kick()), then the
 *             wait, with orcu__serve_waited() on each timeout
 *
 * Memory is sequentially consistent here (the orderings are those
 * serve.pml and leader_wake.pml rely on).  No lock is held over the
 * barrier's pass: nothing moves between slots, so nothing to race with.
 *
 * Variants (spin's cpp):
 *   default      orcu, as above.  Expected: verified.
 *   -DLIST_EMPTY mutant: mark_slot() judges "has callbacks" by the list
 *                being non-empty, not by the pending count.
 *                Expected: early return (a callback taken off the list but
 *                not yet invoked).
 *   -DNO_KICK    mutant: the marker is entrained, but no server of an
 *                unattached slot is woken and the waiter never serves.
 *                Expected: hang.
 *   -DV2014      _rcu_barrier() before commit d7e29933969e (35ce7f29a44a era):
 *                a marker is posted on every no-CBs CPU, kthread or not; no
 *                in-place server, no serving waiter (the kernel has neither).
 *                Expected: hang (marker on a slot that has no thread).
 *   -DV2014FIX   commit d7e29933969e: rcu_nocb_cpu_needs_barrier() looks
 *                at the three lists; empty -> skip; callbacks but no kthread
 *                -> complain and post the marker anyway.
 *                Expected: hang when a never-onlined slot has callbacks.
 *                (Looking at the lists, not at a count kept until invocation
 *                ends, also lets the barrier skip a slot whose follower is
 *                still invoking a pre-barrier callback: early return.)
 *
 * Properties:
 *   - safety (assert in barrier): when orcu_barrier() returns, every callback
 *     posted before it started has been invoked;
 *   - safety (assert in invoke): no callback is invoked twice;
 *   - liveness (ltl `live`, weak fairness): the barrier always returns:
 *     <> bdone.
 */

#if defined(V2014) || defined(V2014FIX)
#define KERNEL
#endif

#define NSLOT 2
#define NCB   3
#define MARK  9          /* the barrier's marker callback */
#define NONE  255
#define QSZ   4

chan cbl[NSLOT] = [QSZ] of { byte };  /* a slot's callbacks, in order */
byte npending[NSLOT];  /* counted (markers too) and not yet returned from invocation */
bit  invoking[NSLOT];  /* the slot's invocation claim */
bit  attached[NSLOT];
bit  gpthr;            /* the GP thread runs */
bit  unserved;         /* orcu__g.unserved; raising it kicks the GP thread */
bit  bstarted, bdone;
byte bcount;           /* barrier_count: markers not yet invoked + the pass's bias */
bit  pre[NCB];         /* posted (orcu_call returned) before the barrier began */
bit  invoked[NCB];
byte warned;           /* V2014FIX: "no kthread but callbacks" reports */

ltl live { <> bdone }

#define has_work(s)  (npending[s] > 0)

/* orcu__slot_invoke_done(s): take the claim (busy: leave it to the holder)
 * and a callback off the list; invoke it and only after it returned count
 * it done (note_invoked(); a marker: orcu__slot_note_marker(), then its
 * countdown in barrier_cb()), then look for
 * the next under the lock, or let go of the claim.  did = 1 if something
 * was invoked.  A callback is off the list and not yet invoked (nor
 * counted done) between the steps. */
inline invoke_done(s, id, did) {
	atomic {
		if
		:: !invoking[s] && len(cbl[s]) > 0 ->
			invoking[s] = 1;
			cbl[s]?id
		:: else
		fi
	}
	do
	:: id == NONE -> break
	:: else ->
		atomic {
			if
			:: id == MARK ->
				npending[s]--;
				bcount--
			:: else ->
				assert(!invoked[id]);   /* never invoked twice */
				invoked[id] = 1;
				npending[s]--
			fi;
			did = 1;
			if
			:: len(cbl[s]) > 0 -> cbl[s]?id
			:: else -> invoking[s] = 0; id = NONE
			fi
		}
	od
}

/* orcu__serve_posted(): s is not attached; raise the server's flag (the
 * GP thread, if it runs, is kicked: it sleeps until the flag is set). */
inline serve_posted() {
	unserved = 1
}

proctype enqueuer(byte id; byte s)
{
	/* do_call(): publish and count; an attached slot's leader is woken
	 * (its sleep below waits for its list), else the server rule.  One
	 * step: serve.pml checks the poster between the two. */
	atomic {
		cbl[s]!id; npending[s]++; pre[id] = !bstarted;
#ifndef KERNEL
		if
		:: !attached[s] -> serve_posted()
		:: else
		fi
#endif
	}
}

proctype leader(byte s)
{
	byte id = NONE;
	bit did;
pass:
	did = 0;
	invoke_done(s, id, did);
	if
	:: did -> goto pass              /* progress: scan again */
	:: else
	fi;
	/* leader_sleep(): until its own slot has new work or a forced wake */
end_sleep:
	atomic { len(cbl[s]) > 0 };
	goto pass
}

/* serve_unserved(): take the flag, then slot 1 in place (serve_slot()) */
inline serve_unserved(id, did) {
	if
	:: atomic { unserved -> unserved = 0 };
		if
		:: atomic { !attached[1] && has_work(1) -> skip };
			invoke_done(1, id, did)
		:: else
		fi
	:: else
	fi
}

proctype gp()
{
	byte id = NONE;
	bit did;
	if
	:: gpthr -> skip                /* ran from the start */
	:: !gpthr -> gpthr = 1          /* created at some moment (orcu__retry()) */
	:: !gpthr -> goto end_never     /* never created */
	fi;
end_sleep:
	do
	:: atomic { unserved -> skip };
		serve_unserved(id, did);
		did = 0
	od;
end_never:
	skip
}

proctype hotplug()
{
	if
	:: skip                         /* slot 1 never comes online */
	:: atomic { attached[1] = 1; run leader(1) }  /* attach, forced wake */
	fi
}

/* barrier_start()'s pass over one slot */
inline mark_slot(s) {
#if defined(V2014)
	atomic { bcount++; cbl[s]!MARK; npending[s]++ }  /* every no-CBs CPU gets one */
#elif defined(V2014FIX)
	if
	:: len(cbl[s]) == 0 -> skip     /* !rcu_nocb_cpu_needs_barrier() */
	:: else ->
		atomic {
			if
			:: !attached[s] -> warned++   /* pr_err + WARN_ON_ONCE */
			:: else
			fi;
			bcount++; cbl[s]!MARK; npending[s]++
		}
	fi
#else
	/* mark_slot() */
	if
#ifdef LIST_EMPTY
	:: len(cbl[s]) == 0 -> skip
#else
	:: npending[s] == 0 -> skip
#endif
	:: else ->
		/* counted, orcu__slot_entrain_marker(): behind the slot's
		 * last callback, on the slot; then orcu__serve_kick() */
		atomic {
			bcount++; cbl[s]!MARK; npending[s]++;
#ifndef NO_KICK
			if
			:: attached[s] -> skip    /* its leader's forced wake */
			:: else -> serve_posted()
			fi
#endif
		}
	fi
#endif
}

proctype barrier()
{
	byte id = NONE;
	bit did;
	atomic { bstarted = 1; bcount = 1 }   /* seq_start, fence; the pass's bias */
	mark_slot(0);
	mark_slot(1);
	bcount--;                           /* drop the bias */
	/* wait for every marker */
	do
	:: bcount == 0 -> break
#if !defined(KERNEL) && !defined(NO_KICK)
	:: bcount != 0 ->
		/* timed out: orcu__serve_waited() */
		if
		:: !gpthr -> serve_unserved(id, did); did = 0
		:: else
		fi
#endif
	od;
	assert(!pre[0] || invoked[0]);
	assert(!pre[1] || invoked[1]);
	assert(!pre[2] || invoked[2]);
	bdone = 1
}

init {
	atomic {
		attached[0] = 1;
#ifndef KERNEL
		if
		:: gpthr = 1
		:: skip
		fi;
		run gp();
#endif
		run leader(0);
		run enqueuer(0, 0);
		if
		:: run enqueuer(1, 1)
		:: skip
		fi;
		if
		:: run enqueuer(2, 1)
		:: run enqueuer(2, 0)
		fi;
		run hotplug();
		run barrier()
	}
}
