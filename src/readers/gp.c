/*
 * gp.c - the grace-period engine: who runs a GP (the GP thread, or any
 * thread that must wait for one), the request protocol, orcu_synchronize*,
 * and the polled API.  Calls registry.c for the reader wait, delay.c (debug hooks) and os.c;
 * tells nocb.c each GP end (its leaders wait for them) through
 * orcu__gp_end_hook, and the server rule (serve.c) the GP thread's turn
 * to serve slots without threads or retry missing threads through
 * orcu__gp_serve_hook: the two calls up the layers.
 *
 * Why it is safe.
 *  1. orcu__gp_seq moves even -> odd (GP started) -> even (GP ended), and
 *     only the thread that owns gp_owner writes it.  Ownership is an atomic
 *     flag, not a mutex, so no lock is ever held across the reader wait (or
 *     the user's stall handler it may call), and a fork child, where the
 *     owner does not exist, simply clears it and redoes the GP in progress.
 *     The owner itself may fork, from its stall handler: then the child
 *     keeps the flag set, and the forking thread, the owner there too,
 *     finishes its GP when the handler returns and lets go, so the child
 *     never has two owners (one would end a GP behind the other's back
 *     and move gp_seq backwards).  If that thread is the GP thread, it
 *     ends once it has let go: the child's GP thread starts on first use,
 *     as after any fork, and is the only one.
 *  2. A caller that wants a full GP after "now" fences, then takes
 *     orcu__seq_snap(gp_seq): the end of the next GP to *start*, so a GP
 *     already running (which may have begun before the caller's update)
 *     never counts.  The fence orders the caller's update before that read
 *     (point 2 of registry.c's argument gives the other side).
 *  3. Waiters (orcu_synchronize, leaders without a GP thread) drive GPs
 *     themselves: they take ownership when it is free and run GPs until
 *     their target is reached; otherwise they sleep on the gp_done event,
 *     which the owner notifies at every GP end and when it lets go.  So a waiter
 *     never depends on the GP thread existing: shutdown, a failed thread
 *     creation or a fork cannot strand it.
 *  4. Callback demand (leaders) raises gp_needed; the GP thread runs GPs
 *     while gp_seq is behind it, batching callback-only demand for up to
 *     ORCU_GP_BATCH_US, and sleeps otherwise, on the gp_wake event
 *     (event.h).  It sets gp_sleeping, then prepares (a fence), and
 *     re-reads gp_needed before it waits; a requester raises gp_needed,
 *     fences, and notifies unless it sees the thread awake or batching.
 *     One of the two always sees the other's store.
 *  5. With no reader registered a GP is a single compare-and-swap of
 *     gp_seq from an idle value to the next one (gp_skip_idle()), made
 *     under registry_lock by whoever needs it (a waiter, a leader,
 *     orcu_start_poll()), so a GP with nobody to wait for costs a lock and
 *     a swap, and no hand-off.  The owner starts its GPs with a swap as
 *     well, so the two never overwrite each other; while gp_seq is odd
 *     only the owner writes it.
 *  6. A request that does not wait (orcu_start_poll()) is not left to a
 *     GP thread that does not run: orcu__gp_request() raises gp_needed,
 *     fences, then reads whether the thread runs, and says so.  When it
 *     does not (never created, or stopped by orcu_shutdown()), the
 *     requester has another thread run the GP (orcu_start_poll() in
 *     entry.c calls orcu__serve_gp_asked(): retry the threads, else wake
 *     the leader of the caller's slot, else raise `unserved` for a waiter
 *     or safe point):
 *     orcu__gp_run_requested() fences, then reads gp_needed, and drives
 *     GPs up to it.  orcu_shutdown() calls it after it cleared `running`
 *     (and `started`): of the requester's store -> fence -> load and
 *     shutdown's, one sees the other, so a request the stopping thread
 *     missed is run by the shutdown, or its requester saw the thread gone.
 */
#include "os.h"
#include "delay.h"
#include "event.h"
#include "seq.h"
#include "gp.h"
#include "registry.h"
#include "sanitize.h"
#include "trace.h"

#include <time.h>

/* Written by the GP owner only, read by everyone (leaders, pollers). */
_Atomic unsigned long orcu__gp_seq ORCU__ALIGNED;

