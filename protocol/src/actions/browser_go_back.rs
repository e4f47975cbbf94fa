//! `browser_go_back`: the browser's Back button.

use super::{About, Category, ReadsAs};

pub use super::browser_navigate::Output;
pub use super::fields::LoadWait as Params;

pub const ABOUT: About = About {
    label: "Go back",
    category: Category::Page,
    description: "Goes back one entry in the tab's history, as the browser's Back button does (a same-document entry, e.g. from pushState, counts like any other), and waits for the page to load. Nothing to go back to: NAVIGATION_FAILED.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};
