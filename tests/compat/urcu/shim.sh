#!/usr/bin/env bash
# shim.sh MODE <build dir> <source dir> <C compiler> [sanitizers]
# Each mode but swap installs the build into a fresh prefix and builds
# liburcu programs as their users do, with only the shim's directories
# (-I<shim>/include, -L<shim>/lib or its pkg-config files: never orcu's
# include directory, never an rpath flag of our own).  Programs run with
# orcu's <libdir> on the loader path, as an installed orcu is, and nothing
# else: the system's liburcu.so.8 stays on its default path.
#  examples:     liburcu-dev's examples with their own Makefiles through
#                the shim's pkg-config files; kdig_stub.c with no RCU library.
#  lgpl_unused:  an _LGPL_SOURCE unit that includes <urcu.h> (qsbr, bp too)
#                and calls nothing links with no RCU library (xfsprogs).
#  include_only: lgpl_shim.c (_LGPL_SOURCE) built with -I<shim>/include
#                -L<shim>/lib -lurcu only, runs on orcu; the unit that links
#                nothing builds with -I<shim>/include alone.
#  plain_link:   swap_prog.c (functions only) built with -lurcu, no rpath:
#                it runs on orcu, and ldd names orcu's library.
#  bp:           bp_prog.c through liburcu-bp.pc and -lurcu-bp, with and
#                without _LGPL_SOURCE, runs on orcu with bp's semantics.
#  swap:         binaries built on liburcu (swap_prog_{memb,qsbr,bp}) run
#                on the shim's sonames via LD_LIBRARY_PATH; an _LGPL_SOURCE
#                one fails to load naming liburcu's data; the shim's
#                libraries define every function liburcu's define.
set -euo pipefail
MODE=$1; B=$(cd "$2" && pwd); S=$(cd "$3" && pwd); CC=$4; SAN=${5:-}
san=(); [ -n "$SAN" ] && san=(-fsanitize="$SAN" -fno-omit-frame-pointer)
U="$S/tests/compat/urcu"
fail() { echo "shim.sh $MODE: $*" >&2; exit 1; }
# Not "ldd | grep -q": under pipefail, grep's early exit can fail ldd.
served_by_orcu() {  # <binary>: its liburcu names resolve to orcu's libraries
  local deps; deps=$(ldd "$1")
  echo "ldd ${1##*/}: $(grep -E 'urcu|orcu' <<<"$deps" | sed 's/ (0x.*//' | tr -s '\t\n' '  ')"
  ! grep -Eq '(^|[[:space:]])liburcu(-memb|-qsbr|-bp|-mb|-signal)?\.so\.8 ' <<<"$deps" ||
    fail "${1##*/} needs a liburcu flavour soname, which the system's liburcu serves: $deps"
  grep -q 'liborcu-liburcu-' <<<"$deps" || fail "${1##*/} does not load orcu's liburcu library: $deps"
}

if [ "$MODE" = swap ]; then
  L="$B/urcu-shim/lib"
  # swap_prog reads the shared pointer as liburcu's ABI has it without
  # _LGPL_SOURCE: a plain load, passed to rcu_dereference_sym().  TSan
  # reports that load against the updater whichever library serves it;
  # these runs check the ABI, the rest of the suite checks orcu's races.
  # bp_prog's fork child starts orcu's threads: TSan's die_after_fork=0.
  export TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0:die_after_fork=0
  for fl in memb qsbr bp; do
    p="$B/tests/compat/urcu/swap_prog_$fl"
    LD_LIBRARY_PATH="$L" "$p" || fail "swap_prog_$fl on the shim: exit $?"
    rc=0; "$p" >/dev/null || rc=$?
    [ $rc = 3 ] || fail "swap_prog_$fl on liburcu should say liburcu (3), got $rc"
  done
  rc=0; err=$(LD_LIBRARY_PATH="$L" "$B/tests/compat/urcu/swap_prog_lgpl" 2>&1) || rc=$?
  echo "swap_prog_lgpl: exit $rc: $err"
  [ $rc != 0 ] && grep -Eq "undefined symbol: urcu_memb_(reader|gp|has_sys_membarrier)" <<<"$err" ||
    fail "an _LGPL_SOURCE binary must fail to load on the shim, naming liburcu's data"
  # Every function liburcu's flavour libraries define, the shim's do, but
  # compat_futex_*: the futex fallback for systems without futex(2), also
  # in liburcu-common, which stays liburcu's.
  for so in liburcu.so.8 liburcu-memb.so.8 liburcu-qsbr.so.8 liburcu-bp.so.8; do
    # awk reads to the end: an early exit could kill ldconfig with
    # SIGPIPE mid-write, and pipefail then ends the script, silently.
    real=$(ldconfig -p | awk -v so="$so" '$1 == so && !found { print $NF; found = 1 }')
    [ -n "$real" ] || continue
    missing=$(comm -23 <(nm -D --defined-only "$real" | awk '$2 == "T" && $3 !~ /^compat_futex_/ { print $3 }' | sort) \
      <(nm -D --defined-only "$L/$so" | awk '$2 == "T" { print $3 }' | sort) | tr '\n' ' ')
    [ -z "$missing" ] || fail "the shim's $so lacks functions $real defines: $missing"
    echo "$so: every function of $real defined"
  done
  exit 0
