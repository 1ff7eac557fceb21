#!/usr/bin/env bash
# shim.sh examples|swap <build dir> <source dir> <C compiler> [sanitizers]
#  examples: install the build into a fresh prefix, then build liburcu-dev's
#    examples with their own Makefiles through the shim's pkg-config files
#    and run them; link kdig_stub.c with no RCU library; build lgpl_shim.c
#    (_LGPL_SOURCE), run it, and check it refuses to load on real liburcu.
#  swap: run swap_prog_{memb,qsbr} (built against liburcu) on the shim's
#    liburcu ABI 8 libraries via LD_LIBRARY_PATH, and check an
#    _LGPL_SOURCE binary fails to load naming liburcu's data.
set -euo pipefail
MODE=$1; B=$(cd "$2" && pwd); S=$(cd "$3" && pwd); CC=$4; SAN=${5:-}
san=(); [ -n "$SAN" ] && san=(-fsanitize="$SAN" -fno-omit-frame-pointer)
fail() { echo "shim.sh: $*" >&2; exit 1; }

if [ "$MODE" = swap ]; then
  L="$B/urcu-shim/lib"
  # swap_prog reads the shared pointer as liburcu's ABI has it without
  # _LGPL_SOURCE: a plain load, passed to rcu_dereference_sym().  TSan
  # reports that load against the updater whichever library serves it;
  # these runs check the ABI, the rest of the suite checks orcu's races.
  export TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0
  for fl in memb qsbr; do
    LD_LIBRARY_PATH="$L" "$B/tests/compat/urcu/swap_prog_$fl" || fail "swap_prog_$fl on the shim: exit $?"
    rc=0; "$B/tests/compat/urcu/swap_prog_$fl" >/dev/null || rc=$?
    [ $rc = 3 ] || fail "swap_prog_$fl on liburcu should say liburcu (3), got $rc"
  done
  rc=0; err=$(LD_LIBRARY_PATH="$L" "$B/tests/compat/urcu/swap_prog_lgpl" 2>&1) || rc=$?
  echo "swap_prog_lgpl: exit $rc: $err"
  [ $rc != 0 ] && grep -Eq "undefined symbol: urcu_memb_(reader|gp|has_sys_membarrier)" <<<"$err" ||
    fail "an _LGPL_SOURCE binary must fail to load on the shim, naming liburcu's data"
  exit 0
fi

T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cmake --install "$B" --prefix "$T/p" >/dev/null
export PKG_CONFIG_PATH=$(dirname "$(find "$T/p" -name liburcu.pc)")
cflags="$(pkg-config --cflags liburcu) ${san[*]}"
ldflags=$(pkg-config --libs-only-L --libs-only-other liburcu)
cp -r /usr/share/doc/liburcu-dev/examples "$T/ex"
dirs=(urcu-flavors list hlist wfcqueue wfstack lfstack rculfqueue rculfhash)
# liburcu-cds is not built with ThreadSanitizer
# (tests/compat/urcu/CMakeLists.txt).
[[ "$SAN" == *thread* ]] && dirs=(urcu-flavors list hlist wfcqueue wfstack)
# Some examples never free their lists: their leaks, not the shim's.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
n=0
for d in "${dirs[@]}"; do
  make -s -C "$T/ex/$d" AM_V_P=false CC="$CC" CFLAGS="$cflags" LDFLAGS="$ldflags" >/dev/null
  for x in $(find "$T/ex/$d" -type f -executable); do
    out=$("$x" 2>&1) || fail "$d/${x##*/}: exit $?: $out"
    n=$((n + 1))
  done
done
# Not "ldd | grep -q": under pipefail, grep's early exit can fail ldd.
deps=$(ldd "$T/ex/urcu-flavors/membarrier")
grep -q "urcu-shim/lib.*/liburcu.so.8" <<<"$deps" ||
  fail "membarrier does not load the shim's liburcu.so.8: $deps"
echo "examples: $n built with their own Makefiles through the shim, all ran"

# kdig: no -lurcu, no -lorcu: the stubs are all it links.
"$CC" $cflags "$S/tests/compat/urcu/kdig_stub.c" -o "$T/kdig_stub"
"$T/kdig_stub"
"$CC" $cflags "$S/tests/compat/urcu/lgpl_shim.c" -o "$T/lgpl_shim" $(pkg-config --libs liburcu)
"$T/lgpl_shim"
real=$(pkg-config --variable=libdir liburcu-cds 2>/dev/null || dirname "$(ldconfig -p | grep -m1 liburcu.so.8 | sed 's/.*=> //')")
rc=0; err=$(LD_LIBRARY_PATH="$real" "$T/lgpl_shim" 2>&1) || rc=$?
echo "lgpl_shim on liburcu: exit $rc: $err"
[ $rc != 0 ] && grep -q "undefined symbol: orcu_urcu_shim_lgpl" <<<"$err" ||
  fail "an _LGPL_SOURCE shim build must not run on liburcu"
