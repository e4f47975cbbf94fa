// CDP for the host through chrome.debugger: attach, send commands, detach; every event and
// every detach goes back to the host. "Stop all" detaches everything at once.

const PROTOCOL_VERSION = "1.3";

/** Tabs this extension attached to. */
const attached = new Set();

export async function attach({ tabId }) {
  try {
    await chrome.debugger.attach({ tabId }, PROTOCOL_VERSION);
  } catch (error) {
    // Attaching twice is not an error for the host.
    if (!String(error?.message ?? error).includes("already attached")) throw error;
  }
  attached.add(tabId);
  return {};
}

export async function detach({ tabId }) {
  attached.delete(tabId);
  try {
    await chrome.debugger.detach({ tabId });
  } catch (error) {
    if (!String(error?.message ?? error).includes("not attached")) throw error;
  }
  return {};
}

/** One command to the tab, or to a child session of it (a cross-origin frame's). */
export async function send({ tabId, sessionId, method, params }) {
  const target = typeof sessionId === "string" ? { tabId, sessionId } : { tabId };
  return (await chrome.debugger.sendCommand(target, method, params ?? {})) ?? {};
}

/** Of a child session's events (a cross-origin frame's), the host keeps its console lines and
 * requests; the rest it asks the frame for when it needs them. */
const FRAME_EVENTS = /^(Network\.|Log\.entryAdded$|Runtime\.(consoleAPICalled|exceptionThrown)$)/;

/** Forwards CDP events and detaches (the user's "Cancel" on the infobar, a closed tab). */
export function watch(emit) {
  chrome.debugger.onEvent.addListener((source, method, params) => {
    if (source.tabId === undefined) return;
    if (source.sessionId === undefined) emit({ type: "cdp.event", tabId: source.tabId, method, params: params ?? {} });
    else if (FRAME_EVENTS.test(method)) emit({ type: "cdp.event", tabId: source.tabId, sessionId: source.sessionId, method, params: params ?? {} });
  });
  chrome.debugger.onDetach.addListener((source, reason) => {
    if (source.tabId === undefined) return;
    attached.delete(source.tabId);
    emit({ type: "cdp.detached", tabId: source.tabId, reason });
  });
}

/** Detaches from every tab; returns the tabs it left. */
export async function detachAll(emit) {
  return detachTabs([...attached], emit);
}

/** Detaches from `tabs` (those attached) because the person stopped them; returns them. */
export async function detachTabs(tabs, emit) {
  const leaving = tabs.filter((tabId) => attached.has(tabId));
  // chrome.debugger.onDetach does not fire for our own detach: tell the host ourselves, and
  // first, so the commands the detach cuts short fail with the reason.
  for (const tabId of leaving) emit({ type: "cdp.detached", tabId, reason: "stopped_by_user" });
  await Promise.all(leaving.map((tabId) => detach({ tabId }).catch(() => {})));
  return leaving;
}

export function attachedTabs() {
  return [...attached];
}
