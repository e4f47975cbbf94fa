//! Each tool's description as a model reads it: what it does, when to use it, what comes back,
//! in a few lines. The catalog's own descriptions (`/api/actions`) say everything, for people
//! writing orchestrators; a model pays for every word of the tool list on every call.

use tether_protocol::ActionName;

/// Said of every tool that can change the page.
pub const SETTLES: &str = " Returns once the page settled, with what changed.";

pub fn brief(action: ActionName) -> &'static str {
    use ActionName::*;
    match action {
        SessionStart => "Starts a named session (sessionId) with a tab of its own on url.",
        SessionStop => "Ends a session and closes its tabs (closeTab: false leaves them open).",
        BrowserDebuggerAttach => "Attaches the debugger to a tab again; actions attach on their own.",
        BrowserTabs => "Lists this session's tabs (action list), opens one on url (open), makes one current (select, with tabId) or closes one (close). The current tab is where actions go.",
        BrowserNavigate => "Opens a URL in the current tab (a new tab if there is none). An HTTP error page is still a page: see httpStatus.",
        BrowserWaitForLoaded => "Waits for the page's load event.",
        BrowserWaitFor => "Waits until text appears, textGone disappears, an element reaches a state, or the URL matches a glob. Use it for what comes later than the page settling.",
        BrowserGoBack => "Goes back one entry in the tab's history.",
        BrowserGoForward => "Goes forward one entry in the tab's history.",
        BrowserReload => "Reloads the page.",
        BrowserScreenshot => "A picture of the visible page (fullPage: all of it; ref: one element).",
        BrowserSnapshot => "The page as Markdown, every element you can act on written as [eN] role \"name\". Pass eN as ref to the other tools. Take it to read a page anew; actions already answer with what changed.",
        BrowserReadabilityExtract => "The page's main content as text and Markdown, without menus, ads or footers.",
        BrowserXpathScan => "Lists the elements a person could act on, each with a ref and an XPath.",
        BrowserClick => "Clicks an element (ref) with real mouse events, or a point (x, y). If something covers it, nothing is clicked and the error says what covers it.",
        BrowserHover => "Moves the pointer onto an element (ref), so menus and tooltips open.",
        BrowserDrag => "Drags from an element or point to another element, point or offset.",
        BrowserMouse => "One mouse step at x, y: move, down, up or wheel.",
        BrowserPressKey => "Presses a key, e.g. \"Enter\", \"Escape\", \"ArrowDown\", \"Control+a\", on the focused element (or ref's).",
        BrowserSelectOption => "Chooses options of a <select> (ref) by value or label.",
        BrowserScroll => "Scrolls the page (or an element) with the mouse wheel, so lists that load on scroll load; intoView brings an element into view.",
        BrowserResize => "Sets the viewport's size, scale, mobile layout or color scheme.",
        BrowserType => "Types text into an input (ref) with real key events; clear replaces what is there, submit presses Enter. For a password the browser's owner holds, give secret (its name) in place of text.",
        BrowserFillForm => "Sets several fields at once: text as a string, checkboxes as true/false, selects by value or label; submit then submits.",
        BrowserUploadFile => "Sets files (stored artifacts) on a file input.",
        BrowserGetHtml => "The page's HTML (or one element's), as an artifact.",
        BrowserPdf => "Prints the page to a PDF artifact.",
        BrowserEvaluate => "Runs a JavaScript expression in the page and returns its JSON value.",
        BrowserConsole => "What the page wrote to its console, and its uncaught errors.",
        BrowserNetwork => "The requests the page made, with status and timing; one in full by requestId.",
        BrowserDownloads => "The files the session downloaded, each as an artifact.",
        BrowserStorageState => "Saves the browser's cookies and localStorage to an artifact, or loads them back.",
        BrowserSecrets => "Lists the secrets (passwords, tokens) the browser's owner holds, by name, with where each may be typed. Values never come back.",
        BrowserHandoff => "Asks the person watching to act in the tab themselves (a login, a CAPTCHA) and waits until they hand it back.",
    }
}
