/*
 * cpu.c - the CPU model: possible slots, online and offloaded sets, the
 * virtual topology, which slot the calling thread posts to, hotplug
 * (orcu_cpu_online/offline); run-time (de)offloading is entry.c's
 * (slot.c's offload and attach).  Calls nocb.c to
 * spawn a slot's threads and wake leaders, slot.c to set slots up, and
 * os.c.  Its public calls are in entry.c, which configures and starts the
 * library first.
 *
 * Threads exist only for offloaded online slots: a slot's follower (and
 * its group's leader, if the group had none) is spawned when an
 * offloaded slot first comes online (or is offloaded), never for a slot
 * that is merely possible nor for one in place (ORCU_NOCBS=none starts
 * none, as a kernel without rcu_nocbs= starts no rcuo thread).
 */
#include "os.h"
#include "cpu.h"
#include "nocb.h"
#include "slot.h"
#include "cpulist.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

/* The slots and leaders past the static ones (slot.h): element 0 of
 * each array is unused.  Slot 0 keeps what was posted to it before. */
int orcu__cpu_setup(int nr_possible, const uint64_t *online, const uint64_t *nocbs)
{
	struct orcu__slot *slots;
	struct orcu__leader *leaders;
	int stride = orcu__g.stride, ngroups = orcu__g.nr_groups;

	size_t nwait = ((size_t)ngroups + 63) / 64;
	_Atomic uint64_t *gp_wait, *work;

	slots = aligned_alloc(ORCU__CACHELINE, sizeof(*slots) * (size_t)nr_possible);
	leaders = aligned_alloc(ORCU__CACHELINE, sizeof(*leaders) * (size_t)ngroups);
	gp_wait = calloc(nwait, sizeof(*gp_wait));
	work = calloc(((size_t)nr_possible + 63) / 64, sizeof(*work));
	if (!slots || !leaders || !gp_wait || !work) {
		free(slots);
		free(leaders);
		free(gp_wait);
		free(work);
		return -ENOMEM;
	}
	orcu__g.slots = slots;
	orcu__g.leaders = leaders;
	memset(leaders, 0, sizeof(*leaders) * (size_t)ngroups);
	for (int g = 0; g < ngroups; g++) {
		orcu__leader_of(g)->first = g * stride;
		orcu__leader_of(g)->nslots = nr_possible - g * stride < stride ?
						     nr_possible - g * stride :
						     stride;
	}
	for (int i = 0; i < nr_possible; i++) {
		struct orcu__slot *s = orcu__slot_of(i);

		if (i)
			orcu__slot_init(s, i, orcu__leader_of(i / stride));
		if (orcu__bit_test(online, i))
			orcu__slot_set_online(s);
		/* Born in place, counted in nr_inplace until attached. */
		orcu__fetch_add_relaxed(&orcu__g.nr_inplace, 1);
		orcu__slot_set_offload(s, orcu__bit_test(nocbs, i));
	}
	orcu__g.slot_bytes = sizeof(*slots);
	orcu__g.slot_lazyq_at = offsetof(struct orcu__slot, post.lazyq);
	orcu__g.slot0 = &orcu__slot0;
	orcu__g.leader_gp_wait = gp_wait;
	orcu__g.inplace_work = work;
	return 0;
}

/* The library's image is unloaded (lifecycle.c point 7), its threads
 * joined and its queues freed: the slots, leaders and their bitmaps go
 * with it, and the housekeeping set config.c handed to orcu__g. */
void orcu__cpu_unload(void)
{
	free(orcu__g.slots);
	free(orcu__g.leaders);
	free((void *)orcu__g.leader_gp_wait);
	free((void *)orcu__g.inplace_work);
	free(orcu__g.housekeeping);
}

/* Under orcu__g.lock: threads for every slot that needs them.  Returns
 * the first creation error (the slots concerned are served degraded). */
