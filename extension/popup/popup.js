// The popup: host and relay connection, this browser's clientId, the active sessions, the
// owner's settings, and the user's kill switch.

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
  list.replaceChildren();
  for (const session of state.sessions) {
    const item = document.createElement("li");
    item.dataset.session = session.sessionId;
    const stop = Object.assign(document.createElement("button"), { type: "button", className: "stop-one", textContent: "Stop" });
    stop.title = `Stop ${session.sessionId}: its running action ends, its tabs stay open`;
    stop.addEventListener("click", () => chrome.runtime.sendMessage({ type: "popup.stop_session", sessionId: session.sessionId }).then(refresh));
    item.append(`${session.sessionId}: tabs ${session.tabs.join(", ") || "none"} `, stop);
    list.append(item);
  }
  if (state.sessions.length === 0) list.append(Object.assign(document.createElement("li"), { textContent: "none" }));
  const unreadable = state.unreadableSites ?? [];
  if (unreadable.length) show($("blocked-state"), false, unreadable.join("; "));
  else if (state.host) show($("blocked-state"), true, `${(state.blockedSites ?? []).length} blocked`);
}

$("evaluate").addEventListener("change", (event) => saveSettings({ allowEvaluate: event.target.checked }));
$("save-blocked").addEventListener("click", () => {
  const sites = $("blocked").value.split("\n").map((line) => line.trim()).filter(Boolean);
  saveSettings({ blockedSites: sites });
});
loadSettings().then((settings) => {
  $("evaluate").checked = settings.allowEvaluate;
  $("blocked").value = settings.blockedSites.join("\n");
});

$("stop").addEventListener("click", async () => {
  const { stopped } = await chrome.runtime.sendMessage({ type: "popup.stop_all" });
  $("stop").textContent = `Stopped (${stopped.length} tabs released)`;
  refresh();
});

refresh();
setInterval(refresh, 1000);
