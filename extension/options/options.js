// The owner's secrets for agents (docs/protocol.md §18): listed by name and origins, added and
// removed here, kept in chrome.storage.local (`secrets`), and handed to the local Tether host
// with the other settings. Values are never shown again once saved.

import { loadSettings, saveSettings } from "../src/settings.js";

const $ = (id) => document.getElementById(id);

function show(ok, text) {
  $("state").textContent = text;
  $("state").className = ok ? "ok" : "bad";
}

/** A web origin (scheme://host[:port]) from what the owner typed, or null. */
function originOf(text) {
  try {
    const url = new URL(text.trim());
    return ["http:", "https:"].includes(url.protocol) ? url.origin : null;
  } catch {
    return null;
  }
}

async function render() {
  const { secrets } = await loadSettings();
  const rows = secrets.map((secret) => {
    const row = document.createElement("tr");
    row.dataset.name = secret.name;
    const remove = Object.assign(document.createElement("button"), { type: "button", textContent: "Remove" });
    remove.addEventListener("click", async () => {
      await saveSettings({ secrets: secrets.filter((s) => s.name !== secret.name) });
      render();
    });
    for (const text of [secret.name, secret.origins.join(", ")]) row.append(Object.assign(document.createElement("td"), { textContent: text }));
    const cell = document.createElement("td");
    cell.append(remove);
    row.append(cell);
    return row;
  });
  $("secrets").replaceChildren(...rows);
}

// Saved by the button (and Enter), never by a form submission: that would load the page anew.
$("add").addEventListener("submit", (event) => {
  event.preventDefault();
  add();
});
$("save").addEventListener("click", add);

async function add() {
  if (!$("add").reportValidity()) return;
  const name = $("name").value.trim();
  const lines = $("origins").value.split("\n").map((line) => line.trim()).filter(Boolean);
  const origins = lines.map(originOf);
  const wrong = lines.filter((_, i) => !origins[i]);
  if (wrong.length) return show(false, `not an http(s) origin: ${wrong.join(", ")}`);
  const { secrets } = await loadSettings();
  const others = secrets.filter((s) => s.name !== name);
  await saveSettings({ secrets: [...others, { name, value: $("value").value, origins }] });
  $("add").reset();
  show(true, `${name} saved`);
  render();
}

render();
// For whoever waits on the page (a test, a person's script): its handlers are in place.
document.documentElement.dataset.ready = "true";
