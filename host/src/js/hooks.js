// Installed in every document of a session tab before the page's own scripts run, in the
// page's own JavaScript world (the in-page library runs in a world of its own, where the
// page's listeners cannot be seen). Records which elements get pointer/click listeners
// (`addEventListener`, or an `onclick`-like property set by script), so browser_xpath_scan and
// browser_snapshot can list elements that are interactive only through them. Nodes are held
// weakly: the record never keeps one alive.
//
// The library asks by dispatching the event %ASK% on the document; the hooks answer by
// dispatching %ANSWER% on each recorded element of that document still in it. Both names are
// random per host process, the functions used are taken before any page script runs, and the
// page can read none of it.
//
// Settling (docs/protocol.md §20): while an action settles, the hooks count what it set going
// in the page: requests (`fetch`, `XMLHttpRequest`), timers of at most a second, animation
// frames. What runs because of the action carries its cause: an event dispatched while the
// action runs (its input), the callbacks of a timer or frame it set, the rest of the task in
// which one of its requests answered or its body was read (where the page's own promise
// callbacks run). A timer set outside the action (a clock, polling from load) carries none, nor
// do its callbacks' timers and requests, so they are never waited for. The library asks
// (`%ASK%:arm`, `%ASK%:state`) with a detached element as the event's relatedTarget, into which
// the hooks write their answer as JSON: no page script sees it.
(() => {
  const ASK = "%ASK%";
  const ANSWER = "%ANSWER%";
  const target = EventTarget.prototype;
  const addEventListener = target.addEventListener;
  const dispatchEvent = target.dispatchEvent;
  const stopImmediatePropagation = Event.prototype.stopImmediatePropagation;
  const Ev = Event;
  const Ref = WeakRef;
  const deref = WeakRef.prototype.deref;
  const ownerDocument = Object.getOwnPropertyDescriptor(Node.prototype, "ownerDocument").get;
  const isConnected = Object.getOwnPropertyDescriptor(Node.prototype, "isConnected").get;
  const nodeType = Object.getOwnPropertyDescriptor(Node.prototype, "nodeType").get;
  const marked = new WeakSet();
  const has = WeakSet.prototype.has;
  const add = WeakSet.prototype.add;
  let kept = [];
  const clicky = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart"]);
  const clickyHas = Set.prototype.has;
  // Whether `target` is an element (a window, a request or any other event target is not).
  const isElement = (target) => {
    try {
      return nodeType.call(target) === 1;
    } catch (_) {
      return false;
    }
  };
  const mark = (node) => {
    if (!node || !isElement(node) || has.call(marked, node)) return;
    add.call(marked, node);
    kept.push(new Ref(node));
  };
  target.addEventListener = function (type, ...rest) {
    if (clickyHas.call(clicky, type)) mark(this);
    return addEventListener.call(this, type, ...rest);
  };
  for (const name of ["onclick", "onmousedown", "onmouseup", "onpointerdown", "onpointerup", "ontouchstart"]) {
    const property = Object.getOwnPropertyDescriptor(HTMLElement.prototype, name);
    if (!property || !property.set) continue;
    const set = property.set;
    Object.defineProperty(HTMLElement.prototype, name, {
      ...property,
      set(value) {
        if (typeof value === "function") mark(this);
        return set.call(this, value);
      },
    });
  }
  // ---- settling ----------------------------------------------------------------------------
  const win = window;
  const setTimeout = win.setTimeout;
  const clearTimeout = win.clearTimeout;
  const setInterval = win.setInterval;
  const requestAnimationFrame = win.requestAnimationFrame;
  const fetch = win.fetch;
  const then = Promise.prototype.then;
  const relatedTarget = Object.getOwnPropertyDescriptor(MouseEvent.prototype, "relatedTarget").get;
  const textContent = Object.getOwnPropertyDescriptor(Node.prototype, "textContent").set;
  const stringify = JSON.stringify;
  const now = performance.now.bind(performance);
  const ticks = new MessageChannel();
  // Whether what runs now is the action's: set by a wrapper around a callback (true or false),
  // else the task's (`ambient`, true from an input event or an answered request of the action
  // until the task ends).
  let zone;
  let ambient = false;
  let armed = false;
  let pending = new Set();
  let waited = { requests: 0, timers: 0 };
  ticks.port1.onmessage = () => { ambient = false; };
  const caused = () => armed && (zone === undefined ? ambient : zone);
  const causeTask = () => {
    if (!armed || zone === false) return;
    if (!ambient) ticks.port2.postMessage(0);
    ambient = true;
  };
  const within = (cause, fn, self, args) => {
    const before = zone;
    zone = cause;
    try {
      return fn.apply(self, args);
    } finally {
      zone = before;
    }
  };
  const begin = (kind, url) => {
    const record = { kind, url };
    pending.add(record);
    waited[kind === "request" ? "requests" : "timers"]++;
    return record;
  };
  const end = (record) => record && pending.delete(record);
  for (const type of ["pointerdown", "pointerup", "pointermove", "mousedown", "mouseup", "mousemove", "mouseover",
    "click", "dblclick", "contextmenu", "keydown", "keypress", "keyup", "beforeinput", "input", "change", "submit",
    "wheel", "scroll", "focus", "focusin", "blur", "dragstart", "drop", "dragend"]) {
    addEventListener.call(win, type, causeTask, true);
  }
  const timers = new Map();
  win.setTimeout = function (fn, ms, ...rest) {
    if (typeof fn !== "function") return setTimeout.call(this, fn, ms, ...rest);
    const cause = caused();
    const record = cause && !(Number(ms) > 1000) ? begin("timer") : null;
    const id = setTimeout.call(this, function (...args) {
      timers.delete(id);
      end(record);
      return within(cause, fn, this, args);
    }, ms, ...rest);
    if (record) timers.set(id, record);
    return id;
  };
  win.clearTimeout = function (id) {
    end(timers.get(id));
    timers.delete(id);
    return clearTimeout.call(this, id);
  };
  win.setInterval = function (fn, ms, ...rest) {
    if (typeof fn !== "function") return setInterval.call(this, fn, ms, ...rest);
    return setInterval.call(this, function (...args) { return within(false, fn, this, args); }, ms, ...rest);
  };
  win.requestAnimationFrame = function (fn) {
    const cause = caused();
    const record = cause ? begin("timer") : null;
    return requestAnimationFrame.call(this, function (...args) {
      end(record);
      return within(cause, fn, this, args);
    });
  };
  // A request of the action: counted until answered; the rest of the task it answered in is the
  // action's (the page's promise callbacks run there).
  const answered = (record) => [
    (value) => { end(record); causeTask(); return value; },
    (error) => { end(record); causeTask(); throw error; },
  ];
  const bodies = new WeakSet();
  if (fetch) {
    win.fetch = function (input, ...rest) {
      const promise = fetch.call(this, input, ...rest);
      if (!caused()) return promise;
      const record = begin("request", String((input && input.url) || input));
      const [ok, failed] = answered(record);
      return then.call(promise, (response) => { bodies.add(response); return ok(response); }, failed);
    };
    for (const name of ["json", "text", "blob", "arrayBuffer", "formData", "bytes"]) {
      const read = Response.prototype[name];
      if (!read) continue;
      Response.prototype[name] = function (...args) {
        const promise = read.apply(this, args);
        if (!armed || !bodies.has(this)) return promise;
        return then.call(promise, ...answered(begin("request", this.url)));
      };
    }
  }
  const XHR = win.XMLHttpRequest;
  if (XHR) {
    const send = XHR.prototype.send;
    const open = XHR.prototype.open;
    const records = new WeakMap();
    const urls = new WeakMap();
    XHR.prototype.open = function (method, url, ...rest) {
      urls.set(this, String(url));
      return open.call(this, method, url, ...rest);
    };
    const Wrapped = function XMLHttpRequest(...args) {
      const request = new XHR(...args);
      // First of the request's listeners: the task that finishes it is the action's before the
      // page's own handlers run.
      addEventListener.call(request, "readystatechange", () => {
        if (request.readyState === 4 && records.has(request)) causeTask();
      });
      addEventListener.call(request, "loadend", () => { end(records.get(request)); records.delete(request); });
      return request;
    };
    Wrapped.prototype = XHR.prototype;
    Object.setPrototypeOf(Wrapped, XHR);
    win.XMLHttpRequest = Wrapped;
    XHR.prototype.send = function (...args) {
      if (caused()) records.set(this, begin("request", urls.get(this) || ""));
      return send.apply(this, args);
    };
  }
  addEventListener.call(document, `${ASK}:arm`, (event) => {
    stopImmediatePropagation.call(event);
    armed = true;
    pending = new Set();
    waited = { requests: 0, timers: 0 };
    ambient = false;
  }, true);
  addEventListener.call(document, `${ASK}:state`, (event) => {
    stopImmediatePropagation.call(event);
    const box = relatedTarget.call(event);
    const open = [...pending].slice(0, 5).map(({ kind, url }) => (url ? { kind, url } : { kind }));
    if (box) textContent.call(box, stringify({ pending: pending.size, open, waited, at: now() }));
  }, true);
  addEventListener.call(document, `${ASK}:disarm`, (event) => {
    stopImmediatePropagation.call(event);
    armed = false;
    pending = new Set();
  }, true);

  addEventListener.call(document, ASK, (event) => {
    stopImmediatePropagation.call(event);
    const alive = [];
    for (const ref of kept) {
      const node = deref.call(ref);
      if (!node) continue;
      alive.push(ref);
      if (ownerDocument.call(node) === document && isConnected.call(node)) {
        dispatchEvent.call(node, new Ev(ANSWER, { composed: true }));
      }
    }
    kept = alive;
  }, true);
})();
