// Tab operations the host asks for. A session tab opens in a window of its own that does not
// take the focus, inside a tab group: the user's focused window and tab never change. Why a
// window: Chrome paints only the active tab of a window, and a CDP screenshot of a tab behind
// another waits for a frame that never comes. A tab a session tab opens joins its group.

import { tabOf } from "./twin.js";

/** Group ids this extension created, so popups of their tabs can join them. */
const ourGroups = new Set();

export async function createTab({ url, groupTitle }) {
  const window = await chrome.windows.create({ url: url || "about:blank", focused: false });
  const tab = window.tabs[0];
  if (groupTitle) {
    const [existing] = await chrome.tabGroups.query({ title: groupTitle, windowId: tab.windowId });
    const groupId = await chrome.tabs.group(existing ? { groupId: existing.id, tabIds: [tab.id] } : { tabIds: [tab.id], createProperties: { windowId: tab.windowId } });
    if (!existing) await chrome.tabGroups.update(groupId, { title: groupTitle });
    ourGroups.add(groupId);
  }
  return tabOf(await chrome.tabs.get(tab.id));
}

export async function closeTab({ tabId }) {
  await chrome.tabs.remove(tabId);
  return {};
}

export async function getTab({ tabId }) {
  try {
    return tabOf(await chrome.tabs.get(tabId));
  } catch {
    return null;
  }
}

/** The person's "Show tab" on a handoff: the tab and its window come to the front. */
export async function bringToFront(tabId) {
  const tab = await chrome.tabs.update(tabId, { active: true });
  await chrome.windows.update(tab.windowId, { focused: true });
}

export async function listTabs() {
  return (await chrome.tabs.query({})).map(tabOf);
}

/** A tab opened by a tab of one of our groups goes into that group, still in the background. */
export function groupPopups() {
  chrome.tabs.onCreated.addListener(async (tab) => {
    if (tab.openerTabId === undefined) return;
    try {
      const opener = await chrome.tabs.get(tab.openerTabId);
      if (ourGroups.has(opener.groupId)) await chrome.tabs.group({ groupId: opener.groupId, tabIds: [tab.id] });
    } catch (error) {
      console.warn("tether: cannot group a new tab with its opener", error);
    }
  });
}
