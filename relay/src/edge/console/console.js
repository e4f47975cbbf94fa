// Tether's console: joins the relay as an observer over its own WebSocket and shows, live,
// the browsers (and their windows and tabs), the sessions with their actions, talk, screenshots
// and Live Screens, and what waits for a person: confirmations to answer and handoffs (an
// agent asking the person to act in a tab, then press Done or Decline). A session's tab can be
// watched live (its frames drawn on a canvas); while its agent hands it over, the person's
// clicks, wheel and keys on that canvas go to the tab. The token stays in sessionStorage and goes only in the
// join message and Authorization headers, never in a URL. Everything shown is set as text.

const TOKEN_KEY = "tether.token";
const KEEP_ACTIONS = 8;
// How many sessions still going a console that opens shows the earlier actions of.
const GOING_SHOWN = 50;
const KEEP_TALK = 6;

const $ = (id) => document.getElementById(id);
const state = {
  ws: null, token: null, clients: [], sessions: new Map(), asks: new Map(), handoffs: new Map(), twins: new Map(), nextId: 1,
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// ---- the connection ----------------------------------------------------------------------
function connect(token) {
  state.token = token;
  $("connection").textContent = "Connecting…";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws`);
  state.ws = ws;
  let joined = false;
  ws.addEventListener("open", () => send("relay.join", { role: "observer", token }, "join"));
  ws.addEventListener("message", (event) => {
    const envelope = JSON.parse(event.data);
    if (!joined) {
      if (envelope.type === "relay.joined") {
        joined = true;
        onJoined();
      } else if (envelope.type === "error") {
        refused(envelope.payload);
      }
      return;
    }
    onEnvelope(envelope);
  });
  ws.addEventListener("close", () => {
    if (state.ws !== ws) return;
    $("connection").textContent = joined ? "Disconnected from the relay; reload to reconnect." : $("connection").textContent;
  });
}

function send(type, payload, id = `c${state.nextId++}`) {
  state.ws.send(JSON.stringify({ v: "1", type, id, payload }));
}

function refused(error) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.ws.close();
  state.ws = null;
  const why = error.code === "UNAUTHORIZED" ? "That token is not valid for this relay." : error.message;
  showSignIn(`${why} Check the token and try again.`);
}

async function onJoined() {
  sessionStorage.setItem(TOKEN_KEY, state.token);
  $("connection").textContent = "Connected";
  $("sign-in").hidden = true;
  $("board").hidden = false;
  $("sign-out").hidden = false;
  send("subscribe", {});
  send("extension.list", {}, "list");
  const listed = await api("/api/sessions");
  const sessions = listed.sessions || [];
  // What ran before this page connected, for the sessions still going, read before any of them
  // is drawn: a card does not grow under a person's pointer once shown.
  const going = sessions.filter((s) => s.status !== "completed").slice(0, GOING_SHOWN);
  const earlier = await Promise.all(going.map(async (s) => [s.sessionId, await latestActions(s.sessionId)]));
  // A session the subscription already told of is newer than the listing.
  for (const s of sessions) if (!state.sessions.has(s.sessionId)) upsertSession(s.sessionId, { state: s });
  for (const [id, actions] of earlier) showEarlier(upsertSession(id), actions);
  render();
}

// A session's latest finished actions as the relay keeps them (none if it cannot say).
async function latestActions(id) {
  try {
    return (await api(`/api/sessions/${encodeURIComponent(id)}/actions`)).actions || [];
  } catch (_) {
    return [];
  }
}

// A session's actions from before this page connected, behind those it saw itself.
function showEarlier(session, actions) {
  const seen = new Set(session.actions.map((a) => a.id));
  for (const result of actions) {
    if (seen.has(result.actionId)) continue;
    const action = { id: result.actionId, name: result.actionName };
    ended(session, action, result, false);
    session.actions.push(action);
  }
  session.actions.length = Math.min(session.actions.length, KEEP_ACTIONS);
}

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { Authorization: `Bearer ${state.token}`, "Content-Type": "application/json" },
  });
  return response.json();
}

// ---- what the relay says -------------------------------------------------------------------
function onEnvelope({ type, payload }) {
  switch (type) {
    case "extension.list.result":
      state.clients = payload.clients;
      break;
    case "client.online":
    case "client.offline":
      send("extension.list", {}, "list");
      return;
    case "session.state": {
      const before = state.sessions.get(payload.sessionId);
      // A session that took a browser changes that browser's list of sessions.
      if (payload.clientId && (!before || before.state.clientId !== payload.clientId)) send("extension.list", {}, "list");
      upsertSession(payload.sessionId, { state: payload });
      break;
    }
    case "action.started":
      upsertSession(payload.sessionId).actions.unshift({ id: payload.actionId, name: payload.actionName, running: true });
      break;
    case "browser_action.result":
      finished(payload);
      break;
    case "progress":
      upsertSession(payload.sessionId).progress = payload.message;
      break;
    case "agent.message":
    case "user.message":
      upsertSession(payload.sessionId).talk.push({ who: type === "agent.message" ? "agent" : "user", text: payload.text });
      break;
    case "browser_task.confirmation_requested":
      state.asks.set(payload.requestId, payload);
      break;
    case "browser_task.confirmed":
      state.asks.delete(payload.requestId);
      break;
    case "handoff.requested":
      state.handoffs.set(payload.actionId, payload);
      // A headless browser has no screen: the person acts in the live view.
      if (!views.has(payload.sessionId)) watch(payload.sessionId);
      break;
    case "live_view.frame":
      drawFrame(payload);
      return;
    case "handoff.ended":
      state.handoffs.delete(payload.actionId);
      break;
    case "error":
      showProblem(payload.message);
      return;
    default:
      return;
  }
  render();
}

function upsertSession(id, changes = {}) {
  let session = state.sessions.get(id);
  if (!session) {
    session = { id, state: { sessionId: id, status: "created" }, actions: [], talk: [], progress: "", shot: null, screen: null };
    state.sessions.set(id, session);
  }
  Object.assign(session, changes);
  return session;
}

function finished(result) {
  // A handoff whose browser failed ends with no handoff.ended: its result ends the request.
  state.handoffs.delete(result.actionId);
  const session = upsertSession(result.sessionId);
  session.progress = "";
  let action = session.actions.find((a) => a.id === result.actionId);
  if (!action) session.actions.unshift((action = { id: result.actionId, name: result.actionName }));
  ended(session, action, result);
  session.actions.length = Math.min(session.actions.length, KEEP_ACTIONS);
}

// An action of `session` ended with `result` (a result payload, or the relay's summary of one
// from /api/sessions/{id}/actions): how, in how long, and a screenshot it took. A shot already
// shown is kept unless `latest` (results read back arrive newest first).
function ended(session, action, result, latest = true) {
  action.running = false;
  action.ok = result.status === "success";
  action.ms = result.durationMs;
  action.error = result.error ? `${result.error.code}: ${result.error.message}` : "";
  const url = result.result && result.result.url;
  if (action.ok && result.actionName === "browser_screenshot" && url && (latest || !session.shot)) {
    // The artifact on this relay, by path: the host may name the relay by another host name.
    const at = new URL(url, location.href);
    session.shot = at.pathname + at.search;
  }
}

// ---- drawing -------------------------------------------------------------------------------
function render() {
  // Kept nodes (a live view) are moved into the new cards: their focus must stay with them,
  // or the person's keys would go nowhere.
  const focused = document.activeElement;
  renderAsks();
  renderSessions();
  renderBrowsers();
  if (focused?.isConnected && document.activeElement !== focused) focused.focus({ preventScroll: true });
}

// Cards stay while their question stands, so a note being typed keeps its text and focus
// whatever else arrives; only answered ones go and new ones come.
function renderAsks() {
  const list = $("ask-list");
  const wanted = new Map();
  for (const ask of state.asks.values()) wanted.set(`confirm:${ask.requestId}`, () => confirmCard(ask));
  for (const handoff of state.handoffs.values()) wanted.set(`handoff:${handoff.actionId}`, () => handoffCard(handoff));
  for (const card of [...list.children]) {
    if (!wanted.has(card.dataset.key)) card.remove();
  }
  const shown = new Set([...list.children].map((card) => card.dataset.key));
  for (const [key, make] of wanted) {
    if (shown.has(key)) continue;
    const card = make();
    card.dataset.key = key;
    list.append(card);
  }
  $("asks").hidden = wanted.size === 0;
}

function confirmCard(ask) {
  const answer = (approved) => () => send("browser_task.confirm", { requestId: ask.requestId, approved });
  return el("li", { class: "card", "data-request": ask.requestId },
    el("p", {}, `Session ${ask.sessionId} wants to run `, el("strong", {}, ask.actionName), `: ${ask.summary}`),
    el("div", { class: "row" },
      el("button", { type: "button", class: "primary approve", onclick: answer(true) }, "Approve"),
      el("button", { type: "button", class: "deny", onclick: answer(false) }, "Deny")));
}

function handoffCard(handoff) {
  const note = el("input", { type: "text", class: "note", maxlength: "2000", "aria-label": "Note for the agent (optional)",
    placeholder: "Note for the agent (optional)" });
  const answer = (outcome) => () => send("handoff.answer", {
    sessionId: handoff.sessionId, actionId: handoff.actionId, outcome, ...(note.value.trim() ? { note: note.value } : {}),
  });
  return el("li", { class: "card handoff", "data-handoff": handoff.actionId },
    el("p", {}, `Session ${handoff.sessionId} hands you tab ${handoff.tabId}: `, el("strong", {}, handoff.message)),
    el("div", { class: "row" }, note,
      el("button", { type: "button", class: "primary done", onclick: answer("done") }, "Done"),
      el("button", { type: "button", class: "deny decline", onclick: answer("declined") }, "Decline")));
}

function renderSessions() {
  const list = $("session-list");
  list.replaceChildren();
  $("no-sessions").hidden = state.sessions.size > 0;
  for (const session of state.sessions.values()) list.append(sessionCard(session));
}

function sessionCard(session) {
  const { status, clientId } = session.state;
  const card = el("article", { class: "card session", "data-session": session.id },
    el("div", { class: "row" },
      el("h3", {}, session.id),
      el("span", { class: `status ${status}` }, status.replaceAll("_", " ")),
      el("span", { class: "quiet" }, clientId ? `on ${clientId}` : "no browser yet"),
      // In the header's line: a progress line of its own would move the live view under the
      // person's pointer.
      el("span", { class: "progress" }, session.progress)));
  if (!clientId && status !== "completed") card.append(picker(session));
  const actions = el("ul", { class: "actions" });
  for (const a of session.actions) {
    const kind = a.running ? "running" : a.ok ? "ok" : "failed";
    const line = el("li", { class: kind, "data-action": a.id }, a.name);
    if (!a.running) line.append(el("span", { class: "quiet" }, ` ${a.ms} ms`));
    if (a.error) line.append(el("div", { class: "error" }, a.error));
    actions.append(line);
  }
  card.append(actions);
  if (session.talk.length) {
    const talk = el("ul", { class: "talk" });
    for (const t of session.talk.slice(-KEEP_TALK)) talk.append(el("li", { class: t.who }, t.text));
    card.append(talk);
  }
  if (session.shot) card.append(el("img", { class: "shot", src: session.shot, alt: `The last screenshot of ${session.id}` }));
  const look = el("button", { type: "button", onclick: () => toggleScreen(session) }, session.screen === null ? "Live Screen" : "Hide Live Screen");
  const watching = views.has(session.id);
  const live = el("button", { type: "button", class: "watch", onclick: () => (watching ? unwatch(session.id) : watch(session.id)) },
    watching ? "Stop watching" : "Watch live");
  card.append(el("div", { class: "row" }, look, live));
  if (watching) {
    const { canvas } = views.get(session.id);
    canvas.classList.toggle("handing", [...state.handoffs.values()].some((h) => h.sessionId === session.id));
    card.append(canvas);
  }
  if (session.screen !== null) card.append(el("pre", { class: "screen" }, session.screen));
  card.append(sayBox(session));
  return card;
}

// ---- the live view -------------------------------------------------------------------------
/** The sessions watched live: each one's canvas (kept across renders) and its page's size. */
const views = new Map();

function watch(sessionId) {
  const canvas = el("canvas", { class: "live", tabindex: "0", width: "640", height: "400",
    "aria-label": `The tab of ${sessionId}, live` });
  const view = { canvas, width: 0, height: 0, frames: 0 };
  views.set(sessionId, view);
  passInput(sessionId, view);
  send("live_view.start", { sessionId });
  render();
}

function unwatch(sessionId) {
  views.delete(sessionId);
  send("live_view.stop", { sessionId });
  render();
}

async function drawFrame(frame) {
  const view = views.get(frame.sessionId);
  if (!view) return;
  const bytes = Uint8Array.from(atob(frame.data), (c) => c.charCodeAt(0));
  const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/jpeg" }));
  Object.assign(view.canvas, { width: bitmap.width, height: bitmap.height });
  view.canvas.getContext("2d").drawImage(bitmap, 0, 0);
  Object.assign(view, { width: frame.width, height: frame.height, frames: view.frames + 1 });
  Object.assign(view.canvas.dataset, { frames: view.frames, pageWidth: frame.width, pageHeight: frame.height });
}

/** During a handoff of the session, the person's input on its canvas goes to the tab. */
function passInput(sessionId, view) {
  const { canvas } = view;
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    return { x: ((e.clientX - r.left) * view.width) / r.width, y: ((e.clientY - r.top) * view.height) / r.height };
  };
  const pass = (input) => {
    const handoff = [...state.handoffs.values()].find((h) => h.sessionId === sessionId);
    if (handoff) send("handoff.input", { sessionId, actionId: handoff.actionId, input });
  };
  const button = (e) => ["left", "middle", "right"][e.button] ?? "left";
  canvas.addEventListener("mousedown", (e) => {
    e.preventDefault();
    pass({ kind: "mouse", action: "down", ...at(e), button: button(e) });
    // Keys go where the mouse went; the page must not scroll under the person's pointer.
    canvas.focus({ preventScroll: true });
  });
  canvas.addEventListener("mouseup", (e) => pass({ kind: "mouse", action: "up", ...at(e), button: button(e) }));
  // Moves only while a button is held (a drag): hovering sends nothing.
  canvas.addEventListener("mousemove", (e) => e.buttons && pass({ kind: "mouse", action: "move", ...at(e) }));
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    pass({ kind: "wheel", ...at(e), deltaX: e.deltaX, deltaY: e.deltaY });
  }, { passive: false });
  for (const [type, action] of [["keydown", "down"], ["keyup", "up"]]) {
    canvas.addEventListener(type, (e) => {
      e.preventDefault();
      pass({ kind: "key", action, key: e.key, code: e.code });
    });
  }
  canvas.addEventListener("contextmenu", (e) => e.preventDefault());
}

function picker(session) {
  const online = state.clients.filter((c) => c.online);
  if (online.length === 0) return el("p", { class: "quiet" }, "No browser is online to run it.");
  const select = el("select", { "aria-label": `Browser for ${session.id}` });
  for (const c of online) select.append(el("option", { value: c.clientId }, describe(c)));
  const use = () => send("session.bind", { sessionId: session.id, clientId: select.value });
  return el("div", { class: "row" }, select, el("button", { type: "button", onclick: use }, "Use this browser"));
}

function sayBox(session) {
  const input = el("input", { type: "text", placeholder: "Tell the agent…", "aria-label": `Message to the agent of ${session.id}` });
  const say = (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text) send("user.message", { sessionId: session.id, text });
    input.value = "";
  };
  return el("form", { class: "say", onsubmit: say }, input, el("button", { type: "submit" }, "Send"));
}

async function toggleScreen(session) {
  if (session.screen !== null) {
    session.screen = null;
  } else {
    const response = await fetch(`/api/sessions/${encodeURIComponent(session.id)}/screen.md`, {
      headers: { Authorization: `Bearer ${state.token}` },
    });
    session.screen = await response.text();
  }
  render();
}

// A browser's twin (its windows, groups and tabs) as the relay writes it for people.
async function toggleTwin(clientId) {
  if (state.twins.has(clientId)) {
    state.twins.delete(clientId);
  } else {
    const response = await fetch(`/api/twin/${encodeURIComponent(clientId)}.md`, {
      headers: { Authorization: `Bearer ${state.token}` },
    });
    state.twins.set(clientId, response.ok ? await response.text() : "This browser has not reported its tabs yet.");
  }
  render();
}

function describe(client) {
  const meta = client.meta || {};
  const what = [meta.browser, meta.mode, meta.hostname].filter(Boolean).join(", ");
  return what ? `${client.clientId} (${what})` : client.clientId;
}

function renderBrowsers() {
  const list = $("browser-list");
  list.replaceChildren();
  $("no-browsers").hidden = state.clients.length > 0;
  for (const c of state.clients) {
    const sessions = c.sessions.length ? `sessions: ${c.sessions.join(", ")}` : "no session";
    const shown = state.twins.get(c.clientId);
    const tabs = el("button", { type: "button", class: "twin-toggle", onclick: () => toggleTwin(c.clientId) }, shown === undefined ? "Windows and tabs" : "Hide windows and tabs");
    const card = el("li", { class: "card", "data-client": c.clientId },
      el("div", { class: "row" }, el("h3", {}, describe(c)), el("span", { class: `status ${c.online ? "ongoing" : ""}` }, c.online ? "online" : "offline")),
      el("p", { class: "quiet sessions-of" }, sessions),
      tabs);
    if (c.contested) {
      const when = new Date(c.contested.lastAt).toLocaleTimeString();
      card.insertBefore(el("p", { class: "error contested", role: "alert" },
        `Another host tried to join as this browser (${c.contested.joins}×, last at ${when}): two hosts run under one clientId. Give each its own.`), tabs);
    }
    if (shown !== undefined) card.append(el("pre", { class: "screen twin" }, shown));
    list.append(card);
  }
}

function showProblem(message) {
  $("connection").textContent = message;
}

function showSignIn(error) {
  $("sign-in").hidden = false;
  $("board").hidden = true;
  $("sign-out").hidden = true;
  $("connection").textContent = "Not connected";
  $("sign-in-error").hidden = !error;
  $("sign-in-error").textContent = error || "";
}

// ---- start ---------------------------------------------------------------------------------
$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = $("token").value.trim();
  $("token").value = "";
  if (token) connect(token);
});
$("sign-out").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  if (state.ws) state.ws.close();
  state.ws = null;
  state.sessions.clear();
  state.asks.clear();
  showSignIn("");
});
const kept = sessionStorage.getItem(TOKEN_KEY);
if (kept) connect(kept);
document.body.dataset.ready = "true";
