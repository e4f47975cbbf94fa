// Tether's in-page library, part 1 of 7: the core (constants, element addressing, refs,
// geometry). The parts (core, walk, scan, snapshot, hands, settle, exports) are joined in that order
// inside one arrow function (`host/src/page/library.rs`, `SOURCE`) that is evaluated in Tether's own
// isolated world of each document as `(LIB)().fn(args)`; they share its scope, so a part may
// use what an earlier part declares. In that world the page's scripts cannot see the library,
// and the DOM functions it calls are the browser's own whatever the page redefines.
//
// Element addressing: an XPath per document, joined by two steps that no real XPath contains:
//   /html/body/my-widget/#shadow-root/div/button    (into an open shadow root)
//   /html/body/iframe[2]/#document/html/body/input  (into an iframe)
// The part after a step is evaluated relative to that root. A cross-origin iframe's document
// is not this page's to read: the host marks such a frame's element with the frame's id
// (FRAME_ID, host/src/page/framed.rs) and follows the rest of the path in the frame itself. Functions return plain data, or
// { error: { code, message, details? } } with the wire's error codes.
  const XHTML = "http://www.w3.org/1999/xhtml";
  const SHADOW = "/#shadow-root";
  const FRAME = "/#document";
  // What makes an element interactive by its markup: these tags, and these roles. As one
  // selector (INTERACTIVE) for queries; `matchesInteractive` (js/walk.js) asks the same of one
  // element.
  const INTERACTIVE_TAGS = new Set(["button", "select", "textarea", "summary"]);
  const INTERACTIVE_ROLES = new Set(["button", "link", "checkbox", "radio", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "switch", "textbox", "combobox", "searchbox", "slider", "spinbutton", "treeitem"]);
  const INTERACTIVE = [
    ...INTERACTIVE_TAGS, "a[href]", "input:not([type=hidden])",
    "[contenteditable='']", "[contenteditable=true]", "[onclick]", "[tabindex]:not([tabindex='-1'])",
    ...[...INTERACTIVE_ROLES].map((r) => `[role=${r}]`),
  ].join(",");
  const NON_TEXT_INPUTS = new Set(["button", "checkbox", "color", "file", "hidden", "image", "radio", "range", "reset", "submit"]);
  const ATTRIBUTES = new Set(["id", "name", "type", "href", "placeholder", "aria-label", "title", "alt", "role", "target", "disabled", "aria-expanded", "aria-checked"]);
  // The events by which the page's own world says which elements got click listeners there
  // (js/hooks.js), set by the install (host/src/page/mod.rs) in this world alone.
  const CHANNEL = globalThis[Symbol.for("tether.channel")] || { ask: "", answer: "" };
  const FRAME_ID = Symbol.for("tether.frame");
  // The fields a secret was typed into, by the secret's name (never its value): a snapshot
  // shows such a field's value as <secret:name>, a password field's too. Kept on the field's
  // window, since this library is made anew for each call.
  const SECRET_FIELDS = Symbol.for("tether.secretFields");
  const secretFields = (el) => {
    const win = el.ownerDocument.defaultView;
    return win ? (win[SECRET_FIELDS] ??= new WeakMap()) : new WeakMap();
  };
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
  // Paths are memoised per call as a table of the elements they pass through, each once, in
  // the order they were first asked for: how far back the element its path continues is (0:
  // none), and its own step. A path is its parent's, "/", and the step; where it goes into a
  // shadow root or a frame's document the step begins with "#shadow-root/" or "#document/".
  // A scan sends the table and the host joins the paths (host/src/page/library.rs, ScanRows): a
  // 20,000-element page's whole paths were a quarter of its 1 MB reply and half of the time
  // JSON.stringify took on it.
  //
  // A parent's children get their steps all at once, the first time one of them is asked for
  // (counting siblings per element is quadratic on a long list: 2,000 table rows made a scan
  // take seconds); an only child needs no counting. Walking the children by
  // nextElementSibling and keeping one map of steps took a 20,000-element page's paths from
  // 17.4 to 7.8 ms against a map of positions and one of counts per parent.
  const newPaths = () => ({ index: new Map(), back: [], steps: [], siblings: new Map() });
  const siblingKey = (el) => (el.namespaceURI === XHTML ? el.localName : `${el.namespaceURI} ${el.localName}`);
  const nameTest = (el) => (el.namespaceURI === XHTML ? el.localName : `*[local-name()='${el.localName}']`);

  // Puts every element child of `parent` into `steps` with its step.
  function stepChildren(parent, steps) {
    const first = parent.firstElementChild;
    if (first === parent.lastElementChild) {
      steps.set(first, nameTest(first));
      return;
    }
    const count = new Map();
    const children = []; // child, its key, child, its key, ...
    for (let child = first; child; child = child.nextElementSibling) {
      const key = siblingKey(child);
      children.push(child, key);
      count.set(key, (count.get(key) || 0) + 1);
    }
    const seen = new Map();
    for (let i = 0; i < children.length; i += 2) {
      const child = children[i];
      const key = children[i + 1];
      if (count.get(key) === 1) {
        steps.set(child, nameTest(child));
        continue;
      }
      const position = (seen.get(key) || 0) + 1;
      seen.set(key, position);
      steps.set(child, `${nameTest(child)}[${position}]`);
    }
  }

  function step(el, memo) {
    let known = memo.siblings.get(el);
    if (known === undefined) {
      stepChildren(el.parentNode, memo.siblings);
      known = memo.siblings.get(el);
    }
    return known;
  }

  // The element's index in the table of paths, added with the elements its path passes
  // through if it is not there yet.
  function nodeOf(el, memo) {
    const known = memo.index.get(el);
    if (known !== undefined) return known;
    const parent = el.parentNode;
    let from = -1;
    let into = "";
    if (parent.nodeType === 9) {
      const frame = parent.defaultView && parent.defaultView.frameElement;
      if (frame && frame.ownerDocument !== parent) {
        from = nodeOf(frame, memo);
        into = "#document/";
      }
    } else if (parent.nodeType === 11 && parent.host) {
      from = nodeOf(parent.host, memo);
      into = "#shadow-root/";
    } else {
      from = nodeOf(parent, memo);
    }
    const n = memo.back.length;
    memo.back.push(from < 0 ? 0 : n - from);
    memo.steps.push(into + step(el, memo));
    memo.index.set(el, n);
    return n;
  }

  function pathOf(el, memo = newPaths()) {
    let path = "";
    for (let n = nodeOf(el, memo); ; n -= memo.back[n]) {
      path = `/${memo.steps[n]}${path}`;
      if (memo.back[n] === 0) return path;
    }
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

  // Follows an XPath through shadow roots and frames: { el }, an error, or where it meets a
  // root it cannot enter: { closed: { node, into, at, parts } } (`at`: the part after it).
  function descend(xpath) {
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
        if (!next) return { closed: { node, into, at: i, parts } };
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

  function resolvePath(xpath) {
    const found = descend(xpath);
    if (!found.closed) return found;
    const { node, into, at, parts } = found.closed;
    const what = into === SHADOW ? "has no open shadow root" : "is a frame whose document cannot be reached";
    return fail("ELEMENT_NOT_FOUND", `${describe(node)} at ${parts.slice(0, at - 1).join("")} ${what}`);
  }

  // Where an XPath goes into a marked cross-origin frame: the frame's id and the rest of the
  // path (from its "/html..."), or { frame: null } when it goes into none.
  function crossFrame({ xpath }) {
    const found = descend(xpath);
    if (!found.closed || found.closed.into !== FRAME || !found.closed.node[FRAME_ID]) return { frame: null };
    const { node, at, parts } = found.closed;
    return { frame: node[FRAME_ID], rest: parts.slice(at).join("") };
  }

  // ---- refs -------------------------------------------------------------------------------
  // A ref (e1, e2, ...) names an element for as long as it stays in its document. Snapshots
  // and scans hand them out from a registry on the top window, so a new document starts a new
  // one; the host keeps the tab's highest number and passes it as `refFloor`, so a number is
  // never given to a second element in the tab, across navigations too.
  const REFS = Symbol.for("tether.refs");
  function registry() {
    let refs = window[REFS];
    if (!refs) {
      refs = { next: 1, elements: new Map(), numbers: new WeakMap() };
      Object.defineProperty(window, REFS, { value: refs });
    }
    return refs;
  }

  // The registry, its next number raised to the host's floor; `refs.next` after handing out
  // is what the host keeps.
  function refsFrom(refFloor) {
    const refs = registry();
    if (refFloor > refs.next) refs.next = refFloor;
    return refs;
  }

  // The element's ref number (its ref is "e" and the number).
  function refNumber(el, refs = registry()) {
    let n = refs.numbers.get(el);
    if (!n) {
      n = refs.next++;
      refs.numbers.set(el, n);
      refs.elements.set(n, new WeakRef(el));
    }
    return n;
  }

  const refOf = (el, refs) => `e${refNumber(el, refs)}`;

  function resolveRef(ref) {
    const refs = registry();
    const n = Number(ref.slice(1));
    const fresh = "take a new browser_snapshot (or browser_xpath_scan) for current refs";
    if (!refs.elements.has(n)) {
      return fail("ELEMENT_NOT_FOUND", `ref ${ref} is not from the page now in this tab (${location.href}): it was given for another page, the one this tab showed before it navigated or reloaded, or another tab's (act there with that tabId); ${fresh}`);
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
