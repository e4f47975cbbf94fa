// Tether's in-page library, part 4 of 7: `snapshot`, the page as compact Markdown for an
// agent to read (docs/protocol.md §10). Every element that `scan` lists is written in place as
// `[eN] role "name"` plus its state; text is condensed to one line per block, long blocks
// clipped; lists, headings and small tables keep their Markdown shape; hidden content is left
// out. The host adds the header, the diff (`recent`), the gist's wording and the cut.

  const BLOCK_TEXT = 240; // characters of text a block keeps before "…" (refs are always kept)
  const NAME_CHARS = 80;
  const VALUE_CHARS = 60;
  const HREF_CHARS = 80;
  const TABLE_ROWS = 20; // rows a table keeps, past which only rows that name an element stay
  const NEVER_SHOWN = new Set(["script", "style", "noscript", "template", "head", "title", "meta", "link", "datalist"]);
  const OPAQUE = new Set(["svg", "canvas", "video", "audio", "object", "embed", "select", "textarea"]);
  // Roles whose element is one thing to act on: written as one ref, named by its text.
  const LEAF_ROLES = new Set(["link", "button", "textbox", "searchbox", "combobox", "checkbox", "radio", "slider", "spinbutton", "switch", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "treeitem"]);
  const INPUT_ROLES_COUNTED = new Set(["textbox", "searchbox", "combobox", "checkbox", "radio", "slider", "spinbutton", "switch"]);
  const DIALOG = "dialog[open], [role=dialog], [role=alertdialog]";

  const isInline = (display) => display.startsWith("inline") || display === "contents" || display === "ruby" || display === "table-cell";
  const quoted = (s) => JSON.stringify(s);

  // Where a document is, as shortHref compares hrefs with it; found once per document.
  function placeOf(doc) {
    const here = doc.location;
    const page = here.href.split("#")[0];
    return { origin: here.origin + "/", page: here.pathname + here.search + "#", plainBase: doc.baseURI.split("#")[0] === page };
  }

  // A link's href as short as stays unambiguous: a path on the page's own origin, a fragment
  // on the page itself, the whole URL elsewhere; none for script links. The href is read as
  // a string and cut by the page's origin and path: parsing each with `new URL` was a tenth
  // of a 2,000-element snapshot.
  function shortHref(a, place) {
    const raw = a.getAttribute("href");
    if (!raw || /^\s*javascript:/i.test(raw)) return "";
    // A fragment of plain word characters is the place on this page as written (the bulk of
    // a long table of contents), unless a <base> sends it elsewhere.
    if (place.plainBase && /^#[\w-]+$/.test(raw)) return clip(raw, HREF_CHARS);
    const href = a.href;
    if (!href.startsWith(place.origin)) return clip(href || raw, HREF_CHARS);
    const path = href.slice(place.origin.length - 1);
    if (path.length > place.page.length && path.startsWith(place.page)) return clip(path.slice(place.page.length - 1), HREF_CHARS);
    return clip(path, HREF_CHARS);
  }

  // What a person sees of an element's state, as words after its name, added to `words`.
  function stateOf(words, el, role, box, context) {
    const tag = el.localName;
    if (tag === "input" && (el.type === "checkbox" || el.type === "radio")) words.push(el.checked ? "checked" : "unchecked");
    else if (el.hasAttribute("aria-checked")) words.push(el.getAttribute("aria-checked") === "true" ? "checked" : "unchecked");
    if (tag === "select") {
      const chosen = [...el.selectedOptions].map((o) => squash(o.text));
      if (chosen.length) words.push(`= ${quoted(clip(chosen.join(", "), VALUE_CHARS))}`);
    } else if ((tag === "input" && !NON_TEXT_INPUTS.has(el.type)) || tag === "textarea") {
      const secret = el.value && el.ownerDocument.defaultView?.[SECRET_FIELDS]?.get(el);
      if (secret) words.push(`= ${quoted(`<secret:${secret}>`)}`);
      else if (el.type !== "password" && el.value) words.push(`= ${quoted(clip(squash(el.value), VALUE_CHARS))}`);
    } else if (el.isContentEditable && tag !== "body") {
      const text = squash(el.innerText);
      if (text) words.push(`= ${quoted(clip(text, VALUE_CHARS))}`);
    }
    const expanded = el.getAttribute("aria-expanded");
    if (expanded) words.push(expanded === "true" ? "expanded" : "collapsed");
    if (el.getAttribute("aria-pressed") === "true") words.push("pressed");
    if (el.getAttribute("aria-selected") === "true" && role !== "option") words.push("selected");
    if (el.disabled || el.getAttribute("aria-disabled") === "true") words.push("disabled");
    if (role === "link" && tag === "a") {
      // The walk's context is per root: the place is found once for each.
      const href = shortHref(el, context.place || (context.place = placeOf(el.ownerDocument)));
      if (href) words.push(`→ ${href}`);
    }
    if (isCovered(el, box, context)) words.push("covered");
  }

  // An image-only link or button is named by its image.
  const imageAlt = (el) => {
    const img = el.querySelector("img[alt]");
    return img ? squash(img.alt) : "";
  };

  // `[eN] role "name" state…`; a leaf is named by its text when nothing else names it.
  function markerOf(el, ref, role, context, box, leaf) {
    // A link or a button is named by its content before its title, as assistive technology
    // names it; a field by its label.
    const takesText = el.localName === "input" || el.localName === "textarea" || el.localName === "select" || el.isContentEditable;
    const name = leaf && !takesText
      ? ariaName(el) || textOf(el) || imageAlt(el) || nameOf(el, attributesOf(el), context.labels)
      : nameOf(el, attributesOf(el), context.labels);
    const words = [`[${ref}]`, role];
    if (name) words.push(quoted(clip(name, NAME_CHARS)));
    stateOf(words, el, role, box, context);
    return words.join(" ");
  }

  // The Markdown being written: finished blocks, and the parts of the line being filled
  // (text, and refs that clipping never drops). A line's runs of spaces become one as its
  // parts are joined (a part has none inside once its own are collapsed): a regex over
  // each finished line instead was 2 ms of a 20,000-element snapshot.
  function newWriter() {
    const w = { blocks: [], parts: [], lead: "", indent: "" };
    w.flush = () => {
      let line = "";
      let budget = BLOCK_TEXT;
      for (const part of w.parts) {
        let piece;
        if (typeof part !== "string") {
          piece = ` ${part.ref} `;
          // A ref's role is the page's `role` attribute as written.
          if (piece.includes("  ")) piece = piece.replace(/ {2,}/g, " ");
        } else if (budget > 0) {
          const text = part.replace(/\s+/g, " ");
          piece = text.length > budget ? text.slice(0, budget) + "…" : text;
          budget -= text.length;
        } else continue;
        line += line.endsWith(" ") && piece.startsWith(" ") ? piece.slice(1) : piece;
      }
      w.parts = [];
      line = line.trim();
      if (line) w.blocks.push(w.indent + w.lead + line);
      w.lead = "";
    };
    w.block = (line) => {
      w.flush();
      w.blocks.push(w.indent + line);
    };
    return w;
  }

  // What the snapshot knows of an element it is inside. Its `visibility` is read only when
  // something asks (its ref, its text, its image): in a table most cells never do, and
  // reading it for all 20,000 elements of the big page was 6 ms.
  class Frame {
    constructor(style, hidesContent) {
      this.style = style;
      this.hidesContent = hidesContent;
      this.seen = style ? undefined : true;
      this.close = null;
      this.unmute = false;
    }

    get visible() {
      if (this.seen === undefined) this.seen = this.style.visibility === "visible";
      return this.seen;
    }

    get textShown() {
      return !this.hidesContent && this.visible;
    }
  }

  function snapshot({ scope, refFloor }) {
    const refs = refsFrom(refFloor);
    const w = newWriter();
    const gist = { heading: "", links: 0, buttons: 0, inputs: 0, forms: 0, dialogs: [] };
    const lists = [];
    const tables = [];
    const stack = [new Frame(null, false)];
    let muted = 0;
    let headingIsH1 = false;

    // A box (not an empty one: its children may be positioned anywhere) off the viewport.
    const outside = (el, context) => {
      const r = el.getBoundingClientRect();
      const box = { x: r.left + context.ox, y: r.top + context.oy, w: r.width, h: r.height };
      return (box.w > 0 || box.h > 0) && !inViewport(box, context);
    };

    // Writes the element's ref if scan would list it; answers whether its inside is covered
    // by the ref (a leaf) and so not walked.
    function mark(el, context, frame) {
      if (!isInteractive(el, context.listeners)) return false;
      if (!frame.visible) return false;
      const box = renderedBox(el, context, true);
      if (!box || (scope === "viewport" && !inViewport(box, context))) return false;
      const role = roleOf(el) || "clickable";
      // Most links, buttons and fields have no element inside: no query for those (a query
      // per element was half the time of a 2,000-element page).
      const leaf = LEAF_ROLES.has(role) && !(el.firstElementChild && el.querySelector(INTERACTIVE));
      if (role === "link") gist.links++;
      else if (role === "button") gist.buttons++;
      else if (INPUT_ROLES_COUNTED.has(role)) gist.inputs++;
      w.parts.push({ ref: markerOf(el, refOf(el, refs), role, context, box, leaf) });
      return leaf;
    }

    // A label whose field is written as a ref with the label's text as its name: the text
    // would say the same twice.
    const namesItsField = (label) => {
      const field = label.control;
      return Boolean(field && field !== label && renderedBox(field, { ox: 0, oy: 0 }) && !label.querySelector("a[href], button"));
    };

    function open(el, display, frame) {
      const tag = el.localName;
      const table = tables[tables.length - 1];
      if (table && table.data && (tag === "tr" || display === "table-row")) {
        w.flush();
        table.row = { cells: 0 };
        w.parts.push("| ");
        frame.close = () => closeRow(table);
        return;
      }
      if (table && table.data && table.row && display === "table-cell") {
        if (table.row.cells++ > 0) w.parts.push(" | ");
        return;
      }
      if (table && table.data && table.row) {
        if (!isInline(display)) w.parts.push(" ");
        return;
      }
      if (isInline(display) && display !== "table-cell") return;
      w.flush();
      frame.close = w.flush;
      const level = /^h([1-6])$/.exec(tag) ? Number(tag[1]) : el.getAttribute("role") === "heading" ? Number(el.getAttribute("aria-level")) || 2 : 0;
      if (level) {
        w.lead = "#".repeat(level) + " ";
        // The main heading: the first h1, else the first heading.
        if (level === 1 ? !headingIsH1 : !gist.heading) {
          gist.heading = clip(squash(el.textContent), NAME_CHARS) || gist.heading;
          headingIsH1 = level === 1;
        }
      } else if (tag === "ul" || tag === "ol" || tag === "menu") {
        lists.push({ ordered: tag === "ol", n: 0 });
        frame.close = () => {
          w.flush();
          lists.pop();
        };
      } else if (tag === "li" || display === "list-item") {
        const list = lists[lists.length - 1];
        const indent = w.indent;
        w.indent = "  ".repeat(Math.max(0, lists.length - 1));
        w.lead = list && list.ordered ? `${++list.n}. ` : "- ";
        frame.close = () => {
          w.flush();
          w.indent = indent;
        };
      } else if (tag === "table") {
        tables.push({ data: !el.querySelector("table"), rows: 0, omitted: 0, columns: 0, row: null });
        frame.close = () => {
          w.flush();
          const done = tables.pop();
          if (done.omitted) w.blocks.push(`${w.indent}… ${done.omitted} more rows`);
        };
      } else if (tag === "hr") {
        w.blocks.push(w.indent + "---");
      } else if (el.matches(DIALOG)) {
        const name = nameOf(el, attributesOf(el), new Map()) || "";
        gist.dialogs.push(name);
        w.block(name ? `[dialog ${quoted(clip(name, NAME_CHARS))}]` : "[dialog]");
      } else if (tag === "form") {
        gist.forms++;
      }
    }

    // A data table's row: kept while the table is small, and after that only when it names
    // an element; the first row is followed by Markdown's header rule.
    function closeRow(table) {
      const row = table.row;
      table.row = null;
      w.parts.push(" |");
      table.rows++;
      const namesElement = w.parts.some((p) => typeof p !== "string");
      if (table.rows > TABLE_ROWS && !namesElement) {
        w.parts = [];
        table.omitted++;
        return;
      }
      w.flush();
      if (table.rows === 1 && row.cells > 1) w.blocks.push(w.indent + "|" + "---|".repeat(row.cells));
    }

    walk({
      enter(el, context) {
        const tag = el.localName;
        if (NEVER_SHOWN.has(tag)) return false;
        const style = getComputedStyle(el);
        const display = style.display;
        if (display === "none") return false;
        // The walk has seen every ancestor displayed; what else hides an element is a parent
        // that hides its content (content-visibility: hidden, hidden=until-found, a closed
        // <details> all but its summary), so only there is checkVisibility asked (asking it
        // of every element was a tenth of the snapshot). Its text is left out likewise.
        const parent = stack[stack.length - 1];
        if (parent.hidesContent && display !== "contents" && !el.checkVisibility()) return false;
        if (scope === "viewport" && display !== "contents" && style.position !== "fixed" && outside(el, context)) return false;
        const hidesContent = style.contentVisibility === "hidden" || (tag === "details" && !el.open) || (display === "contents" && parent.hidesContent);
        const frame = new Frame(style, hidesContent);
        open(el, display, frame);
        const leaf = mark(el, context, frame);
        if (leaf || OPAQUE.has(tag)) {
          if (frame.close) frame.close();
          return false;
        }
        if (tag === "img") {
          const alt = squash(el.getAttribute("alt"));
          if (alt && frame.visible) w.parts.push(` ![${clip(alt, NAME_CHARS)}] `);
        } else if (tag === "br") {
          // A line break: a new line, but not in a heading, whose lead the next line lacks.
          if (w.lead.startsWith("#")) w.parts.push(" ");
          else w.flush();
        } else if (tag === "label" && namesItsField(el)) {
          muted++;
          frame.unmute = true;
        }
        stack.push(frame);
        return true;
      },
      leave() {
        const frame = stack.pop();
        if (frame.unmute) muted--;
        if (frame.close) frame.close();
      },
      text(node) {
        if (muted === 0 && stack[stack.length - 1].textShown) w.parts.push(node.data);
      },
      frame(el, reachable) {
        // A marked cross-origin frame's content is read in the frame and put in its place
        // by the host (host/src/page/framed.rs, FRAME_BLOCK).
        if (reachable) return;
        if (el[FRAME_ID]) w.block(`\u0001frame ${el[FRAME_ID]}`);
        else w.block(`[frame ${quoted(clip(el.src || el.name || "", HREF_CHARS))}: another origin, not shown]`);
      },
    });
    w.flush();

    const height = document.documentElement.scrollHeight;
    const room = Math.max(1, height - innerHeight);
    return {
      reply: {
        url: location.href,
        title: document.title,
        blocks: w.blocks,
        gist: { ...gist, scrolled: Math.min(100, Math.round((100 * scrollY) / room)), scrollable: height > innerHeight },
      },
      nextRef: refs.next,
    };
  }
