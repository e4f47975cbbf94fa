//! Raw CDP beside Tether, never through it: a session attached to one target, its commands
//! and evaluation. Tests look at pages with it; benches measure the baseline with it.

use serde_json::{json, Value};
use tether_host::cdp::connection::CdpConnection;

/// A flattened CDP session on one target of a browser connection.
pub struct RawSession<'a> {
    pub cdp: &'a CdpConnection,
    pub session: String,
}

impl<'a> RawSession<'a> {
    /// Attaches to `target` (a `targetId`).
    pub async fn attach(cdp: &'a CdpConnection, target: &Value) -> Self {
        let attached = cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await
            .expect("Target.attachToTarget");
        let session = attached["sessionId"].as_str().expect("a sessionId").to_owned();
        Self { cdp, session }
    }

    pub async fn call(&self, method: &str, params: Value) -> Value {
        self.cdp
            .call(Some(&self.session), method, params)
            .await
            .expect(method)
    }

    /// Evaluates an expression, awaiting a returned promise; its value (null when it threw).
    pub async fn eval(&self, expression: &str) -> Value {
        let params = json!({ "expression": expression, "returnByValue": true, "awaitPromise": true });
        let reply = self.call("Runtime.evaluate", params).await;
        reply.pointer("/result/value").cloned().unwrap_or(Value::Null)
    }

    /// The same, for an expression that must not throw.
    pub async fn eval_checked(&self, expression: &str) -> Value {
        let params = json!({ "expression": expression, "returnByValue": true, "awaitPromise": true });
        let reply = self.call("Runtime.evaluate", params).await;
        assert!(
            reply.get("exceptionDetails").is_none(),
            "{expression} threw: {reply}"
        );
        reply.pointer("/result/value").cloned().unwrap_or(Value::Null)
    }
}
