/*
 * barrier.pml -- orcu_barrier() versus never-onlined offloaded slots
 * (DESIGN.md 5.3, 5.4; kernel commit d7e29933969e).
 *
 * 2 offloaded slots.  Slot 0 is online from the start (the barrier caller
 * runs there).  Slot 1 may never come online, or may come online at any
 * moment, concurrently with the enqueues and the barrier.  Callback 0 is
 * posted on slot 0; callback 1 on slot 1 or not at all; callback 2 on slot 0
 * or slot 1; each at any moment (before the barrier: "pre-barrier", or
 * concurrently with it), so slot 1 is covered never-onlined with 0, 1 or 2
 * callbacks, and onlined before, during or after the barrier.
 *
 * A slot's offload machinery (new queue -> segmented list -> follower) is
 * abstracted to one FIFO `cbl[s]` drained by one `slot_thread`, which
 * exists only once the slot is online; the wake-up protocol feeding it is
 * verified separately in leader_wake.pml.  The thread first takes a
 * callback off the lists, then invokes it (as a follower invokes from its
 * private list), then decrements the slot's pending count.
 *
 * Proctype  <->  C function it mirrors
 *   enqueuer     orcu_call() -> do_call() (src/call.c)
 *   slot_thread  leader_main() + follower_main() of that slot (src/nocb.c)
 *   hotplug      orcu_cpu_online() (src/cpu.c) + thread spawning (src/nocb.c),
 *                under the online mutex
 *   barrier      orcu_barrier() (src/barrier.c); entraining a marker =
 *                orcu_call() of the barrier callback on that slot
 *
 * Variants (spin's cpp):
 *   default      orcu: under the online mutex, for every possible slot:
 *                pending count == 0 -> skip; pending but never onlined ->
 *                report once, ADOPT its callbacks onto online slot 0, entrain
 *                a marker behind them there; else entrain a marker behind the
 *                slot's last callback.  The pending count is decremented only
 *                after a callback has returned.
 *   -DV2014      _rcu_barrier() before commit d7e29933969e (35ce7f29a44a era): a
 *                marker is posted on every no-CBs CPU, kthread or not.
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
 *   - safety (assert in slot_thread): no callback is invoked twice;
 *   - liveness (ltl `live`, weak fairness): the barrier always returns:
 *     <> bdone.
 */

#define NSLOT 2
#define NCB   3
#define MARK  9          /* the barrier's marker callback */
#define QSZ   6

chan cbl[NSLOT] = [QSZ] of { byte };  /* a slot's callbacks, in order */
byte npending[NSLOT];  /* queued on the slot and not yet returned from invocation */
bit  online[NSLOT];
bit  hp;               /* online mutex (the kernel's get_online_cpus()) */
bit  bstarted, bdone;
byte bcount;           /* markers not yet invoked */
bit  pre[NCB];         /* posted (orcu_call returned) before the barrier began */
bit  invoked[NCB];
byte warned;           /* "never-onlined slot has callbacks" reports */

ltl live { <> bdone }

inline lock()   { atomic { hp == 0 -> hp = 1 } }
inline unlock() { hp = 0 }

proctype enqueuer(byte id; byte slot)
{
	atomic { cbl[slot]!id; npending[slot]++; pre[id] = !bstarted }
}

proctype slot_thread(byte s)
{
	byte id;
end:	do
	:: cbl[s]?id ->                    /* off the lists, onto a private list */
		atomic {
			if
			:: id == MARK -> bcount--   /* the barrier callback */
			:: else ->
				assert(!invoked[id]); /* never invoked twice */
				invoked[id] = 1
			fi;
			npending[s]--;              /* only after it returned */
			id = 0
		}
	od
}

proctype hotplug()
{
	if
	:: skip                         /* slot 1 never comes online */
	:: lock(); online[1] = 1; run slot_thread(1); unlock()
	fi
}

inline entrain(s) {
	atomic { bcount++; cbl[s]!MARK; npending[s]++ }
}

proctype barrier()
{
	byte s, tmp;
	lock();
	bstarted = 1;
	s = 0;
	do
	:: s == NSLOT -> break
	:: else ->
#if defined(V2014)
		entrain(s);                 /* every no-CBs CPU gets one */
#elif defined(V2014FIX)
		if
		:: len(cbl[s]) == 0 -> skip /* !rcu_nocb_cpu_needs_barrier() */
		:: else ->
			if
			:: !online[s] -> warned++   /* pr_err + WARN_ON_ONCE */
			:: else -> skip
			fi;
			entrain(s)
		fi;
#else
		if
		:: npending[s] == 0 -> skip
		:: else ->
			if
			:: !online[s] ->
				warned++;           /* reported once */
				d_step {            /* adopt onto online slot 0 */
					do
					:: cbl[s]?tmp -> cbl[0]!tmp
					:: len(cbl[s]) == 0 -> break
					od;
					npending[0] = npending[0] + npending[s];
					npending[s] = 0;
					tmp = 0
				};
				entrain(0)
			:: else -> entrain(s)
			fi
		fi;
#endif
		s++
	od;
	unlock();
	(bcount == 0);                      /* wait for every marker */
	assert(!pre[0] || invoked[0]);
	assert(!pre[1] || invoked[1]);
	assert(!pre[2] || invoked[2]);
	bdone = 1
}

init {
	atomic {
		online[0] = 1;
		run slot_thread(0);
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
