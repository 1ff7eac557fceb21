#!/usr/bin/env bash
# make fuzz: build the libFuzzer harness of the configuration parsers with
# clang (address + undefined sanitizers) and run it for a bounded time on a
# scratch copy of the seed corpus.  Exit status: the fuzzer's (0 = clean).
set -eu
secs=${1:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v clang >/dev/null || { echo "fuzz: clang missing (make deps)"; exit 1; }
clang -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
  -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Werror \
  -I"$here/include" -I"$here/src/base" "$here/src/base/cpulist.c" "$here/fuzz/fuzz_config.c" \
  -o "$out/fuzz_config"
cp -r "$here/fuzz/corpus" "$out/corpus"
echo "fuzz: running fuzz_config for ${secs}s"
cd "$out"
if ./fuzz_config -max_total_time="$secs" -print_final_stats=1 corpus 2>"$out/log"; then
  grep -E "stat::number_of_executed_units|Done" "$out/log" | tail -2
  echo "fuzz: PASS (no crash, no leak)"
else
  tail -40 "$out/log"
  echo "fuzz: FAIL"
  exit 1
fi
