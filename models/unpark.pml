/*
 * unpark.pml - a memb reader leaving the parked state (src/readers/registry.c
 * point 4, orcu__memb_unpark()) while a signal handler on the same thread
 * opens a read-side section, against a GP that skips membarrier() for a
 * reader it reads parked.
 *
 * Reader CPU: a FIFO store buffer for its stores to ctr (TSO), drained at
 * any moment by the drainer; its own loads of ctr see the newest buffered
 * value; a fence waits until the buffer is empty.  The updater/GP is
 * sequentially consistent; membarrier() drains the reader's buffer.
 *
 * Updater: ptr = NEW, fence, then the GP: load ctr; membarrier() unless
 * it read PARKED; wait until ctr shows no section; free OLD.
 * Reader: parked (it waited in orcu__gp_drive()), unparks; a signal
 * handler may run at any one point of the unpark and opens a section
 * (orcu_read_lock(): fast path, a buffered store and no fence, if it sees
 * IDLE; else the slow path, which unparks first); after the unpark the
 * thread opens a section of its own.  A section loads ptr, then uses what
 * it loaded: assert it was not freed meanwhile.
 *
 *   default        orcu: store UNPARKING, fence, store IDLE
 *   -DIDLE_FIRST   4ce5399: store IDLE, fence (the handler's lock takes
 *                  the fast path in the window): counterexample
 *   -DNO_SLOW_UNPARK  mutant: the slow path unparks only from PARKED (a
 *                  handler in the window finds UNPARKING and skips the
 *                  fence): counterexample
 */

#define OLD 0
#define NEW 1

#define PARKED    1
#define UNPARKING 2
#define IDLE      3
#define INSEC     4

byte ctr = PARKED;          /* memory */
chan buf = [4] of { byte }; /* the reader CPU's store buffer */
byte lastbuf;               /* newest value in buf (valid while len(buf) > 0) */
bit ptr = OLD;
bit freed;
bit handler_done;

inline store_ctr(v) {
	atomic { buf!v; lastbuf = v }
}

inline load_ctr(v) {
	atomic { if :: len(buf) > 0 -> v = lastbuf :: else -> v = ctr fi }
}

inline fence() {
	(len(buf) == 0)
}

inline section() {
	bit r;
	store_ctr(INSEC);        /* orcu__mb_slave(): no fence (membarrier) */
	r = ptr;
	/* the section uses what it loaded */
	assert(!(r == OLD && freed));
	store_ctr(IDLE)
}

inline unpark() {
#ifdef IDLE_FIRST
	store_ctr(IDLE);
	maybe_handler();
	fence();
#else
	store_ctr(UNPARKING);
	maybe_handler();
	fence();
	maybe_handler();
	store_ctr(IDLE);
#endif
}

/* The signal handler's unpark (read_lock_slow(): orcu__memb_unpark()). */
inline handler_unpark() {
	byte c;
	load_ctr(c);
#ifdef NO_SLOW_UNPARK
	if :: c == PARKED -> store_ctr(UNPARKING); fence()
	   :: else -> skip fi;
#else
	if :: c == PARKED || c == UNPARKING -> store_ctr(UNPARKING); fence()
	   :: else -> skip fi;
#endif
	store_ctr(IDLE)
}

inline handler() {
	byte v;
	load_ctr(v);
	if
	:: v == IDLE -> section()            /* orcu_read_lock() fast path */
	:: else -> handler_unpark(); section()
	fi
}

inline maybe_handler() {
	if
	:: !handler_done -> handler_done = 1; handler()
	:: true -> skip
	fi
}

active proctype reader()
{
	maybe_handler();        /* before the unpark's store: sees PARKED */
	unpark();
	section()
}

active proctype drainer()
{
	byte v;
end:	do
	:: atomic { buf?v -> ctr = v }
	od
}

active proctype gp()
{
	byte c;
	ptr = NEW;              /* SC: the updater's fence follows */
	c = ctr;
	if
	:: c != PARKED -> atomic { do :: buf?c -> ctr = c :: empty(buf) -> break od }
	:: else -> skip
	fi;
	(ctr != INSEC);
	freed = 1
}
