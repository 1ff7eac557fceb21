/*
 * atomics.h - the memory-order vocabulary of orcu over <stdatomic.h>.
 * Every atomic access in the engine goes through these names so the order
 * is in the name (mimalloc style).  Owns nothing; used by every module.
 *
 * Weakly ordered CPUs (aarch64, ppc64le, armhf).  These names and
 * membarrier() are the only ordering the library has: no fence per
 * architecture.  A release/acquire pair holds there by C11 alone (gcc
 * emits stlr/ldar, lwsync/isync, dmb ish).  A store followed by a load of
 * another word (a sleeper and its waker, a reader and the GP) needs a full
 * barrier on both sides, which x86 needs too: a seq_cst fence, a seq_cst
 * RMW, or membarrier() standing in for the cheap side's.  Each such pair
 * is numbered in docs/DESIGN-NOTES.md ("Memory-ordering pairs"), with its
 * C11 argument and its model; its code names the number ("pair #1").
 */
#ifndef ORCU_ATOMICS_H
#define ORCU_ATOMICS_H

#include <stdatomic.h>

#define orcu__load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define orcu__load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define orcu__load_seq_cst(p) atomic_load_explicit((p), memory_order_seq_cst)
#define orcu__store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define orcu__store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define orcu__store_seq_cst(p, v) atomic_store_explicit((p), (v), memory_order_seq_cst)
#define orcu__xchg_seq_cst(p, v) atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define orcu__xchg_acq_rel(p, v) atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define orcu__xchg_acquire(p, v) atomic_exchange_explicit((p), (v), memory_order_acquire)
#define orcu__xchg_relaxed(p, v) atomic_exchange_explicit((p), (v), memory_order_relaxed)
#define orcu__fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define orcu__fetch_add_release(p, v) atomic_fetch_add_explicit((p), (v), memory_order_release)
#define orcu__fetch_add_acq_rel(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define orcu__fetch_add_seq_cst(p, v) atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define orcu__fetch_sub_relaxed(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define orcu__fetch_sub_release(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define orcu__fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define orcu__fetch_or_seq_cst(p, v) atomic_fetch_or_explicit((p), (v), memory_order_seq_cst)
#define orcu__fetch_and_relaxed(p, v) atomic_fetch_and_explicit((p), (v), memory_order_relaxed)
#define orcu__fetch_and_seq_cst(p, v) atomic_fetch_and_explicit((p), (v), memory_order_seq_cst)
#define orcu__cas_acq_rel(p, expp, v) \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), \
						memory_order_acq_rel, memory_order_acquire)
#define orcu__cas_seq_cst(p, expp, v) \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), \
						memory_order_seq_cst, memory_order_seq_cst)
#define orcu__cas_relaxed(p, expp, v) \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), \
						memory_order_relaxed, memory_order_relaxed)
#define orcu__fence_seq_cst() atomic_thread_fence(memory_order_seq_cst)
#define orcu__fence_acquire() atomic_thread_fence(memory_order_acquire)
#define orcu__fence_release() atomic_thread_fence(memory_order_release)
#define orcu__compiler_barrier() atomic_signal_fence(memory_order_seq_cst)

static inline void orcu__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	/* clang-format off */
	__asm__ __volatile__("yield" ::: "memory");
	/* clang-format on */
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif
