// What the browser's owner sets in the popup, kept in chrome.storage.local: whether agents may
// run their own JavaScript in pages (browser_evaluate), off unless turned on.

const DEFAULTS = { allowEvaluate: false };

/** The settings as stored, defaults filled in. */
export async function loadSettings() {
  const stored = await chrome.storage.local.get(DEFAULTS);
  return { allowEvaluate: stored.allowEvaluate === true };
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
