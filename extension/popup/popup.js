// The popup: host and relay connection, this browser's clientId, the active sessions with
// their latest actions and a Stop each, what waits for the owner (confirmations, and handoffs:
// an agent asking them to act in a tab, then press Done or Decline), the owner's settings,
// and the user's kill switch.

import { loadSettings, saveSettings } from "../src/settings.js";

const $ = (id) => document.getElementById(id);

function show(element, ok, text) {
  element.textContent = text;
  element.className = ok ? "ok" : "bad";
}

async function refresh() {
  const state = await chrome.runtime.sendMessage({ type: "popup.state" });
  show($("host"), state.host, state.host ? "connected" : `not connected${state.hostError ? ` (${state.hostError})` : ""}`);
  show($("relay"), state.relay === "connected", state.relay ?? "unknown");
  $("client").textContent = state.clientId ?? "—";
  const list = $("sessions");
  // Rebuilt only when something changed: a rebuild would take the focus from a half-typed reply.
  const drawn = JSON.stringify(state.sessions);
  if (drawn === lastDrawn) return renderRest(state);
  lastDrawn = drawn;
  list.replaceChildren();
  for (const session of state.sessions) {
    const item = document.createElement("li");
    item.dataset.session = session.sessionId;
    const stop = Object.assign(document.createElement("button"), { type: "button", className: "stop-one", textContent: "Stop" });
    stop.title = `Stop ${session.sessionId}: its running action ends, its tabs stay open`;
    stop.addEventListener("click", () => chrome.runtime.sendMessage({ type: "popup.stop_session", sessionId: session.sessionId }).then(refresh));
    item.append(`${session.sessionId}: tabs ${session.tabs.join(", ") || "none"} `, stop);
    const latest = document.createElement("ul");
    latest.className = "latest";
    for (const action of session.latest ?? []) {
      const line = document.createElement("li");
      line.className = action.status === "success" ? "ok" : "bad";
      line.textContent = `${action.status === "success" ? "✓" : "✗"} ${action.actionName}${action.error ? ` (${action.error})` : ""}`;
      latest.append(line);
    }
    item.append(latest);
    for (const line of session.talk ?? []) {
      const said = document.createElement("div");
      said.className = `talk ${line.who}`;
      said.textContent = `${line.who === "agent" ? "Agent" : "You"}: ${line.text}`;
      item.append(said);
    }
    item.append(sayBox(session.sessionId));
    list.append(item);
  }
  if (state.sessions.length === 0) list.append(Object.assign(document.createElement("li"), { textContent: "none" }));
  renderRest(state);
}

let lastDrawn = null;

function renderRest(state) {
  renderAsks(state.asks ?? [], state.handoffs ?? []);
  const unreadable = state.unreadableSites ?? [];
  if (unreadable.length) show($("blocked-state"), false, unreadable.join("; "));
  else if (state.host) show($("blocked-state"), true, `${(state.blockedSites ?? []).length} blocked`);
}

/** Where the owner answers the session's agent; kept as it is while the popup refreshes. */
const sayBoxes = new Map();
function sayBox(sessionId) {
  let form = sayBoxes.get(sessionId);
  if (!form) {
    form = document.createElement("form");
    form.className = "say";
    const input = Object.assign(document.createElement("input"), { type: "text", placeholder: "Tell the agent…" });
    input.setAttribute("aria-label", `Message to the agent of ${sessionId}`);
    const send = Object.assign(document.createElement("button"), { type: "submit", className: "plain", textContent: "Send" });
    form.append(input, send);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = input.value.trim();
      input.value = "";
      if (text) chrome.runtime.sendMessage({ type: "popup.say", sessionId, text }).then(refresh);
    });
    sayBoxes.set(sessionId, form);
  }
  return form;
}

/** A handoff's card, kept while it stands so a half-typed note survives the refresh. */
const handoffCards = new Map();
function handoffCard(handoff) {
  let item = handoffCards.get(handoff.actionId);
  if (item) return item;
  item = document.createElement("li");
  item.dataset.handoff = handoff.actionId;
  const note = Object.assign(document.createElement("input"), { type: "text", className: "note", maxLength: 2000,
    placeholder: "Note for the agent (optional)" });
  note.setAttribute("aria-label", "Note for the agent (optional)");
  const answer = (outcome) => () => {
    handoffCards.delete(handoff.actionId);
    chrome.runtime.sendMessage({ type: "popup.handoff", actionId: handoff.actionId, outcome, note: note.value }).then(refresh);
  };
  const button = (className, textContent, onClick) => {
    const made = Object.assign(document.createElement("button"), { type: "button", className, textContent });
    made.addEventListener("click", onClick);
    return made;
  };
  const show = () => chrome.runtime.sendMessage({ type: "popup.show_tab", tabId: handoff.tabId });
  item.append(`${handoff.sessionId} hands you tab ${handoff.tabId}: ${handoff.message}`, document.createElement("br"), note,
    document.createElement("br"), button("show plain", "Show tab", show), button("approve done", "Done", answer("done")),
    button("deny decline", "Decline", answer("declined")));
  handoffCards.set(handoff.actionId, item);
  return item;
}

function renderAsks(asks, handoffs) {
  const list = $("ask-list");
  for (const id of handoffCards.keys()) if (!handoffs.some((h) => h.actionId === id)) handoffCards.delete(id);
  // Kept cards stay in place (moving a node would take the focus from its note).
  for (const item of [...list.children]) if (!item.dataset.handoff || !handoffCards.has(item.dataset.handoff)) item.remove();
  for (const handoff of handoffs) if (!handoffCards.has(handoff.actionId) || !handoffCards.get(handoff.actionId).isConnected) list.append(handoffCard(handoff));
  for (const ask of asks) {
    const item = document.createElement("li");
    item.dataset.request = ask.requestId;
    const answer = (approved) => () =>
      chrome.runtime.sendMessage({ type: "popup.confirm", requestId: ask.requestId, approved }).then(refresh);
    const approve = Object.assign(document.createElement("button"), { type: "button", className: "approve", textContent: "Approve" });
    approve.addEventListener("click", answer(true));
    const deny = Object.assign(document.createElement("button"), { type: "button", className: "deny", textContent: "Deny" });
    deny.addEventListener("click", answer(false));
    item.append(`${ask.sessionId} wants to run ${ask.actionName}: ${ask.summary}`, document.createElement("br"), approve, deny);
    list.append(item);
  }
  $("asks").hidden = asks.length === 0 && handoffs.length === 0;
}

$("evaluate").addEventListener("change", (event) => saveSettings({ allowEvaluate: event.target.checked }));
$("storage-state").addEventListener("change", (event) => saveSettings({ allowStorageState: event.target.checked }));
$("confirm-every").addEventListener("change", (event) => saveSettings({ confirmEveryAction: event.target.checked }));
$("save-blocked").addEventListener("click", () => {
  const sites = $("blocked").value.split("\n").map((line) => line.trim()).filter(Boolean);
  saveSettings({ blockedSites: sites });
});
loadSettings().then((settings) => {
  $("evaluate").checked = settings.allowEvaluate;
  $("storage-state").checked = settings.allowStorageState;
  $("confirm-every").checked = settings.confirmEveryAction;
  $("blocked").value = settings.blockedSites.join("\n");
});

$("stop").addEventListener("click", async () => {
  const { stopped } = await chrome.runtime.sendMessage({ type: "popup.stop_all" });
  $("stop").textContent = `Stopped (${stopped.length} tabs released)`;
  refresh();
});

refresh();
setInterval(refresh, 1000);