/* Written by requesters (leaders, orcu_start_poll, barriers), read by the
 * GP thread, which writes only `sleeping` (and the event's sleeper count)
 * here. */
static struct {
	_Atomic unsigned long needed;     /* latest target anyone asked for */
	_Atomic unsigned long needed_now; /* latest target asked for NOW/HURRY */
	_Atomic int hurry;
	_Atomic int unbatched;   /* a barrier waits (orcu__gp_set_unbatched()) */
	struct orcu__event wake; /* the GP thread sleeps on it; requesters notify */
	_Atomic int sleeping;    /* GP thread sets (GP_SLEEP_*); requesters read */
} req ORCU__ALIGNED;

/* Written by whoever owns the GP machinery (point 1); read by waiters and
 * the GP thread. */
static struct {
	_Atomic int owner;            /* 1 while a thread runs GPs */
	_Atomic uint64_t last_end_ns; /* the owner writes; the GP thread reads */
	struct orcu__event done;      /* GP waiters sleep on it; the owner notifies */
} own ORCU__ALIGNED;

/* The GP thread itself: start, stop, CPU time (cold). */
static struct {
	_Atomic int stop;
	pthread_t tid;
	_Atomic int running;          /* the thread exists; under orcu__g.lock */
	_Atomic uint64_t cpu_past_ns; /* CPU time of GP threads that have exited */
	_Atomic int clock;            /* enum gp_clock: may tid's clock be read */
	/* 1 while the thread runs in-place slots' callbacks (serve.c):
	 * they may run long, so requesters run GPs themselves. */
	_Atomic int serving;
} thr;

/* thr.clock: whether the GP thread's CPU clock may be read.  A reader
 * holds READING; the thread, leaving, takes ALIVE to EXITING (waiting out
 * a reader), adds its time to cpu_past_ns, then NONE; readers wait out
 * EXITING and each other.  So the clock is never read of a thread that is
 * gone, nothing is counted twice, and the total never goes back. */
enum gp_clock {
	CLOCK_NONE,
	CLOCK_ALIVE,
	CLOCK_READING,
	CLOCK_EXITING
};

enum {
	GP_AWAKE,
	GP_SLEEP_IDLE,
	GP_SLEEP_BATCH
};


bool orcu__gp_thread_running(void)
{
	/* Pairs with the releases of thr.running in orcu__gp_start_thread()
	 * and orcu__gp_stop_thread().  Relaxed on serving: either answer is
	 * safe, the thread serves the GPs asked for once it is back. */
	return orcu__load_acquire(&thr.running) != 0 && !orcu__load_relaxed(&thr.serving);
}

/* The GP thread runs callbacks of an in-place slot (serve.c), which may
 * take long: meanwhile it counts as not running.  Relaxed, as in
 * orcu__gp_thread_running(). */
void orcu__gp_thread_serving(bool on)
{
	orcu__store_relaxed(&thr.serving, on);
}

static void wake_gp_thread(bool batch)
{
	int sleeping;

	/* The filter below may skip the notify: pairs with the fence in
	 * orcu__event_prepare() after req.sleeping is set in gp_thread_main(). */
	orcu__fence_seq_cst();
	sleeping = orcu__load_relaxed(&req.sleeping);
	/* A batching GP thread wakes by itself for batchable work. */
	if (sleeping != GP_AWAKE && !(batch && sleeping == GP_SLEEP_BATCH))
		orcu__event_notify(&req.wake);
}

/* Relaxed: a target is a number that publishes nothing; the fences of
 * point 4 (wake_gp_thread(), orcu__event_prepare()) order it against the
 * GP thread's sleep, and gp_seq's own orders against the callbacks. */
static void raise_target(_Atomic unsigned long *needed, unsigned long target)
{
	unsigned long need = orcu__load_relaxed(needed);

	while (orcu__seq_lt(need, target) &&
	       !orcu__cas_relaxed(needed, &need, target))
		;
}

static bool gp_skip_idle(unsigned long cur);

/* True if the GP is done or the GP thread runs to serve the request;
 * false if no GP thread runs (point 6: the caller has it served). */
