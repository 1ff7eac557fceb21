/*
 * stats.c - orcu_get_stats() and orcu_slot_pending(): a snapshot summed
 * from the relaxed counters the other modules keep (orcu__cnt and the
 * per-slot counters).  Reads only; never blocks the engine.  Calls gp.c
 * for the GP thread's CPU time, and os.c to set the stall handler.
 */
#include "os.h"
#include "gp.h"
#include "slot.h"
#include "lifecycle.h"

#include <errno.h>
#include <string.h>

/* orcu_set_stall_handler() takes the stall handler's lock in a program
 * that may never link entry.c: it keeps the fork handlers in a static
 * link too (lifecycle.h). */
__attribute__((used)) static const int *const keep_fork_handlers = &orcu__lifecycle_linked;

#define LOAD(field) orcu__load_relaxed(&orcu__cnt.field)

void orcu_get_stats(struct orcu_stats *out)
{
	long pending = 0, peak = 0;

	memset(out, 0, sizeof(*out));
	/* Slot 0 alone before a configuration (slot.h). */
	for (int i = 0; i < orcu__nr_slots(); i++) {
		struct orcu__slot *s = orcu__slot_of(i);
		long pk = orcu__load_relaxed(&s->post.peak_pending);

		out->callbacks_invoked += orcu__load_relaxed(&s->cnt.n_invoked);
		out->callbacks_inline += orcu__load_relaxed(&s->cnt.n_inline);
		pending += orcu__slot_pending(s);
		if (pk > peak)
			peak = pk;
		out->slots_online += orcu__slot_online(s);
		out->slots_offloaded += orcu__slot_offloaded(s);
		out->slots_possible++;
	}
	/* gp_seq counts two per GP ended (seq.h); no counter on the GP path. */
	out->gp_completed = (uint64_t)(orcu__load_relaxed(&orcu__gp_seq) >> 1);
	out->gp_expedited = LOAD(gp_expedited);
	out->callbacks_pending = pending > 0 ? (uint64_t)pending : 0;
	out->callbacks_queued = out->callbacks_invoked + out->callbacks_pending;
	out->callbacks_lazy = LOAD(callbacks_lazy);
	out->barriers = LOAD(barriers);
	out->barriers_run = LOAD(barriers_run);
	out->gp_wakeups = LOAD(gp_wakeups);
	out->gp_leader_wakeups = LOAD(gp_leader_wakeups);
	out->leader_wakeups = LOAD(leader_wakeups);
	out->enqueue_wakeups = LOAD(enqueue_wakeups);
	out->takeovers = LOAD(takeovers);
	out->threads_alive = (uint64_t)orcu__load_relaxed(&orcu__g.threads_alive);
	out->leaders_alive = (uint64_t)orcu__load_relaxed(&orcu__g.leaders_alive);
	out->followers_alive = (uint64_t)orcu__load_relaxed(&orcu__g.followers_alive);
	out->adopted_callbacks = LOAD(adopted);
	out->qhimark_crossings = LOAD(qhimark_crossings);
	out->hurried_gps = LOAD(gp_expedited);
	out->poster_waits = LOAD(poster_waits);
	out->poster_overruns = LOAD(poster_overruns);
	out->peak_pending = (uint64_t)peak;
	out->lazy_flushes = LOAD(lazy_flushes);
	out->stalls_reported = LOAD(stalls_reported);
	out->gp_thread_cpu_ns = orcu__gp_thread_cpu_ns();
}

long orcu_slot_pending(int cpu)
{
	if (cpu < 0 || cpu >= orcu__nr_slots())
		return -EINVAL;
	return orcu__slot_pending(orcu__slot_of(cpu));
}

void orcu_set_stall_handler(orcu_stall_handler_t handler, void *arg)
{
	orcu__stall_handler_set(handler, arg);
}
