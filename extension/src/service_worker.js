// Tether's service worker: the bridge between this browser and tether-host. It opens the
// native-messaging port, reports the twin, carries out the host's tab and CDP calls, and
// answers the popup. Message set: extension/README.md.

import { HostPort } from "./host_port.js";
import * as twin from "./twin.js";
import * as tabOps from "./tab_ops.js";
import * as bridge from "./debugger_bridge.js";
import * as downloads from "./downloads.js";
import { loadSettings, watchSettings } from "./settings.js";

/** Confirmation requests for the owner, by requestId; an unanswered one goes stale with its
 * action (the relay's action timeout), or when someone answers it elsewhere. */
const asks = new Map();
const ASK_LIVES_MS = 60_000;

/** What the agents and the owner said, by session: the last few lines each. */
const talk = new Map();
const TALK_LINES = 6;

function heard(sessionId, who, text) {
  const lines = talk.get(sessionId) ?? [];
  lines.push({ who, text });
  talk.set(sessionId, lines.slice(-TALK_LINES));
}

/** What the host last said about the relay and the sessions, for the popup. */
let hostStatus = { relay: "unknown", clientId: null, sessions: [], allowEvaluate: false, allowStorageState: false, blockedSites: [], unreadableSites: [] };

const calls = {
  "tabs.create": tabOps.createTab,
  "tabs.close": tabOps.closeTab,
  "tabs.get": tabOps.getTab,
  "tabs.query": tabOps.listTabs,
  "debugger.attach": bridge.attach,
  "debugger.detach": bridge.detach,
  "debugger.send": bridge.send,
  "downloads.find": downloads.find,
  "twin.sync": async () => {
    await syncTwin();
    return {};
  },
};

const host = new HostPort({
  onMessage: handle,
  onConnect: () => {
    host.send({ type: "hello", extensionVersion: chrome.runtime.getManifest().version, userAgent: navigator.userAgent });
    sendSettings();
    syncTwin();
  },
  onDisconnect: (why) => {
    hostStatus = { relay: "unknown", clientId: hostStatus.clientId, sessions: [], allowEvaluate: false, allowStorageState: false, blockedSites: [], unreadableSites: [] };
    console.warn("tether: the host port closed:", why);
  },
});

async function sendSettings() {
  host.send({ type: "settings", ...(await loadSettings()) });
}

async function syncTwin() {
  host.send({ type: "full_state_sync", payload: await twin.fullState() });
}

async function handle(message) {
  switch (message.type) {
    case "call": {
      const run = calls[message.method];
      try {
        if (!run) throw new Error(`unknown call ${message.method}`);
        const result = await run(message.params ?? {});
        host.send({ type: "reply", id: message.id, result: result ?? null });
      } catch (error) {
        host.send({ type: "reply", id: message.id, error: String(error?.message ?? error) });
      }
      break;
    }
    case "status":
      hostStatus = {
        relay: message.relay,
        clientId: message.clientId,
        sessions: message.sessions ?? [],
        allowEvaluate: message.allowEvaluate === true,
        allowStorageState: message.allowStorageState === true,
        secrets: message.secrets ?? [],
        secretsError: message.secretsError ?? null,
        blockedSites: message.blockedSites ?? [],
        unreadableSites: message.unreadableSites ?? [],
        confirmEveryAction: message.confirmEveryAction === true,
        handoffs: message.handoffs ?? [],
      };
      break;
    case "confirmation_requested":
      asks.set(message.requestId, { ...message, askedAt: Date.now() });
      break;
    case "agent.message":
      heard(message.sessionId, "agent", message.text);
      break;
    case "pong":
      break;
    default:
      console.warn("tether: unknown message from the host", message);
  }
}

async function stopAll() {
  const tabs = await bridge.detachAll((event) => host.send(event));
  host.send({ type: "stop_all" });
  return tabs;
}

/** The person's "Stop" on one session: its tabs are let go, and the host ends it. */
async function stopSession(sessionId) {
  const session = hostStatus.sessions.find((s) => s.sessionId === sessionId);
  const tabs = await bridge.detachTabs(session ? session.tabs : [], (event) => host.send(event));
  host.send({ type: "stop_session", sessionId });
  return tabs;
}

function popupState() {
  const now = Date.now();
  for (const [id, ask] of asks) if (now - ask.askedAt > ASK_LIVES_MS) asks.delete(id);
  const sessions = hostStatus.sessions.map((s) => ({ ...s, talk: talk.get(s.sessionId) ?? [] }));
  return { host: host.connected, hostError: host.lastError, ...hostStatus, sessions, asks: [...asks.values()], attachedTabs: bridge.attachedTabs() };
}

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  if (message?.type === "popup.state") {
    reply(popupState());
  } else if (message?.type === "popup.stop_session" && typeof message.sessionId === "string") {
    stopSession(message.sessionId).then((tabs) => reply({ stopped: tabs }));
    return true; // answers asynchronously
  } else if (message?.type === "popup.confirm" && asks.has(message.requestId)) {
    asks.delete(message.requestId);
    host.send({ type: "confirm", requestId: message.requestId, approved: message.approved === true });
    reply({ answered: true });
  } else if (message?.type === "popup.handoff" && typeof message.actionId === "string") {
    const handoff = (hostStatus.handoffs ?? []).find((h) => h.actionId === message.actionId);
    if (!handoff) return reply({ answered: false });
    const note = typeof message.note === "string" && message.note.trim() ? { note: message.note } : {};
    host.send({ type: "handoff.answer", sessionId: handoff.sessionId, actionId: handoff.actionId,
      outcome: message.outcome === "done" ? "done" : "declined", ...note });
    hostStatus.handoffs = hostStatus.handoffs.filter((h) => h !== handoff);
    reply({ answered: true });
  } else if (message?.type === "popup.show_tab" && (hostStatus.handoffs ?? []).some((h) => h.tabId === message.tabId)) {
    tabOps.bringToFront(message.tabId).then(() => reply({ shown: true }), (error) => reply({ shown: false, error: String(error) }));
    return true; // answers asynchronously
  } else if (message?.type === "popup.say" && typeof message.sessionId === "string" && typeof message.text === "string") {
    host.send({ type: "user.message", sessionId: message.sessionId, text: message.text });
    heard(message.sessionId, "you", message.text);
    reply({ said: true });
  } else if (message?.type === "popup.stop_all") {
    stopAll().then((tabs) => reply({ stopped: tabs }));
    return true; // answers asynchronously
  }
  return false;
});

// Chrome starts a service worker for the events it listens to: these bring the port up when
// the browser starts and after the extension is installed, updated or reloaded.
chrome.runtime.onStartup.addListener(() => host.connect());
chrome.runtime.onInstalled.addListener(() => host.connect());

twin.watch((payload) => host.send({ type: "tab_event", payload }));
watchSettings(() => sendSettings());
bridge.watch((event) => host.send(event));
tabOps.groupPopups();
host.connect();

// For tests and the popup: the same stop as the button, and what the popup shows.
globalThis.tetherStopAll = stopAll;
globalThis.tetherState = popupState;