bool orcu__gp_request(unsigned long target, enum orcu__gp_how how)
{
	unsigned long cur;

	/* Nobody to wait for: the requester makes the GPs, a swap each, with
	 * no hand-off to the GP thread (point 5).  Acquire: as the loads of
	 * gp_seq in orcu__gp_drive(). */
	while (!orcu__seq_done(cur = orcu__load_acquire(&orcu__gp_seq), target))
		if (!gp_skip_idle(cur))
			break;
	if (orcu__seq_done(cur, target))
		return true;
	raise_target(&req.needed, target);
	if (how != ORCU__GP_BATCH)
		raise_target(&req.needed_now, target);
	if (how == ORCU__GP_HURRY)
		orcu__store_relaxed(&req.hurry, 1);
	wake_gp_thread(how == ORCU__GP_BATCH);
	/* After wake_gp_thread()'s fence: pairs with the fence in
	 * orcu__gp_run_requested() that orcu_shutdown() makes after it
	 * cleared `running` (point 6).  A thread serving user callbacks
	 * counts as not running (thr.serving). */
	return orcu__gp_thread_running();
}

/*
 * Point 6: run the GPs asked for (gp_needed) on this thread, when no GP
 * thread serves them: a leader, an application thread at a safe point,
 * orcu_shutdown() once the GP thread is gone.  True if gp_seq was behind.
 * The caller may block (orcu__gp_drive()): it is not in a read-side
 * section or a callback, and is offline if qsbr.
 */
bool orcu__gp_run_requested(void)
{
	unsigned long need;

	/* Pairs with the fence of wake_gp_thread() that a requester makes
	 * between raising gp_needed and reading `running` and `started`
	 * (orcu__gp_request(), entry.c): this fence comes after our caller
	 * cleared them (orcu_shutdown()), or after a safe point's exchange
	 * of orcu__g.unserved (entry.c). */
	orcu__fence_seq_cst();
	need = orcu__load_relaxed(&req.needed);
	if (!orcu__seq_lt(orcu__load_relaxed(&orcu__gp_seq), need))
		return false;
	orcu__gp_drive(need, false);
	return true;
}

/* Wake the GP waiters after the caller's seq_cst store (or swap) of
 * gp_seq or own.owner: each re-checks both after it prepares
 * (orcu__gp_drive()). */
static void gp_done_notify(void)
{
	if (orcu__event_notify_all_after_sc(&own.done))
		orcu__count(gp_wakeups, 1);
}

static bool gp_try_own(void)
{
	int free_ = 0;

	/* Acquire: the previous owner's GP state (own.last_end_ns, the
	 * registry counters) is visible to us.  Pairs with gp_release(). */
	if (!orcu__cas_acq_rel(&own.owner, &free_, 1))
		return false;
	orcu__tls.gp_owning = 1;
	return true;
}

static void gp_release(void)
{
	orcu__tls.gp_owning = 0;
	orcu__store_seq_cst(&own.owner, 0);
	/* Waiters that need a later GP than the one we ran may take over. */
	gp_done_notify();
}

/* The two calls that run up the layers, to the callback layer (gp.h).
 * entry.c installs them when it configures the library, before any
 * leader exists; NULL before that, when nobody can be waiting.  Relaxed
 * loads: installed once, before the initialized flag every GP runner
 * acquires first (orcu__ensure_init()). */
void (*_Atomic orcu__gp_end_hook)(unsigned long seq);
void (*_Atomic orcu__gp_serve_hook)(bool serve);

static void serve_turn(bool serve)
{
	void (*hook)(bool) = orcu__load_relaxed(&orcu__gp_serve_hook);

	if (hook)
		hook(serve);
}

/* barrier.c: someone waits for callbacks, so GPs should not wait for a
 * batch window.  Order: none needed; a hint read at the next decision. */
void orcu__gp_set_unbatched(bool on)
{
	orcu__store_relaxed(&req.unbatched, on);
}

/* After gp_seq reached the idle value cur: wake the waiters and the
 * leaders, and retry missing threads. */
