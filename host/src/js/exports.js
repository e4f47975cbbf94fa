// Tether's in-page library, part 7 of 7: what the host may call.

  return { scan, snapshot, clickPoint, landing, armPress, pressed, hitAt, dropPoint, armDrag, dragStarted, nextFrame, armInput, inputSeen, boxOf, fieldKind, focusForTyping, focus, selectOption, waitFor, wheelAt, scrolled, intoView, fileInput, html, crossFrame, settleArm, settle };
