// What the browser's owner sets in the popup, kept in chrome.storage.local: whether agents may
// run their own JavaScript in pages (browser_evaluate), off unless turned on; whether they may
// save and load this browser's cookies and storage (browser_storage_state), likewise; the
// secrets agents may have typed (name, value, origins: the options page), for the local host
// alone; the sites no
// action may touch (Chrome match patterns, one per line in the popup), which the host refuses
// with FORBIDDEN_TARGET; and whether every action on this browser waits for the owner's
// approval, whatever the relay's own rule.

const DEFAULTS = { allowEvaluate: false, allowStorageState: false, blockedSites: [], confirmEveryAction: false, secrets: [] };

/** The settings as stored, defaults filled in. */
export async function loadSettings() {
  const stored = await chrome.storage.local.get(DEFAULTS);
  const sites = Array.isArray(stored.blockedSites) ? stored.blockedSites.filter((s) => typeof s === "string") : [];
  const secrets = Array.isArray(stored.secrets)
    ? stored.secrets.filter((s) => typeof s?.name === "string" && typeof s.value === "string" && Array.isArray(s.origins))
    : [];
  return {
    secrets,
    allowEvaluate: stored.allowEvaluate === true,
    allowStorageState: stored.allowStorageState === true,
    blockedSites: sites,
    confirmEveryAction: stored.confirmEveryAction === true,
  };
}

export async function saveSettings(settings) {
  await chrome.storage.local.set(settings);
}

/** Calls `changed(settings)` after each change, from any page of the extension. */
export function watchSettings(changed) {
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && Object.keys(changes).some((key) => key in DEFAULTS)) loadSettings().then(changed);
  });
}
