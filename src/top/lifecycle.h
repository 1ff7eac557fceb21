/*
 * lifecycle.h - the interface of lifecycle.c (shutdown and fork): nothing
 * calls it, so its one symbol is the anchor that keeps it in a static
 * link.
 */
#ifndef ORCU_LIFECYCLE_H
#define ORCU_LIFECYCLE_H

#include "os.h"

/* A static link takes an object file only for a symbol something needs,
 * and nothing calls lifecycle.c's fork handlers: its constructor registers
 * them.  entry.c and stats.c refer to this (keep_fork_handlers), so every
 * program that can hold a library lock or run a library thread links
 * lifecycle.c, and with it the handlers (lifecycle.c point 6; a program
 * linked without them would fork with library locks held). */
ORCU__HIDDEN extern const int orcu__lifecycle_linked;

#endif
