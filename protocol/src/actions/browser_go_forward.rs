//! `browser_go_forward`: the browser's Forward button.

use super::{About, Category, ReadsAs};

pub use super::browser_navigate::Output;
pub use super::fields::LoadWait as Params;

pub const ABOUT: About = About {
    label: "Go forward",
    category: Category::Page,
    description: "Goes forward one entry in the tab's history, as the browser's Forward button does, and waits for the page to load. Nothing to go forward to: NAVIGATION_FAILED.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};
