/*
 * gp.c - the grace-period engine: the single GP thread (orcu-gp), the
 * request/wait protocol, orcu_synchronize*, and the polled API.  Calls
 * registry.c for the reader wait and nocb.c to wake the leaders a GP served.
 *
 * Why it is safe.  orcu__gp_seq moves even -> odd (GP started) -> even (GP
 * ended) and only the GP thread writes it.  A caller that wants a full GP
 * after "now" takes orcu__seq_snap(gp_seq): the end of the next GP to
 * *start*, so a GP already running (which may have begun before the
 * caller's update) never counts.  Requests raise gp_needed; the GP thread
 * runs GPs while gp_seq is behind gp_needed and sleeps otherwise.  Every
 * GP does the full reader wait (registry.c); callers learn the end through
 * an acquire load of gp_seq that pairs with the release at the GP's end.
 *
 * Sleeping without lost wake-ups: the GP thread sets gp_sleeping, fences,
 * and re-reads gp_needed before futex_wait; a requester raises gp_needed,
 * fences, and wakes only if it sees gp_sleeping.  One of the two always
 * sees the other's store.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"
#include "orcu/debug.h"
#include "trace.h"

#include <errno.h>
#include <time.h>

_Atomic unsigned long orcu__gp_seq;
static _Atomic unsigned long gp_needed;     /* latest target anyone asked for */
static _Atomic unsigned long gp_needed_now; /* latest target asked for NOW/HURRY */
static _Atomic int gp_hurry;
static _Atomic uint32_t gp_futex;         /* requesters bump to wake the GP thread */
static _Atomic int gp_sleeping;           /* GP thread sets (2: batching); requesters read */
static uint64_t gp_last_end_ns;           /* GP thread only */
static _Atomic uint32_t gp_done_futex;    /* GP thread bumps at every GP end */
static _Atomic int gp_done_waiters;       /* synchronize callers blocked */
static _Atomic int gp_stop;
static _Atomic int gp_busted;
static pthread_t gp_tid;
static int gp_running;

void orcu_debug_set_busted(int busted)
{
	orcu__store_seq_cst(&gp_busted, busted ? 1 : 0);
}

static void wake_gp_thread(bool batch)
{
	int sleeping;

	/* Pairs with the fence after gp_sleeping = 1 in gp_thread_main(). */
	orcu__fence_seq_cst();
	sleeping = orcu__load_relaxed(&gp_sleeping);
	/* A batching GP thread wakes by itself for batchable work. */
	if (sleeping && !(batch && sleeping == 2)) {
		orcu__fetch_add_release(&gp_futex, 1);
		orcu__futex_wake(&gp_futex, 1);
	}
}

static void raise_target(_Atomic unsigned long *needed, unsigned long target)
{
	unsigned long need = orcu__load_acquire(needed);

	while (orcu__seq_lt(need, target) &&
	       !orcu__cas_acq_rel(needed, &need, target))
		;
}

void orcu__gp_request(unsigned long target, enum orcu__gp_how how)
{
	raise_target(&gp_needed, target);
	if (how != ORCU__GP_BATCH)
		raise_target(&gp_needed_now, target);
	if (how == ORCU__GP_HURRY)
		orcu__store_relaxed(&gp_hurry, 1);
	if (orcu__seq_done(orcu__load_acquire(&orcu__gp_seq), target))
		return;
	wake_gp_thread(how == ORCU__GP_BATCH);
}

void orcu__gp_wait(unsigned long target)
{
	orcu__fetch_add_seq_cst(&gp_done_waiters, 1);
	for (;;) {
		uint32_t v = orcu__load_acquire(&gp_done_futex);

		/* Acquire pairs with the release that ends the GP. */
		if (orcu__seq_done(orcu__load_acquire(&orcu__gp_seq), target))
			break;
		orcu__futex_wait(&gp_done_futex, v, -1);
	}
	orcu__fetch_sub_relaxed(&gp_done_waiters, 1);
}

static void run_one_gp(unsigned long cur)
{
	uint64_t start = orcu__now_ns();
	bool hurry;

	if (!orcu__seq_in_progress(cur)) {
		cur = orcu__seq_start(cur);
		/* Release: requests read before the start are ordered before it. */
		orcu__store_release(&orcu__gp_seq, cur);
	}
	orcu__trace1(gp_start, cur);
	orcu__delay(ORCU__DELAY_GP_START);
	hurry = orcu__xchg_acq_rel(&gp_hurry, 0) != 0;
	if (hurry)
		orcu__count(gp_expedited, 1);
	if (!orcu__load_relaxed(&gp_busted))
		orcu__registry_wait_readers(hurry, start);
	orcu__delay(ORCU__DELAY_GP_END);
	cur = orcu__seq_end(cur);
	/* Pairs with the acquire loads in orcu__gp_wait(), orcu_poll_state()
	 * and the leaders: what the readers did is visible to them. */
	orcu__store_seq_cst(&orcu__gp_seq, cur);
	orcu__count(gp_completed, 1);
	orcu__trace2(gp_end, cur, orcu__now_ns() - start);

	orcu__fetch_add_seq_cst(&gp_done_futex, 1);
	if (orcu__load_seq_cst(&gp_done_waiters)) {
		orcu__futex_wake(&gp_done_futex, 1 << 30);
		orcu__count(gp_wakeups, 1);
	}
	orcu__nocb_gp_done(cur);
	gp_last_end_ns = orcu__now_ns();
}

