#!/usr/bin/env bash
# The demo: starts a relay and a headless worker, then plays an orchestrator that runs a shop
# task on a bundled page through POST /api/browser/action, one curl-style call per action, and
# prints each result and where the artifacts are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-system.sh
cargo build -q -p tether-relay -p tether-host

data="$(mktemp -d "${TMPDIR:-/tmp}/tether-demo.XXXXXX")"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port="$(free_port)"
pages="$(free_port)"
export TETHER_ORCHESTRATOR_TOKEN="demo-orchestrator-$RANDOM$RANDOM"
export TETHER_HOST_TOKEN="demo-host-$RANDOM$RANDOM"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

RUST_LOG=warn target/debug/tether-relay --listen "127.0.0.1:$port" --data-dir "$data" &
pids+=($!)
target/debug/tether-host worker --relay "ws://127.0.0.1:$port" --client-id demo-browser --headless &
pids+=($!)

# The shop page is served over HTTP on loopback: a worker refuses file: URLs unless it runs
# with --allow-file-urls (they read the machine's own disk).
python3 -m http.server "$pages" --bind 127.0.0.1 --directory scripts/demo >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  curl -sf -o /dev/null "http://127.0.0.1:$pages/shop.html" && break
  sleep 0.1
done

python3 scripts/demo/orchestrate.py "http://127.0.0.1:$port" "http://127.0.0.1:$pages/shop.html" "$data"
