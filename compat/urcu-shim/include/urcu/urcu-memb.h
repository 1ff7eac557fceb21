/*
 * <urcu/urcu-memb.h> of orcu's liburcu shim (installed in
 * <libdir>/orcu/urcu-shim/include, never on a default search path): the
 * memb flavour on orcu.  liburcu's own header, next on the search path,
 * declares the functions; the shim's liburcu-memb.so.8 exports them on
 * orcu.  It is read without _LGPL_SOURCE, so it never inlines liburcu's
 * read side (which reads liburcu's data).  With _LGPL_SOURCE the read side
 * is orcu's inline one, and the object references orcu_urcu_shim_lgpl, so
 * a binary built so fails to load on a real liburcu instead of running
 * with a grace period that cannot see its readers.
 */
#ifndef ORCU_SHIM_URCU_MEMB_H
#define ORCU_SHIM_URCU_MEMB_H

#include <urcu/pointer.h>	/* the program's choice: inline or _sym calls */
#pragma push_macro("_LGPL_SOURCE")
#undef _LGPL_SOURCE
#include_next <urcu/urcu-memb.h>
#pragma pop_macro("_LGPL_SOURCE")

#ifdef _LGPL_SOURCE
#include <orcu.h>
#define urcu_memb_read_lock orcu_read_lock
#define urcu_memb_read_unlock orcu_read_unlock
#define urcu_memb_read_ongoing orcu_read_ongoing
#ifndef ORCU_SHIM_LGPL_REF
#define ORCU_SHIM_LGPL_REF
extern const char orcu_urcu_shim_lgpl;
static const char *const orcu__shim_lgpl_ref __attribute__((used)) = &orcu_urcu_shim_lgpl;
#endif
#endif

#endif
