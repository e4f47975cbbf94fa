// Playwright doing, on command, what a caller of Tether asks for, on a running Chromium over
// CDP, so that tests/benches/against_playwright.rs can alternate it with Tether and raw CDP on
// the same browser. Timed here, around the Playwright call only.
//
//   node ops.mjs ws://127.0.0.1:PORT/devtools/browser/ID
//
// Reads one command a line on stdin, answers one line on stdout:
//   goto URL            -> "ok" once the page has loaded
// and, for each operation, "MS LENGTH" (LENGTH: what it returned, in bytes or characters):
//   html                -> page.content()
//   jpeg | png          -> page.screenshot() of the viewport (jpeg at quality 80)
//   snapshot            -> page.ariaSnapshot({ mode: "ai" }) (Playwright MCP's snapshot)
//   click SELECTOR      -> page.click(SELECTOR)
//   fill SELECTOR TEXT  -> page.fill(SELECTOR, TEXT) (Playwright MCP's browser_type)
//   scan                -> what can be acted on, with its text and box, read in the page
//   open URL            -> a new page, gone to URL to its load event, closed
//   context URL         -> a new context and a page in it, gone to URL to its load event
//                          (the context closed after the timing)
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const browser = await chromium.connectOverCDP(process.argv[2]);
const context = browser.contexts()[0] ?? (await browser.newContext());
const page = await context.newPage();

const ops = {
  html: () => page.content(),
  jpeg: () => page.screenshot({ type: "jpeg", quality: 80 }),
  png: () => page.screenshot({ type: "png" }),
  snapshot: () => page.ariaSnapshot({ mode: "ai" }),
  click: (selector) => page.click(selector),
  fill: (selector, ...text) => page.fill(selector, text.join(" ")),
  scan: async () =>
    JSON.stringify(
      await page.$$eval("a[href], button, input, select, textarea, [role], [onclick], [tabindex]", (elements) =>
        elements.map((e) => {
          const r = e.getBoundingClientRect();
          return { tag: e.localName, text: e.innerText, x: r.x, y: r.y, w: r.width, h: r.height };
        }),
      ),
    ),
  open: async (url) => {
    const opened = await context.newPage();
    await opened.goto(url, { waitUntil: "load" });
    await opened.close();
  },
  context: async (url) => {
    const own = await browser.newContext();
    const opened = await own.newPage();
    await opened.goto(url, { waitUntil: "load" });
    closing.push(own);
  },
};
// Contexts the `context` op made, closed after its timing, before the next command.
const closing = [];

for await (const line of createInterface({ input: process.stdin })) {
  const [op, ...args] = line.split(" ");
  if (op === "goto") {
    await page.goto(args[0], { waitUntil: "load" });
    console.log("ok");
  } else {
    const start = performance.now();
    const answer = await ops[op](...args);
    const ms = performance.now() - start;
    for (const own of closing.splice(0)) await own.close();
    console.log(`${ms} ${answer?.length ?? 0}`);
  }
}
await page.close();
process.exit(0);
