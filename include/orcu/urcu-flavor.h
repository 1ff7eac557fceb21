/*
 * orcu/urcu-flavor.h - orcu as a liburcu flavor, so liburcu's data
 * structures (rculfhash, rculist, rculfqueue, ...) run on orcu's engine:
 *
 *	struct cds_lfht *ht = cds_lfht_new_flavor(1, 1, 0,
 *		CDS_LFHT_AUTO_RESIZE, &orcu_rcu_flavor, NULL);
 *
 * Lives in the optional library liborcu-urcu (pkg-config orcu-urcu, CMake
 * orcu::urcu), built when liburcu's headers are present; rculfhash itself
 * is liburcu's (-lurcu-cds).  No liburcu flavor library is needed.
 *
 * The flavor's calls, as a liburcu data structure makes them:
 *  read_lock/unlock     orcu_read_lock/unlock (memb or qsbr thread)
 *  read_ongoing         inside a section, or a qsbr thread that is online
 *  read_quiescent_state orcu_quiescent_state on a qsbr thread, else nothing
 *  update_call_rcu      orcu_call (struct rcu_head has orcu_head's layout)
 *  update_synchronize_rcu orcu_synchronize; barrier: orcu_barrier
 *  update_defer_rcu     fct(p) from an orcu callback after a grace period
 *  thread_offline/online orcu_thread_offline/online
 *  register_thread      orcu_register_thread (memb); a failure prints one
 *                       line naming the call and aborts (liburcu's is void)
 *  unregister_thread    orcu_unregister_thread
 *  register_rculfhash_atfork  the hooks run from liborcu-urcu's own
 *                       pthread_atfork handlers, around orcu's: before_fork
 *                       before orcu quiesces, after_fork_* after orcu is
 *                       usable again in parent and child
 */
#ifndef ORCU_URCU_FLAVOR_H
#define ORCU_URCU_FLAVOR_H

#include <orcu.h>
#include <orcu/urcu-compat.h> /* struct rcu_head, <urcu/flavor.h> */

#ifndef ORCU_URCU_HEADERS
#error "orcu/urcu-flavor.h needs liburcu's headers (<urcu/flavor.h>)"
#endif

/* Declared in orcu/urcu-compat.h, as liburcu's rcu_flavor:
 *	extern const struct rcu_flavor_struct orcu_rcu_flavor;  */

#endif
