/*
 * postcheck.h - the interface of postcheck.c: the double-post set of
 * ORCU_CHECK_CALLS.
 */
#ifndef ORCU_POSTCHECK_H
#define ORCU_POSTCHECK_H

#include "os.h"

/* postcheck.c: the double-post set; calls os.c and config.c. */
/* -1 not yet decided, 0 off, 1 on: the double-post set is kept (decided
 * once, at the first post, by orcu__double_call_enabled(); read by every
 * invoker before it calls the forget). */
ORCU__HIDDEN extern _Atomic int orcu__check_calls;
bool orcu__double_call_enabled(void);
/* Aborts, naming call, if h is already in the set; else adds it. */
void orcu__double_call_check(struct orcu_head *h, const char *call);
void orcu__double_call_forget(struct orcu_head *h);
void orcu__double_call_fork_prepare(void);
void orcu__double_call_fork_parent(void);
void orcu__double_call_fork_child(void);

#endif