static void end_gp_notify(unsigned long cur)
{
	gp_done_notify();
	void (*hook)(unsigned long) = orcu__load_relaxed(&orcu__gp_end_hook);

	if (hook)
		hook(cur);
	/* Whoever ends a GP retries missing threads (serve.c point 3): one
	 * load when not degraded; not a retired fork copy (lifecycle.c). */
	if (orcu__unlikely(orcu__load_relaxed(&orcu__g.degraded)) && !orcu__tls.retired)
		serve_turn(false);
}

static void end_gp(unsigned long cur, uint64_t start)
{
	uint64_t end;

	/* Pairs with the acquire loads of gp_seq in orcu__gp_drive(),
	 * orcu_poll_state() and the leaders: what the readers did is visible
	 * to them.  A store: while gp_seq is odd only its owner changes it. */
	orcu__store_seq_cst(&orcu__gp_seq, cur);
	/* The batching window counts from GPs that waited for readers.
	 * Relaxed: a stale value only shifts the window. */
	end = orcu__now_ns();
	orcu__store_relaxed(&own.last_end_ns, end);
	orcu__trace2(gp_end, cur, end - start);
	end_gp_notify(cur);
}

/*
 * Point 5: nobody registered, so a whole GP has nothing to wait for: move
 * gp_seq from the idle value cur straight to the next idle value, in one
 * compare-and-swap that any thread may make, owner or not, under the
 * registry's lock (registry.c point 5 says why a reader that registers
 * meanwhile needs no wait).  The swap fails if gp_seq moved since cur was
 * read: an owner's GP started (its start is a swap too), or another thread
 * made this one.  True if we made it.
 */
static bool gp_skip_idle(unsigned long cur)
{
	unsigned long next = orcu__seq_end(orcu__seq_start(cur));

	/* The lock-free read only saves the lock when readers exist. */
	if (orcu__seq_in_progress(cur) || orcu__registry_has_readers())
		return false;
	orcu__delay(ORCU__DELAY_GP_SKIP);
	/* seq_cst as end_gp()'s store: pairs with the acquire loads of gp_seq
	 * in orcu__gp_drive(), orcu_poll_state() and the leaders. */
	if (!orcu__registry_swap_if_none(&orcu__gp_seq, cur, next))
		return false;
	orcu__trace1(gp_start, next - 1);
	end_gp_notify(next);
	return true;
}

static void run_one_gp(unsigned long cur)
{
	/* Relaxed: a hint that publishes nothing (it lengthens the spins). */
	bool hurry = orcu__load_relaxed(&req.hurry) && orcu__xchg_relaxed(&req.hurry, 0);
	uint64_t start;

	if (hurry)
		orcu__count(gp_expedited, 1);
	if (!orcu__seq_in_progress(cur) && !orcu__registry_has_readers()) {
		gp_skip_idle(cur); /* if it fails, the caller re-reads gp_seq */
		return;
	}
	start = orcu__now_ns();

	if (!orcu__seq_in_progress(cur)) {
		unsigned long idle = cur;

		cur = orcu__seq_start(cur);
		/* A swap, not a store: a non-owner may have skipped an idle GP
		 * since we read gp_seq (point 5); then the caller re-reads it.
		 * Order: seq_cst like every write of gp_seq, so it and the
		 * skip's swap are ordered with end_gp()'s store; the full
		 * barrier that opens the reader wait follows (registry.c). */
		if (!orcu__cas_seq_cst(&orcu__gp_seq, &idle, cur))
			return;
	}
	orcu__trace1(gp_start, cur);
	orcu__delay(ORCU__DELAY_GP_START);
	/* The busted flavor exists only in validation programs that define
	 * orcu_test_gp_busted() (orcu-torture --busted, a test): the shipped
	 * library has no way to turn the reader wait off. */
	if (!(orcu_test_gp_busted && orcu_test_gp_busted()))
		orcu__registry_wait_readers(hurry, start);
	orcu__delay(ORCU__DELAY_GP_END);
	end_gp(orcu__seq_end(cur), start);
}

/*
 * Run GPs on this thread until gp_seq reaches target.  Point 3: whoever
 * owns own.owner is running a GP and notifies own.done when it ends or
 * lets go, so the sleep below always has a waker that is not us and does
 * not wait for us (the owner waits only for readers, and the caller is
 * not inside a read-side section: orcu__gp_check_caller()).
 */
