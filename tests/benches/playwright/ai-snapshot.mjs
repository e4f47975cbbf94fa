// Playwright's AI snapshot of pages (what Playwright MCP's browser_snapshot returns:
// page.ariaSnapshot({ mode: "ai" })), taken on a running Chromium over CDP, so that Tether and
// Playwright read the same pages in the same browser. For tests/benches/snapshot.rs.
//
//   node ai-snapshot.mjs ws://127.0.0.1:PORT/devtools/browser/ID URL...
//
// Prints one JSON line per URL: { url, chars, roles: { link: [names], button: [...], ... } }.
import { chromium } from "playwright-core";

const INPUTS = new Set(["textbox", "searchbox", "combobox", "checkbox", "radio", "switch", "slider", "spinbutton"]);
const [endpoint, ...urls] = process.argv.slice(2);

// `- link "Name" [ref=e12]` (the key may be YAML-quoted when it holds ": ").
function named(snapshot) {
  const roles = { link: [], button: [], input: [] };
  for (const raw of snapshot.split("\n")) {
    let line = raw.trim().replace(/^- /, "");
    if (line.startsWith("'")) line = line.slice(1, line.lastIndexOf("'")).replace(/''/g, "'");
    const m = /^([a-z]+)(?: ("(?:[^"\\]|\\.)*"))?.*\[ref=/.exec(line);
    if (!m) continue;
    const role = m[1] === "link" || m[1] === "button" ? m[1] : INPUTS.has(m[1]) ? "input" : null;
    if (role) roles[role].push(m[2] ? JSON.parse(m[2]) : "");
  }
  return roles;
}

const browser = await chromium.connectOverCDP(endpoint);
const context = browser.contexts()[0] ?? (await browser.newContext());
const page = await context.newPage();
await page.setViewportSize({ width: 1280, height: 800 });
// Only the bench's own server answers: the corpus pages' outside links would stall loading
// on a closed network.
const local = new URL(urls[0] ?? "http://127.0.0.1/").host;
await page.route("**/*", (route) => (new URL(route.request().url()).host === local ? route.continue() : route.abort()));
for (const url of urls) {
  await page.goto(url, { waitUntil: "domcontentloaded", timeout: 30000 });
  await page.waitForLoadState("load", { timeout: 5000 }).catch(() => {});
  const snapshot = await page.ariaSnapshot({ mode: "ai" });
  console.log(JSON.stringify({ url, chars: [...snapshot].length, roles: named(snapshot) }));
}
await page.close();
// Not browser.close(): the browser is the bench's, and stays.
process.exit(0);
