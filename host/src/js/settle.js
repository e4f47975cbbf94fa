// Tether's in-page library, part 6 of 7: settling (docs/protocol.md §20). The page's hooks
// (js/hooks.js, in the page's own world) count what an action set going there: its requests,
// short timers and animation frames. This part arms them as the action starts and, once it is
// done, waits for that count to reach nothing and for the animations the action started (of at
// most a second) to end, then for one more frame.

  const SETTLE_FROM = Symbol.for("tether.settleFrom");

  // Asks the page's hooks `what`; their answer, which they write as JSON into a detached
  // element passed as the event's relatedTarget (no page script sees either).
  function askHooks(what) {
    const box = document.createElement("div");
    document.dispatchEvent(new MouseEvent(`${CHANNEL.ask}:${what}`, { relatedTarget: box }));
    try {
      return JSON.parse(box.textContent || "null");
    } catch (_) {
      return null;
    }
  }

  // An action starts: what the page sets going from now on because of it is counted, and
  // animations that start from now on are its.
  function settleArm() {
    askHooks("arm");
    globalThis[SETTLE_FROM] = document.timeline.currentTime;
    watchValidation();
    globalThis[INVALID] = [];
    return {};
  }

  // The fields whose validation stopped a submit while the action ran: the browser fires
  // `invalid` at each as it refuses the form (seen here, in Tether's world, as every listener
  // of the document sees it).
  const INVALID = Symbol.for("tether.invalid");
  const WATCHING = Symbol.for("tether.watchingValidation");
  function watchValidation() {
    if (globalThis[WATCHING]) return;
    globalThis[WATCHING] = true;
    document.addEventListener("invalid", (event) => {
      const seen = globalThis[INVALID];
      const field = event.target;
      if (!seen || seen.length >= 5 || !(field instanceof Element)) return;
      // Named as the snapshot names it.
      const named = nameOf(field, attributesOf(field), new Map()) || field.name || field.id || field.localName;
      seen.push({ field: named, message: field.validationMessage || "invalid" });
    }, true);
  }

  // The document's animations (CSS transitions and animations, Web Animations) the action
  // started that end within a second of their start and have not ended.
  function shortAnimations(from) {
    return document.getAnimations().filter((animation) => {
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
    const from = globalThis[SETTLE_FROM];
    const animations = new Set();
    const empty = { pending: 0, open: [], waited: { requests: 0, timers: 0 } };
    let drawn = false;
    for (;;) {
      const state = askHooks("state") || empty;
      const running = shortAnimations(from);
      running.forEach((a) => animations.add(a));
      const waited = { ...state.waited, animations: animations.size };
      const quiet = state.pending === 0 && running.length === 0;
      const anything = waited.requests + waited.timers + waited.animations > 0;
      if (quiet && (drawn || !anything)) {
        askHooks("disarm");
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
        askHooks("disarm");
        const pending = [...state.open, ...running.map(() => ({ kind: "animation" }))].slice(0, 5);
        return { quiet: false, waited, pending, invalid: globalThis[INVALID] || [] };
      }
      await pause(Math.min(4, left));
    }
  }
