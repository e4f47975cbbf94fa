//! Who is calling: a token maps to a role, and a route or message admits certain roles
//! (docs/protocol.md §2.1, §3). A token comes as `Authorization: Bearer <token>` or, where a header
//! cannot be set (a browser's WebSocket or EventSource), as `?token=`.

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use subtle::ConstantTimeEq;
use tether_protocol::ErrorCode;

use crate::config::Tokens;
use crate::edge::app_error::AppError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Orchestrator,
    Host,
    /// A person's console: reads, binds and confirms (docs/protocol.md §12).
    Observer,
    /// A metrics scraper: `GET /metrics`, nothing else.
    Metrics,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Orchestrator => "orchestrator",
            Self::Host => "host",
            Self::Observer => "observer",
            Self::Metrics => "metrics",
        }
    }
}

impl Tokens {
    /// The role a token grants, compared in constant time so timing tells nothing.
    pub fn role_of(&self, token: &str) -> Option<Role> {
        self.identify(token).map(|(role, _)| role)
    }

    /// The role a token grants, and the browser it is bound to when it is a per-browser host
    /// token (`host_tokens`).
    pub fn identify(&self, token: &str) -> Option<(Role, Option<String>)> {
        let is = |secret: &str| bool::from(secret.as_bytes().ct_eq(token.as_bytes()));
        if is(&self.orchestrator) {
            Some((Role::Orchestrator, None))
        } else if is(&self.host) {
            Some((Role::Host, None))
        } else if is(&self.observer) {
            Some((Role::Observer, None))
        } else if !self.metrics.is_empty() && is(&self.metrics) {
            Some((Role::Metrics, None))
        } else {
            self.bound
                .client_of(token)
                .map(|client| (Role::Host, Some(client)))
        }
    }
}

/// The token of a request, from its Authorization header. A `?token=` is taken only where a
/// browser cannot set headers (`/ws` and the events stream, [`token_from`]); anywhere else a
/// request that carries one is refused, so that tokens stay out of URLs, logs and histories.
pub fn token_of(parts: &Parts) -> Result<Option<String>, AppError> {
    match bearer(&parts.headers) {
        Some(token) => Ok(Some(token)),
        None if query_token(parts.uri.query()).is_some() => Err(AppError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "?token= is accepted only by /ws and /api/sessions/{id}/events (where a browser cannot set headers); send Authorization: Bearer <token>",
        )),
        None => Ok(None),
    }
}

/// The token of a request that a browser's WebSocket or EventSource makes: its Authorization
/// header, else its `token` query parameter.
pub fn token_from(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    bearer(headers).or_else(|| query_token(query))
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned())
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == "token")
        .map(|(_, value)| value.to_owned())
}

/// Checks that a request carries a token of one of `roles`; the role it has.
pub fn require_one_of(token: Option<String>, tokens: &Tokens, roles: &[Role]) -> Result<Role, AppError> {
    let wanted: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
    let role = wanted.join(" or ");
    let Some(token) = token else {
        return Err(AppError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            format!(
                "{} {role} token is required: send Authorization: Bearer <token>",
                article(&role),
            ),
        ));
    };
    match tokens.role_of(&token) {
        Some(granted) if roles.contains(&granted) => Ok(granted),
        Some(granted) => Err(AppError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            format!(
                "this is a {} token; this route needs the {role} token",
                granted.as_str(),
            ),
        )),
        None => Err(AppError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "the token is not valid for this relay",
        )),
    }
}

/// "a" or "an", as the word after it sounds (role names start with their letter's sound).
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Defines an extractor that admits a request whose token (read by `$token`) is of one of
/// `$roles`, and says which. Extractors run before the body is read: a caller without a valid
/// token costs the relay its headers only.
macro_rules! admits {
    ($(#[$doc:meta])* $name:ident, $token:expr, [$($role:ident),+]) => {
        $(#[$doc])*
        pub struct $name(pub Role);

        impl<S> FromRequestParts<S> for $name
        where
            Tokens: FromRef<S>,
            S: Send + Sync,
        {
            type Rejection = AppError;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
                let token: fn(&Parts) -> Result<Option<String>, AppError> = $token;
                require_one_of(token(parts)?, &Tokens::from_ref(state), &[$(Role::$role),+]).map($name)
            }
        }
    };
}

/// The token of a request that a browser's EventSource or WebSocket makes (header or query).
fn header_or_query(parts: &Parts) -> Result<Option<String>, AppError> {
    Ok(token_from(&parts.headers, parts.uri.query()))
}

admits!(
    /// Routes only orchestrators may call.
    Orchestrator,
    token_of,
    [Orchestrator]
);

admits!(
    /// Routes that read or steer without dispatching (the session state, twins, Live Screens,
    /// binding a browser): orchestrators and observers.
    Reader,
    token_of,
    [Orchestrator, Observer]
);

admits!(
    /// [`Reader`] for the events stream, which a browser's EventSource opens: the token may come
    /// as `?token=` there.
    StreamReader,
    header_or_query,
    [Orchestrator, Observer]
);

admits!(
    /// `/metrics`: a metrics scraper's token, or an orchestrator's.
    MetricsReader,
    token_of,
    [Metrics, Orchestrator]
);

admits!(
    /// Uploads (`PUT /artifacts`): hosts, and orchestrators handing a page files.
    Uploader,
    token_of,
    [Host, Orchestrator]
);
