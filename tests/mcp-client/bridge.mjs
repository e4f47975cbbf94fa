// The official MCP SDK as a test client, driven line by line: tests/mcp.rs starts it, writes
// one JSON request per line on stdin and reads one JSON answer per line on stdout, so the Rust
// tests decide each call from the previous answer (a ref from a snapshot, say) while every
// byte on the MCP side is the SDK's own.
//
//   node bridge.mjs http <url> [token]      streamable HTTP, Authorization: Bearer <token>
//   node bridge.mjs stdio <command> [args]  a server the SDK starts and talks to on stdio
//
// Requests: {"op":"tools"} | {"op":"call","name":...,"arguments":{...}} | {"op":"close"}
//   | {"op":"end"} (over HTTP: ends the MCP session with a DELETE, then closes).
// Answers: {"connected":{...}} first, then {"ok":...} or {"error":{"code","message"}} per request.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
const failure = (e) => ({ error: { code: e.code ?? null, message: String(e.message ?? e) } });

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === "http") {
  const headers = rest[0] ? { Authorization: `Bearer ${rest[0]}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });
} else {
  say({ error: { code: null, message: "usage: bridge.mjs http <url> [token] | stdio <command> [args...]" } });
  process.exit(2);
}

const client = new Client({ name: "tether-tests", version: "1.0.0" });
try {
  await client.connect(transport);
} catch (e) {
  say(failure(e));
  process.exit(1);
}
// The server's process, to report how it ended (the SDK ends its stdin, then signals it).
const child = mode === "stdio" ? transport._process : null;
const ended = child ? new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))) : null;
say({
  connected: {
    server: client.getServerVersion(),
    protocolVersion: transport.protocolVersion ?? null,
    sessionId: transport.sessionId ?? null,
    pid: transport.pid ?? null,
  },
});

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  try {
    if (request.op === "tools") {
      say({ ok: await client.listTools() });
    } else if (request.op === "call") {
      say({ ok: await client.callTool({ name: request.name, arguments: request.arguments ?? {} }) });
    } else if (request.op === "end") {
      await transport.terminateSession();
      await client.close();
      say({ ok: {} });
      process.exit(0);
    } else if (request.op === "close") {
      await client.close();
      say({ ok: ended ? await ended : {} });
      process.exit(0);
    } else {
      say({ error: { code: null, message: `unknown op ${request.op}` } });
    }
  } catch (e) {
    say(failure(e));
  }
}
await client.close();
