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
// page can see none of it.
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
  const mark = (node) => {
    if (!node || nodeType.call(node) !== 1 || has.call(marked, node)) return;
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
