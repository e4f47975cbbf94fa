// One agent step through two MCP servers on stdio with the official SDK's client, as an agent
// takes it: open a page (browser_navigate), act once (a click, or text typed into a search box),
// read the reply. tests/benches/agent_step.rs serves the pages and reads the figures.
//
//   node agent_step.mjs <pages base URL> <runs> <server name> <command> [args...] -- <server name> <command> [args...]
//
// Prints one JSON line per page kind and server: { kind, server, ms: [...], chars: [...],
// settled: [...] }: each step's time as the client sees it, the characters of its reply, and
// whether the reply shows the page's final state. A server named "tether-none" is Tether with
// `settle: "none"` on the step. Then, per server, { server, listBytes, taskChars, taskDone }:
// the bytes of its tools/list (what many clients send with every model call), and the
// characters an agent reads for a whole small task (open a form, read it, fill three fields,
// choose an option, send, read the answer), the pages a reply links to counted where the agent
// needs them. A server named "...-list" is only listed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [base, runsText, ...rest] = process.argv.slice(2);
const runs = Number(runsText);
const servers = [];
for (let words = rest; words.length; ) {
  const end = words.indexOf("--");
  const mine = end === -1 ? words : words.slice(0, end);
  servers.push({ name: mine[0], command: mine[1], args: mine.slice(2) });
  words = end === -1 ? [] : words.slice(end + 1);
}

// Each page kind: its query, the step, and the text its final state shows.
const KINDS = [
  { kind: "static", query: "kind=static", step: "click", final: "Done" },
  { kind: "fetch 100 ms", query: "kind=fetch&ms=100", step: "click", final: "Done" },
  { kind: "fetch 600 ms", query: "kind=fetch&ms=600", step: "click", final: "Done" },
  { kind: "chain of two fetches", query: "kind=chain&ms=100", step: "click", final: "Done" },
  { kind: "timer 300 ms", query: "kind=timer&ms=300", step: "click", final: "Done" },
  { kind: "form POST, redirect after 400 ms", query: "kind=form", step: "submit", final: "Done" },
  { kind: "debounced search", query: "kind=debounce&ms=50", step: "type", final: "Done: results for lamp" },
  { kind: "long-poll never answered", query: "kind=longpoll", step: "click", final: "Waiting for news" },
  { kind: "clock beside a button", query: "kind=clock", step: "click", final: "Done" },
];

// The ref of the element named `name` with `role` in a reply: Tether writes `[e5] button "Go"`
// (a page seen before answers with what changed: `+` lines came, `- [` lines went), Playwright
// MCP `- button "Go" [ref=e5]`.
function refOf(text, role, name) {
  for (const line of text.split("\n")) {
    if (!line.includes(role) || !line.includes(`"${name}"`)) continue;
    // A line Tether's answer shows as gone since the previous snapshot (`- [e1] ...`).
    if (line.startsWith("- [")) continue;
    const tether = line.match(new RegExp(`\\[(e\\d+)\\] ${role} "${name}"`));
    if (tether) return tether[1];
    const playwright = line.match(/\[ref=([^\]]+)\]/);
    if (playwright) return playwright[1];
  }
  throw new Error(`no ${role} "${name}" in:\n${text}`);
}

import { readFileSync } from "node:fs";

// A reply as its reader has it: its text, and the snapshot file it links to where the server
// wrote the page there instead (Playwright MCP's "[Snapshot](file.yml)"), for judging what the
// reply showed; its characters are the text's alone.
function shown(text) {
  const linked = text.match(/\[Snapshot\]\(([^)]+)\)/);
  if (!linked) return text;
  try {
    return `${text}\n${readFileSync(linked[1], "utf8")}`;
  } catch (_) {
    return text;
  }
}

