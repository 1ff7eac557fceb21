/*
 * config.h - the interface of config.c: the configuration record, its
 * build and apply, boolean ORCU_* variables and the thread cap.
 */
#ifndef ORCU_CONFIG_H
#define ORCU_CONFIG_H

#include "os.h"

/* config.c: calls os.c and cpulist.c. */
/* The numeric knobs, in the order config.c reads them. */
enum orcu__knob {
	ORCU__KNOB_STRIDE,
	ORCU__KNOB_POLL,
	ORCU__KNOB_QHIMARK,
	ORCU__KNOB_QLOWMARK,
	ORCU__KNOB_QMAX,
	ORCU__KNOB_LAZY_MS,
	ORCU__KNOB_LAZY_MAX,
	ORCU__KNOB_STALL_MS,
	ORCU__KNOB_TAKEOVER_MS,
	ORCU__KNOB_BATCH,
	ORCU__KNOB_GP_BATCH_US,
	ORCU__KNOB_MAX_THREADS,
	ORCU__NR_KNOBS
};
/* One configuration, read but not yet applied. */
struct orcu__conf {
	int nr_possible;
	uint64_t *online;       /* [nr_possible] */
	uint64_t *nocbs;        /* [nr_possible] */
	uint64_t *housekeeping; /* [CPU_SETSIZE] real CPUs, or NULL */
	const char *cpus;       /* the ORCU_CPUS text taken, or NULL (build only) */
	long knob[ORCU__NR_KNOBS];
	int futex_hash; /* ORCU_FUTEX_HASH */
};
/* cfg (NULL: none) and the environment into *c; 0, or -EINVAL (a bad cfg
 * value, one line said) or -ENOMEM, and then *c holds nothing. */
int orcu__conf_build(const struct orcu_config *cfg, struct orcu__conf *c);
/* Under orcu__g.lock: the knobs and housekeeping set into orcu__g. */
void orcu__conf_apply(struct orcu__conf *c);
void orcu__conf_free(struct orcu__conf *c);
/* Before creating a leader or follower (under orcu__g.lock): true if one
 * more library thread stays within ORCU_MAX_THREADS, counting the GP
 * thread, leaders_alive + followers_alive (or threads_alive if larger).
 * False prints one line, once per process; the caller then leaves the slot
 * to existing threads.  The GP thread itself is never refused. */
bool orcu__thread_budget_ok(void);
/* A boolean ORCU_* variable: "0" or "1"; unset gives def; any other text
 * gives def and one line naming the variable and the text (once per
 * variable for ORCU_NO_MEMBARRIER and ORCU_CHECK_CALLS). */
int orcu__env_bool(const char *name, int def);

#endif
