#!/usr/bin/env bash
# The demo: drives a headless Chromium through the whole action catalog on a bundled page and
# prints each result, then where the screenshot, HTML and text artifacts are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-chromium.sh
cargo build -q -p tether-host
page="file://$PWD/scripts/demo/shop.html"
artifacts="${TMPDIR:-/tmp}/tether-demo-artifacts"
steps=$(cat <<JSON
[
  {"actionName": "session_start", "params": {"url": "$page", "groupTitle": "Tether demo"}},
  {"actionName": "browser_wait_for_loaded"},
  {"actionName": "browser_xpath_scan"},
  {"actionName": "browser_type", "params": {"xpath": "//input[@id='search']", "text": "lantern", "submit": true}},
  {"actionName": "browser_click", "params": {"xpath": "//button[@id='add-to-basket']"}},
  {"actionName": "browser_readability_extract"},
  {"actionName": "browser_screenshot", "params": {"maxWidth": 800}},
  {"actionName": "browser_get_html", "params": {"xpath": "//main"}},
  {"actionName": "session_stop"}
]
JSON
)
echo "Running the action catalog against $page" >&2
status=0
target/debug/tether-host exec --artifact-dir "$artifacts" "$steps" > "$artifacts.jsonl" || status=$?
python3 - "$artifacts.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    body = r.get("result") if r["status"] == "success" else r.get("error")
    text = json.dumps(body, ensure_ascii=False)
    print(f"{r['actionName']:<28} {r['status']:<8} {r['durationMs']:>5} ms  {text[:150]}{'…' if len(text) > 150 else ''}")
PY
echo >&2
echo "Results, one JSON payload per line: $artifacts.jsonl" >&2
echo "Artifacts (screenshot, HTML): $artifacts" >&2
exit "$status"
