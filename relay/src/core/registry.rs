//! The browsers the relay knows (docs/protocol.md §2.1, §2.2 `extension.list`): each host by its
//! stable clientId, with its meta, whether it is online and how to reach it. A second join
//! with the same clientId replaces the first connection.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tether_protocol::messages::{ClientSummary, Contested};
use tether_protocol::result::rfc3339_ms;

use crate::core::host_link::Link;

struct Client {
    meta: Value,
    link: Option<Link>,
    last_seen: DateTime<Utc>,
    /// The owner asks to approve every action on this browser (`client.settings`).
    confirm_every_action: bool,
    /// The names of the secrets the owner holds, as `client.settings` last said (else meta's).
    secrets: Option<Vec<String>>,
    /// Joins that met another connection holding this clientId: how many, the latest when.
    contested: Option<(u64, DateTime<Utc>)>,
}

#[derive(Default)]
pub struct Registry {
    clients: Mutex<HashMap<String, Client>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Client>> {
        self.clients.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a host as online; returns the link it replaces, if any.
    pub fn connect(&self, client_id: &str, meta: Value, link: Link) -> Option<Link> {
        let mut clients = self.lock();
        let client = clients.entry(client_id.to_owned()).or_insert_with(|| Client {
            meta: Value::Null,
            link: None,
            last_seen: Utc::now(),
            confirm_every_action: false,
            secrets: None,
            contested: None,
        });
        client.meta = meta;
        // A new connection says its settings again; until then, the relay's own rule holds.
        client.confirm_every_action = false;
        client.secrets = None;
        client.last_seen = Utc::now();
        client.link.replace(link)
    }

    /// Notes a join that met another connection holding `client_id` (replaced it, or was
    /// refused): two hosts run under one clientId.
    pub fn contest(&self, client_id: &str) {
        if let Some(client) = self.lock().get_mut(client_id) {
            let joins = client.contested.map_or(0, |(n, _)| n) + 1;
            client.contested = Some((joins, Utc::now()));
        }
    }

    /// The owner's `client.settings` for a browser.
    pub fn set_confirm_every_action(&self, client_id: &str, every: bool) {
        if let Some(client) = self.lock().get_mut(client_id) {
            client.confirm_every_action = every;
        }
    }

    /// The owner's `client.settings` naming the secrets they hold.
    pub fn set_secret_names(&self, client_id: &str, names: Vec<String>) {
        if let Some(client) = self.lock().get_mut(client_id) {
            client.secrets = Some(names);
        }
    }

    /// The names of the secrets a browser holds (docs/protocol.md §18): as its owner's settings
    /// last said, else as it said when it joined.
    pub fn secret_names(&self, client_id: &str) -> Vec<String> {
        let clients = self.lock();
        let Some(client) = clients.get(client_id) else {
            return Vec::new();
        };
        if let Some(names) = &client.secrets {
            return names.clone();
        }
        let listed = client.meta.get("secrets").and_then(Value::as_array);
        listed
            .into_iter()
            .flatten()
            .filter_map(|name| name.as_str().map(str::to_owned))
            .collect()
    }

    /// Whether the owner of a browser approves each of its actions.
    pub fn confirms_every_action(&self, client_id: &str) -> bool {
        self.lock().get(client_id).is_some_and(|c| c.confirm_every_action)
    }

    /// Marks the host offline, unless a newer connection has replaced this one.
    pub fn disconnect(&self, client_id: &str, connection_id: &str) -> bool {
        let mut clients = self.lock();
        match clients.get_mut(client_id) {
            Some(client)
                if client
                    .link
                    .as_ref()
                    .is_some_and(|l| l.connection_id == connection_id) =>
            {
                client.link = None;
                client.last_seen = Utc::now();
                true
            }
            _ => false,
        }
    }

    /// The link to a host, if it is online.
    pub fn link(&self, client_id: &str) -> Option<Link> {
        self.lock().get(client_id).and_then(|c| c.link.clone())
    }

    /// Whether a host is online on this relay (its link, without taking a copy of it).
    pub fn holds(&self, client_id: &str) -> bool {
        self.lock().get(client_id).is_some_and(|c| c.link.is_some())
    }

    pub fn is_known(&self, client_id: &str) -> bool {
        self.lock().contains_key(client_id)
    }

    pub fn meta(&self, client_id: &str) -> Option<(Value, bool)> {
        self.lock()
            .get(client_id)
            .map(|c| (c.meta.clone(), c.link.is_some()))
    }

    /// The clientIds of the hosts online now, sorted.
    pub fn online(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, c)| c.link.is_some())
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort();
        ids
    }

    /// Notes that the host is alive (any frame from it counts).
    pub fn touch(&self, client_id: &str) {
        if let Some(client) = self.lock().get_mut(client_id) {
            client.last_seen = Utc::now();
        }
    }

    /// Forgets the browsers offline since before `cutoff` that `keep` does not hold on to, then,
    /// past `max_offline` offline ones, those seen longest ago, browsers `owned` (with a host
    /// token of their own) after all others (docs/protocol.md §15: the list follows the
    /// browsers in use, not every one ever seen).
    pub fn forget_offline(
        &self,
        cutoff: DateTime<Utc>,
        max_offline: usize,
        keep: impl Fn(&str) -> bool,
        owned: impl Fn(&str) -> bool,
    ) {
        let mut clients = self.lock();
        clients.retain(|id, c| c.link.is_some() || c.last_seen >= cutoff || keep(id));
        let offline = clients.values().filter(|c| c.link.is_none()).count();
        if offline <= max_offline {
            return;
        }
        let mut forgettable: Vec<(bool, DateTime<Utc>, String)> = clients
            .iter()
            .filter(|(id, c)| c.link.is_none() && !keep(id))
            .map(|(id, c)| (owned(id), c.last_seen, id.clone()))
            .collect();
        forgettable.sort();
        for (_, _, id) in forgettable.into_iter().take(offline - max_offline) {
            clients.remove(&id);
        }
    }

    pub fn list(&self) -> Vec<ClientSummary> {
        let mut list: Vec<ClientSummary> = self
            .lock()
            .iter()
            .map(|(id, c)| ClientSummary {
                client_id: id.clone(),
                online: c.link.is_some(),
                meta: c.meta.clone(),
                last_seen: rfc3339_ms(c.last_seen),
                sessions: Vec::new(),
                contested: c.contested.map(|(joins, at)| Contested {
                    joins,
                    last_at: rfc3339_ms(at),
                }),
            })
            .collect();
        list.sort_by(|a, b| a.client_id.cmp(&b.client_id));
        list
    }
}
