//! HTTP endpoints that are more than a line of glue, one module per resource.

pub mod artifacts;
