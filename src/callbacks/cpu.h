/*
 * cpu.h - the interface of cpu.c, the CPU model: slot setup, hotplug
 * and the slot the calling thread posts to.
 */
#ifndef ORCU_CPU_H
#define ORCU_CPU_H

#include "os.h"
#include "slot.h"

/* cpu.c */
int orcu__cpu_setup(int nr_possible, const uint64_t *online, const uint64_t *nocbs);
void orcu__cpu_unload(void); /* lifecycle.c: the image goes */
void orcu__mark_seen(struct orcu__slot *s);
int orcu__getcpu_slow(void);
int orcu__cpu_start_slots(void);
/* The halves of the public CPU calls that entry.c completes. */
int orcu__cpu_online(int cpu);
int orcu__cpu_offline(int cpu);
int orcu__cpu_set_offload(int cpu, bool on);

/* The slot the calling thread posts to (cpu.c): its library slot, the
 * slot it bound itself to, or the CPU it runs on, read from the rseq area
 * the C library registered (one load), else asked of sched_getcpu(): when
 * rseq is not registered (qemu-user), or where the compiler has no
 * __builtin_thread_pointer() to find the area (gcc 12 on ppc64le; see
 * ORCU_HAVE_RSEQ_OFFSET in CMakeLists.txt).  A CPU seen for the first
 * time comes online. */
#ifdef ORCU_HAVE_RSEQ_OFFSET
#include <sys/rseq.h>
#endif

static inline int orcu__getcpu(void)
{
#ifdef ORCU_HAVE_RSEQ_OFFSET
	if (orcu__likely(__rseq_size != 0)) {
		const struct rseq *rs =
			(const struct rseq *)((const char *)__builtin_thread_pointer() + __rseq_offset);
		/* The kernel writes it on this thread's behalf. */
		int cpu = (int)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);

		if (orcu__likely(cpu >= 0))
			return cpu;
	}
#endif
	return orcu__getcpu_slow();
}

static inline struct orcu__slot *orcu__current_slot(void)
{
	struct orcu__slot *s;
	int cpu;

	if (orcu__tls.library_slot >= 0)
		return orcu__slot_of(orcu__tls.library_slot);
	if (orcu__tls.bound_cpu >= 0)
		return orcu__slot_of(orcu__tls.bound_cpu);
	cpu = orcu__getcpu();
	/* A division only when the topology has fewer slots than CPUs. */
	if (orcu__unlikely(cpu >= orcu__g.nr_possible))
		cpu %= orcu__g.nr_possible;
	s = orcu__slot_of(cpu);
	if (orcu__unlikely(!orcu__slot_ever_online(s)))
		orcu__mark_seen(s);
	return s;
}

#endif