void orcu__gp_drive(unsigned long target, bool hurry)
{
	bool hurry_asked = false;
	/* A memb caller is in no section until we return: parked, it costs
	 * the GPs it waits for (ours or the owner's) no membarrier() and no
	 * scan wait (registry.c point 4). */
	bool parked = orcu__memb_park();

	for (;;) {
		unsigned long cur;
		uint32_t ticket;

		/* Acquire pairs with the store that ends the GP. */
		cur = orcu__load_acquire(&orcu__gp_seq);
		if (orcu__seq_done(cur, target))
			break;
		/* Nobody to wait for: no ownership, no GP thread (point 5). */
		if (gp_skip_idle(cur)) {
			if (hurry)
				orcu__count(gp_expedited, 1);
			continue;
		}
		/* The GP we wait for, run by us or by the owner, hurries. */
		if (hurry && !hurry_asked) {
			orcu__store_relaxed(&req.hurry, 1);
			hurry_asked = true;
		}
		if (gp_try_own()) {
			/* Acquire pairs with a non-owner's swap in gp_skip_idle(). */
			while (!orcu__seq_done(cur = orcu__load_acquire(&orcu__gp_seq), target))
				run_one_gp(cur);
			gp_release();
			break;
		}
		/* Prepare, then re-check: pairs with the seq_cst stores of
		 * gp_seq (end_gp()) and own.owner (gp_release()) that come
		 * before gp_done_notify(); the owner never waits for us. */
		ticket = orcu__event_prepare(&own.done);
		if (!orcu__seq_done(orcu__load_seq_cst(&orcu__gp_seq), target) &&
		    orcu__load_seq_cst(&own.owner))
			orcu__event_wait(&own.done, ticket, -1);
		else
			orcu__event_cancel(&own.done);
	}
	/* Callback demand that arrived while we drove is the GP thread's.
	 * Relaxed: only whether to wake it (point 4 has the fences). */
	if (orcu__seq_lt(orcu__load_relaxed(&orcu__gp_seq),
			 orcu__load_relaxed(&req.needed)))
		wake_gp_thread(true);
	if (parked)
		orcu__memb_unpark();
	/* For ThreadSanitizer: the readers the GP waited for happen before
	 * our return (sanitize.h). */
	orcu__tsan_acquire(&orcu__san_gp_end);
}

/* Callback-only demand may wait for the batching window to close. */
static int64_t batch_wait_ns(unsigned long cur)
{
	uint64_t window = (uint64_t)orcu__g.gp_batch_us * 1000, now, last;

	/* Relaxed: a target (raise_target()). */
	if (!window || orcu__seq_lt(cur, orcu__load_relaxed(&req.needed_now)) ||
	    orcu__load_relaxed(&req.hurry) || orcu__load_relaxed(&req.unbatched))
		return 0;
	now = orcu__now_ns();
	last = orcu__load_relaxed(&own.last_end_ns);
	if (now >= last + window)
		return 0;
	return (int64_t)(last + window - now);
}

/* A running GP thread's CPU time is read on demand (orcu_get_stats), not
 * after every GP. */
uint64_t orcu__gp_thread_cpu_ns(void)
{
	for (;;) {
		int st = orcu__load_acquire(&thr.clock);
		uint64_t ns;
		clockid_t id;

		if (st == CLOCK_NONE)
			/* Pairs with the release in gp_thread_exit(). */
			return orcu__load_relaxed(&thr.cpu_past_ns);
		/* Acquire: thr.tid is the running thread's.  Pairs with the
		 * release in orcu__gp_start_thread(). */
		if (st != CLOCK_ALIVE || !orcu__cas_acq_rel(&thr.clock, &st, CLOCK_READING)) {
			orcu__cpu_relax();
			continue;
		}
		ns = orcu__load_relaxed(&thr.cpu_past_ns);
		if (pthread_getcpuclockid(thr.tid, &id) == 0)
			ns += orcu__clock_ns(id);
		/* Release: pairs with the exchange in gp_thread_exit(). */
		orcu__store_release(&thr.clock, CLOCK_ALIVE);
		return ns;
	}
}

