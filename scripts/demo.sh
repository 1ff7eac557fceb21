#!/usr/bin/env bash
# make demo: orcu at work, then a short torture run and the headline
# comparison against peers (each part only if it was built).
set -eu
B=${1:-build}
echo "== orcu demo: readers, an updater, orcu_call and orcu_barrier =="
"$B/orcu-demo" 2
if [ -x "$B/orcu-torture" ]; then
  echo; echo "== short torture run (30 s) =="
  "$B/orcu-torture" --duration 30 --cpus possible=64,online=0-7 --hotplug --toggle-offload --barrier-torture
fi
if [ -x "$B/bench/orcu-bench" ]; then
  echo; echo "== headline comparison (ratios to peers, same run) =="
  "$B/bench/orcu-bench" headline
fi
