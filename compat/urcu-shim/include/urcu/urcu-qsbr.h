/*
 * <urcu/urcu-qsbr.h> of orcu's liburcu shim: the qsbr flavour on orcu, as
 * <urcu/urcu-memb.h> here does for memb.  liburcu's header makes
 * urcu_qsbr_read_lock/unlock empty inline functions; with _LGPL_SOURCE the
 * quiescent-state calls go straight to orcu's.
 */
#ifndef ORCU_SHIM_URCU_QSBR_H
#define ORCU_SHIM_URCU_QSBR_H

#include <urcu/pointer.h>	/* the program's choice: inline or _sym calls */
#pragma push_macro("_LGPL_SOURCE")
#undef _LGPL_SOURCE
#include_next <urcu/urcu-qsbr.h>
#pragma pop_macro("_LGPL_SOURCE")

#ifdef _LGPL_SOURCE
#include <orcu.h>
#define urcu_qsbr_read_ongoing orcu_thread_is_online
#define urcu_qsbr_quiescent_state orcu_quiescent_state
#define urcu_qsbr_thread_offline orcu_thread_offline
#define urcu_qsbr_thread_online orcu_thread_online
#endif

#endif
