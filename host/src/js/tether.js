// Tether's in-page library, evaluated in the tab's main world as `(LIB)().fn(args)`.
//
// Element addressing: an XPath per document, joined by two steps that no real XPath contains:
//   /html/body/my-widget/#shadow-root/div/button    (into an open shadow root)
//   /html/body/iframe[2]/#document/html/body/input  (into a same-origin iframe)
// The part after a step is evaluated relative to that root. Functions return plain data, or
// { error: { code, message, details? } } with the wire's error codes.
() => {
  const XHTML = "http://www.w3.org/1999/xhtml";
  const SHADOW = "/#shadow-root";
  const FRAME = "/#document";
  const INTERACTIVE = [
    "a[href]", "button", "input:not([type=hidden])", "select", "textarea", "summary",
    "[contenteditable='']", "[contenteditable=true]", "[onclick]", "[tabindex]:not([tabindex='-1'])",
    ...["button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
      "option", "switch", "textbox", "combobox", "searchbox", "slider", "spinbutton", "treeitem"]
      .map((r) => `[role=${r}]`),
  ].join(",");
  const NON_TEXT_INPUTS = new Set(["button", "checkbox", "color", "file", "hidden", "image", "radio", "range", "reset", "submit"]);
  const ATTRIBUTES = new Set(["id", "name", "type", "href", "placeholder", "aria-label", "title", "alt", "role", "target", "disabled", "aria-expanded", "aria-checked"]);
  const LISTENERS = Symbol.for("tether.listeners");
  const LABELABLE = new Set(["input", "select", "textarea", "button", "meter", "output", "progress"]);

  const fail = (code, message, details) => ({ error: details ? { code, message, details } : { code, message } });
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const squash = (s) => (s || "").replace(/\s+/g, " ").trim();

  function describe(el) {
    if (!el) return "nothing";
    const id = el.id ? `#${el.id}` : "";
    const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/)[0] : "";
    return `<${el.localName}${id}${cls}>`;
  }

  // ---- XPath: element -> path -------------------------------------------------------------
  // Paths are memoised per call: every element's path is its parent's plus one step, and each
  // parent's children are indexed once (counting siblings per element is quadratic on a long
  // list: 2,000 table rows made a scan take seconds).
  const newPaths = () => ({ paths: new Map(), siblings: new Map() });
  const siblingKey = (el) => (el.namespaceURI === XHTML ? el.localName : `${el.namespaceURI} ${el.localName}`);

  function step(el, memo) {
    const parent = el.parentNode;
    let index = memo.siblings.get(parent);
    if (!index) {
      index = { position: new Map(), count: new Map() };
      for (const child of parent.children) {
        const key = siblingKey(child);
        const n = (index.count.get(key) || 0) + 1;
        index.count.set(key, n);
        index.position.set(child, n);
      }
      memo.siblings.set(parent, index);
    }
    const name = el.localName;
    const test = el.namespaceURI === XHTML ? name : `*[local-name()='${name}']`;
    return index.count.get(siblingKey(el)) > 1 ? `${test}[${index.position.get(el)}]` : test;
  }

  function pathOf(el, memo = newPaths()) {
    const known = memo.paths.get(el);
    if (known) return known;
    const parent = el.parentNode;
    let prefix = "";
    if (parent.nodeType === 9) {
      const frame = parent.defaultView && parent.defaultView.frameElement;
      if (frame && frame.ownerDocument !== parent) prefix = pathOf(frame, memo) + FRAME;
    } else if (parent.nodeType === 11 && parent.host) {
      prefix = pathOf(parent.host, memo) + SHADOW;
    } else {
      prefix = pathOf(parent, memo);
    }
    const path = `${prefix}/${step(el, memo)}`;
    memo.paths.set(el, path);
    return path;
  }

  // ---- XPath: path -> element -------------------------------------------------------------
  const firstNode = (doc, expression, context) =>
    doc.evaluate(expression, context, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;

  function matchesTest(el, test) {
    if (test === "*") return true;
    const local = /^\*\[local-name\(\)='([^']*)'\]$/.exec(test);
    if (local) return el.localName === local[1];
    return el.namespaceURI === XHTML && el.localName === test.toLowerCase();
  }

  // XPath cannot take a shadow root as its context node: the first step below it is matched
  // here, among the root's children, and the rest is evaluated from the child it picks.
  function evaluateInShadow(doc, root, segment) {
    if (segment.startsWith("//")) {
      for (const child of root.children) {
        const hit = firstNode(doc, "descendant-or-self::" + segment.slice(2), child);
        if (hit) return hit;
      }
      return null;
    }
    const step = /^\/(\*\[local-name\(\)='[^']*'\]|[^/[]+)((?:\[[^\]]*\])*)(.*)$/.exec(segment);
    if (!step) throw new Error("after #shadow-root, use /name[i]/... or //...");
    let [, test, predicates, rest] = step;
    let index = 1;
    const numbered = /\[(\d+)\]$/.exec(predicates);
    if (numbered) {
      index = Number(numbered[1]);
      predicates = predicates.slice(0, numbered.index);
    }
    const candidates = [...root.children].filter(
      (child) => matchesTest(child, test) && (!predicates || firstNode(doc, "self::node()" + predicates, child)));
    const chosen = candidates[index - 1];
    if (!chosen || !rest) return chosen || null;
    return firstNode(doc, "." + rest, chosen);
  }

  function resolvePath(xpath) {
    const parts = xpath.split(/(\/#shadow-root|\/#document)/);
    let root = document;
    let node = null;
    for (let i = 0; i < parts.length; i += 2) {
      if (i > 0) {
        const into = parts[i - 1];
        let next = null;
        try {
          next = into === SHADOW ? node.shadowRoot : node.contentDocument;
        } catch (_) {}
        if (!next) {
          const what = into === SHADOW ? "has no open shadow root" : "is not a same-origin frame";
          return fail("ELEMENT_NOT_FOUND", `${describe(node)} at ${parts.slice(0, i - 1).join("")} ${what}`);
        }
        root = next;
      }
      try {
        node = root.nodeType === 9 ? firstNode(root, parts[i], root) : evaluateInShadow(root.ownerDocument, root, parts[i]);
      } catch (e) {
        return fail("INVALID_PARAMS", `not a valid XPath: ${parts[i]} (${e.message})`);
      }
      if (!node) {
        return fail("ELEMENT_NOT_FOUND",
          `no element matches ${xpath} on ${location.href}; the page may have changed: run browser_xpath_scan again`);
      }
    }
    if (node.nodeType !== 1) return fail("ELEMENT_NOT_FOUND", `${xpath} matches a ${node.nodeName} node, not an element`);
    return { el: node };
  }

  // ---- refs -------------------------------------------------------------------------------
  // A ref (e1, e2, ...) names an element for as long as it stays in its document. Scans hand
  // them out; the registry lives on the top window, so a new document starts a new one.
  const REFS = Symbol.for("tether.refs");
  function registry() {
    let refs = window[REFS];
    if (!refs) {
      refs = { next: 1, elements: new Map(), numbers: new WeakMap() };
      Object.defineProperty(window, REFS, { value: refs });
    }
    return refs;
  }

  function refOf(el) {
    const refs = registry();
    let n = refs.numbers.get(el);
    if (!n) {
      n = refs.next++;
      refs.numbers.set(el, n);
      refs.elements.set(n, new WeakRef(el));
    }
    return `e${n}`;
  }

  function resolveRef(ref) {
    const refs = registry();
    const n = Number(ref.slice(1));
    const fresh = "run browser_xpath_scan again for current refs";
    if (!refs.elements.has(n)) {
      return fail("ELEMENT_NOT_FOUND", `ref ${ref} is stale: it is not from the page now in the tab (${location.href}), which navigated or reloaded since; ${fresh}`);
    }
    const el = refs.elements.get(n).deref();
    if (!el || !el.isConnected || !el.ownerDocument.defaultView) {
      return fail("ELEMENT_NOT_FOUND", `ref ${ref} is stale: its element was removed from the page; ${fresh}`);
    }
    return { el };
  }

  // The element an action addresses: { xpath } or { ref }.
  function resolve(at) {
    return at.ref !== undefined ? resolveRef(at.ref) : resolvePath(at.xpath);
  }

  // ---- geometry and hit-testing ------------------------------------------------------------
  function frameOffset(doc) {
    let x = 0;
    let y = 0;
    for (let win = doc.defaultView; win && win.frameElement; win = win.parent) {
      const frame = win.frameElement;
      const r = frame.getBoundingClientRect();
      x += r.left + frame.clientLeft;
      y += r.top + frame.clientTop;
    }
    return { x, y };
  }

  // The innermost element at a top-viewport point, through shadow roots and same-origin frames.
  function deepHit(x, y) {
    let hit = document.elementFromPoint(x, y);
    let ox = 0;
    let oy = 0;
    while (hit) {
      let inner = null;
      if (hit.shadowRoot) {
        inner = hit.shadowRoot.elementFromPoint(x - ox, y - oy);
      } else if (hit.localName === "iframe" || hit.localName === "frame") {
        let doc = null;
        try {
          doc = hit.contentDocument;
        } catch (_) {}
        if (doc) {
          const r = hit.getBoundingClientRect();
          ox += r.left + hit.clientLeft;
          oy += r.top + hit.clientTop;
          inner = doc.elementFromPoint(x - ox, y - oy);
        }
      }
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  // Whether `node` is `el` or inside it, across shadow and frame boundaries.
  function within(el, node) {
    for (let n = node; n; ) {
      if (n === el) return true;
      if (n.parentNode) n = n.parentNode;
      else if (n.host) n = n.host;
      else if (n.nodeType === 9 && n.defaultView && n.defaultView.frameElement) n = n.defaultView.frameElement;
      else n = null;
    }
    return false;
  }

  function isRendered(el, r) {
    return r.width > 0 && r.height > 0 && el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });
  }

  function deepActive() {
    let active = document.activeElement;
    while (active) {
      let inner = null;
      if (active.shadowRoot) inner = active.shadowRoot.activeElement;
      else if (active.localName === "iframe") {
        try {
          inner = active.contentDocument && active.contentDocument.activeElement;
        } catch (_) {}
      }
      if (!inner || inner === active) break;
      active = inner;
    }
    return active;
  }

  // ---- scan -------------------------------------------------------------------------------
  const ROLES = { a: "link", button: "button", select: "combobox", textarea: "textbox", summary: "button" };
  const INPUT_ROLES = { checkbox: "checkbox", radio: "radio", range: "slider", submit: "button", button: "button", reset: "button", image: "button", search: "searchbox", number: "spinbutton" };

  function roleOf(el) {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit;
    if (el.localName === "input") return INPUT_ROLES[el.type] || "textbox";
    if (el.isContentEditable) return "textbox";
    return ROLES[el.localName];
  }

  function textOf(el) {
    let text;
    if (el.localName === "input" || el.localName === "textarea") text = el.type === "password" ? "" : el.value;
    else if (el.localName === "select") text = el.selectedOptions[0] ? el.selectedOptions[0].text : "";
    // innerText respects CSS (hidden children, line breaks) but costs; a leaf's textContent is
    // the same text, and on huge containers it is the good-enough answer.
    else text = el.childElementCount === 0 || el.childElementCount > 50 ? el.textContent : el.innerText;
    return clip(squash(text), 100);
  }

  // What a person reads as the element's name. Labels come from an index built once per root:
  // `el.labels` costs Chromium a document-wide search the first time it is asked on a page
  // (1.5 s on a 2,000-input page).
  function nameOf(el, attributes, labels) {
    const attr = (name) => (attributes && attributes[name]) || null;
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const root = el.getRootNode();
      const text = labelledBy.split(/\s+/).map((id) => root.getElementById && root.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(" ");
      if (squash(text)) return clip(squash(text), 100);
    }
    const labelElement = (el.id && labels.get(el.id)) || (LABELABLE.has(el.localName) ? el.closest("label") : null);
    const label = labelElement ? labelElement.textContent : null;
    const direct = attr("aria-label") || label || attr("alt") || attr("title") || attr("placeholder");
    return direct ? clip(squash(direct), 100) : undefined;
  }

  // One pass over the element's own attributes (usually one to three) beats asking for each
  // attribute of interest by name.
  function attributesOf(el) {
    const out = {};
    let any = false;
    for (const attribute of el.attributes) {
      if (ATTRIBUTES.has(attribute.name)) {
        out[attribute.name] = clip(attribute.value, 200);
        any = true;
      }
    }
    if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) {
      out.checked = String(el.checked);
      any = true;
    }
    return any ? out : undefined;
  }

  function isInteractive(el, candidates, listeners) {
    if (candidates.has(el)) return true;
    if (el.localName === "html" || el.localName === "body") return false;
    return typeof el.onclick === "function" || Boolean(listeners && listeners.has(el));
  }

  function scan({ scope }) {
    const memo = newPaths();
    const out = [];
    const vw = innerWidth;
    const vh = innerHeight;
    const round = (n) => Math.round(n * 10) / 10;

    function consider(el, context, ox, oy) {
      if (!isInteractive(el, context.candidates, context.listeners)) return;
      const r = el.getBoundingClientRect();
      if (!isRendered(el, r)) return;
      const bbox = { x: round(r.left + ox), y: round(r.top + oy), w: round(r.width), h: round(r.height) };
      const inView = bbox.x < vw && bbox.y < vh && bbox.x + bbox.w > 0 && bbox.y + bbox.h > 0;
      if (scope === "viewport" && !inView) return;
      const item = { xpath: pathOf(el, memo), ref: refOf(el), tag: el.localName };
      const text = textOf(el);
      if (text) item.text = text;
      item.bbox = bbox;
      const role = roleOf(el);
      if (role) item.role = role;
      const attributes = attributesOf(el);
      const name = nameOf(el, attributes, context.labels);
      if (name && name !== text) item.name = name;
      if (attributes) item.attributes = attributes;
      const cx = bbox.x + bbox.w / 2;
      const cy = bbox.y + bbox.h / 2;
      if (cx >= 0 && cy >= 0 && cx < vw && cy < vh) {
        const hit = deepHit(cx, cy);
        if (hit && !within(el, hit)) item.occluded = true;
      }
      out.push(item);
    }

    function visit(root, ox, oy) {
      const doc = root.nodeType === 9 ? root : root.ownerDocument;
      const listeners = doc.defaultView && doc.defaultView[LISTENERS];
      // One native query finds the selector matches; the walk keeps document order and finds
      // what the selector cannot (listeners, shadow roots, frames).
      const candidates = new Set(root.querySelectorAll(INTERACTIVE));
      const labels = new Map();
      for (const label of root.querySelectorAll("label[for]")) {
        if (!labels.has(label.htmlFor)) labels.set(label.htmlFor, label);
      }
      const context = { candidates, listeners, labels };
      const walker = doc.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let el = walker.nextNode(); el; el = walker.nextNode()) {
        consider(el, context, ox, oy);
        if (el.shadowRoot) visit(el.shadowRoot, ox, oy);
        if (el.localName === "iframe" || el.localName === "frame") {
          let inner = null;
          try {
            inner = el.contentDocument;
          } catch (_) {}
          if (inner && inner.documentElement) {
            const r = el.getBoundingClientRect();
            visit(inner, ox + r.left + el.clientLeft, oy + r.top + el.clientTop);
          }
        }
      }
    }

    visit(document, 0, 0);
    return { elements: out };
  }

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

  // ---- click ------------------------------------------------------------------------------
  function clickPoint(at) {
    const target = shown(at);
    if (target.error) return target;
    const { el, r } = target;
    if (el.disabled || el.getAttribute("aria-disabled") === "true") return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is disabled`);
    const offset = frameOffset(el.ownerDocument);
    const x = offset.x + r.left + r.width / 2;
    const y = offset.y + r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) {
      return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} stays outside the viewport after scrolling (centre at ${Math.round(x)},${Math.round(y)})`);
    }
    const hit = deepHit(x, y);
    if (!hit || !within(el, hit)) {
      const coveredBy = hit ? { tag: hit.localName, xpath: pathOf(hit) } : { tag: "none" };
      if (hit && hit.id) coveredBy.id = hit.id;
      return fail("ELEMENT_NOT_INTERACTABLE",
        `${describe(el)} is covered by ${describe(hit)} at (${Math.round(x)}, ${Math.round(y)}); a click there would hit the cover, not the element`,
        { coveredBy });
    }
    return { x, y };
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

  // ---- type -------------------------------------------------------------------------------
  function focusForTyping({ clear, ...at }) {
    const found = resolve(at);
    if (found.error) return found;
    const el = found.el;
    const textInput = el.localName === "textarea" || (el.localName === "input" && !NON_TEXT_INPUTS.has(el.type));
    if (!textInput && !el.isContentEditable) {
      return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} does not take text; browser_type needs an input, a textarea or a contenteditable element`);
    }
    if (el.disabled) return fail("ELEMENT_NOT_INTERACTABLE", `${describe(el)} is disabled`);
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

  return { scan, clickPoint, boxOf, focusForTyping, focus, selectOption, waitFor, wheelAt, scrolled, intoView, fileInput, html };
}
