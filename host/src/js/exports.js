// Tether's in-page library, part 6 of 6: what the host may call.

  return { scan, snapshot, clickPoint, hitAt, dropPoint, armDrag, dragStarted, nextFrame, armInput, inputSeen, boxOf, focusForTyping, focus, selectOption, waitFor, wheelAt, scrolled, intoView, fileInput, html };
