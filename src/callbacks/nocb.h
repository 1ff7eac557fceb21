/*
 * nocb.h - the interface of nocb.c, callback offloading: the leader
 * record, the sleep states of leaders and followers, and the calls that
 * spawn, wake, stop and repair the threads.
 */
#ifndef ORCU_NOCB_H
#define ORCU_NOCB_H

#include "os.h"
#include "event.h"

struct orcu__slot;

/* A follower's sleep state (fol.sleep), under its slot's cb_lock. */
enum orcu__follower_state {
	ORCU__FOLLOWER_AWAKE = 0, /* running, or about to re-check its work */
	ORCU__FOLLOWER_SLEEPING,  /* found no work; a waker must notify it */
};

/* A leader's sleep state.  Zero is AWAKE: a leader that never slept
 * (including one just spawned) scans before waiting.  Kernel commit 11ed7f934cb8's lesson. */
enum orcu__leader_state {
	ORCU__LEADER_AWAKE = 0, /* scanning or waiting for a GP */
	ORCU__LEADER_SLEEPING,  /* idle; the first enqueuer to claim it wakes it */
};

/* One leader per group of ORCU_NOCB_STRIDE slots. */
struct orcu__leader {
	_Atomic int sleep ORCU__ALIGNED;   /* orcu__leader_state: leader sets; enqueuers claim */
	struct orcu__event wake;           /* the leader sleeps on it: enqueuers, force, GP ends */
	_Atomic unsigned long gp_wait_seq; /* leader writes, GP thread reads */
	_Atomic int exists;                /* thread running */
	_Atomic int stop;
	_Atomic int force; /* barrier/online: rescan even if nothing new */
	/* Threads owning a posting queue on one of the group's slots; with
	 * none, the leader sleeps without membarrier() (postq.c point 5). */
	_Atomic int postq_owners;
	int first, nslots; /* the group: [first, first + nslots) */
	pthread_t tid;
};

/* Group g's leader: leader 0 is static, like slot 0 (slot.h), and
 * defined beside it in slot.c. */
ORCU__HIDDEN extern struct orcu__leader orcu__leader0;

static inline struct orcu__leader *orcu__leader_of(int g)
{
	return g ? &orcu__g.leaders[g] : &orcu__leader0;
}

/* nocb.c */
int orcu__nocb_spawn_slot(struct orcu__slot *s);                 /* under orcu__g.lock */
void orcu__nocb_request_stop(void);                              /* under orcu__g.lock */
void orcu__nocb_join_all(void);                                  /* without it */
void orcu__nocb_forget_all(void);                                /* under it, or a fork child */
void orcu__nocb_gp_done(unsigned long seq);                      /* wake leaders waiting for it */
bool orcu__nocb_wake_leader(struct orcu__leader *l, bool force); /* false: no thread */

#endif
