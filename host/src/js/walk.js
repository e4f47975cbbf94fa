// Tether's in-page library, part 2 of 7: the walk that scan and snapshot share, and what
// they both say of an element (role, name, text, attributes, whether it is covered).

  // ---- the walk ---------------------------------------------------------------------------
  // What a walk knows of one root (a document or an open shadow root): the labels by the id
  // they are for, the elements that got click listeners (js/hooks.js), where its frame sits in
  // the top viewport, and the top viewport's size (each `innerWidth` asks the page for its
  // layout: read once, 4 ms less of a 20,000-element scan).
  function rootContext(root, ox, oy, listenersOf) {
    const doc = root.nodeType === 9 ? root : root.ownerDocument;
    const labels = new Map();
    for (const label of root.querySelectorAll("label[for]")) {
      if (!labels.has(label.htmlFor)) labels.set(label.htmlFor, label);
    }
    return {
      labels,
      listeners: listenersOf(doc),
      ox,
      oy,
      width: innerWidth,
      height: innerHeight,
    };
  }

  // The elements of `doc` that got click listeners in the page's own world, as its hooks
  // answer (js/hooks.js): each is the target of one answer event, dispatched while this asks.
  function listenersIn(doc) {
    const found = new WeakSet();
    const take = (event) => found.add(event.composedPath()[0]);
    doc.addEventListener(CHANNEL.answer, take, true);
    try {
      doc.dispatchEvent(new Event(CHANNEL.ask));
    } finally {
      doc.removeEventListener(CHANNEL.answer, take, true);
    }
    return found;
  }

  const frameDocument = (el) => {
    try {
      return el.contentDocument;
    } catch (_) {
      return null;
    }
  };

  // Visits the page as it is rendered, in reading order: an open shadow root's tree in place
  // of its host's children, slotted nodes where their slot is, a same-origin frame's document
  // inside its frame. `visitor.enter(el, context)` answers whether to go inside `el`;
  // `visitor.leave(el)` follows its children; `visitor.text(node)` gets each text node;
  // `visitor.frame(el, reachable, context)` is told of each frame before its document is walked.
  function walk(visitor) {
    const contexts = new Map();
    const asked = new Map();
    const listenersOf = (doc) => {
      if (!asked.has(doc)) asked.set(doc, listenersIn(doc));
      return asked.get(doc);
    };
    const contextOf = (root, ox, oy) => {
      let context = contexts.get(root);
      if (!context) contexts.set(root, (context = rootContext(root, ox, oy, listenersOf)));
      return context;
    };

    function children(parent, context) {
      for (let node = parent.firstChild; node; node = node.nextSibling) one(node, context);
    }

    function one(node, context) {
      if (node.nodeType === 3) {
        if (visitor.text) visitor.text(node);
        return;
      }
      if (node.nodeType !== 1) return;
      const el = node;
      if (!visitor.enter(el, context)) return;
      if (el.shadowRoot) {
        children(el.shadowRoot, contextOf(el.shadowRoot, context.ox, context.oy));
      } else if (el.localName === "slot" && el.getRootNode().host) {
        const assigned = el.assignedNodes({ flatten: true });
        if (assigned.length === 0) children(el, context);
        for (const slotted of assigned) {
          one(slotted, slotted.nodeType === 1 ? contextOf(slotted.getRootNode(), context.ox, context.oy) : context);
        }
      } else if (el.localName === "iframe" || el.localName === "frame") {
        const inner = frameDocument(el);
        if (visitor.frame) visitor.frame(el, Boolean(inner && inner.documentElement), context);
        if (inner && inner.documentElement) {
          const r = el.getBoundingClientRect();
          const x = context.ox + r.left + el.clientLeft;
          const y = context.oy + r.top + el.clientTop;
          children(inner, contextOf(inner, x, y));
        }
      } else {
        children(el, context);
      }
      if (visitor.leave) visitor.leave(el);
    }

    children(document, contextOf(document, 0, 0));
  }

  // ---- what an element is -----------------------------------------------------------------
  const ROLES = { a: "link", button: "button", select: "combobox", textarea: "textbox", summary: "button" };
  const INPUT_ROLES = { checkbox: "checkbox", radio: "radio", range: "slider", submit: "button", button: "button", reset: "button", image: "button", search: "searchbox", number: "spinbutton" };

  function roleOf(el) {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit;
    if (el.localName === "input") return INPUT_ROLES[el.type] || "textbox";
    if (el.isContentEditable) return "textbox";
    return ROLES[el.localName];
  }

  // A checkbox's or radio's value is what its form sends ("on" unless set), not text a
  // person sees: as text it read like its state. Its state is in attributes.checked.
  const VALUE_UNSEEN = new Set(["password", "checkbox", "radio"]);

  function textOf(el) {
    let text;
    if (el.localName === "input" || el.localName === "textarea") text = VALUE_UNSEEN.has(el.type) ? "" : el.value;
    else if (el.localName === "select") text = el.selectedOptions[0] ? el.selectedOptions[0].text : "";
    // innerText respects CSS (hidden children, line breaks) but costs; a leaf's textContent is
    // the same text, and on huge containers it is the good-enough answer.
    else text = el.childElementCount === 0 || el.childElementCount > 50 ? el.textContent : el.innerText;
    return clip(squash(text), 100);
  }

  // The name the page gives the element for assistive technology: aria-labelledby's text,
  // else aria-label.
  function ariaName(el) {
    const labelledBy = el.getAttribute("aria-labelledby");
    if (labelledBy) {
      const root = el.getRootNode();
      const text = labelledBy.split(/\s+/).map((id) => root.getElementById && root.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(" ");
      if (squash(text)) return clip(squash(text), 100);
    }
    const label = el.getAttribute("aria-label");
    return label && squash(label) ? clip(squash(label), 100) : undefined;
  }

  // What a person reads as the element's name. Labels come from an index built once per root:
  // `el.labels` costs Chromium a document-wide search the first time it is asked on a page
  // (1.5 s on a 2,000-input page).
  function nameOf(el, attributes, labels) {
    const attr = (name) => (attributes && attributes[name]) || null;
    const given = ariaName(el);
    if (given) return given;
    const labelElement = (el.id && labels.get(el.id)) || (LABELABLE.has(el.localName) ? el.closest("label") : null);
    const label = labelElement ? labelText(labelElement, el) : null;
    const direct = attr("aria-label") || label || attr("alt") || attr("title") || attr("placeholder");
    return direct ? clip(squash(direct), 100) : undefined;
  }

  // A label's text, less the control's own when the label wraps it (a select's options, a
  // textarea's text), as the browser names the control.
  function labelText(label, el) {
    if (!label.contains(el)) return label.textContent;
    let text = "";
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!el.contains(node)) text += node.data;
    }
    return text;
  }

  // One pass over the names of the element's own attributes (usually one to three) beats
  // asking for each attribute of interest by name, and iterating `el.attributes` (an Attr
  // object made for each: 3.6 ms against 1.0 ms for 6,000 elements).
  function attributesOf(el) {
    const out = {};
    let any = false;
    if (el.hasAttributes()) {
      for (const name of el.getAttributeNames()) {
        if (ATTRIBUTES.has(name)) {
          out[name] = clip(el.getAttribute(name), 200);
          any = true;
        }
      }
    }
    if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) {
      out.checked = String(el.checked);
      any = true;
    }
    return any ? out : undefined;
  }

  // Whether INTERACTIVE matches the element, asked as the walk passes it: matching the
  // selector with one query per root, and looking each element up in what it found, cost a
  // 20,000-element page 9 ms more.
  function matchesInteractive(el) {
    const tag = el.localName;
    if (INTERACTIVE_TAGS.has(tag)) return true;
    // `el.type` is "hidden" whatever the attribute's case, as the selector matches it; a
    // hidden input may still match by its attributes, as in the selector.
    if (tag === "input" && el.type !== "hidden") return true;
    if (!el.hasAttributes()) return false;
    if (tag === "a" && el.hasAttribute("href")) return true;
    if (el.hasAttribute("onclick")) return true;
    const tabindex = el.getAttribute("tabindex");
    if (tabindex !== null && tabindex !== "-1") return true;
    const editable = el.getAttribute("contenteditable");
    if (editable === "" || editable === "true") return true;
    const role = el.getAttribute("role");
    return role !== null && INTERACTIVE_ROLES.has(role);
  }

  function isInteractive(el, listeners) {
    if (matchesInteractive(el)) return true;
    if (el.localName === "html" || el.localName === "body") return false;
    return typeof el.onclick === "function" || Boolean(listeners && listeners.has(el));
  }

  const round1 = (n) => Math.round(n * 10) / 10;

  // The element's box in the top viewport's CSS pixels, if a person can see it at all.
  // `styleSeen`: the caller has already found it displayed and visible, so only its size is
  // left to check.
  function renderedBox(el, context, styleSeen = false) {
    const r = el.getBoundingClientRect();
    if (styleSeen ? !(r.width > 0 && r.height > 0) : !isRendered(el, r)) return null;
    return { x: round1(r.left + context.ox), y: round1(r.top + context.oy), w: round1(r.width), h: round1(r.height) };
  }

  const inViewport = (box, context) => box.x < context.width && box.y < context.height && box.x + box.w > 0 && box.y + box.h > 0;

  // Whether something else is on top of the element's centre (only known inside the viewport).
  function isCovered(el, box, context) {
    const cx = box.x + box.w / 2;
    const cy = box.y + box.h / 2;
    if (cx < 0 || cy < 0 || cx >= context.width || cy >= context.height) return false;
    const hit = deepHit(cx, cy);
    return Boolean(hit && !within(el, hit));
  }
