/*
 * <urcu/urcu-bp.h> of orcu's liburcu shim: liburcu's bulletproof flavour
 * on orcu's memb readers, which register on first use as bp's do.  As
 * <urcu/urcu-memb.h> here: liburcu's own header (next on the search path)
 * is read without _LGPL_SOURCE, so every name is a call of a function the
 * shim's liburcu-bp.so.8 exports; with _LGPL_SOURCE the read side is
 * orcu's inline one.  liburcu's <urcu-bp.h> includes this file.
 */
#ifndef ORCU_SHIM_URCU_BP_H
#define ORCU_SHIM_URCU_BP_H

#include <urcu/pointer.h>	/* the program's choice: inline or _sym calls */
#pragma push_macro("_LGPL_SOURCE")
#undef _LGPL_SOURCE
#include_next <urcu/urcu-bp.h>
#pragma pop_macro("_LGPL_SOURCE")

#ifdef _LGPL_SOURCE
#include <orcu.h>
#define urcu_bp_read_lock orcu_read_lock
#define urcu_bp_read_unlock orcu_read_unlock
#define urcu_bp_read_ongoing orcu_read_ongoing
/* As liburcu's _LGPL_SOURCE branch: the inline pointer helpers. */
#undef urcu_bp_dereference
#undef urcu_bp_cmpxchg_pointer
#undef urcu_bp_xchg_pointer
#undef urcu_bp_set_pointer
#define urcu_bp_dereference rcu_dereference
#define urcu_bp_cmpxchg_pointer rcu_cmpxchg_pointer
#define urcu_bp_xchg_pointer rcu_xchg_pointer
#define urcu_bp_set_pointer rcu_set_pointer
#endif

#endif
