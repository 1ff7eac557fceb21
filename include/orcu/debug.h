/*
 * orcu/debug.h - validation hooks for orcu-torture and the tests.  Not for
 * production use: they widen race windows or deliberately break the
 * grace-period guarantee so the validation tools can prove they catch it.
 */
#ifndef ORCU_DEBUG_H
#define ORCU_DEBUG_H

#include <orcu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* orcu_debug_set_delays - random delays of up to max_us microseconds at
 * GP start/end, in the leader's sleep path, in the barrier, in the enqueue
 * path, between counting a post to a slot's shared queue and pushing it,
 * between a GP's "no reader registered" and its swap of gp_seq, and in a
 * memb reader's unpark before its fence; 0 disables.
 *
 * Tests: torture_memb_mixed_hotplug_delays.
 */
ORCU_API void orcu_debug_set_delays(unsigned int max_us);

/* orcu_debug_thread_count - the number of library threads (orcu-gp,
 * orcu-og/N, orcu-oc/N) alive right now.
 *
 * Tests: test_lying_topology, test_thread_budget, test_wake_economy.
 */
ORCU_API int orcu_debug_thread_count(void);

#ifdef __cplusplus
}
#endif
#endif
