//! Session routes (docs/protocol.md §3, §12): bind a session to a browser, read its state, say
//! something beside its actions, and follow its events as Server-Sent Events, replayable from
//! the session log.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tether_protocol::messages::{Binding, Message, SessionMessage, SessionState};
use tether_protocol::ErrorCode;
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use crate::core::state::AppState;
use crate::core::talk;
use crate::edge::app_error::AppError;
use crate::edge::auth::{Reader, Role, StreamReader};
use crate::stores::events::{Event, Filter, Subscription};

/// The string `key` of a JSON object body.
fn string_field(body: &[u8], key: &str) -> Option<String> {
    let body: Value = serde_json::from_slice(body).ok()?;
    body.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// `POST /api/sessions/{id}/messages` `{ "text" }`: with the orchestrator's token, what the
/// agent tells the person (`agent.message`); with an observer's, the person's answer
/// (`user.message`). The message as published.
pub async fn message(
    Reader(role): Reader,
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, AppError> {
    let text = string_field(&body, "text").ok_or_else(|| {
        AppError::bad_request(ErrorCode::InvalidMessage, "the body must be {\"text\": \"...\"}")
    })?;
    let words = SessionMessage { session_id, text };
    let message = match role {
        Role::Orchestrator => Message::AgentMessage(words),
        _ => Message::UserMessage(words),
    };
    let said = talk::say(&state, message).map_err(|e| AppError::with_status(StatusCode::BAD_REQUEST, e))?;
    let (kind, payload) = said.split();
    Ok(Json(json!({ "type": kind, "payload": payload })))
}

/// `GET /api/sessions`: every session's state, for a console that opens after they began.
pub async fn list(_: Reader, State(state): State<AppState>) -> Json<Value> {
    Json(json!({ "sessions": state.sessions.all() }))
}

/// How many of a session's latest actions `GET /api/sessions/{id}/actions` lists.
const LATEST_ACTIONS: usize = 20;

/// A finished action as a console lists it: what ran, how it ended, how long it took; a
/// screenshot's artifact URL.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct ActionSeen {
    action_id: String,
    action_name: String,
    status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<ScreenshotSeen>,
}

#[derive(Deserialize, Serialize)]
struct ScreenshotSeen {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

/// `GET /api/sessions/{id}/actions`: the session's latest finished actions on this relay,
/// newest first (at most 20), each as `{ actionId, actionName, status, durationMs, error?,
/// result?: { url? } }`: what a console opened while the session runs shows of what came before.
pub async fn actions(
    _: Reader,
    State(state): State<AppState>,
    Path(session_id): Path<String>,
) -> Json<Value> {
    let latest = state.sessions.latest_results(&session_id, LATEST_ACTIONS);
    let seen: Vec<ActionSeen> = latest
        .iter()
        .filter_map(|stored| serde_json::from_str::<ActionSeen>(stored.get()).ok())
        .map(|mut seen| {
            if seen.action_name != "browser_screenshot" {
                seen.result = None;
            }
            seen
        })
        .collect();
    Json(json!({ "actions": seen }))
}

pub async fn bind(
    _: Reader,
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> Result<Json<Binding>, AppError> {
    let client_id = string_field(&body, "clientId")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            AppError::bad_request(
                ErrorCode::InvalidMessage,
                "the body must be {\"clientId\": \"...\"}",
            )
        })?;
    let binding = Binding {
        session_id,
        client_id,
    };
    let bound = state
        .deployment
        .bind(&state, binding)
        .await
        .map_err(|e| AppError::with_status(StatusCode::NOT_FOUND, e))?;
    Ok(Json(bound))
}

pub async fn get(
    _: Reader,
    State(state): State<AppState>,
    Path(session_id): Path<String>,
) -> Result<Json<SessionState>, AppError> {
    let session = state
        .deployment
        .session_state(&state, &session_id)
        .await
        .map_err(|e| AppError::with_status(StatusCode::SERVICE_UNAVAILABLE, e))?;
    Ok(Json(session))
}

#[derive(Deserialize)]
pub struct Resume {
    from: Option<String>,
}

/// `GET /api/sessions/{id}/events`: `connection` first, then the session's events (after
/// `Last-Event-ID` or `?from=`, when given), a `heartbeat` when idle, `stream_end` last.
pub async fn events(
    _: StreamReader,
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    Query(query): Query<Resume>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or(query.from);
    let after = last
        .as_deref()
        .map(|n| n.trim().parse::<u64>())
        .transpose()
        .map_err(|_| {
            AppError::bad_request(
                ErrorCode::InvalidMessage,
                "Last-Event-ID and ?from= take an event index (an integer)",
            )
        })?;
    let filter = Filter {
        session: Some(session_id.clone()),
        client: None,
    };
    let subscription = state.events.subscribe(filter, after);
    let connection = json!({
        "sessionId": session_id,
        "resumedAfter": after,
        "state": state.sessions.state(&session_id),
    });
    Ok(Sse::new(stream(state, subscription, connection)).into_response())
}

/// An SSE event's data (docs/protocol.md §2.4).
#[derive(Serialize)]
struct SseData<'a, T: Serialize + ?Sized> {
    #[serde(rename = "type")]
    kind: &'a str,
    timestamp: i64,
    data: &'a T,
}

fn frame<T: Serialize + ?Sized>(kind: &str, timestamp_ms: i64, data: &T) -> SseEvent {
    let body = SseData {
        kind,
        timestamp: timestamp_ms,
        data,
    };
    // Plain data (string keys only) always serialises.
    let body = serde_json::to_string(&body).unwrap_or_default();
    SseEvent::default().event(kind).data(body)
}

fn from_event(event: &Arc<Event>) -> SseEvent {
    let sse = frame(&event.kind, event.timestamp_ms, &*event.payload);
    match event.index {
        Some(index) => sse.id(index.to_string()),
        None => sse,
    }
}

enum Step {
    Connection(Value),
    Live,
    Ended,
}

fn stream(
    state: AppState,
    subscription: Subscription,
    connection: Value,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let period = state.settings.heartbeat;
    let mut heartbeat = interval_at(Instant::now() + period, period);
    heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let start = (Step::Connection(connection), subscription, heartbeat);
    futures::stream::unfold(start, move |(step, mut subscription, mut heartbeat)| {
        let state = state.clone();
        async move {
            match step {
                Step::Connection(data) => {
                    let sse = frame("connection", Utc::now().timestamp_millis(), &data);
                    Some((Ok(sse), (Step::Live, subscription, heartbeat)))
                }
                Step::Ended => None,
                Step::Live => {
                    let event = tokio::select! {
                        event = subscription.next(&state.events) => event?,
                        _ = heartbeat.tick() => {
                            let sse = frame("heartbeat", Utc::now().timestamp_millis(), &json!({}));
                            return Some((Ok(sse), (Step::Live, subscription, heartbeat)));
                        }
                    };
                    heartbeat.reset();
                    let next = if event.kind == "stream_end" {
                        Step::Ended
                    } else {
                        Step::Live
                    };
                    Some((Ok(from_event(&event)), (next, subscription, heartbeat)))
                }
            }
        }
    })
}
