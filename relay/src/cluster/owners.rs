//! Which relay owns each session: the one that runs its queue, keeps its results for repeats
//! and writes its log (docs/protocol.md §14: one at a time). The `tether-owners` bucket maps a
//! session to its owner; the first relay to need a session that has none creates the key, and
//! a relay takes a session from a dead owner only by updating the key at the revision it read
//! (compare-and-set), so two relays racing for it cannot both win. An owner is dead when its
//! key in `tether-relays` has expired; an owner cut off from NATS stops acting before that
//! (`Cluster::in_touch`), so by the time another takes over, the old one has stopped.

use std::collections::HashMap;
use std::sync::Mutex;

use async_nats::jetstream::kv;

use super::Cluster;
use crate::core::state::Relay;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    This,
    Other(String),
}

pub struct Owners {
    bucket: kv::Store,
    /// Owners already looked up; an entry for a relay that died is dropped.
    known: Mutex<HashMap<String, String>>,
}

/// How many times a relay reads and tries the key before giving up: each lost race means
/// another relay won, which the next read sees.
const TRIES: usize = 5;

impl Owners {
    pub fn new(bucket: kv::Store) -> Self {
        Self {
            bucket,
            known: Mutex::default(),
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn forget_relay(&self, relay_id: &str) {
        self.known().retain(|_, owner| owner != relay_id);
    }

    pub(super) fn forget_session(&self, session_id: &str) {
        self.known().remove(session_id);
    }
}

impl Cluster {
    /// The session's owner, taking it when it has none or its owner died; a session taken
    /// from a dead owner comes with its journal.
    pub async fn owner_of(&self, relay: &Relay, session_id: &str) -> anyhow::Result<Owner> {
        let known = self.owners.known().get(session_id).cloned();
        if let Some(owner) = known {
            return Ok(self.owner(owner));
        }
        let key = hex::encode(session_id);
        let bucket = &self.owners.bucket;
        for _ in 0..TRIES {
            let taken = match bucket.entry(&key).await? {
                None => bucket.create(&key, self.relay_id.clone().into()).await.is_ok(),
                Some(entry) if entry.operation != kv::Operation::Put => bucket
                    .update(&key, self.relay_id.clone().into(), entry.revision)
                    .await
                    .is_ok(),
                Some(entry) => {
                    let owner = String::from_utf8_lossy(&entry.value).into_owned();
                    if self.is_alive(&owner).await {
                        self.owners.known().insert(session_id.to_owned(), owner.clone());
                        return Ok(self.owner(owner));
                    }
                    let taken = bucket
                        .update(&key, self.relay_id.clone().into(), entry.revision)
                        .await
                        .is_ok();
                    if taken {
                        tracing::info!(
                            session_id,
                            dead = owner,
                            "taking over a session whose relay stopped"
                        );
                        self.adopt(relay, session_id).await;
                    }
                    taken
                }
            };
            if taken {
                self.owners
                    .known()
                    .insert(session_id.to_owned(), self.relay_id.clone());
                return Ok(Owner::This);
            }
        }
        anyhow::bail!("relays kept racing for session {session_id}")
    }

    /// The relay that owns the session now, if any; takes nothing.
    pub async fn current_owner(&self, session_id: &str) -> Option<String> {
        if let Some(owner) = self.owners.known().get(session_id) {
            return Some(owner.clone());
        }
        let entry = self.owners.bucket.entry(hex::encode(session_id)).await.ok()??;
        (entry.operation == kv::Operation::Put).then(|| String::from_utf8_lossy(&entry.value).into_owned())
    }

    fn owner(&self, relay_id: String) -> Owner {
        if relay_id == self.relay_id {
            Owner::This
        } else {
            Owner::Other(relay_id)
        }
    }
}
