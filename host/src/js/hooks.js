// Installed in every document of a session tab before the page's own scripts run. Records
// which elements get pointer/click listeners, so browser_xpath_scan can list elements that are
// interactive only through addEventListener. The set is weak: it never keeps a node alive.
(() => {
  const key = Symbol.for("tether.listeners");
  if (globalThis[key]) return;
  const marked = new WeakSet();
  Object.defineProperty(globalThis, key, { value: marked });
  const clicky = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart"]);
  const original = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, ...rest) {
    if (clicky.has(type) && this && this.nodeType === 1) marked.add(this);
    return original.call(this, type, ...rest);
  };
})();
