#!/usr/bin/env bash
# Runs each fuzz target for FUZZ_SECONDS (default 30) from its seeds, and prints how many
# inputs it tried. Installs cargo-fuzz when missing. FUZZ_DEV=1 builds the targets without
# optimisation: minutes less to build, fewer inputs a second (CI's smoke run). See
# fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${FUZZ_SECONDS:-30}"
profile=()
[ -n "${FUZZ_DEV:-}" ] && profile=(--dev)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --quiet
export RUSTC_BOOTSTRAP=1
cargo fuzz build "${profile[@]}" -s none >/dev/null 2>&1 || cargo fuzz build "${profile[@]}" -s none
for target in framing_decode envelope action_params join url_policy; do
  mkdir -p "corpus/$target"
  log="$(mktemp)"
  if ! cargo fuzz run "${profile[@]}" "$target" -s none "corpus/$target" "seeds/$target" -- \
      -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1; then
    cat "$log" >&2
    echo "fuzz target $target failed" >&2
    exit 1
  fi
  runs="$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
  echo "fuzz $target: ${runs:-?} inputs in ${seconds}s, no failure"
  rm -f "$log"
done
