/*
 * postcheck.h - the interface of postcheck.c: double posts, their reports
 * and the double-post set of ORCU_CHECK_CALLS.
 */
#ifndef ORCU_POSTCHECK_H
#define ORCU_POSTCHECK_H

#include "os.h"

/*
 * A callback head posted again while pending, found where the callback
 * queues and lists are walked or linked (where: the queue or list).  Names
 * orcu_call and the CPU slot, then aborts.  at_call: found by the second
 * orcu_call itself.
 */
void orcu__double_post_die(const void *where, const struct orcu_head *h, bool at_call)
	__attribute__((noreturn));
/* The same line, found before the post did any harm and left out (the
 * process goes on); ends "the second post is ignored".  Not a
 * cancellation point (the caller may hold cb_lock). */
void orcu__double_post_report(const void *where, const struct orcu_head *h);

/* The double-post set. */
/* -1 not yet decided, 0 off, 1 on: the double-post set is kept (decided
 * once, at the first post, by orcu__double_call_enabled(); read by every
 * invoker before it calls the forget). */
ORCU__HIDDEN extern _Atomic int orcu__check_calls;
bool orcu__double_call_enabled(void);
/* Aborts, naming call, if h is already in the set; else adds it. */
void orcu__double_call_check(struct orcu_head *h, const char *call);
void orcu__double_call_forget(struct orcu_head *h);
/* free.c: aborts, naming call, if the object p is in the set; else adds
 * it if add.  Forgotten when deleted (orcu__double_call_forget()). */
void orcu__double_free_check(const void *p, const char *call, bool add);
void orcu__double_call_fork_prepare(void);
void orcu__double_call_fork_parent(void);
void orcu__double_call_fork_child(void);

#endif
