//! What an action may ask of the host's policy: whether a URL is refused and why, whether it
//! may run the agent's JavaScript or move the browser's storage, whether pages' logs are kept,
//! and the secrets it may type. Answers only: the switches (the owner's blocked sites, what the
//! owner allows) stay with the engine's `Policy`, which answers these, so an action cannot
//! change what it is allowed. The actions and the frames they enter depend on this, not on
//! the engine's state.

use tether_protocol::actions::browser_secrets::Named;
use tether_protocol::ActionError;

pub trait Rules: Send + Sync {
    /// Why Tether will not act on `url`, or `None` when it may.
    fn refusal(&self, url: &str) -> Option<String>;
    /// Whether `browser_evaluate` may run the agent's JavaScript.
    fn allows_evaluate(&self) -> bool;
    /// Whether `browser_storage_state` may save and load cookies and storage.
    fn allows_storage_state(&self) -> bool;
    /// Whether the pages' console and requests are kept (not `--no-page-log`).
    fn keeps_page_log(&self) -> bool;
    /// The secrets an agent may type, by name (never their values).
    fn secret_names(&self) -> Vec<Named>;
    /// A secret's value, when the page at `page_url` may have it typed.
    fn secret_for(&self, name: &str, page_url: &str) -> Result<String, ActionError>;
}
