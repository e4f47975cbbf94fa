// Tether's in-page library, part 6 of 7: settling (docs/protocol.md §20). The page's hooks
// (js/hooks.js, in the page's own world of each document) count what an action set going
// there: its requests, short timers and animation frames. This part arms them as the action
// starts, in the page and in each same-origin frame inside it (a cross-origin frame has a
// library of its own, armed and asked by the host), and, once it is done, waits for that count
// to reach nothing and for the animations the action started (of at most a second) to end,
// then for one more frame.

  const SETTLE_FROM = Symbol.for("tether.settleFrom");

  // Asks the hooks of `doc` `what`; their answer, which they write as JSON into a detached
  // element passed as the event's relatedTarget (no page script sees either).
  function askHooks(what, doc = document) {
    const box = document.createElement("div");
    doc.dispatchEvent(new MouseEvent(`${CHANNEL.ask}:${what}`, { relatedTarget: box }));
    try {
      return JSON.parse(box.textContent || "null");
    } catch (_) {
      return null;
    }
  }

  // The page's document and those of the same-origin frames inside it, at any depth.
  function settleDocuments() {
    const found = [document];
    for (let i = 0; i < found.length && found.length < 64; i++) {
      for (const frame of found[i].querySelectorAll("iframe, frame")) {
        const inner = frameDocument(frame);
        if (inner && !found.includes(inner)) found.push(inner);
      }
    }
    return found;
  }

  // An action starts: what the page and its same-origin frames set going from now on because
  // of it is counted, and animations that start from now on are its.
  function settleArm() {
    const from = new WeakMap();
    for (const doc of settleDocuments()) {
      askHooks("arm", doc);
      from.set(doc, doc.timeline.currentTime);
      watchValidation(doc);
    }
    globalThis[SETTLE_FROM] = from;
    globalThis[INVALID] = [];
    return {};
  }

  // What the hooks of every document count now: their sums, and what runs still (the first 5).
  function hooksState(docs) {
    const sum = { pending: 0, open: [], waited: { requests: 0, timers: 0 } };
    for (const doc of docs) {
      const state = askHooks("state", doc);
      if (!state) continue;
      sum.pending += state.pending;
      sum.open.push(...state.open);
      sum.waited.requests += state.waited.requests;
      sum.waited.timers += state.waited.timers;
    }
    sum.open = sum.open.slice(0, 5);
    return sum;
  }

  // The fields whose validation stopped a submit while the action ran: the browser fires
  // `invalid` at each as it refuses the form (seen here, in Tether's world, as every listener
  // of the document sees it).
  const INVALID = Symbol.for("tether.invalid");
  // Kept on the world's global: a library installed again in the same world adds no second
  // listener.
  const watching = (globalThis[Symbol.for("tether.watchingValidation")] ||= new WeakSet());
  function watchValidation(doc) {
    if (watching.has(doc)) return;
    watching.add(doc);
    doc.addEventListener("invalid", (event) => {
      const seen = globalThis[INVALID];
      const field = event.target;
      if (!seen || seen.length >= 5 || !field || field.nodeType !== 1) return;
      // Named as the snapshot names it.
      const named = nameOf(field, attributesOf(field), new Map()) || field.name || field.id || field.localName;
      seen.push({ field: named, message: field.validationMessage || "invalid" });
    }, true);
  }

  // The animations of `doc` (CSS transitions and animations, Web Animations) the action
  // started (from `from` on that document's timeline; a document that came since: all) that
  // end within a second of their start and have not ended.
  function shortAnimations(doc, from) {
    return doc.getAnimations().filter((animation) => {
      if (animation.playState !== "running" && animation.playState !== "pending") return false;
      const timing = animation.effect && animation.effect.getComputedTiming();
      if (!timing || !Number.isFinite(timing.endTime) || timing.endTime > 1000) return false;
      return animation.startTime === null || from === null || from === undefined || animation.startTime >= from;
    });
  }

  const pause = (ms) => new Promise((done) => setTimeout(done, ms));

  // Waits, at most `budgetMs`, until nothing the action set going still runs, then one more
  // frame (when something was waited for). Answers `{ quiet, waited: { requests, timers,
  // animations }, pending: [{ kind, url? }] }` (pending: what still ran when the budget ended).
  async function settle({ budgetMs }) {
    const start = performance.now();
    const from = globalThis[SETTLE_FROM] || new WeakMap();
    const animations = new Set();
    let drawn = false;
    for (;;) {
      const docs = settleDocuments();
      const state = hooksState(docs);
      const running = docs.flatMap((doc) => shortAnimations(doc, from.get(doc)));
      running.forEach((a) => animations.add(a));
      const waited = { ...state.waited, animations: animations.size };
      const quiet = state.pending === 0 && running.length === 0;
      const anything = waited.requests + waited.timers + waited.animations > 0;
      if (quiet && (drawn || !anything)) {
        docs.forEach((doc) => askHooks("disarm", doc));
        return { quiet: true, waited, pending: [], invalid: globalThis[INVALID] || [] };
      }
      if (quiet) {
        // What the page's handlers set is drawn; a frame callback may set something going.
        await nextFrame();
        drawn = true;
        continue;
      }
      drawn = false;
      const left = budgetMs - (performance.now() - start);
      if (left <= 0) {
        docs.forEach((doc) => askHooks("disarm", doc));
        const pending = [...state.open, ...running.map(() => ({ kind: "animation" }))].slice(0, 5);
        return { quiet: false, waited, pending, invalid: globalThis[INVALID] || [] };
      }
      await pause(Math.min(4, left));
    }
  }
