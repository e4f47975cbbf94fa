//! Secrets an agent may have typed but never sees (docs/protocol.md §18): held by the browser's
//! owner (a worker's `--secrets FILE`), each bound to the origins whose pages it may be typed
//! into. The host types a value only into such a page, and takes every value out of what it
//! hands back (a result's text, an artifact it stores), writing `<secret:name>` in its place.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, RwLock};

use serde::Deserialize;
use tether_protocol::actions::browser_secrets::Named;
use tether_protocol::actions::browser_storage_state::origin_of;
use tether_protocol::actions::ArtifactRef;
use tether_protocol::result::Output;
use tether_protocol::ActionOutcome;
use tether_protocol::{ActionError, ErrorCode};

use crate::parts::artifacts::{ArtifactStore, LocalFile};

/// A value shorter than this could not be taken out of results without mangling them.
const SHORTEST: usize = 4;

/// The secrets, shared by every clone (the extension's owner may change them while it runs).
#[derive(Debug, Clone, Default)]
pub struct Secrets(Arc<RwLock<Vec<Secret>>>);

#[derive(Debug, Clone)]
struct Secret {
    name: String,
    value: String,
    origins: Vec<String>,
}

/// A secret as the file gives it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Given {
    value: String,
    origins: Vec<String>,
}

impl Secrets {
    /// Reads `{ "name": { "value", "origins": [..] } }` from `path`, refusing a file that
    /// anyone but its owner may read.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let open = tether_os::at_rest::others_may_read(path)
            .map_err(|e| anyhow::anyhow!("cannot read the secrets file {}: {e}", path.display()))?;
        if let Some(who) = open {
            anyhow::bail!(
                "the secrets file {} can be read by others ({who})",
                path.display()
            );
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read the secrets file {}: {e}", path.display()))?;
        let given: std::collections::BTreeMap<String, Given> = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "the secrets file {} is not {{\"name\": {{\"value\", \"origins\": [..]}}}}: {e}",
                path.display()
            )
        })?;
        let secrets = Self::default();
        secrets.set(
            given
                .into_iter()
                .map(|(name, g)| (name, g.value, g.origins))
                .collect(),
        )?;
        Ok(secrets)
    }

    /// Replaces the secrets with `(name, value, origins)`, checked.
    pub fn set(&self, given: Vec<(String, String, Vec<String>)>) -> anyhow::Result<()> {
        let mut secrets = Vec::with_capacity(given.len());
        for (name, value, origins) in given {
            if value.chars().count() < SHORTEST {
                anyhow::bail!("the secret {name:?} is shorter than {SHORTEST} characters: too short to keep out of results");
            }
            if origins.is_empty() {
                anyhow::bail!("the secret {name:?} names no origin it may be typed into");
            }
            let origins = origins
                .iter()
                .map(|o| origin_of(o).map_err(|why| anyhow::anyhow!("the secret {name:?}: {why}")))
                .collect::<anyhow::Result<_>>()?;
            secrets.push(Secret { name, value, origins });
        }
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = secrets;
        Ok(())
    }

    /// Takes the secrets `other` holds.
    pub fn set_from(&self, other: &Secrets) {
        let held = other.read().clone();
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = held;
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Secret>> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Names and origins, never values.
    pub fn named(&self) -> Vec<Named> {
        self.read()
            .iter()
            .map(|s| Named {
                name: s.name.clone(),
                origins: s.origins.clone(),
            })
            .collect()
    }

    /// The value of `name`, to type into a page at `page_url`: `INVALID_PARAMS` for a name not
    /// held (listing those that are), `FORBIDDEN_TARGET` for a page of another origin.
    pub fn value_for(&self, name: &str, page_url: &str) -> Result<String, ActionError> {
        let secrets = self.read();
        let Some(secret) = secrets.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = secrets.iter().map(|s| s.name.as_str()).collect();
            return Err(ActionError::invalid_params(format!(
                "no secret named {name:?}; this browser holds: {}",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        };
        let origin = url::Url::parse(page_url).map(|u| u.origin().ascii_serialization());
        match origin {
            Ok(origin) if secret.origins.contains(&origin) => Ok(secret.value.clone()),
            _ => Err(ActionError::new(
                ErrorCode::ForbiddenTarget,
                format!(
                    "the secret {name:?} is typed only into pages of {}; this page is {page_url}, so nothing was typed",
                    secret.origins.join(", ")
                ),
            )),
        }
    }

    /// `text` with every value (as written, and as JSON escapes it) replaced by its
    /// `<secret:name>`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let secrets = self.read();
        let mut text = Cow::Borrowed(text);
        for secret in secrets.iter() {
            let escaped = serde_json::to_string(&secret.value).unwrap_or_default();
            let escaped = &escaped[1..escaped.len().saturating_sub(1).max(1)];
            for form in [secret.value.as_str(), escaped] {
                if text.contains(form) {
                    text = Cow::Owned(text.replace(form, &format!("<secret:{}>", secret.name)));
                }
            }
        }
        text
    }

    /// `bytes` with every value replaced, where they are text.
    pub fn redact_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        if self.is_empty() {
            return bytes;
        }
        match String::from_utf8(bytes) {
            Ok(text) => match self.redact(&text) {
                Cow::Borrowed(_) => text.into_bytes(),
                Cow::Owned(redacted) => redacted.into_bytes(),
            },
            Err(not_text) => not_text.into_bytes(),
        }
    }
}

