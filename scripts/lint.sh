#!/usr/bin/env bash
# make lint: the formatter and the analyser, each finding fatal.
#   1. clang-format --dry-run -Werror over src/ and include/ (.clang-format);
#   2. clang-tidy over src/*.c (.clang-tidy: clang-analyzer-*, bugprone-*),
#      with the compile commands of build directory $1, JOBS at a time.
# Both are version 14 (Debian bookworm): another version may format or
# warn differently.  `make format` rewrites the files in place.
set -u
build=${1:-build}
jobs=${JOBS:-2}
cd "$(dirname "$0")/.."
for t in clang-format clang-tidy; do
  command -v "$t" >/dev/null || { echo "lint: $t missing (make deps)" >&2; exit 1; }
done
[ -f "$build/compile_commands.json" ] || {
  echo "lint: no $build/compile_commands.json (configure with cmake first)" >&2; exit 1; }
status=0
find src include \( -name '*.c' -o -name '*.h' -o -name '*.hpp' \) -print0 | sort -z |
  xargs -0 clang-format --dry-run -Werror || status=1
# clang-tidy says "N warnings generated." for the ones it hides.
find src -name '*.c' -print0 | sort -z |
  xargs -0 -n 4 -P "$jobs" clang-tidy -p "$build" --quiet 2> >(grep -v 'warnings\? generated\.$' >&2) ||
  status=1
[ "$status" = 0 ] && echo "lint: clang-format and clang-tidy: no finding"
exit "$status"