/* The GP thread, leaving (thr.clock above). */
static void gp_thread_exit(void)
{
	int st = CLOCK_ALIVE;

	/* Pairs with the reader's release of CLOCK_ALIVE; ALIVE may still be
	 * to come from our spawner (orcu__gp_start_thread()). */
	while (!orcu__cas_acq_rel(&thr.clock, &st, CLOCK_EXITING)) {
		st = CLOCK_ALIVE;
		orcu__cpu_relax();
	}
	orcu__fetch_add_relaxed(&thr.cpu_past_ns, orcu__clock_ns(CLOCK_THREAD_CPUTIME_ID));
	/* Release: the total counts us.  Pairs with the readers' acquire. */
	orcu__store_release(&thr.clock, CLOCK_NONE);
}

/* The server rule's turn (serve.c): work was left for a server
 * (`unserved`, which serve.c clears and serves), an in-place offer ends
 * (orcu__g.inplace_due_ns, written by this thread's turns), or missing
 * threads are due for a retry.
 * Returns 0 for "now", else how long until one is due (-1: never).
 * Order: none needed; serve.c decides again. */
static int64_t serve_due_ns(void)
{
	uint64_t now, at, offer = orcu__load_relaxed(&orcu__g.inplace_due_ns);
	bool degraded = orcu__load_relaxed(&orcu__g.degraded);

	if (orcu__load_relaxed(&orcu__g.unserved))
		return 0;
	if (!degraded && !offer)
		return -1;
	at = degraded ? orcu__load_relaxed(&orcu__g.retry_after_ns) : offer;
	if (offer && offer < at)
		at = offer;
	now = orcu__now_ns();
	return at <= now ? 0 : (int64_t)(at - now);
}

void orcu__gp_kick(void)
{
	wake_gp_thread(false);
}

static void *gp_thread_main(void *arg)
{
	(void)arg;
	/* A fork child's copy of this thread, back from the user code that
	 * forked (its stall handler or an orphan's callback) is retired
	 * (lifecycle.c): it finishes what it ran and ends; the child's GP
	 * thread is another (point 1). */
	while (!orcu__tls.retired) {
		int64_t serve = serve_due_ns();

		if (serve == 0) {
			serve_turn(true);
			if (orcu__tls.retired)
				break;
			serve = serve_due_ns();
		}
		/* Relaxed: what to do next; orcu__gp_drive() and the re-check
		 * after orcu__event_prepare() below read them again. */
		unsigned long cur = orcu__load_relaxed(&orcu__gp_seq);
		unsigned long need = orcu__load_relaxed(&req.needed);
		int64_t batch = 0;
		uint32_t ticket;

		if (orcu__seq_in_progress(cur) ||
		    (orcu__seq_lt(cur, need) && (batch = batch_wait_ns(cur)) == 0)) {
			/* A GP in progress is someone's: wait for its end. */
			if (orcu__seq_in_progress(cur) && orcu__seq_lt(need, orcu__seq_end(cur)))
				need = orcu__seq_end(cur);
			orcu__gp_drive(need, false);
			continue;
		}
		/* Pairs with the seq_cst store in orcu__gp_stop_thread(). */
		if (orcu__load_acquire(&thr.stop))
			break;
		orcu__store_relaxed(&req.sleeping, batch ? GP_SLEEP_BATCH : GP_SLEEP_IDLE);
		/* Its fence orders req.sleeping before the re-check: pairs with
		 * the fence in wake_gp_thread() (point 4). */
		ticket = orcu__event_prepare(&req.wake);
		if ((!batch && orcu__seq_lt(cur, orcu__load_relaxed(&req.needed))) ||
		    orcu__seq_lt(cur, orcu__load_relaxed(&req.needed_now)) ||
		    orcu__load_acquire(&thr.stop) || serve_due_ns() == 0) {
			orcu__event_cancel(&req.wake);
			orcu__store_relaxed(&req.sleeping, GP_AWAKE);
			continue;
		}
		/* Idle means idle, except while threads are missing or an
		 * in-place offer runs: then we wake when the retry is due or
		 * the offer ends (serve.c points 3 and 4). */
		if (serve > 0 && (!batch || serve < batch))
			batch = serve;
		orcu__event_wait(&req.wake, ticket, batch ? batch : -1);
		orcu__store_relaxed(&req.sleeping, GP_AWAKE);
	}
	/* Nobody reads a retired copy's clock (a fork child's, point 1;
	 * os.c detaches it): the child's thr.clock belongs to the GP thread
	 * it starts itself. */
	if (!orcu__tls.retired)
		gp_thread_exit();
	return NULL;
}