int orcu__cpu_start_slots(void)
{
	int ret = 0;

	ORCU__ASSERT_HELD(&orcu__g.lock);
	for (int i = 0; i < orcu__g.nr_possible; i++) {
		struct orcu__slot *s = orcu__slot_of(i);
		int err = 0;

		/* Threads exist for offloaded online slots, and for those
		 * that went offline with work left (their own threads drain
		 * them). */
		if (orcu__slot_offloaded(s) &&
		    (orcu__slot_online(s) || (orcu__slot_ever_online(s) && orcu__slot_has_work(s))))
			err = orcu__nocb_spawn_slot(s);
		if (err < 0 && ret == 0)
			ret = err;
	}
	return ret;
}

/* A slot seen for the first time with a thread running on it comes online. */
void orcu__mark_seen(struct orcu__slot *s)
{
	/* No library lock is held by our caller (orcu_call, a quiescent
	 * point) nor across callbacks, so this cannot close a cycle. */
	pthread_mutex_lock(&orcu__g.lock);
	if (!orcu__slot_ever_online(s)) {
		orcu__slot_set_online(s);
		if (orcu__load_relaxed(&orcu__g.started) && orcu__slot_offloaded(s))
			orcu__nocb_spawn_slot(s);
	}
	pthread_mutex_unlock(&orcu__g.lock);
}

int orcu__getcpu_slow(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? 0 : cpu;
}

/* Under orcu__g.lock: another slot is online. */
static bool other_online_slot(int avoid)
{
	for (int i = 0; i < orcu__g.nr_possible; i++)
		if (i != avoid && orcu__slot_online(orcu__slot_of(i)))
			return true;
	return false;
}

/* orcu_cpu_online (entry.c): cpu was checked and the library started. */
int orcu__cpu_online(int cpu)
{
	struct orcu__slot *s = orcu__slot_of(cpu);
	int ret;

	pthread_mutex_lock(&orcu__g.lock);
	orcu__slot_set_online(s);
	ret = orcu__slot_offloaded(s) ? orcu__nocb_spawn_slot(s) : 0;
	pthread_mutex_unlock(&orcu__g.lock);
	return ret;
}

/* orcu_cpu_offload / orcu_cpu_deoffload (entry.c).  Offloaded: the
 * slot's threads start (if the library runs and the slot is online) and
 * its leader scans it.  De-offloaded: the leader no longer scans it and
 * it is served in place; the caller finds it a server (serve.c point 2).
 * Under orcu__g.lock, so a spawn or a retry sees the wish. */
int orcu__cpu_set_offload(int cpu, bool on)
{
	struct orcu__slot *s = orcu__slot_of(cpu);
	int ret = 0;

	pthread_mutex_lock(&orcu__g.lock);
	orcu__slot_set_offload(s, on);
	if (!on)
		orcu__slot_detach(s);
	else if (orcu__load_relaxed(&orcu__g.started) && orcu__slot_ever_online(s))
		ret = orcu__nocb_spawn_slot(s);
	pthread_mutex_unlock(&orcu__g.lock);
	return ret;
}

/* orcu_cpu_offline (entry.c): as orcu__cpu_online().  The slot keeps its
 * callbacks and its threads: an offloaded slot's follower goes on
 * draining it, and the GP thread invokes an in-place one's at once, with
 * no offer (serve.c); the caller wakes its server. */
int orcu__cpu_offline(int cpu)
{
	struct orcu__slot *s = orcu__slot_of(cpu);
	int ret = 0;

	pthread_mutex_lock(&orcu__g.lock);
	if (orcu__slot_online(s) && !other_online_slot(cpu))
		ret = -EBUSY;
	else if (orcu__slot_online(s))
		orcu__slot_set_offline(s);
	pthread_mutex_unlock(&orcu__g.lock);
	if (ret)
		orcu__warn("orcu_cpu_offline: CPU %d is the last online CPU", cpu);
	return ret;
}
