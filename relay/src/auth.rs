//! Who is calling: a token maps to a role, and a route or message admits certain roles
//! (PROTOCOL.md §2.1, §3). A token comes as `Authorization: Bearer <token>` or, where a header
//! cannot be set (a browser's WebSocket or EventSource), as `?token=`.

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use subtle::ConstantTimeEq;
use tether_protocol::{ActionError, ErrorCode};

use crate::config::Tokens;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Orchestrator,
    Host,
    /// A person's console: reads, binds and confirms (PROTOCOL.md §12).
    Observer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Orchestrator => "orchestrator",
            Self::Host => "host",
            Self::Observer => "observer",
        }
    }
}

impl Tokens {
    /// The role a token grants, compared in constant time so timing tells nothing.
    pub fn role_of(&self, token: &str) -> Option<Role> {
        let is = |secret: &str| bool::from(secret.as_bytes().ct_eq(token.as_bytes()));
        if is(&self.orchestrator) {
            Some(Role::Orchestrator)
        } else if is(&self.host) {
            Some(Role::Host)
        } else if is(&self.observer) {
            Some(Role::Observer)
        } else {
            None
        }
    }
}

/// The token of a request, from its Authorization header or its `token` query parameter.
pub fn token_of(parts: &Parts) -> Option<String> {
    token_from(&parts.headers, parts.uri.query())
}

/// The same, from the header map and the raw query.
pub fn token_from(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned());
    bearer.or_else(|| {
        query?
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == "token")
            .map(|(_, value)| value.to_owned())
    })
}

/// Why a request was turned away: 401 without a valid token, 403 with another role's.
#[derive(Debug)]
pub struct Refusal(pub StatusCode, pub ActionError);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.0, Json(self.1)).into_response()
    }
}

/// Checks that a request carries a token of `role`.
pub fn require(parts: &Parts, tokens: &Tokens, role: Role) -> Result<(), Refusal> {
    require_one_of(token_of(parts), tokens, &[role]).map(|_| ())
}

/// Checks that a request carries a token of one of `roles`; the role it has.
pub fn require_one_of(token: Option<String>, tokens: &Tokens, roles: &[Role]) -> Result<Role, Refusal> {
    let wanted: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
    let role = wanted.join(" or ");
    let Some(token) = token else {
        return Err(Refusal(
            StatusCode::UNAUTHORIZED,
            ActionError::new(
                ErrorCode::Unauthorized,
                format!(
                    "{} {role} token is required: send Authorization: Bearer <token>",
                    article(&role)
                ),
            ),
        ));
    };
    match tokens.role_of(&token) {
        Some(granted) if roles.contains(&granted) => Ok(granted),
        Some(granted) => Err(Refusal(
            StatusCode::FORBIDDEN,
            ActionError::new(
                ErrorCode::Forbidden,
                format!(
                    "this is a {} token; this route needs the {role} token",
                    granted.as_str()
                ),
            ),
        )),
        None => Err(Refusal(
            StatusCode::UNAUTHORIZED,
            ActionError::new(ErrorCode::Unauthorized, "the token is not valid for this relay"),
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

/// Extractor for routes only orchestrators may call.
pub struct Orchestrator;

impl<S> FromRequestParts<S> for Orchestrator
where
    Tokens: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Refusal> {
        require(parts, &Tokens::from_ref(state), Role::Orchestrator).map(|_| Orchestrator)
    }
}

/// Extractor for routes that read or steer without dispatching (the session state, events,
/// twins, Live Screens, binding a browser): orchestrators and observers. It says which.
pub struct Reader(pub Role);

impl<S> FromRequestParts<S> for Reader
where
    Tokens: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Refusal> {
        require_one_of(
            token_of(parts),
            &Tokens::from_ref(state),
            &[Role::Orchestrator, Role::Observer],
        )
        .map(Reader)
    }
}

/// Extractor for routes only hosts may call.
pub struct Host;

impl<S> FromRequestParts<S> for Host
where
    Tokens: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Refusal> {
        require(parts, &Tokens::from_ref(state), Role::Host).map(|_| Host)
    }
}
