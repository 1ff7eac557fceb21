/*
 * trace.h - USDT probes (systemtap-sdt-dev's <sys/sdt.h>) at the engine's
 * interesting moments, for perf/bpftrace: `perf probe -x liborcu.so
 * sdt_orcu:gp_end` or `bpftrace -e 'usdt:./liborcu.so:orcu:gp_end {...}'`.
 * A probe is a nop until someone attaches.  Without the header the
 * probes compile to nothing.  Owns nothing.
 */
#ifndef ORCU_TRACE_H
#define ORCU_TRACE_H

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define ORCU__HAVE_SDT 1
#endif
#endif

#ifdef ORCU__HAVE_SDT
#define orcu__trace1(name, a) DTRACE_PROBE1(orcu, name, a)
#define orcu__trace2(name, a, b) DTRACE_PROBE2(orcu, name, a, b)
#else
#define orcu__trace1(name, a) ((void)(a))
#define orcu__trace2(name, a, b) ((void)(a), (void)(b))
#endif

#endif
