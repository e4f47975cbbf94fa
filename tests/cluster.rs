//! The whole chain across a deployment of three relays on a real `nats-server` (docs/protocol.md
//! §14): a worker on real Chromium joins one relay; an orchestrator opens a page through a
//! second and presses its button through a third. The page's own counter says the press
//! happened once; every relay lists the browser and shows its twin.

use std::time::Duration;

use serde_json::json;
use tether_tests::fixtures;
use tether_tests::nats::NatsServer;
use tether_tests::run_worker;

const JOIN_WITHIN: Duration = Duration::from_secs(20);

#[test]
fn a_page_is_driven_through_relays_other_than_the_browsers() {
    run_worker(|h| async move {
        let nats = NatsServer::start().await;
        let relays = nats.relays(3, &[]).await;
        let worker = relays[0].api().start_worker(h, "cluster-desk");
        for relay in &relays {
            relay.api().wait_online("cluster-desk", JOIN_WITHIN).await;
        }
        let start = json!({ "sessionId": "cluster-shop", "clientId": "cluster-desk", "actionName": "session_start",
                            "params": { "url": h.url("/fixtures/buy.html?prefix=cluster-") } });
        let started = relays[1].api().post(start).await;
        assert_eq!(started["status"], "success", "{started}");
        let tab = started["result"]["tabId"].as_i64().expect("a tab");

        let press = json!({ "sessionId": "cluster-shop", "actionName": "browser_click",
                            "params": { "tabId": tab, "xpath": "//button[@id='buy']" } });
        let pressed = relays[2].api().post(press).await;
        assert_eq!(pressed["status"], "success", "{pressed}");
        assert_eq!(pressed["clientId"], "cluster-desk");
        assert_eq!(fixtures::hits("cluster-buy"), 1, "the page counted one press");

        for relay in &relays {
            let list = relay.api().get("/api/extension/extension-list").await;
            let desk = list["clients"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["clientId"] == "cluster-desk")
                .cloned()
                .unwrap_or_default();
            assert_eq!(
                (&desk["online"], &desk["meta"]["mode"]),
                (&json!(true), &json!("worker")),
                "{list}"
            );
        }
        // The browser's twin, kept by the relay holding it, reads the same on the others.
        let api = relays[2].api();
        let filter = json!({ "clientId": "cluster-desk" });
        let tab_url = api
            .wait_until(filter, JOIN_WITHIN, || async {
                let twin = api.get("/api/twin/cluster-desk").await;
                let tabs = twin["tabs"].as_array().cloned().unwrap_or_default();
                tabs.into_iter()
                    .find(|t| t["tabId"] == tab && t["url"].as_str().is_some_and(|u| u.contains("buy.html")))
                    .map(|t| t["url"].clone())
            })
            .await;
        let (status, screen) = api.get_text("/api/twin/cluster-desk.md").await;
        assert_eq!(status, 200);
        assert!(screen.contains(tab_url.as_str().unwrap()), "{screen}");
        worker.abort();
    });
}
