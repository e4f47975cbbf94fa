// One action through the relay's /mcp (the official SDK's client) against the same action as
// POST /api/browser/action (fetch), in alternation from this one process, so both pay the
// same client costs. tests/benches/mcp.rs sets up the relay, the worker and the tab.
//
//   node bench.mjs <relay base URL> <token> <sessionId> <tabId> <runs>
// Prints one JSON line: { "<action>": { "http": [ms...], "mcp": [ms...], "bare": [ms...] }, ... }.
// "bare" is the same tools/call as one plain POST on the SDK's MCP session, its SSE answer read
// whole: the relay's side of MCP without the SDK client's own work.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [base, token, sessionId, tab, runs] = process.argv.slice(2);
const tabId = Number(tab);
const headers = { Authorization: `Bearer ${token}` };
const client = new Client({ name: "tether-bench", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
await client.connect(transport);

const cases = {
  browser_tabs: {},
  browser_snapshot: { tabId, detail: "gist" },
  browser_xpath_scan: { tabId },
};

async function viaHttp(actionName, params) {
  const response = await fetch(`${base}/api/browser/action`, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({ sessionId, actionName, params }),
  });
  const result = await response.json();
  if (result.status !== "success") throw new Error(JSON.stringify(result));
}

async function viaMcp(name, params) {
  const result = await client.callTool({ name, arguments: { ...params, sessionId } });
  if (result.isError) throw new Error(JSON.stringify(result));
}

let id = 1000;
async function bare(name, params) {
  const response = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      ...headers,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "Mcp-Session-Id": transport.sessionId,
      "MCP-Protocol-Version": transport.protocolVersion,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: { ...params, sessionId } } }),
  });
  const body = await response.text();
  if (!body.includes('"isError":false')) throw new Error(body);
}

async function time(f) {
  const start = performance.now();
  await f();
  return performance.now() - start;
}

const out = {};
for (const [action, params] of Object.entries(cases)) {
  const http = [];
  const mcp = [];
  const bares = [];
  for (let i = 0; i < 5; i++) {
    await viaHttp(action, params);
    await viaMcp(action, params);
    await bare(action, params);
  }
  for (let i = 0; i < Number(runs); i++) {
    http.push(await time(() => viaHttp(action, params)));
    mcp.push(await time(() => viaMcp(action, params)));
    bares.push(await time(() => bare(action, params)));
  }
  out[action] = { http, mcp, bare: bares };
}
console.log(JSON.stringify(out));
await client.close();
