// Tether's in-page library, part 3 of 6: `scan`, what a person could interact with, as a
// list (browser_xpath_scan).

  function scan({ scope, refFloor }) {
    const memo = newPaths();
    const refs = refsFrom(refFloor);
    const elements = [];
    walk({
      enter(el, context) {
        if (!isInteractive(el, context.listeners)) return true;
        const bbox = renderedBox(el, context);
        if (!bbox || (scope === "viewport" && !inViewport(bbox, context))) return true;
        const item = { xpath: pathOf(el, memo), ref: refOf(el, refs), tag: el.localName };
        const text = textOf(el);
        if (text) item.text = text;
        item.bbox = bbox;
        const role = roleOf(el);
        if (role) item.role = role;
        const attributes = attributesOf(el);
        const name = nameOf(el, attributes, context.labels);
        if (name && name !== text) item.name = name;
        if (attributes) item.attributes = attributes;
        if (isCovered(el, bbox, context)) item.occluded = true;
        elements.push(item);
        return true;
      },
    });
    return { reply: { elements }, nextRef: refs.next };
  }
