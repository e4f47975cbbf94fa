//! Which tools an agent is given (docs/protocol.md §11): the catalog's actions in groups an
//! operator chooses (`tether-host mcp --caps`, the relay's `/mcp?caps=` or its `Tether-Caps`
//! header). Many agent clients send the whole tool list with every model call, so the default
//! is lean: the tools a browsing task uses, with the parameters most calls need. A tool outside
//! the chosen groups is neither listed nor run.

use std::fmt;

use tether_protocol::ActionName;

/// A group of tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Navigate, read the page, click, type, keys, hover, scroll, wait, screenshot.
    Core,
    /// The session's tabs.
    Tabs,
    /// Forms: fill several fields, choose options, upload files.
    Forms,
    /// History and loading: forward, reload, wait for the load event.
    History,
    /// Reading the page other ways: main content, the interactive elements, HTML, console,
    /// requests.
    Observe,
    /// Pointer gestures and the viewport: drag, mouse steps, resize.
    Gestures,
    /// Files out of the browser: PDF, downloads, storage state.
    Files,
    /// Scripts and the debugger.
    Debug,
    /// The secrets the browser's owner holds.
    Secrets,
    /// Handing the tab to the person.
    Handoff,
    /// Sessions named by the agent: session_start, session_stop and a `sessionId` on every tool.
    Sessions,
    /// Every parameter of each tool: dialog answers, settleMs, observeMaxChars.
    Options,
}

impl Group {
    pub const ALL: [Group; 12] = [
        Group::Core,
        Group::Tabs,
        Group::Forms,
        Group::History,
        Group::Observe,
        Group::Gestures,
        Group::Files,
        Group::Debug,
        Group::Secrets,
        Group::Handoff,
        Group::Sessions,
        Group::Options,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Group::Core => "core",
            Group::Tabs => "tabs",
            Group::Forms => "forms",
            Group::History => "history",
            Group::Observe => "observe",
            Group::Gestures => "gestures",
            Group::Files => "files",
            Group::Debug => "debug",
            Group::Secrets => "secrets",
            Group::Handoff => "handoff",
            Group::Sessions => "sessions",
            Group::Options => "options",
        }
    }

    /// The group an action's tool is in.
    pub fn of(action: ActionName) -> Group {
        use ActionName::*;
        match action {
            BrowserNavigate | BrowserGoBack | BrowserSnapshot | BrowserClick | BrowserType
            | BrowserPressKey | BrowserHover | BrowserScroll | BrowserWaitFor | BrowserScreenshot => {
                Group::Core
            }
            BrowserTabs => Group::Tabs,
            BrowserFillForm | BrowserSelectOption | BrowserUploadFile => Group::Forms,
            BrowserGoForward | BrowserReload | BrowserWaitForLoaded => Group::History,
            BrowserReadabilityExtract
            | BrowserXpathScan
            | BrowserGetHtml
            | BrowserConsole
            | BrowserNetwork => Group::Observe,
            BrowserDrag | BrowserMouse | BrowserResize => Group::Gestures,
            BrowserPdf | BrowserDownloads | BrowserStorageState => Group::Files,
            BrowserEvaluate | BrowserDebuggerAttach => Group::Debug,
            BrowserSecrets => Group::Secrets,
            BrowserHandoff => Group::Handoff,
            SessionStart | SessionStop => Group::Sessions,
        }
    }
}

/// The groups chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps(u16);

impl Default for Caps {
    /// core, tabs and forms.
    fn default() -> Self {
        Caps::of(&[Group::Core, Group::Tabs, Group::Forms])
    }
}

impl Caps {
    pub fn of(groups: &[Group]) -> Self {
        Caps(groups.iter().fold(0, |bits, g| bits | 1 << *g as u16))
    }

    /// Every group.
    pub fn all() -> Self {
        Caps::of(&Group::ALL)
    }

    /// These groups and `group`.
    pub fn with(self, group: Group) -> Self {
        Caps(self.0 | 1 << group as u16)
    }

    pub fn has(self, group: Group) -> bool {
        self.0 & (1 << group as u16) != 0
    }

    /// Whether the action's tool is listed and run.
    pub fn lists(self, action: ActionName) -> bool {
        self.has(Group::of(action))
    }

    /// Reads `core,tabs,observe` (`all` for every group; core is always in).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut groups = vec![Group::Core];
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if word == "all" {
                return Ok(Caps::all());
            }
            let group = Group::ALL
                .into_iter()
                .find(|g| g.as_str() == word)
                .ok_or_else(|| format!("unknown tool group {word:?}: the groups are all, {}", Caps::all()))?;
            groups.push(group);
        }
        Ok(Caps::of(&groups))
    }
}

impl fmt::Display for Caps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Group::ALL
            .into_iter()
            .filter(|g| self.has(*g))
            .map(Group::as_str)
            .collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_read_and_print_back() {
        assert_eq!(Caps::default().to_string(), "core,tabs,forms");
        assert_eq!(
            Caps::parse("tabs, observe").unwrap().to_string(),
            "core,tabs,observe"
        );
        assert_eq!(Caps::parse("all").unwrap(), Caps::all());
        assert_eq!(Caps::parse("").unwrap().to_string(), "core");
        let e = Caps::parse("core,teleport").unwrap_err();
        assert!(e.contains("\"teleport\"") && e.contains("observe"), "{e}");
        assert!(Caps::all().lists(ActionName::BrowserEvaluate));
        assert!(!Caps::default().lists(ActionName::BrowserEvaluate));
    }
}