const textOf = (result) => (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${textOf(result)}`);
  return textOf(result);
}

async function step(server, client, kind) {
  const opened = await call(client, "browser_navigate", { url: `${base}/fixtures/step.html?${kind.query}` });
  const none = server.name === "tether-none" ? { settle: "none" } : {};
  const [role, name] = { click: ["button", "Go"], submit: ["button", "Order"], type: ["textbox", "Search"] }[kind.step];
  const ref = refOf(shown(opened), role, name);
  // Playwright MCP takes the ref as `target` with the element's description; Tether, `ref`.
  const playwright = server.name === "playwright-mcp";
  const element = playwright ? { element: `${name} ${role}`, target: ref } : { ref };
  const start = performance.now();
  const reply = kind.step === "type"
    ? await call(client, "browser_type", { ...element, text: "lamp", ...none })
    : await call(client, "browser_click", { ...element, ...none });
  const ms = performance.now() - start;
  return { ms, chars: reply.length, settled: shown(reply).includes(kind.final) };
}

// The small task, as an agent does it with each server's tools; the replies' characters, and
// whether the answer was read.
async function task(server, client) {
  const playwright = server.name === "playwright-mcp";
  // What the agent reads: each reply's text, and the page a reply links to in a file where it
  // needs the page (the snapshot, for refs; the answer, where the reply has it only there).
  let read = 0;
  const act = async (name, args) => {
    const text = await call(client, name, args);
    read += text.length;
    return text;
  };
  const readLinked = (text) => {
    read += shown(text).length - text.length;
    return shown(text);
  };
  await act("browser_navigate", { url: `${base}/fixtures/task.html` });
  const page = readLinked(await act("browser_snapshot", {}));
  const ref = (role, name) => refOf(page, role, name);
  const typed = [["Name", "Ada"], ["Email", "ada@example.com"], ["Notes", "Bulbs, please"]];
  const fields = typed.map(([name, value]) =>
    playwright ? { name, type: "textbox", target: ref("textbox", name), value } : { ref: ref("textbox", name), value });
  await act("browser_fill_form", { fields });
  const country = ref("combobox", "Country");
  await act("browser_select_option", playwright ? { element: "Country", target: country, values: ["France"] } : { ref: country, values: ["France"] });
  const send = ref("button", "Send");
  const answer = "Thank you, Ada: your catalogue goes to France.";
  let sent = await act("browser_click", playwright ? { element: "Send", target: send } : { ref: send });
  if (!sent.includes(answer)) sent = readLinked(sent);
  if (!sent.includes(answer)) sent = readLinked(await act("browser_snapshot", {}));
  return { taskChars: read, taskDone: sent.includes(answer) };
}

const clients = [];
for (const server of servers) {
  const client = new Client({ name: "tether-agent-step-bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: server.command, args: server.args, stderr: "ignore" }));
  clients.push({ server, client });
}
const stepping = clients.filter(({ server }) => !server.name.endsWith("-list"));
for (const kind of KINDS) {
  const seen = new Map(stepping.map(({ server }) => [server.name, { ms: [], chars: [], settled: [] }]));
  for (let run = 0; run < runs + 1; run++) {
    // In turns, who goes first rotating; the first round warms each up and is not counted.
    const order = stepping.map((_, i) => stepping[(i + run) % stepping.length]);
    for (const { server, client } of order) {
      const { ms, chars, settled } = await step(server, client, kind);
      if (run === 0) continue;
      const figures = seen.get(server.name);
      figures.ms.push(ms);
      figures.chars.push(chars);
      figures.settled.push(settled);
    }
  }
  for (const [server, figures] of seen) console.log(JSON.stringify({ kind: kind.kind, server, ...figures }));
}
for (const { server, client } of clients) {
  const listBytes = JSON.stringify(await client.listTools()).length;
  const done = server.name.endsWith("-list") || server.name === "tether-none" ? {} : await task(server, client);
  console.log(JSON.stringify({ server: server.name, listBytes, ...done }));
}
for (const { client } of clients) await client.close();
