// Where this browser saved a finished download, for the host to store it as an artifact
// (docs/protocol.md §17). The host learns of a download from its tab's CDP events; Chrome's
// downloads API is what knows the file's path. The person's download folder and shelf behave
// as usual: nothing here moves, opens or removes a file.

/** How long to wait for Chrome to call a download complete after the page's event said so. */
const COMPLETE_WAIT_MS = 10_000;

/** The latest complete download from `url` (its original or its final URL). */
async function latestComplete(url) {
  for (const query of [{ url }, { finalUrl: url }]) {
    const [found] = await chrome.downloads.search({ ...query, state: "complete", orderBy: ["-startTime"], limit: 1 });
    if (found) return found;
  }
  return null;
}

function answer(item) {
  return { filename: item.filename, mime: item.mime || null };
}

/** `downloads.find {url}`: `{ filename, mime }` of the latest complete download from `url`. */
export async function find({ url }) {
  const done = await latestComplete(url);
  if (done) return answer(done);
  return new Promise((resolve, reject) => {
    const changed = async (delta) => {
      if (delta.state?.current !== "complete") return;
      const item = await latestComplete(url);
      if (item) finish(() => resolve(answer(item)));
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`Chrome lists no finished download from ${url}`))),
      COMPLETE_WAIT_MS,
    );
    function finish(settle) {
      clearTimeout(timer);
      chrome.downloads.onChanged.removeListener(changed);
      settle();
    }
    chrome.downloads.onChanged.addListener(changed);
  });
}
