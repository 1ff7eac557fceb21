#!/usr/bin/env bash
# abi-check.sh <build dir> [--update]
# Compares the ABI of <build dir>/liborcu.so (abidw, from its DWARF,
# public types only) with the baseline abi/liborcu.abi and fails on an
# incompatible change: a symbol removed, a function or variable whose type
# changed, a public struct whose layout changed.  Added symbols are
# compatible and pass.  --update rewrites the baseline instead (make
# abi-baseline), for a deliberate change: docs/ABI.md says when.
# The baseline is x86-64's; elsewhere the check says so and passes.
set -euo pipefail
B=$1
S=$(cd "$(dirname "$0")/.." && pwd)
lib="$B/liborcu.so"
base="$S/abi/liborcu.abi"

if ! command -v abidw >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    abigail-tools >/dev/null
fi
command -v abidw >/dev/null || { echo "abi-check: abidw not found (Debian: abigail-tools)" >&2; exit 1; }
[ -f "$lib" ] || { echo "abi-check: $lib not found: build first (make build)" >&2; exit 1; }
if ! readelf -S "$lib" | grep -q '\.debug_info'; then
  echo "abi-check: $lib has no debug info: build with -g (RelWithDebInfo, the default)" >&2
  exit 1
fi

dump() {
  abidw --no-corpus-path --no-comp-dir-path --no-show-locs --type-id-style hash \
    --headers-dir "$S/include" --drop-private-types --drop-undefined-syms "$lib"
}

if [ "${2:-}" = --update ]; then
  dump >"$base"
  echo "abi-check: wrote abi/liborcu.abi from $lib"
  exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
  echo "abi-check: the baseline is x86-64's; not compared on $(uname -m)"
  exit 0
fi
cur=$(mktemp)
trap 'rm -f "$cur"' EXIT
dump >"$cur"
# --no-added-syms: an added symbol is compatible; anything else abidiff
# reports (removed symbols, changed types) makes it return non-zero.
if abidiff --no-added-syms "$base" "$cur"; then
  echo "abi-check: liborcu.so is compatible with abi/liborcu.abi"
else
  rc=$?
  echo "abi-check: liborcu.so breaks abi/liborcu.abi (abidiff exit $rc; 4: changed, 8: incompatible)." >&2
  echo "abi-check: if the change is deliberate, follow docs/ABI.md and run: make abi-baseline" >&2
  exit 1
fi
