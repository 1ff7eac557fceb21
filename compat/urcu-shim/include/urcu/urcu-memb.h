/*
 * <urcu/urcu-memb.h> of orcu's liburcu shim (installed in
 * <libdir>/orcu/urcu-shim/include, never on a default search path): the
 * memb flavour on orcu.  liburcu's own header, next on the search path,
 * declares the functions; the shim's liburcu-memb.so.8 exports them on
 * orcu.  It is read without _LGPL_SOURCE, so it never inlines liburcu's
 * read side (which reads liburcu's data).  With _LGPL_SOURCE the read side
 * is orcu's inline one (<orcu.h>, installed beside this directory's
 * urcu/), so a unit references orcu only if it uses it, as one built on
 * liburcu references liburcu's data only then.  The shim's link names
 * record orcu's libraries (liborcu-liburcu-memb.so.8), never
 * liburcu.so.8, so such a binary cannot meet a real liburcu's grace
 * periods at run time.
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
#endif

#endif
