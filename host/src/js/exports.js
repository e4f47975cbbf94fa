// Tether's in-page library, part 6 of 6: what the host may call.

  return { scan, snapshot, clickPoint, boxOf, focusForTyping, focus, selectOption, waitFor, wheelAt, scrolled, intoView, fileInput, html };
