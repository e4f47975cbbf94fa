//! A host the test drives by hand: it joins like a real one, then hands each `browser_action`
//! to the test, which acks it, answers it, or misbehaves (never acks, acks and goes silent,
//! drops the link mid-action).

use serde_json::{json, Value};
use tokio::task::JoinHandle;

use super::client::{connect, recv, send, Ws};
use super::HOST;

pub struct TestHost {
    pub ws: Ws,
    pub client_id: String,
}

impl TestHost {
    pub async fn join(addr: &str, client_id: &str) -> Self {
        let mut ws = connect(addr).await;
        let meta = json!({
            "browser": "TestBrowser", "browserVersion": "1", "os": "linux", "hostname": "test",
            "hostVersion": "0", "mode": "worker", "actions": ["browser_click"],
        });
        send(
            &mut ws,
            json!({ "v": "1", "type": "relay.join", "id": "h", "payload": {
                "role": "host", "token": HOST, "clientId": client_id, "meta": meta } }),
        )
        .await;
        let joined = recv(&mut ws).await;
        assert_eq!(joined["type"], "relay.joined", "{joined}");
        Self {
            ws,
            client_id: client_id.to_owned(),
        }
    }

    /// The next action the relay sends.
    pub async fn next_action(&mut self) -> Value {
        loop {
            let envelope = recv(&mut self.ws).await;
            if envelope["type"] == "browser_action" {
                return envelope;
            }
        }
    }

    pub async fn ack(&mut self, action: &Value) {
        let payload = json!({ "actionId": action["payload"]["actionId"] });
        self.send("browser_action.ack", action, payload).await;
    }

    /// Answers with success and `result`.
    pub async fn succeed(&mut self, action: &Value, result: Value) {
        let payload = result_payload(action, &self.client_id, Ok(result));
        self.send("browser_action.result", action, payload).await;
    }

    /// Answers with an error of `code`.
    pub async fn fail(&mut self, action: &Value, code: &str, message: &str) {
        let payload = result_payload(action, &self.client_id, Err((code, message)));
        self.send("browser_action.result", action, payload).await;
    }

    async fn send(&mut self, kind: &str, action: &Value, payload: Value) {
        send(
            &mut self.ws,
            json!({ "v": "1", "type": kind, "replyTo": action["id"], "payload": payload }),
        )
        .await;
    }

    pub async fn report(&mut self, kind: &str, payload: Value) {
        send(
            &mut self.ws,
            json!({ "v": "1", "type": kind, "payload": payload }),
        )
        .await;
    }

    /// Acks and answers every action with `{ "echo": params }`, until the link drops.
    pub fn serve_echo(mut self) -> JoinHandle<()> {
        tokio::spawn(async move {
            use futures::StreamExt;
            while let Some(Ok(message)) = self.ws.next().await {
                let Ok(text) = message.to_text() else { continue };
                let Ok(envelope) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                if envelope["type"] == "browser_action" {
                    self.ack(&envelope).await;
                    let echo = json!({ "echo": envelope["payload"]["params"] });
                    self.succeed(&envelope, echo).await;
                }
            }
        })
    }
}

fn result_payload(action: &Value, client_id: &str, outcome: Result<Value, (&str, &str)>) -> Value {
    let p = &action["payload"];
    let mut payload = json!({
        "actionId": p["actionId"], "actionName": p["actionName"], "sessionId": p["sessionId"],
        "clientId": client_id, "startedAt": "2026-01-01T00:00:00.000Z",
        "finishedAt": "2026-01-01T00:00:00.001Z", "durationMs": 1,
    });
    match outcome {
        Ok(result) => {
            payload["status"] = json!("success");
            payload["result"] = result;
        }
        Err((code, message)) => {
            payload["status"] = json!("error");
            payload["error"] = json!({ "code": code, "message": message });
        }
    }
    payload
}
