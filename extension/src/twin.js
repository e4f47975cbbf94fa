// The browser's windows, tabs and tab groups as the relay's twin wants them (docs/protocol.md
// §2.5): a full state, and one tab_event per change.

/** A tab in the twin's shape. */
export function tabOf(tab) {
  const out = {
    tabId: tab.id,
    windowId: tab.windowId,
    url: tab.url ?? tab.pendingUrl ?? "",
    title: tab.title ?? "",
    active: Boolean(tab.active),
    status: tab.status ?? "complete",
  };
  if (tab.groupId !== undefined && tab.groupId !== chrome.tabGroups.TAB_GROUP_ID_NONE) {
    out.groupId = tab.groupId;
  }
  if (tab.openerTabId !== undefined) out.openerTabId = tab.openerTabId;
  return out;
}

function groupOf(group) {
  return { groupId: group.id, windowId: group.windowId, title: group.title ?? "", color: group.color, collapsed: group.collapsed };
}

function windowOf(window) {
  return { windowId: window.id, focused: Boolean(window.focused), type: window.type, state: window.state };
}

export async function fullState() {
  const [windows, tabs, groups] = await Promise.all([
    chrome.windows.getAll(),
    chrome.tabs.query({}),
    chrome.tabGroups.query({}),
  ]);
  return { windows: windows.map(windowOf), tabs: tabs.map(tabOf), groups: groups.map(groupOf) };
}

/** Calls `emit(payload)` with a tab_event payload on every change. */
export function watch(emit) {
  chrome.tabs.onCreated.addListener((tab) => emit({ event: "created", tab: tabOf(tab) }));
  chrome.tabs.onUpdated.addListener((_id, _change, tab) => emit({ event: "updated", tab: tabOf(tab) }));
  chrome.tabs.onRemoved.addListener((tabId, info) => emit({ event: "removed", tabId, windowId: info.windowId }));
  chrome.tabs.onActivated.addListener(({ tabId, windowId }) => emit({ event: "activated", tabId, windowId }));
  chrome.tabGroups.onCreated.addListener((group) => emit({ event: "group_updated", group: groupOf(group) }));
  chrome.tabGroups.onUpdated.addListener((group) => emit({ event: "group_updated", group: groupOf(group) }));
  chrome.tabGroups.onRemoved.addListener((group) => emit({ event: "group_removed", groupId: group.id }));
  chrome.windows.onCreated.addListener((window) => emit({ event: "window_created", window: windowOf(window) }));
  chrome.windows.onRemoved.addListener((windowId) => emit({ event: "window_removed", windowId }));
}