/* Under orcu__g.lock.  0, or -errno if the thread could not be created
 * (GPs then run on the threads that wait for them). */
int orcu__gp_start_thread(void)
{
	int ret;

	ORCU__ASSERT_HELD(&orcu__g.lock);
	if (orcu__load_relaxed(&thr.running))
		return 0;
	orcu__store_relaxed(&thr.stop, 0);
	/* The new thread's exit waits for this (gp_thread_exit()). */
	orcu__store_relaxed(&thr.clock, CLOCK_NONE);
	ret = orcu__spawn(&thr.tid, "orcu-gp", gp_thread_main, NULL);
	/* Release: thr.tid is set.  Pairs with the acquires of thr.running in
	 * orcu__gp_thread_running() and orcu__gp_stop_thread(), and of
	 * thr.clock in orcu__gp_thread_cpu_ns(). */
	if (ret == 0) {
		orcu__store_release(&thr.clock, CLOCK_ALIVE);
		orcu__store_release(&thr.running, 1);
	}
	return ret;
}

/* Without orcu__g.lock (the thread may run a user stall handler that
 * calls into the library): orcu_shutdown() makes sure it is the only
 * caller. */
void orcu__gp_stop_thread(void)
{
	/* Pairs with the release in orcu__gp_start_thread(): thr.tid is set. */
	if (!orcu__load_acquire(&thr.running))
		return;
	/* seq_cst: before wake_gp_thread()'s fence and load of req.sleeping
	 * (point 4); pairs with the acquires of thr.stop in gp_thread_main(). */
	orcu__store_seq_cst(&thr.stop, 1);
	orcu__store_relaxed(&req.sleeping, GP_SLEEP_IDLE);
	wake_gp_thread(false);
	orcu__join(thr.tid);
	/* Release: the thread is joined.  Pairs with the acquire in
	 * orcu__gp_thread_running(). */
	orcu__store_release(&thr.running, 0);
}

void orcu__gp_after_fork_child(void)
{
	/* No GP thread survived, and no GP owner but the forking thread, if
	 * it forked from its stall handler: it goes on owning (point 1).  A
	 * GP in progress that nobody owns (odd gp_seq) is redone from its
	 * start by the next owner.  A forking GP thread finishes what it
	 * runs, then ends. */
	orcu__store_relaxed(&thr.running, 0);
	orcu__store_relaxed(&thr.clock, CLOCK_NONE);
	orcu__store_relaxed(&own.owner, orcu__tls.gp_owning);
	orcu__store_relaxed(&req.sleeping, GP_AWAKE);
	orcu__event_reset(&own.done);
	orcu__event_reset(&req.wake);
	orcu__store_relaxed(&thr.stop, 0);
}

/* ------------------------------------------------------------------ */
/* Public updater API (orcu_synchronize*, orcu_start_poll and
 * orcu_cond_synchronize are in entry.c: they may start the library) */

/* Point 2.  The fence orders the caller's earlier stores (the unlink it
 * wants a GP for) before its read of gp_seq; pairs with the full barrier
 * that opens every GP's reader wait (orcu__registry_wait_readers()), which
 * comes after gp_seq turns odd.  Either we see that GP as started, and
 * snap waits for the next one, or its reader wait follows our stores
 * (pair #9). */
unsigned long orcu__gp_snap(void)
{
	orcu__fence_seq_cst();
	return orcu__seq_snap(orcu__load_relaxed(&orcu__gp_seq));
}

unsigned long orcu_get_state(void)
{
	return orcu__gp_snap();
}

bool orcu_poll_state(unsigned long cookie)
{
	/* Acquire pairs with the GP end: frees after a true are safe. */
	if (!orcu__seq_done(orcu__load_acquire(&orcu__gp_seq), cookie))
		return false;
	orcu__tsan_acquire(&orcu__san_gp_end); /* as orcu__gp_drive() */
	return true;
}
