//! The browser-action catalog, one module per action, named as on the wire.

pub mod browser_click;
pub mod browser_get_html;
pub mod browser_navigate;
pub mod browser_readability_extract;
pub mod browser_screenshot;
pub mod browser_type;
pub mod browser_wait_for_loaded;
pub mod browser_xpath_scan;
pub mod session_start;
pub mod session_stop;
