// Tether's in-page library, part 3 of 7: `scan`, what a person could interact with, as a
// list (browser_xpath_scan).

  // The list goes to the host as rows, not objects, with the table of paths instead of each
  // element's path (js/core.js, nodeOf), its steps as one string (no step has a space); the
  // host makes the elements the wire names of them (host/src/page/library.rs, ScanRows). A row is:
  //   [path's index in the table, ref number, text, x, y, w, h, role, name, attributes, occluded]
  // with "" for no text, role or name, null for no attributes, and occluded 1 or 0; the tag is
  // the path's last step's name. Objects with keys made a 20,000-element page's reply 1 MB,
  // this about half that; moving a reply over CDP costs the browser ~30 ms a megabyte, and
  // each quote in it is escaped on the way.
  function scan({ scope, refFloor }) {
    const paths = newPaths();
    const refs = refsFrom(refFloor);
    const rows = [];
    const frames = [];
    walk({
      enter(el, context) {
        if (!isInteractive(el, context.listeners)) return true;
        const box = renderedBox(el, context);
        if (!box || (scope === "viewport" && !inViewport(box, context))) return true;
        const node = nodeOf(el, paths);
        const ref = refNumber(el, refs);
        const text = textOf(el);
        const role = roleOf(el) || "";
        const attributes = attributesOf(el);
        const name = nameOf(el, attributes, context.labels);
        const occluded = isCovered(el, box, context) ? 1 : 0;
        rows.push([node, ref, text, box.x, box.y, box.w, box.h, role, name && name !== text ? name : "", attributes || null, occluded]);
        return true;
      },
      // A marked cross-origin frame is scanned by the host in the frame, its elements put
      // here (host/src/page/framed.rs): its path, its place in the list, its viewport's corner.
      frame(el, reachable, context) {
        if (reachable || !el[FRAME_ID]) return;
        const box = renderedBox(el, context);
        if (!box || (scope === "viewport" && !inViewport(box, context))) return;
        const style = getComputedStyle(el);
        const x = box.x + el.clientLeft + parseFloat(style.paddingLeft);
        const y = box.y + el.clientTop + parseFloat(style.paddingTop);
        frames.push([el[FRAME_ID], nodeOf(el, paths), rows.length, x, y]);
      },
    });
    return { reply: { back: paths.back, steps: paths.steps.join(" "), elements: rows, frames }, nextRef: refs.next };
  }
