/*
 * header_ilp32.c - orcu.h on a 32-bit target (i686, ILP32): compiled, never
 * run, by the CTest entry header_ilp32 (clang --target=i686-linux-gnu,
 * freestanding so no 32-bit libc headers are needed).  A shift past the
 * width of unsigned long, or a phase bit inside the nesting mask, fails it.
 */
#include <orcu.h>

_Static_assert(sizeof(unsigned long) == 4, "compiled for ILP32");
_Static_assert(ORCU__PHASE != 0 && (ORCU__PHASE & ORCU__NEST_MASK) == 0,
	       "phase bit outside the nesting mask");
_Static_assert(ORCU__NEST_MASK >= 0xffffUL, "room for nesting");

void use(void);
void use(void)
{
	orcu_read_lock();
	orcu_read_unlock();
}
