//! `browser_reload`: the browser's Reload button.

use super::{About, Category, ReadsAs};

pub use super::browser_navigate::Output;
pub use super::fields::LoadWait as Params;

pub const ABOUT: About = About {
    label: "Reload",
    category: Category::Page,
    description:
        "Reloads the tab's page, as the browser's Reload button does, and waits for it to load again.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};
