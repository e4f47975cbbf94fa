//! The relay's edge: what speaks to the world. `listener` (the accept loop and its bounds),
//! `auth` (who a token says the caller is), `app_error` (the one error a route answers with),
//! `ws/` (one `/ws` peer: orchestrator, observer or host), `routes/` (the HTTP API, `/mcp`,
//! the console and its files in `console/`), and what they render as Markdown (`agent_docs`,
//! `catalog_md`, `twin_md`). Uses `parts`, `stores`, `config` and `core`; never `cluster`.

pub mod agent_docs;
pub mod app_error;
pub mod auth;
pub mod catalog_md;
pub mod listener;
pub mod routes;
pub mod twin_md;
pub mod ws;
