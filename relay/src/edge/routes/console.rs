//! `GET /`: the console for people (docs/protocol.md §12), its HTML, CSS and script embedded in the
//! binary. The page holds no data: it asks for a token, then reads everything over `/ws` and
//! the API like any observer. A strict Content-Security-Policy keeps it to this relay: its own
//! script and style, images and connections to this origin only.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("../console/index.html");
const STYLE: &str = include_str!("../console/console.css");
const SCRIPT: &str = include_str!("../console/console.js");
const ICON: &str = include_str!("../console/favicon.svg");

const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn page(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}

pub async fn index() -> impl IntoResponse {
    page("text/html; charset=utf-8", INDEX)
}

pub async fn style() -> impl IntoResponse {
    page("text/css; charset=utf-8", STYLE)
}

pub async fn script() -> impl IntoResponse {
    page("text/javascript; charset=utf-8", SCRIPT)
}

pub async fn icon() -> impl IntoResponse {
    page("image/svg+xml", ICON)
}