/* Callback-only demand may wait for the batching window to close. */
static int64_t batch_wait_ns(unsigned long cur)
{
	uint64_t window = (uint64_t)orcu__g.gp_batch_us * 1000, now;

	if (!window || orcu__seq_lt(cur, orcu__load_acquire(&gp_needed_now)) ||
	    orcu__load_relaxed(&gp_hurry) || orcu__barrier_in_progress())
		return 0;
	now = orcu__now_ns();
	if (now >= gp_last_end_ns + window)
		return 0;
	return (int64_t)(gp_last_end_ns + window - now);
}

static void *gp_thread_main(void *arg)
{
	struct timespec cpu;

	(void)arg;
	for (;;) {
		unsigned long cur = orcu__load_acquire(&orcu__gp_seq);
		int64_t batch = 0;
		uint32_t v;

		if (orcu__seq_in_progress(cur) ||
		    (orcu__seq_lt(cur, orcu__load_acquire(&gp_needed)) &&
		     (batch = batch_wait_ns(cur)) == 0)) {
			run_one_gp(cur);
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
			orcu__store_relaxed(&orcu__cnt.gp_thread_cpu_ns,
				(uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec);
			continue;
		}
		if (orcu__load_acquire(&gp_stop))
			break;
		v = orcu__load_acquire(&gp_futex);
		orcu__store_relaxed(&gp_sleeping, batch ? 2 : 1);
		/* Pairs with the fence in wake_gp_thread(). */
		orcu__fence_seq_cst();
		if ((!batch && orcu__seq_lt(cur, orcu__load_acquire(&gp_needed))) ||
		    orcu__seq_lt(cur, orcu__load_acquire(&gp_needed_now)) ||
		    orcu__load_acquire(&gp_stop)) {
			orcu__store_relaxed(&gp_sleeping, 0);
			continue;
		}
		orcu__futex_wait(&gp_futex, v, batch ? batch : -1);
		orcu__store_relaxed(&gp_sleeping, 0);
	}
	return NULL;
}

void orcu__gp_start_thread(void)
{
	if (gp_running)
		return;
	orcu__store_relaxed(&gp_stop, 0);
	if (orcu__spawn(&gp_tid, "orcu-gp", gp_thread_main, NULL) < 0)
		orcu__die("cannot start the grace-period thread");
	gp_running = 1;
}

void orcu__gp_stop_thread(void)
{
	if (!gp_running)
		return;
	orcu__store_seq_cst(&gp_stop, 1);
	orcu__store_relaxed(&gp_sleeping, 1);
	wake_gp_thread(false);
	pthread_join(gp_tid, NULL);
	gp_running = 0;
}

void orcu__gp_after_fork_child(void)
{
	/* The GP thread did not survive; a GP it was running (odd gp_seq) is
	 * redone from the start by the new thread. */
	gp_running = 0;
	orcu__store_relaxed(&gp_sleeping, 0);
	orcu__store_relaxed(&gp_done_waiters, 0);
	orcu__store_relaxed(&gp_stop, 0);
}

/* ------------------------------------------------------------------ */
/* Public updater API */

void orcu__gp_check_caller(const char *call)
{
	struct orcu__reader *r = &orcu__reader;

	if (orcu__unlikely(r->in_callback))
		orcu__misuse(call, "called from inside an orcu callback (would wait for itself)");
	if (orcu__unlikely(orcu__load_relaxed(&r->ctr) & ORCU__NEST_MASK))
		orcu__misuse(call, "called inside a read-side critical section (would deadlock)");
}

/* A qsbr thread that waits must not hold the GP it waits for. */
bool orcu__qsbr_offline_for_wait(void)
{
	struct orcu__reader *r = &orcu__reader;

	if (r->kind == ORCU__KIND_QSBR && orcu__load_relaxed(&r->qs_seq) != 0) {
		orcu__store_release(&r->qs_seq, 0);
		return true;
	}
	return false;
}

static void wait_for(unsigned long target, bool hurry)
{
	bool was_online;

	orcu__ensure_started();
	was_online = orcu__qsbr_offline_for_wait();
	orcu__gp_request(target, hurry ? ORCU__GP_HURRY : ORCU__GP_NOW);
	orcu__gp_wait(target);
	if (was_online)
		orcu_thread_online();
}

void orcu_synchronize(void)
{
	orcu__gp_check_caller("orcu_synchronize");
	/* seq_cst: our earlier updates are ordered before the snapshot, so
	 * the GP we wait for starts after them. */
	wait_for(orcu__seq_snap(orcu__load_seq_cst(&orcu__gp_seq)), false);
}

void orcu_synchronize_expedited(void)
{
	orcu__gp_check_caller("orcu_synchronize_expedited");
	wait_for(orcu__seq_snap(orcu__load_seq_cst(&orcu__gp_seq)), true);
}

unsigned long orcu_get_state(void)
{
	return orcu__seq_snap(orcu__load_seq_cst(&orcu__gp_seq));
}

unsigned long orcu_start_poll(void)
{
	unsigned long cookie = orcu_get_state();

	orcu__ensure_started();
	orcu__gp_request(cookie, ORCU__GP_NOW);
	return cookie;
}

bool orcu_poll_state(unsigned long cookie)
{
	/* Acquire pairs with the GP end: frees after a true are safe. */
	return orcu__seq_done(orcu__load_acquire(&orcu__gp_seq), cookie);
}

void orcu_cond_synchronize(unsigned long cookie)
{
	if (orcu_poll_state(cookie))
		return;
	orcu__gp_check_caller("orcu_cond_synchronize");
	wait_for(cookie, false);
}
