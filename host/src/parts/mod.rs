//! The host's lowest floor beside `cdp`: pieces that know no page or browser, which every floor
//! above may use: where artifacts go (`artifacts`), TLS to a relay (`tls`), URL patterns
//! (`glob`), and what an action may ask of the policy (`rules`). Uses nothing of the crate.

pub mod artifacts;
pub mod glob;
pub mod rules;
pub mod tls;