/// An artifact store that takes secrets out of the text it stores (an HTML page, a response
/// body, a storage state), then hands on.
pub struct WithoutSecrets {
    pub inner: Arc<dyn ArtifactStore>,
    pub secrets: Secrets,
}

#[async_trait::async_trait]
impl ArtifactStore for WithoutSecrets {
    async fn put(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError> {
        let pictures = content_type.starts_with("image/") || content_type == "application/pdf";
        let bytes = if pictures {
            bytes
        } else {
            self.secrets.redact_bytes(bytes)
        };
        self.inner.put(bytes, content_type).await
    }

    async fn file(&self, id: &str, session: &str) -> Result<LocalFile, ActionError> {
        self.inner.file(id, session).await
    }

    fn session_ended(&self, session: &str) {
        self.inner.session_ended(session);
    }
}

/// An action's outcome with every secret's value taken out of its text.
pub fn outcome_without(secrets: &Secrets, outcome: ActionOutcome) -> ActionOutcome {
    if secrets.is_empty() {
        return outcome;
    }
    match outcome {
        Ok(output) => match secrets.redact(output.text()) {
            Cow::Borrowed(_) => Ok(output),
            Cow::Owned(text) => Ok(Output::of(
                &serde_json::from_str::<serde_json::Value>(&text).unwrap_or_default(),
            )),
        },
        Err(mut error) => {
            error.message = secrets.redact(&error.message).into_owned();
            if let Some(details) = &error.details {
                let text = details.to_string();
                if let Cow::Owned(redacted) = secrets.redact(&text) {
                    error.details = serde_json::from_str(&redacted).ok();
                }
            }
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Secrets {
        let secrets = Secrets::default();
        secrets
            .set(vec![(
                "site".into(),
                "pa\"ss-w0rd".into(),
                vec!["https://login.example".into()],
            )])
            .unwrap();
        secrets
    }

    #[test]
    fn a_value_is_given_only_for_its_origins_and_taken_out_of_text() {
        let secrets = held();
        assert_eq!(
            secrets.value_for("site", "https://login.example/form").unwrap(),
            "pa\"ss-w0rd"
        );
        let elsewhere = secrets.value_for("site", "https://evil.example/").unwrap_err();
        assert_eq!(elsewhere.code, ErrorCode::ForbiddenTarget);
        let unknown = secrets.value_for("bank", "https://login.example/").unwrap_err();
        assert!(unknown.message.contains("holds: site"), "{}", unknown.message);
        let json = serde_json::json!({ "value": "pa\"ss-w0rd" }).to_string();
        assert_eq!(secrets.redact(&json), r#"{"value":"<secret:site>"}"#);
        assert_eq!(secrets.redact("typed pa\"ss-w0rd"), "typed <secret:site>");
    }

    #[test]
    fn values_too_short_to_hide_and_secrets_without_origins_are_refused() {
        let secrets = Secrets::default();
        assert!(secrets
            .set(vec![(
                "pin".into(),
                "123".into(),
                vec!["https://a.example".into()]
            )])
            .is_err());
        assert!(secrets
            .set(vec![("key".into(), "long enough".into(), vec![])])
            .is_err());
        assert!(secrets
            .set(vec![(
                "key".into(),
                "long enough".into(),
                vec!["a.example".into()]
            )])
            .is_err());
    }
}
