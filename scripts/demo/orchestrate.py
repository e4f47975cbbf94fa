"""The demo's orchestrator: what an agent server in any language does with Tether.

Waits for the browser to come online, runs a shop task through POST /api/browser/action (one
call, one result), and prints each result, then where the session log and artifacts are.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

relay, page, data_dir = sys.argv[1], sys.argv[2], sys.argv[3]
token = os.environ["TETHER_ORCHESTRATOR_TOKEN"]
session = "demo-session"


def call(method, path, body=None):
    request = urllib.request.Request(relay + path, method=method)
    request.add_header("Authorization", "Bearer " + token)
    if body is not None:
        request.add_header("Content-Type", "application/json")
        request.data = json.dumps(body).encode()
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def wait_for_browser(seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            clients = call("GET", "/api/extension/extension-list")["clients"]
            if any(c["online"] for c in clients):
                return clients
        except (urllib.error.URLError, ConnectionError):
            pass  # the relay is still starting
        time.sleep(0.2)
    sys.exit("no browser came online within %d s" % seconds)


clients = wait_for_browser()
meta = clients[0]["meta"]
print("Browser online: %s (%s %s, %s mode)" % (clients[0]["clientId"], meta["browser"], meta["browserVersion"], meta["mode"]), file=sys.stderr)
print("Running a shop task on %s through %s" % (page, relay), file=sys.stderr)

tab = None
failed = False
artifacts = []
scanned = []


def ref_of(element_id):
    """The ref (eN) the last scan gave the element with this id: what an agent clicks by."""
    return next(e["ref"] for e in scanned if (e.get("attributes") or {}).get("id") == element_id)


steps = [
    ("session_start", {"url": page, "groupTitle": "Tether demo"}),
    ("browser_wait_for_loaded", {}),
    ("browser_xpath_scan", {}),
    ("browser_type", {"xpath": "//input[@id='search']", "text": "lantern", "submit": True}),
    ("browser_fill_form", lambda: {"fields": [{"ref": ref_of("quantity"), "value": "Two"}]}),
    ("browser_click", lambda: {"ref": ref_of("add-to-basket")}),
    ("browser_wait_for", {"text": "In your basket: 2"}),
    ("browser_readability_extract", {}),
    ("browser_screenshot", {"maxWidth": 800}),
    ("browser_get_html", {"xpath": "//main"}),
    ("browser_pdf", {}),
    ("session_stop", {}),
]
for name, params in steps:
    if callable(params):
        params = params()
    if tab is not None and name.startswith("browser_"):
        params = dict(params, tabId=tab)
    r = call("POST", "/api/browser/action", {"sessionId": session, "actionName": name, "params": params})
    if name == "session_start" and r["status"] == "success":
        tab = r["result"]["tabId"]
    if name == "browser_xpath_scan" and r["status"] == "success":
        scanned = r["result"]["elements"]
    body = r.get("result") if r["status"] == "success" else r.get("error")
    if r["status"] == "success" and "artifactId" in (body or {}):
        artifacts.append((name, body["url"]))
    failed |= r["status"] != "success"
    text = json.dumps(body, ensure_ascii=False)
    print("%-28s %-8s %5d ms  %s" % (name, r["status"], r["durationMs"], text[:150] + ("…" if len(text) > 150 else "")))

# The presigned URLs need no token; fetch each artifact while the relay still runs.
saved = []
out_dir = os.path.join(data_dir, "downloads")
os.makedirs(out_dir, exist_ok=True)
for name, url in artifacts:
    with urllib.request.urlopen(url, timeout=30) as response:
        kind = response.headers.get("Content-Type", "")
        ext = {"image/png": "png", "image/jpeg": "jpg", "text/html": "html", "application/pdf": "pdf"}.get(kind.split(";")[0], "txt")
        path = os.path.join(out_dir, "%s.%s" % (name, ext))
        with open(path, "wb") as f:
            f.write(response.read())
    saved.append((name, url, path))

print(file=sys.stderr)
print("Session log (every envelope of the session): %s/logs/%s.jsonl" % (data_dir, session), file=sys.stderr)
print("Artifacts, downloaded by their presigned URLs:", file=sys.stderr)
for name, url, path in saved:
    print("  %-20s %s\n  %-20s <- %s" % (name, path, "", url), file=sys.stderr)
sys.exit(1 if failed else 0)