fi

T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cmake --install "$B" --prefix "$T/p" >/dev/null
PCDIR=$(dirname "$(find "$T/p" -name liburcu.pc)")
SHIM=$(dirname "$(dirname "$PCDIR")")
LIBDIR=$(dirname "$(dirname "$SHIM")")
export PKG_CONFIG_PATH=$PCDIR
# Some examples never free their lists: their leaks, not the shim's.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

case $MODE in
examples)
  cflags="$(pkg-config --cflags liburcu) ${san[*]}"
  ldflags=$(pkg-config --libs-only-L --libs-only-other liburcu)
  cp -r /usr/share/doc/liburcu-dev/examples "$T/ex"
  dirs=(urcu-flavors list hlist wfcqueue wfstack lfstack rculfqueue rculfhash)
  # liburcu-cds is not built with ThreadSanitizer
  # (tests/compat/urcu/CMakeLists.txt).
  [[ "$SAN" == *thread* ]] && dirs=(urcu-flavors list hlist wfcqueue wfstack)
  n=0
  for d in "${dirs[@]}"; do
    make -s -C "$T/ex/$d" AM_V_P=false CC="$CC" CFLAGS="$cflags" LDFLAGS="$ldflags" >/dev/null
    for x in $(find "$T/ex/$d" -type f -executable); do
      out=$("$x" 2>&1) || fail "$d/${x##*/}: exit $?: $out"
      n=$((n + 1))
    done
  done
  served_by_orcu "$T/ex/urcu-flavors/membarrier"
  served_by_orcu "$T/ex/urcu-flavors/bp"
  echo "examples: $n built with their own Makefiles through the shim, all ran"
  # kdig: no -lurcu, no -lorcu: the stubs are all it links.
  "$CC" $cflags "$U/kdig_stub.c" -o "$T/kdig_stub"
  "$T/kdig_stub"
  ;;
lgpl_unused)
  # The compiler flags of liburcu.pc (include_only checks -I<shim>/include
  # alone), and no library at all.
  for fl in "" -DUSE_QSBR -DUSE_BP; do
    # shellcheck disable=SC2046
    "$CC" -Wall -Wextra -Werror "${san[@]}" $fl $(pkg-config --cflags liburcu) "$U/lgpl_unused.c" \
      -o "$T/lgpl_unused" || fail "an _LGPL_SOURCE unit that calls nothing ($fl) must link with no RCU library"
    "$T/lgpl_unused"
  done
  ;;
include_only)
  "$CC" -Wall -Wextra -Werror "${san[@]}" -I"$SHIM/include" "$U/lgpl_unused.c" -o "$T/lgpl_unused"
  "$T/lgpl_unused"
  "$CC" -Wall -Wextra -Werror "${san[@]}" -I"$SHIM/include" "$U/lgpl_shim.c" -o "$T/lgpl_shim" \
    -L"$SHIM/lib" -lurcu || fail "-I<shim>/include -L<shim>/lib must be enough"
  LD_LIBRARY_PATH="$LIBDIR" "$T/lgpl_shim" || fail "lgpl_shim: exit $? (3: not on orcu)"
  LD_LIBRARY_PATH="$LIBDIR" served_by_orcu "$T/lgpl_shim"
  ;;
plain_link)
  "$CC" "${san[@]}" -I"$SHIM/include" "$U/swap_prog.c" -o "$T/plain" -L"$SHIM/lib" -lurcu -lurcu-common -lpthread
  LD_LIBRARY_PATH="$LIBDIR" "$T/plain" || fail "a plain -lurcu build: exit $? (3: it ran on the system's liburcu)"
  LD_LIBRARY_PATH="$LIBDIR" served_by_orcu "$T/plain"
  ;;
bp)
  # As in swap: without _LGPL_SOURCE liburcu's ABI reads the pointer with a
  # plain load (rcu_dereference_sym()), which TSan reports whichever
  # library serves it; the child of bp_prog's fork starts orcu's threads.
  export TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0:die_after_fork=0
  for lgpl in "" -D_LGPL_SOURCE; do
    # shellcheck disable=SC2046
    "$CC" -Wall -Wextra -Werror "${san[@]}" $lgpl $(pkg-config --cflags liburcu-bp) "$U/bp_prog.c" \
      -o "$T/bp_pc" $(pkg-config --libs liburcu-bp) -lpthread
    "$T/bp_pc" || fail "bp_prog ($lgpl) through liburcu-bp.pc: exit $? (3: not on orcu)"
    "$CC" -Wall -Wextra -Werror "${san[@]}" $lgpl -I"$SHIM/include" "$U/bp_prog.c" -o "$T/bp" \
      -L"$SHIM/lib" -lurcu-bp -lpthread
    LD_LIBRARY_PATH="$LIBDIR" "$T/bp" || fail "bp_prog ($lgpl) with -lurcu-bp: exit $? (3: not on orcu)"
    LD_LIBRARY_PATH="$LIBDIR" served_by_orcu "$T/bp"
  done
  ;;
*) fail "unknown mode" ;;
esac
