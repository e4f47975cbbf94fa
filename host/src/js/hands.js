// Tether's in-page library, part 5 of 7: a person's hands. Each function finds the element
// an action addresses, checks that a person could act on it, and answers where to act (a
// point, a box) or acts itself where the page's own API is the person's act (select, focus).

  // The element at `at` scrolled to the viewport's centre, with its box; or why not.
  function shown(at) {
    const found = resolve(at);
    if (found.error) return found;
    const el = found.el;
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    const r = el.getBoundingClientRect();
    if (!isRendered(el, r)) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is not rendered (hidden, display:none or zero size)`);
    return { el, r };
  }

  // The first of an element's box fragments (one per line it wraps over) that shows in the
  // viewport, else its first with an area.
  function firstFragment(el) {
    const rects = [...el.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
    const view = el.ownerDocument.defaultView;
    return rects.find((r) => r.bottom > 0 && r.right > 0 && r.top < view.innerHeight && r.left < view.innerWidth) || rects[0] || null;
  }

  // ---- click ------------------------------------------------------------------------------
  // Where an element is pressed, in the top viewport: the middle of its first box fragment, so
  // a link wrapped over two lines is pressed on its first line's text, not between the lines.
  function pointIn(el) {
    const r = firstFragment(el);
    if (!r) return null;
    const offset = frameOffset(el.ownerDocument);
    return { x: offset.x + r.left + r.width / 2, y: offset.y + r.top + r.height / 2 };
  }

  // The failure of a press whose point `hit` takes instead of `el`.
  function covered(el, hit, { x, y }) {
    const coveredBy = hit ? { tag: hit.localName, xpath: pathOf(hit) } : { tag: "none" };
    if (hit && hit.id) coveredBy.id = hit.id;
    return fail("ELEMENT_NOT_INTERACTABLE",
      `${describe(el)} is covered by ${describe(hit)} at (${Math.round(x)}, ${Math.round(y)}); a click there would hit the cover, not the element`,
      { coveredBy });
  }

  function clickPoint(at) {
    const target = shown(at);
    if (target.error) return target;
    const { el } = target;
    if (el.disabled || el.getAttribute("aria-disabled") === "true") return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is disabled`);
    const point = pointIn(el);
    if (!point) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is not rendered (hidden, display:none or zero size)`);
    const { x, y } = point;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) {
      return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} stays outside the viewport after scrolling (centre at ${Math.round(x)},${Math.round(y)})`);
    }
    const hit = deepHit(x, y);
    if (!hit || !within(el, hit)) return covered(el, hit, point);
    return point;
  }

  // The failure of acting on a field a person could not reach because something covers it
  // (a cookie banner, a modal); null when nothing does, or the field is not drawn at all (a
  // native select behind a custom dropdown stays settable).
  function coverOf(el) {
    if (!isRendered(el, el.getBoundingClientRect())) return null;
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    const point = pointIn(el);
    if (!point || point.x < 0 || point.y < 0 || point.x >= innerWidth || point.y >= innerHeight) return null;
    const hit = deepHit(point.x, point.y);
    return hit && within(el, hit) ? null : covered(el, hit, point);
  }

  // Once the pointer rests on the point (hover styles and images have reacted): whether the
  // element, or something inside it, is still what is there; if not, the layout moved under
  // the pointer (a hover style, an image that comes late), so aim again once the element's box
  // holds still for three frames and its point hits it. Answers the point to press, and with
  // `arm`, watches which element the press reaches (pressed).
  const PRESS = Symbol.for("tether.press");
  async function landing({ x, y, arm, settle, ...at }) {
    const found = resolve(at);
    if (found.error) return found;
    const el = found.el;
    let point = { x, y };
    const hit = deepHit(x, y);
    if (settle || !hit || !within(el, hit)) {
      point = await settledPoint(el, { x, y });
      if (point.error) return point;
    }
    if (arm) watchPress(el.ownerDocument.defaultView, el);
    return point;
  }

  // How long a press waits for its element to hold still once the pointer moved the layout:
  // a hover image or transition of up to a second (docs/protocol.md §16, §20).
  const SETTLE_MS = 1000;

  // The element's point once its box held still for three frames and the point hits it; past
  // SETTLE_MS, why not (not rendered, or what covers it). (Three: an icon whose hover image is
  // late flips between its two boxes as the browser updates hover a frame after layout.)
  async function settledPoint(el, rested) {
    const until = performance.now() + SETTLE_MS;
    let last = boxKey(el);
    let still = 0;
    for (;;) {
      await nextFrame();
      const now = boxKey(el);
      still = now === last ? still + 1 : 0;
      last = now;
      const point = pointIn(el);
      const hit = point && deepHit(point.x, point.y);
      if (still >= 2 && hit && within(el, hit)) return point;
      if (performance.now() < until) continue;
      if (!point) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} stopped being rendered when the pointer reached it (it is ${describe(deepHit(rested.x, rested.y))} there now)`);
      return covered(el, hit, point);
    }
  }

  // An element's first box fragment as a string, to tell whether it moved between frames.
  function boxKey(el) {
    const r = firstFragment(el);
    return r ? `${r.left},${r.top},${r.width},${r.height}` : "none";
  }

  // Watches the next press in `view`: the window of the element pressed (a frame's own, for
  // an element inside a same-origin frame; events do not cross into the page around it).
  // The release is watched too: an element that moves away between the button's down and its
  // up gets no click (the page's click goes to what both share, a parent).
  function watchPress(view, el = null) {
    const watch = { target: null, up: null, el };
    globalThis[PRESS] = watch;
    view.addEventListener("pointerdown", (e) => { watch.target = e.composedPath()[0]; }, { once: true, capture: true });
    view.addEventListener("pointerup", (e) => { watch.up = e.composedPath()[0]; }, { once: true, capture: true });
  }

  // For a press at a point: watched in the window of what is there.
  function armPress({ x, y }) {
    const there = deepHit(x, y);
    watchPress((there && there.ownerDocument.defaultView) || window);
    return {};
  }

  // The element the watched press reached, and whether it is the element pressed (or inside
  // it; kept from before the press, which may have taken it out of the page), its release too.
  // When the release reached something else, that is the element named.
  function pressed() {
    const watch = globalThis[PRESS];
    const element = (node) => (node && node.nodeType === 1 ? node : null);
    const target = watch && element(watch.target);
    if (!watch || !watch.el) return { element: seen(target), inside: true };
    const up = element(watch.up);
    if (target && within(watch.el, target) && up && !within(watch.el, up)) return { element: seen(up), inside: false };
    return { element: seen(target), inside: !!target && within(watch.el, target) };
  }

  // ---- drag -------------------------------------------------------------------------------
  // An element as a result names it: its tag, id and an XPath to it.
  function seen(el) {
    if (!el) return null;
    // An element the action took out of the page has no path any more.
    const named = el.isConnected ? { tag: el.localName, xpath: pathOf(el) } : { tag: el.localName };
    if (el.id) named.id = el.id;
    return named;
  }

  // What is under a point of the top viewport.
  function hitAt({ x, y }) {
    return { element: seen(deepHit(x, y)) };
  }

  // Where a drag ends on an element: the middle of its first box fragment, left where it is
  // (scrolling it into view could scroll the drag's start away).
  function dropPoint(at) {
    const found = resolve(at);
    if (found.error) return found;
    const el = found.el;
    const r = firstFragment(el);
    if (!r) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is not rendered (hidden, display:none or zero size)`);
    const offset = frameOffset(el.ownerDocument);
    const x = offset.x + r.left + r.width / 2;
    const y = offset.y + r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) {
      return fail("ELEMENT_NOT_INTERACTABLE",
        `${describe(el)} is outside the viewport (its middle at ${Math.round(x)},${Math.round(y)}) while the drag's start shows; scroll so both show, or give the end as dx, dy`);
    }
    return { x, y };
  }

  // Whether an HTML5 drag started (a dragstart the page did not cancel) since armDrag. Each
  // call has a fresh library, so the watch is kept on the window under a registered symbol
  // (the page can find it, as it can anything in its main world). A new watch takes the
  // last one's place, and its listener goes: a drag on a page without HTML5 drags leaves none.
  const DRAG = Symbol.for("tether.dragstart");
  function armDrag() {
    const last = globalThis[DRAG];
    if (last) removeEventListener("dragstart", last.listener, { capture: true });
    const watch = { event: null, listener: null };
    watch.listener = (e) => { watch.event = e; };
    globalThis[DRAG] = watch;
    addEventListener("dragstart", watch.listener, { once: true, capture: true });
    return {};
  }
  // Asked after a frame: the browser hands pointer moves to the page with the next frame, so
  // the move just sent may not have reached it before.
  async function dragStarted() {
    await nextFrame();
    const e = globalThis[DRAG] && globalThis[DRAG].event;
    return { started: !!e && !e.defaultPrevented };
  }

  // Whether the page has seen the input event just sent (a pointer step of browser_mouse):
  // armed before it is sent, waited for after, at most `within` ms (a point over another
  // site's frame is seen by that frame alone).
  const INPUT = Symbol.for("tether.input");
  function armInput({ type }) {
    const watch = { seen: false, wake: null };
    globalThis[INPUT] = watch;
    addEventListener(type, () => { watch.seen = true; if (watch.wake) watch.wake(); }, { once: true, capture: true, passive: true });
    return {};
  }
  function inputSeen({ within }) {
    const watch = globalThis[INPUT];
    if (!watch || watch.seen) return { seen: !!watch };
    return new Promise((done) => {
      const late = setTimeout(() => done({ seen: false }), within);
      watch.wake = () => { clearTimeout(late); done({ seen: true }); };
    });
  }

  // Resolves once the page has drawn its next frame, and the input sent before it was handled.
  function nextFrame() {
    return new Promise((done) => requestAnimationFrame(() => setTimeout(() => done({}), 0)));
  }

  // ---- screenshot -------------------------------------------------------------------------
  // An element's box in the top document's coordinates, scrolled into view.
  function boxOf(at) {
    const target = shown(at);
    if (target.error) return target;
    const { el, r } = target;
    const offset = frameOffset(el.ownerDocument);
    return { x: offset.x + r.left + scrollX, y: offset.y + r.top + scrollY, width: r.width, height: r.height };
  }

  // ---- fill form --------------------------------------------------------------------------
  // What kind of form field an element is, and how it stands; with `focus`, a text field is
  // focused for typing on the way, its content selected (one call for what a person's hand
  // does in one move).
  function fieldKind({ focus, secret, ...at }) {
    const found = resolve(at);
    if (found.error) return found;
    const el = found.el;
    const name = describe(el);
    if (el.localName === "select") return { kind: "select", multiple: el.multiple, name };
    if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) return { kind: el.type, checked: el.checked, name };
    const text = el.localName === "textarea" || (el.localName === "input" && !NON_TEXT_INPUTS.has(el.type));
    if (!text && !el.isContentEditable) return { kind: "other", name };
    if (!focus) return { kind: "text", name };
    const focused = focusForTyping({ clear: true, secret, ...at });
    return focused.error ? focused : { kind: "text", name, hadText: focused.hadText };
  }

  // ---- type -------------------------------------------------------------------------------
  function focusForTyping({ clear, secret, ...at }) {
    const found = resolve(at);
    if (found.error) return found;
    const el = found.el;
    const textInput = el.localName === "textarea" || (el.localName === "input" && !NON_TEXT_INPUTS.has(el.type));
    if (!textInput && !el.isContentEditable) {
      return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} does not take text; browser_type needs an input, a textarea or a contenteditable element`);
    }
    if (el.disabled) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is disabled`);
    const cover = coverOf(el);
    if (cover) return cover;
    if (el.readOnly) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is read-only`);
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    if (!isRendered(el, el.getBoundingClientRect())) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is not rendered (hidden, display:none or zero size)`);
    el.focus({ preventScroll: true });
    const active = deepActive();
    if (!(active === el || (el.isContentEditable && within(el, active)))) {
      return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} did not take the focus (${describe(active)} has it)`);
    }
    let hadText;
    if (textInput) {
      hadText = el.value.length > 0;
      if (clear) el.select();
      else {
        try {
          el.setSelectionRange(el.value.length, el.value.length);
        } catch (_) {} // email and number inputs have no selection API; their caret is at the end
      }
    } else {
      hadText = el.textContent.length > 0;
      const doc = el.ownerDocument;
      const range = doc.createRange();
      range.selectNodeContents(el);
      if (!clear) range.collapse(false);
      const selection = doc.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    // What it will hold: the secret (typed next), or text typed over whatever it held.
    if (secret) secretFields(el).set(el, secret);
    else if (clear) secretFields(el).delete(el);
    return { hadText };
  }

  // ---- select -----------------------------------------------------------------------------
  function selectOption({ values, ...at }) {
    const found = resolve(at);
    if (found.error) return found;
    const el = found.el;
    if (el.localName !== "select") {
      return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is not a <select>; browser_select_option picks options of a select (click custom dropdowns instead)`);
    }
    if (el.disabled) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is disabled`);
    const cover = coverOf(el);
    if (cover) return cover;
    const options = [...el.options];
    const listed = () => options.slice(0, 20).map((o) => (o.label.trim() && o.label.trim() !== o.value ? `${JSON.stringify(o.value)} (${o.label.trim()})` : JSON.stringify(o.value))).join(", ") + (options.length > 20 ? `, and ${options.length - 20} more` : "");
    const picked = [];
    for (const value of values) {
      const option = options.find((o) => o.value === value) ?? options.find((o) => o.label.trim() === value || o.text.trim() === value);
      if (!option) return fail("INVALID_PARAMS", `${describe(el)} has no option ${JSON.stringify(value)}; its options: ${listed()}`);
      if (option.disabled) return fail("ELEMENT_NOT_INTERACTABLE", `option ${JSON.stringify(value)} of ${describe(el)} is disabled`);
      if (!picked.includes(option)) picked.push(option);
    }
    if (!el.multiple && picked.length !== 1) {
      return fail("INVALID_PARAMS", `${describe(el)} takes exactly one value, not ${picked.length}; its options: ${listed()}`);
    }
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    el.focus({ preventScroll: true });
    for (const option of options) option.selected = picked.includes(option);
    // As a person's pick: input, then change, both bubbling.
    el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { selected: [...el.selectedOptions].map((o) => o.value) };
  }

  // ---- wait -------------------------------------------------------------------------------
  // What keeps a condition from holding now (null: it holds), or { error } for a bad XPath.
  function unmet(c) {
    const shown = () => (document.body ? document.body.innerText : "");
    if (c.text !== undefined) return shown().includes(c.text) ? null : `the page does not show ${JSON.stringify(c.text)}`;
    if (c.textGone !== undefined) return shown().includes(c.textGone) ? `the page still shows ${JSON.stringify(c.textGone)}` : null;
    if (c.url !== undefined) {
      const pattern = new RegExp("^" + c.url.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$");
      return pattern.test(location.href) ? null : `the tab is at ${location.href}`;
    }
    const found = resolve(c);
    if (found.error && found.error.code !== "ELEMENT_NOT_FOUND") return found;
    const el = found.el;
    const visible = !!el && isRendered(el, el.getBoundingClientRect()) && getComputedStyle(el).visibility !== "hidden";
    switch (c.state || "visible") {
      case "attached": return el ? null : "no element matches";
      case "detached": return el ? `${describe(el)} is still there` : null;
      case "hidden": return visible ? `${describe(el)} is visible` : null;
      default: return visible ? null : el ? `${describe(el)} is there but not visible` : "no element matches";
    }
  }

  // Resolves when the condition holds, or after timeoutMs with what was last seen. Checked on
  // every DOM change, and every 100 ms for what no mutation shows (CSS, the URL).
  function waitFor({ condition, timeoutMs }) {
    return new Promise((settle) => {
      let done = false;
      let seen = "";
      const finish = (answer) => {
        done = true;
        observer.disconnect();
        clearInterval(poll);
        clearTimeout(limit);
        settle(answer);
      };
      const check = () => {
        if (done) return;
        const reason = unmet(condition);
        if (reason === null) finish({ matched: true });
        else if (reason.error) finish(reason);
        else seen = reason;
      };
      const observer = new MutationObserver(check);
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      const poll = setInterval(check, 100);
      const limit = setTimeout(() => finish({ matched: false, seen }), timeoutMs);
      check();
    });
  }

  // ---- scroll -----------------------------------------------------------------------------
  // What a scroll acts on: the element at `at`, or the page.
  function scroller(at) {
    if (at.xpath === undefined && at.ref === undefined) return { page: true };
    const found = resolve(at);
    return found.error ? found : { el: found.el };
  }

  function position(target, direction) {
    const el = target.el || document.scrollingElement || document.documentElement;
    const [x, y] = target.el ? [el.scrollLeft, el.scrollTop] : [scrollX, scrollY];
    const [w, h] = target.el ? [el.clientWidth, el.clientHeight] : [innerWidth, innerHeight];
    const atEnd = {
      down: y + h >= el.scrollHeight - 1,
      up: y <= 0,
      right: x + w >= el.scrollWidth - 1,
      left: x <= 0,
    }[direction];
    return { scrollX: x, scrollY: y, atEnd };
  }

  // Where the wheel goes (the element's visible centre, or the viewport's), and how far.
  function wheelAt({ direction, ...at }) {
    const target = scroller(at);
    if (target.error) return target;
    let x = innerWidth / 2;
    let y = innerHeight / 2;
    if (target.el) {
      const r = target.el.getBoundingClientRect();
      if (!isRendered(target.el, r)) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(target.el)} is not rendered (hidden, display:none or zero size)`);
      const offset = frameOffset(target.el.ownerDocument);
      x = offset.x + Math.min(Math.max(r.left + r.width / 2, 1), innerWidth - 1);
      y = offset.y + Math.min(Math.max(r.top + r.height / 2, 1), innerHeight - 1);
    }
    const vertical = direction === "down" || direction === "up";
    return { x, y, page: vertical ? innerHeight * 0.9 : innerWidth * 0.9 };
  }

  // The position once the wheel's scroll has ended: on `scrollend`, or when nothing moved
  // for 150 ms (at an end, nothing moves at all).
  function scrolled({ direction, ...at }) {
    const target = scroller(at);
    if (target.error) return target;
    const on = target.el || window;
    return new Promise((settle) => {
      let quiet;
      const done = () => {
        on.removeEventListener("scroll", moved);
        on.removeEventListener("scrollend", done);
        clearTimeout(quiet);
        settle(position(target, direction));
      };
      const moved = () => {
        clearTimeout(quiet);
        quiet = setTimeout(done, 150);
      };
      on.addEventListener("scroll", moved);
      on.addEventListener("scrollend", done);
      moved();
    });
  }

  function intoView({ direction, ...at }) {
    const found = resolve(at);
    if (found.error) return found;
    found.el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    return position({ page: true }, direction);
  }

  // ---- keys -------------------------------------------------------------------------------
  function focus(at) {
    const target = shown(at);
    if (target.error) return target;
    const { el } = target;
    if (el.disabled) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is disabled`);
    el.focus({ preventScroll: true });
    const active = deepActive();
    if (!(active === el || within(el, active))) {
      return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} did not take the focus (${describe(active)} has it); give an input, a button, a link or an element with a tabindex`);
    }
    return { focused: true };
  }

  // ---- upload -----------------------------------------------------------------------------
  // The <input type=file> an upload sets (the element itself, or the field a label is for),
  // answered as the element; for anything else, where a click opens the page's file chooser.
  function fileInput({ count, ...at }) {
    const found = resolve(at);
    if (found.error) return found;
    const field = found.el.localName === "label" ? found.el.control : found.el;
    if (!field || field.localName !== "input" || field.type !== "file") return clickPoint(at);
    if (field.disabled) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(field)} is disabled`);
    if (count > 1 && !field.multiple) {
      return fail("INVALID_PARAMS", `${describe(field)} takes one file (it has no multiple attribute), not ${count}`);
    }
    return field;
  }

  // ---- html -------------------------------------------------------------------------------
  function html(at) {
    if (at.xpath === undefined && at.ref === undefined) {
      const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\n" : "";
      return { html: doctype + document.documentElement.outerHTML };
    }
    const found = resolve(at);
    return found.error ? found : { html: found.el.outerHTML };
  }
